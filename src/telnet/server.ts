/**
 * The telnet front door: a plain listener and, with a certificate, a TLS one, both handing
 * each accepted socket to a TelnetConnection. Connections are capped per client address and
 * in total; a session that ends anywhere (kick, ban, expiry, … announced on the event bus by
 * any instance) ends its connection, whichever screen it is on.
 */
import { readFileSync } from 'node:fs';
import { createServer as createPlainServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../config/config.ts';
import type { EventBus } from '../db/event-bus.ts';
import type { Logger } from '../logging/logger.ts';
import { addressKey } from '../services/limits/limits.ts';
import { TelnetConnection, type TelnetServices } from './connection.ts';

export interface TelnetServerOptions {
  services: TelnetServices;
  bus: EventBus;
  config: Config['telnet'];
  /** The TLS listener's certificate and key (tlsCredentials), or null for none. */
  tls: TlsCredentials | null;
  logger: Logger;
  version: string;
}

export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

/** Where the listeners ended up (port 0 picks a free one). */
export interface TelnetAddresses {
  port: number;
  /** Null when no TLS listener runs (no certificate configured). */
  tlsPort: number | null;
}

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`Cannot read [telnet] ${key} ${file}: ${(err as Error).message}`);
  }
}

/**
 * The TLS listener's certificate and key, read at start-up before anything else is opened, so
 * a wrong path stops the server with one line; null when none is configured.
 */
export function tlsCredentials(config: Config['telnet']): TlsCredentials | null {
  if (!config.enabled || (config.tlsCert === '' && config.tlsKey === '')) return null;
  if (config.tlsCert === '' || config.tlsKey === '') throw new ConfigError('[telnet] tls_cert and tls_key go together: set both for the TLS listener, or neither');
  return { cert: readPem(config.tlsCert, 'tls_cert'), key: readPem(config.tlsKey, 'tls_key') };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export class TelnetServer {
  private readonly o: TelnetServerOptions;
  private readonly servers: Server[] = [];
  private readonly connections = new Set<TelnetConnection>();
  private readonly perAddress = new Map<string, number>();
  /** Connections gone but still logging their session out. */
  private readonly releasing = new Set<Promise<void>>();
  private stopping = false;

  constructor(options: TelnetServerOptions) {
    this.o = options;
    // Ends reach every instance over the bus; the connection's own stream, if any, ends it too.
    options.bus.subscribe((event) => {
      if (event.type !== 'session.ended') return;
      const ended = new Set(event.sessionIds);
      for (const connection of this.connections) {
        const id = connection.sessionId;
        if (id !== null && ended.has(id)) connection.sessionEnded(event.reason);
      }
    });
  }

  async start(): Promise<TelnetAddresses> {
    const { config, tls: credentials } = this.o;
    const plain = createPlainServer((socket) => this.accept(socket, false));
    this.servers.push(plain);
    const port = await listen(plain, config.port, config.host);
    let tlsPort: number | null = null;
    if (credentials) {
      const tls = createTlsServer({ ...credentials, minVersion: 'TLSv1.2' }, (socket) => this.accept(socket, true));
      tls.on('tlsClientError', (err) => this.o.logger.debug('Telnet TLS handshake failed', { error: err.message }));
      this.servers.push(tls);
      tlsPort = await listen(tls, config.tlsPort, config.tlsHost || config.host);
    }
    return { port, tlsPort };
  }

  /** How many connections are open (for tests and metrics). */
  get size(): number {
    return this.connections.size;
  }

  private accept(socket: Socket, tls: boolean): void {
    const address = addressKey(socket.remoteAddress ?? 'unknown');
    const { config, logger } = this.o;
    const refusal = this.stopping
      ? { reason: 'shutdown', text: 'The server is shutting down.' }
      : this.connections.size >= config.maxConnections
        ? { reason: 'max_connections', text: 'The server is full; try again later.' }
        : (this.perAddress.get(address) ?? 0) >= config.maxConnectionsPerAddress
          ? { reason: 'max_connections_per_address', text: 'Too many connections from your address; close one and try again.' }
          : null;
    if (refusal) {
      logger.warn('Telnet connection refused', { reason: refusal.reason, open: this.connections.size });
      socket.on('error', () => undefined);
      socket.end(`${refusal.text}\r\n`);
      return;
    }
    const opened = Date.now();
    const connection = new TelnetConnection(socket, { services: this.o.services, config, logger: this.o.logger, version: this.o.version, address });
    this.connections.add(connection);
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      this.connections.delete(connection);
      logger.info('Telnet connection closed', { tls, duration_ms: Date.now() - opened, open: this.connections.size });
      const released = connection.finished();
      this.releasing.add(released);
      void released.finally(() => this.releasing.delete(released));
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
    logger.info('Telnet connection', { tls, open: this.connections.size });
    connection.start();
  }

  /** Stops listening, tells every player the server shuts down, and logs their sessions out. */
  async stop(): Promise<void> {
    this.stopping = true;
    const closing = this.servers.map(closeServer);
    const open = [...this.connections];
    for (const connection of open) connection.sessionEnded('shutdown');
    await Promise.all([...open.map((c) => c.finished()), ...this.releasing]);
    await Promise.all(closing);
  }
}
