/**
 * Structured JSON logging (winston). The request id travels in AsyncLocalStorage, so any
 * log line written while a request is being served carries it without passing loggers around.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import winston from 'winston';
import type Transport from 'winston-transport';

export type Logger = winston.Logger;
export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'silent';

interface RequestContext {
  requestId: string;
  /** Aborted when the client goes away before its response is complete. */
  signal: AbortSignal;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

const withRequestId = winston.format((info) => {
  const ctx = requestContext.getStore();
  if (ctx && info.request_id === undefined) info.request_id = ctx.requestId;
  return info;
});

export function createLogger(level: LogLevel, transports?: Transport[]): Logger {
  return winston.createLogger({
    level: level === 'silent' ? 'error' : level,
    silent: level === 'silent',
    format: winston.format.combine(
      withRequestId(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    transports: transports ?? [new winston.transports.Console()],
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Session ids are bearer credentials: log lines keep only their first 8 characters. */
export function redactSessionIds(text: string): string {
  return text.replace(UUID, (id) => `${id.slice(0, 8)}…`);
}
