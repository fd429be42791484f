/**
 * `mud-server` command line: `serve` (default for `npm start`) and `migrate`.
 * Start-up failures print one line naming the problem and exit 1.
 */
import { loadConfig, ConfigError, type LoadedConfig } from './config/config.ts';
import winston from 'winston';
import { createLogger, type Logger } from './logging/logger.ts';
import { WorldLoadError } from './services/worlds/world-loader.ts';
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { openMigratedDatabase, prepareOnce, startServer } from './server.ts';
import { announceServing, runPrimary, STOP_ALL } from './cluster.ts';
import { systemClock } from './db/clock.ts';
import type { Db } from './db/database.ts';
import { buildServices, type Services } from './services/container.ts';
import { WorldCatalog } from './services/worlds/world-catalog.ts';
import { createSuperuser, SuperuserError } from './services/accounts/superuser.ts';
import { VERSION } from './version.ts';
import { prompt } from './cli-prompt.ts';
import { readArtifact } from './services/policy/world-policies.ts';
import { DomainError } from './shared/errors.ts';
import { checkWorldPackage, exportWorld } from './services/building/world-export.ts';
import { sandboxLimits } from './services/scripts/script-service.ts';
import { WorldSandbox } from './integrations/script-sandbox.ts';
import path from 'node:path';
import { ReferenceDatabaseError } from './integrations/reference-database.ts';
import { claimSqlite, SqliteInUse } from './db/sqlite-serving.ts';
import { formatImportReport } from './services/migration/import-report.ts';
import { backupSqlite, BackupRefused } from './db/sqlite-backup.ts';
import { copyConfiguredDatabase, CopyFailed, CopyMismatch, CopyRefused, formatCopyReport } from './db/copy-database.ts';
import { pgDumpCommand, withoutPassword } from './db/postgres-tools.ts';

const HELP = `Usage: mud-server <command>

Commands:
  serve [--workers N]                  Apply migrations, load worlds and serve the HTTP API
                                       (MUD_HOST:MUD_PORT), and the telnet door for MUD
                                       clients when [telnet] enabled is true; with N worker
                                       processes behind the one port (0: one per core;
                                       PostgreSQL only). SIGTERM stops gracefully, SIGHUP
                                       replaces the workers one at a time
  migrate                              Apply pending database migrations and exit
  create-superuser                     Create a superuser: prompts on a terminal, otherwise
                                       reads MUD_ADMIN_USER and MUD_ADMIN_PASSWORD
  grant-world <username> <world_id>    Let an account enter an invite-only world
  import-policy-artifact <file> [--world <id>] [--no-activate]
                                       Import a policy publish artifact (and activate it)
  ledger-export <world_id>             Print a world's event ledger as JSONL, oldest first
  world-export <world_id> <dir>        Write a world as it now is (package and builders'
                                       changes) as a package into an empty folder
  world-check <dir>                    Check a world package without a server: exits 1 with
                                       the file and key of each problem
  import-reference <mud.db> [--ledger <dir>] [--dry-run] [--merge] [--allow-skips]
                                       Import the reference server's database (and its
                                       JSONL ledger) in one transaction; prints a report.
                                       --merge adds to a database that has game data,
                                       --dry-run writes nothing, --allow-skips commits even
                                       when rows are skipped (exit 1 otherwise)
  backup <file> [--force]              SQLite: a consistent copy of the database, taken while
                                       the server runs, checked, then renamed into place
                                       (--force replaces an existing file). PostgreSQL:
                                       prints the pg_dump command for the database
  copy-db --to <postgres://... | file> Copy every table of the configured database into an
                                       empty PostgreSQL database or a new SQLite file, ids
                                       kept, in one transaction; prints each table's row
                                       count and checksum, compared with the source's

Options:
  -h, --help Show this help

Configuration: config/server.ini (or MUD_CONFIG), overridden by MUD_* environment
variables; see config/server.example.ini.`;

/** A problem with how the command was called, or with what it was asked to act on. */
class CliError extends Error {}

/**
 * The server logs JSON lines to stdout; the one-shot commands log to stderr, so that what
 * they print (e.g. ledger-export's JSONL) stays clean on stdout.
 */
