/**
 * Starts the real server in-process on an ephemeral port, against a fresh temporary SQLite
 * file or (MUD_TEST_DB=postgres) a throw-away schema in MUD_TEST_DATABASE_URL's database.
 * Responses are validated against openapi.yaml, so every test also checks the contract.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { MemoryTransport } from './memory-transport.ts';

export const usePostgres = process.env.MUD_TEST_DB === 'postgres';

/** A clock tests can move forward instead of sleeping. */
export class TestClock {
  private current: Date;
  constructor(start = new Date()) {
    this.current = new Date(start);
  }
  now = (): Date => new Date(this.current);
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  // Tests inspect arbitrary JSON bodies.
  body: any;
  text: string;
}

export interface TestServer extends RunningServer {
  config: Config;
  /** PostgreSQL schema of this server's database (undefined on SQLite). */
  schema: string | undefined;
  logs: MemoryTransport;
  clock: TestClock;
  request(method: string, urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse>;
  get(urlPath: string, headers?: Record<string, string>): Promise<HttpResponse>;
  post(urlPath: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse>;
  /** Stops the server and removes its database. */
  close(): Promise<void>;
}

export async function send(
  baseUrl: string,
  method: string,
  urlPath: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResponse> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + urlPath, init);
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export interface TestServerOptions {
  /** MUD_* variables on top of the test defaults. */
  env?: Record<string, string>;
  clock?: TestClock;
  /** Run as a second instance on this server's database (its close() leaves the data alone). */
  shareDatabaseWith?: TestServer;
  /** PostgreSQL url to use instead of MUD_TEST_DATABASE_URL (with MUD_TEST_DB=postgres). */
  databaseUrl?: string;
  /** An existing PostgreSQL schema to serve; the caller created it and drops it. */
  schema?: string;
  /** PostgreSQL (true) or SQLite (false) whatever MUD_TEST_DB says, for tests that move data between them. */
  postgres?: boolean;
  /**
   * false: the worlds' clock stops once the server serves. It writes on its own timer (its lease,
   * the scripts' timers and state), which tests that count queries or compare the database
   * before and after requests would see.
   */
  worldClock?: boolean;
}

/** Creates (or drops, with everything in it) a PostgreSQL schema. */
export async function createSchema(url: string, schema: string, drop: boolean): Promise<void> {
  const admin = knexFactory({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(drop ? 'DROP SCHEMA IF EXISTS ?? CASCADE' : 'CREATE SCHEMA ??', [schema]);
  } finally {
    await admin.destroy();
  }
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-test-'));
  const pgUrl = options.databaseUrl ?? process.env.MUD_TEST_DATABASE_URL ?? '';
  const postgres = options.postgres ?? usePostgres;
  if (postgres && !pgUrl) throw new Error('MUD_TEST_DB=postgres needs MUD_TEST_DATABASE_URL');
  const shared = options.shareDatabaseWith;
  const ownsDatabase = shared === undefined && options.schema === undefined;
  const schema = shared ? shared.schema : postgres ? (options.schema ?? `mud_test_${randomBytes(6).toString('hex')}`) : undefined;
  if (schema && ownsDatabase) await createSchema(pgUrl, schema, false);

  const env: NodeJS.ProcessEnv = {
    MUD_HOST: '127.0.0.1',
    MUD_PORT: '0',
    MUD_DB_PATH: shared ? shared.config.database.path : path.join(dir, 'mud.db'),
    DATABASE_URL: postgres ? pgUrl : '',
    MUD_LOG_LEVEL: 'debug',
    MUD_SERVER_VALIDATE_RESPONSES: 'true',
    MUD_WORLDS_ROOT: path.resolve('worlds'),
    // bcrypt's lowest cost: hashing stays real, and the suite's thousands of accounts cost
    // milliseconds instead of minutes (the server warns that this cost is for tests).
    MUD_BCRYPT_ROUNDS: '4',
    MUD_RATE_LIMIT_ENABLED: 'false',
    MUD_POLICY_EXPORTS_ROOT: path.join(dir, 'policy-exports'),
    ...options.env,
  };
  const { config } = loadConfig({ env, iniPath: null });
  const logs = new MemoryTransport();
  const logger = createLogger(config.logging.level, [logs]);
  const clock = options.clock ?? new TestClock();
  let running: RunningServer;
  try {
    running = await startServer({ config, logger, clock: clock.now, dbSchema: schema, env });
    if (options.worldClock === false) await running.services.scriptClock.stop();
  } catch (err) {
    if (schema && ownsDatabase) await createSchema(pgUrl, schema, true);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const request = (method: string, urlPath: string, body?: unknown, headers?: Record<string, string>) =>
    send(running.url, method, urlPath, body, headers);
  return {
    ...running,
    config,
    schema,
    logs,
    clock,
    request,
    get: (urlPath, headers) => request('GET', urlPath, undefined, headers),
    post: (urlPath, body, headers) => request('POST', urlPath, body ?? {}, headers),
    close: async () => {
      await running.stop();
      if (schema && ownsDatabase) await createSchema(pgUrl, schema, true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
