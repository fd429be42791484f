/**
 * Server lifecycle: load worlds, open and migrate the database, sync the catalog, listen;
 * and the graceful stop (stop accepting, finish in-flight requests, close the database).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config/config.ts';
import type { Logger } from './logging/logger.ts';
import { systemClock, type Clock } from './db/clock.ts';
import { openDatabase, migrateLatest, type Db } from './db/database.ts';
import { markServing } from './db/sqlite-serving.ts';
import { WorldCatalog } from './services/worlds/world-catalog.ts';
import { WorldLoadError } from './services/worlds/world-loader.ts';
import { buildServices, type Services } from './services/container.ts';
import { bootstrapSuperuser } from './services/accounts/superuser.ts';
import { startMaintenance, type Maintenance } from './services/maintenance.ts';
import { importWorldPolicies } from './services/policy/world-policies.ts';
import { createApp } from './http/app.ts';
import { loadContract } from './http/support/openapi.ts';
import { VERSION } from './version.ts';
import { TelnetServer, tlsCredentials, type TelnetAddresses } from './telnet/server.ts';

export interface ServerOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** PostgreSQL schema to use (the tests isolate each run in its own schema). */
  dbSchema?: string;
  /** Where MUD_ADMIN_USER/MUD_ADMIN_PASSWORD are read from. */
  env?: NodeJS.ProcessEnv;
}

export interface RunningServer {
  url: string;
  port: number;
  db: Db;
  services: Services;
  /** The telnet door's ports, when it is enabled. */
  telnet: TelnetAddresses | null;
  /** Graceful stop; safe to call more than once. */
  stop(): Promise<void>;
  /** Resolves once the server has stopped, whoever started the stop (signal or admin route). */
  stopped: Promise<void>;
}