function setup(logTo: 'stdout' | 'stderr' = 'stderr'): { loaded: LoadedConfig; logger: Logger } {
  const loaded = loadConfig();
  const logger = createLogger(loaded.config.logging.level, logTo === 'stderr' ? [new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'] })] : undefined);
  for (const warning of loaded.warnings) logger.warn(warning);
  return { loaded, logger };
}

/** How many processes `serve` runs: `--workers N`, else `[server] workers`; 0 means one per core. */
function workerCount(args: string[], configured: number): number {
  if (args.length === 0) return configured === 0 ? availableParallelism() : configured;
  const [flag, value] = args;
  if (flag !== '--workers' || value === undefined || !/^\d+$/.test(value) || Number(value) > 256 || args.length !== 2) {
    throw new CliError('Usage: mud-server serve [--workers N] (N from 0, one per core, to 256)');
  }
  return Number(value) === 0 ? availableParallelism() : Number(value);
}

async function serve(args: string[]): Promise<void> {
  const { loaded, logger } = setup('stdout');
  const workers = workerCount(args, loaded.config.server.workers);
  if (cluster.isPrimary && workers > 1) {
    if (!loaded.config.database.url) {
      throw new CliError(`${workers} workers need PostgreSQL ([database] url, DATABASE_URL): each worker is an instance, and SQLite serves one. Run one process, or set DATABASE_URL.`);
    }
    await runPrimary({ workers, config: loaded.config, logger, prepare: () => prepareOnce(loaded.config, logger) });
    return;
  }
  const server = await startServer({ config: loaded.config, logger });
  if (cluster.isWorker) announceServing(server.url);
  let signalled = false;
  // Exit once stopped, whether a signal or POST /admin/server/stop started it; a worker stopped
  // through the API has every worker stop, as a single server would.
  server.stopped.then(() => {
    if (cluster.isWorker && !signalled && process.connected) process.send!(STOP_ALL, () => process.exit(0));
    else process.exit(0);
  });
  const onSignal = (signal: string): void => {
    signalled = true;
    logger.info('Signal received', { signal });
    server.stop().catch((err: unknown) => {
      logger.error('Shutdown failed', { error: String(err) });
      process.exit(1);
    });
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  // A worker whose primary is gone (killed) stops rather than serve on unsupervised.
  if (cluster.isWorker) process.once('disconnect', () => onSignal('disconnect'));
}

async function migrate(): Promise<void> {
  const { loaded, logger } = setup();
  const db = await openMigratedDatabase(loaded.config, logger);
  await db.destroy();
  console.log('Database is up to date.');
}

/** Runs a command against the migrated database and the loaded worlds, then releases both. */
async function withServices(work: (services: Services, db: Db, config: LoadedConfig['config']) => Promise<void>): Promise<void> {
  const { loaded, logger } = setup();
  const worlds = await WorldCatalog.load(loaded.config.worlds.worldsRoot);
  const db = await openMigratedDatabase(loaded.config, logger);
  const services = buildServices(db, loaded.config, systemClock, worlds, VERSION, logger);
  try {
    await worlds.syncTo(services.worldRepository, systemClock);
    await work(services, db, loaded.config);
  } finally {
    await services.close();
    await db.destroy();
  }
}

async function createSuperuserCommand(): Promise<void> {
  await withServices(async (services) => {
    let username = process.env.MUD_ADMIN_USER?.trim() ?? '';
    let password = process.env.MUD_ADMIN_PASSWORD ?? '';
    if (!username || !password) {
      if (!process.stdin.isTTY) {
        throw new CliError('No terminal to prompt on: set MUD_ADMIN_USER and MUD_ADMIN_PASSWORD.');
      }
      username = (await prompt('Username (2-20 characters): ')).trim();
      password = await prompt('Password (STANDARD policy, 12+ characters): ', { hidden: true });
      if ((await prompt('Repeat password: ', { hidden: true })) !== password) throw new CliError('Passwords do not match');
    }
    const created = await createSuperuser(services.users, services.hasher, systemClock, username, password, 'superuser');
    console.log(`Superuser '${created}' created.`);
  });
}

async function grantWorld(args: string[]): Promise<void> {
  const [username, worldId] = args;
  if (!username || !worldId || args.length !== 2) throw new CliError('Usage: mud-server grant-world <username> <world_id>');
  await withServices(async (services) => {
    const user = await services.users.findByUsername(username);
    if (!user) throw new CliError(`User '${username}' not found`);
    if (!services.worlds.get(worldId)) throw new CliError(`World '${worldId}' not found`);
    await services.userAdmin.grant(user.id, worldId, true);
    console.log(`Granted ${username} access to world '${worldId}'.`);
  });
}

async function importPolicyArtifact(args: string[]): Promise<void> {
  const usage = 'Usage: mud-server import-policy-artifact <file> [--world <id>] [--no-activate]';
  let file: string | undefined;
  let world: string | undefined;
  let activate = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--no-activate') activate = false;
    else if (arg === '--world' && args[i + 1]) world = args[++i];
    else if (!arg.startsWith('--') && file === undefined) file = arg;
    else throw new CliError(usage);
  }
  if (!file) throw new CliError(usage);
  const artifact = await readArtifact(file);
  await withServices(async (services) => {
    const result = await services.importer.importArtifact(artifact, activate, 'policy-importer', world);
    for (const entry of result.entries) console.log(`${entry.action.padEnd(8)} ${entry.detail}`);
    console.log(
      `world ${result.world_id}${result.client_profile ? `:${result.client_profile}` : ''}: ${result.item_count} items, ` +
        `${result.imported_count} imported, ${result.updated_count} updated, ${result.skipped_count} skipped, ` +
        `${result.error_count} errors, ${result.activated_count} activated, ${result.activation_skipped_count} already active`,
    );
    if (result.error_count > 0) process.exitCode = 1;
  });
}

async function ledgerExport(args: string[]): Promise<void> {
  const [worldId] = args;
  if (!worldId || args.length !== 1) throw new CliError('Usage: mud-server ledger-export <world_id>');
  await withServices(async (services) => {
    if (!services.worlds.get(worldId)) throw new CliError(`World '${worldId}' not found`);
    const lines = await services.ledger.exportLines(worldId);
    if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  });
}

async function worldExport(args: string[]): Promise<void> {
  const [worldId, dir] = args;
  if (!worldId || !dir || args.length !== 2) throw new CliError('Usage: mud-server world-export <world_id> <dir>');
  await withServices(async (services, _db, config) => {
    const world = services.worlds.get(worldId);
    if (!world) throw new CliError(`World '${worldId}' not found`);
    await services.worldSync.loadAll();
    const packageDir = path.join(config.worlds.worldsRoot, worldId);
    const written = await exportWorld(services.worlds.get(worldId)!, packageDir, await services.build.exportItems(worldId), dir);
    console.log(`Exported world '${worldId}' to ${dir}: ${written.rooms} rooms, ${written.items} items in rooms.`);
  });
}

async function worldCheck(args: string[]): Promise<void> {
  const [dir] = args;
  if (!dir || args.length !== 1) throw new CliError('Usage: mud-server world-check <dir>');
  const compiler = await WorldSandbox.create(sandboxLimits(loadConfig().config.scripts));
  const { world, problems, warnings } = await checkWorldPackage(dir, (source) => compiler.compile(source)).finally(() => compiler.dispose());
  for (const problem of problems) console.error(`error: ${problem}`);
  for (const warning of warnings) console.error(`warning: ${warning}`);
  if (problems.length > 0) {
    process.exitCode = 1;
    return;
  }
  const warned = warnings.length === 0 ? '' : ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})`;
  console.log(`World '${world!.id}' is sound${warned}: ${world!.rooms.size} rooms in ${world!.zones.size} zones, ${world!.items.size} items.`);
}

async function importReference(args: string[]): Promise<void> {
  const usage = 'Usage: mud-server import-reference <mud.db> [--ledger <dir>] [--dry-run] [--merge] [--allow-skips]';
  let file: string | undefined;
  let ledgerDir: string | undefined;
  const flags = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--ledger' && args[i + 1] && ledgerDir === undefined) ledgerDir = args[++i];
    else if (['--dry-run', '--merge', '--allow-skips'].includes(arg)) flags.add(arg);
    else if (!arg.startsWith('--') && file === undefined) file = arg;
    else throw new CliError(usage);
  }
  if (!file) throw new CliError(usage);
  await withServices(async (services, _db, config) => {
    // One transaction holds SQLite's write lock for the whole run: refused while a server serves the file (docs/decisions.md).
    const release = config.database.url ? async () => {} : await claimSqlite(config.database.path, 'import-reference');
    try {
      const report = await services.referenceImport.run(file, {
        ledgerDir,
        dryRun: flags.has('--dry-run'),
        merge: flags.has('--merge'),
        allowSkips: flags.has('--allow-skips'),
        progress: (line) => console.error(`import-reference: ${line}`),
      });
      process.stdout.write(formatImportReport(report));
      if (report.skipped > 0 && !flags.has('--allow-skips')) process.exitCode = 1;
    } finally {
      await release();
    }
  });
}

async function backup(args: string[]): Promise<void> {
  const usage = 'Usage: mud-server backup <file> [--force]';
  const file = args.find((arg) => !arg.startsWith('--'));
  const force = args.includes('--force');
  if (!file || args.length !== (force ? 2 : 1)) throw new CliError(usage);
  const { loaded } = setup();
  const { database } = loaded.config;
  if (database.url) {
    // pg_dump is PostgreSQL's own consistent online backup; nothing here would do better.
    console.error('backup: on PostgreSQL the backup tool is pg_dump (a consistent snapshot, taken while the servers run). Nothing was written. For the configured database:');
    process.stdout.write(`${pgDumpCommand(database.url, file)}\n`);
    if (withoutPassword(database.url).hadPassword) console.error('backup: the password is left out of the URL: give it in PGPASSWORD or ~/.pgpass.');
    console.error('backup: restore into a new, empty database with pg_restore --no-owner --dbname=<its URL> <file> (README, "Backups").');
    process.exitCode = 1;
    return;
  }
  const result = await backupSqlite(database.path, file, { force, progress: (line) => console.error(`backup: ${line}`) });
  console.log(`Backed up ${database.path} to ${file}: ${result.pages} pages (${(result.bytes / 1048576).toFixed(1)} MB), integrity_check ok, in ${result.seconds.toFixed(1)} s.`);
}

async function copyDb(args: string[]): Promise<void> {
  const usage = 'Usage: mud-server copy-db --to <postgres://... URL | SQLite file>';
  const [flag, target] = args;
  if (flag !== '--to' || !target || args.length !== 2) throw new CliError(usage);
  const { loaded, logger } = setup();
  const progress = (line: string): void => console.error(`copy-db: ${line}`);
  try {
    process.stdout.write(formatCopyReport(await copyConfiguredDatabase(loaded.config.database, target, logger, progress)));
  } catch (err) {
    if (err instanceof CopyMismatch) process.stdout.write(formatCopyReport(err.report));
    throw err;
  }
}

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  backup,
  'copy-db': copyDb,
  'world-export': worldExport,
  'world-check': worldCheck,
  'ledger-export': ledgerExport,
  'import-reference': importReference,
  'import-policy-artifact': importPolicyArtifact,
  serve,
  migrate,
  'create-superuser': createSuperuserCommand,
  'grant-world': grantWorld,
};

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || rest.includes('--help') || rest.includes('-h')) {
    console.log(HELP);
    return;
  }
  const run = COMMANDS[command];
  if (!run) {
    console.error(`Unknown command '${command}'. Run 'mud-server --help' for the list.`);
    process.exitCode = 2;
    return;
  }
  try {
    await run(rest);
  } catch (err) {
    const known = [ConfigError, WorldLoadError, SuperuserError, CliError, DomainError, ReferenceDatabaseError, SqliteInUse, BackupRefused, CopyRefused, CopyFailed, CopyMismatch].some((type) => err instanceof type);
    // Expected failures get one line; anything else is a bug and keeps its stack.
    console.error(`mud-server: ${known ? (err as Error).message : err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  }
}

await main(process.argv.slice(2));