/** Opens the configured database and applies pending migrations. */
export async function openMigratedDatabase(config: Config, logger: Logger, dbSchema?: string): Promise<Db> {
  const db = openDatabase({ sqlitePath: config.database.path, url: config.database.url, schema: dbSchema }, logger);
  try {
    const applied = await migrateLatest(db);
    if (applied.length > 0) logger.info('Applied database migrations', { migrations: applied });
    return db;
  } catch (err) {
    await db.destroy();
    throw err;
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Waits until no query is running or queued, so closing the pool cancels nothing. */
async function drainPool(db: Db, deadline: number): Promise<void> {
  const pool = db.client.pool as { numUsed(): number; numPendingAcquires(): number } | undefined;
  while (pool && (pool.numUsed() > 0 || pool.numPendingAcquires() > 0) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The world packages, or a WorldLoadError naming what is wrong (the default world among them). */
async function loadWorlds(config: Config): Promise<WorldCatalog> {
  const worlds = await WorldCatalog.load(config.worlds.worldsRoot);
  if (!worlds.get(config.worlds.defaultWorldId)) {
    const loaded = worlds.list().map((w) => w.id).join(', ');
    throw new WorldLoadError(`[worlds] default_world_id '${config.worlds.defaultWorldId}' is not a loaded world (loaded: ${loaded})`);
  }
  return worlds;
}

/**
 * The start-up steps against the database: the world catalog, the worlds' shipped policies,
 * item placement, the bootstrap superuser. Each finds its work done when an instance did it
 * before.
 */
async function prepareDatabase(services: Services, worlds: WorldCatalog, clock: Clock, env: NodeJS.ProcessEnv, logger: Logger): Promise<void> {
  await worlds.syncTo(services.worldRepository, clock);
  await importWorldPolicies(worlds, services.policyRepository, services.importer, logger);
  await services.game.core.seedItems();
  const admin = await bootstrapSuperuser(services.users, services.hasher, clock, env);
  if (admin) logger.info('Created the bootstrap superuser', { username: admin });
}

/**
 * Migrations and the start-up steps once, without serving: what `serve --workers` does before
 * its workers start, so that they do not race each other through them.
 */
export async function prepareOnce(config: Config, logger: Logger, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const worlds = await loadWorlds(config);
  const db = await openMigratedDatabase(config, logger);
  const services = buildServices(db, config, systemClock, worlds, VERSION, logger);
  try {
    await prepareDatabase(services, worlds, systemClock, env, logger);
  } finally {
    await services.close();
    await db.destroy();
  }
}

export async function startServer({ config, logger, clock = systemClock, dbSchema, env = process.env }: ServerOptions): Promise<RunningServer> {
  // Worlds first: a broken package stops start-up before the database is touched.
  const worlds = await loadWorlds(config);
  const telnetTls = tlsCredentials(config.telnet);
  const contract = loadContract();
  // A SQLite file is marked served while this server runs, so that long writers (import-reference) refuse to run beside it.
  const unmark = !config.database.url && config.database.path !== ':memory:' ? await markServing(config.database.path) : async () => {};
  let db: Db;
  try {
    db = await openMigratedDatabase(config, logger, dbSchema);
  } catch (err) {
    await unmark();
    throw err;
  }
  const services = buildServices(db, config, clock, worlds, VERSION, logger);
  let maintenance: Maintenance | undefined;
  let telnet: TelnetServer | null = null;
  let telnetAddresses: TelnetAddresses | null = null;
  let httpServer: Server;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });
  let stopping: Promise<void> | undefined;
  try {
    await prepareDatabase(services, worlds, clock, env, logger);
    await services.worldSync.loadAll();
    await services.scripts.start();
    maintenance = await startMaintenance(services.maintenanceTasks, logger);
    await services.streams.start();
    services.scriptClock.start();
    const app = createApp({
      config,
      logger,
      contract,
      version: VERSION,
      services,
      requestStop: () => void stop(),
    });
    if (config.telnet.enabled) {
      telnet = new TelnetServer({ services, bus: services.events, config: config.telnet, tls: telnetTls, logger, version: VERSION });
      telnetAddresses = await telnet.start();
    }
    httpServer = createServer(app);
    await listen(httpServer, config.server.port, config.server.host);
  } catch (err) {
    await telnet?.stop();
    maintenance?.stop();
    await services.scriptClock.stop();
    services.scripts.stop();
    await services.streams.stop();
    await services.close();
    await db.destroy();
    await unmark();
    throw err;
  }

  const { port } = httpServer.address() as AddressInfo;
  const url = `http://${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${port}`;
  logger.info('Server listening', {
    url,
    ...(telnetAddresses && { telnet_port: telnetAddresses.port, telnet_tls_port: telnetAddresses.tlsPort }),
    worlds: worlds.list().map((w) => w.id),
    database: config.database.url ? 'postgresql' : 'sqlite',
  });

  // closeIdleConnections() only catches connections idle when stop() begins; a keep-alive
  // connection whose request is still in flight would otherwise stay open for the keep-alive
  // timeout after its response. Close it once the response has been sent.
  httpServer.on('request', (req, res) => {
    res.once('finish', () => {
      if (stopping) req.socket.end();
    });
  });
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      logger.info('Shutting down: refusing new connections, finishing in-flight requests');
      const deadline = Date.now() + config.server.shutdownTimeoutSeconds * 1000;
      maintenance?.stop();
      // The listening socket closes at once, as the line above says; the connections open
      // finish their requests meanwhile, and the close completes when the last one ends.
      const closed = new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          logger.warn('Shutdown timeout reached; closing remaining connections');
          httpServer.closeAllConnections();
        }, deadline - Date.now());
        force.unref();
        httpServer.close(() => {
          clearTimeout(force);
          resolve();
        });
        httpServer.closeIdleConnections();
      });
      // The worlds' clocks next, so another instance takes them at once.
      await services.scriptClock.stop();
      // Telnet players: their sessions are logged out while the database is still open.
      await telnet?.stop();
      // Streams never end by themselves: end them (reason shutdown) so they do not hold the close.
      await services.streams.stop();
      await closed;
      // Handlers whose client hung up may still be waiting on the database.
      await drainPool(db, deadline);
      services.scripts.stop();
      // Writes the session activity still pending, so it must come before db.destroy().
      await services.close();
      await db.destroy();
      await unmark();
      logger.info('Shutdown complete');
      resolveStopped();
    })();
    return stopping;
  };
  return { url, port, db, services, telnet: telnetAddresses, stop, stopped };
}
