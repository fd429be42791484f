/**
 * Composition root: builds repositories and services once, for the HTTP server and for the
 * CLI commands alike.
 */
import type { Config } from '../config/config.ts';
import type { Db } from '../db/database.ts';
import { toDbTime, type Clock } from '../db/clock.ts';
import { WorldRepository } from '../db/repositories/world-repository.ts';
import { UserRepository } from '../db/repositories/user-repository.ts';
import { SessionRepository } from '../db/repositories/session-repository.ts';
import { CharacterRepository } from '../db/repositories/character-repository.ts';
import { WorldPermissionRepository } from '../db/repositories/world-permission-repository.ts';
import { InspectionRepository } from '../db/repositories/inspection-repository.ts';
import { HealthService } from './health-service.ts';
import { AccountService } from './accounts/account-service.ts';
import { TelnetSettingsService } from './accounts/telnet-settings.ts';
import { TelnetSettingsRepository } from '../db/repositories/telnet-settings-repository.ts';
import { SessionService, SWEEP_BATCH } from './accounts/session-service.ts';
import { SessionActivity } from './accounts/session-activity.ts';
import { BcryptPool, type PasswordHasher } from './accounts/password-hasher.ts';
import { InspectionService } from './admin/inspection-service.ts';
import { UserAdminService } from './admin/user-admin-service.ts';
import { WorldAccessService } from './worlds/world-access.ts';
import type { WorldCatalog } from './worlds/world-catalog.ts';
import type { PeriodicTask } from './maintenance.ts';
import type { Logger } from '../logging/logger.ts';
import { AxisStateRepository } from '../db/repositories/axis-state-repository.ts';
import { BuiltinNameGenerator, HttpNameGenerator, type NameGenerator } from '../integrations/name-generator.ts';
import { EntityStateError, HttpEntityStateClient, type EntityStateCounters } from '../integrations/entity-state.ts';
import { ConditionAxisService } from './axis/condition-axis.ts';
import { BuiltinEntityGenerator } from '../integrations/builtin-entity-generator.ts';
import { CharacterStateService } from './characters/character-state.ts';
import { CharacterService, type EntityGenerator } from './characters/character-service.ts';
import { EntryService } from './characters/entry-service.ts';
import { GameRepository } from '../db/repositories/game-repository.ts';
import { GameService } from './game/game-service.ts';
import { GameCore } from './game/game-core.ts';
import { ScriptService } from './scripts/script-service.ts';
import { ScriptClock } from './scripts/script-clock.ts';
import { NpcPlaces } from './game/npc-places.ts';
import { NpcRepository } from '../db/repositories/npc-repository.ts';
import { CommandTable } from './game/command-table.ts';
import { gameVerbs } from './game/verbs/index.ts';
import { OllamaClient } from '../integrations/ollama.ts';
import { Translator } from './lab/translation.ts';
import { LabService } from './lab/lab-service.ts';
import { LlmCommandService } from './lab/llm-commands.ts';
import { PolicyRepository } from '../db/repositories/policy-repository.ts';
import { PolicyService } from './policy/policy-service.ts';
import { PublishService } from './policy/publish-service.ts';
import { Presence } from './presence/presence.ts';
import { SessionCache } from './accounts/session-cache.ts';
import { ImportService } from './policy/import-service.ts';
import { LedgerRepository } from '../db/repositories/ledger-repository.ts';
import { LedgerService } from './ledger/ledger-service.ts';
import { InProcessEventBus, PostgresEventBus, type EventBus } from '../db/event-bus.ts';
import { EventStreams } from './game/event-streams.ts';
import { CountedStreamQuota, type StreamHolder } from './game/stream-quota.ts';
import { randomUUID } from 'node:crypto';
import { createLimits, Limit, MemoryCounters, type CounterStore, type Limits } from './limits/limits.ts';
import { LimitRepository } from '../db/repositories/limit-repository.ts';
import { RedisCounters, type RedisState } from '../integrations/redis-counters.ts';
import { BuildRepository } from '../db/repositories/build-repository.ts';
import { BuildService } from './building/build-service.ts';
import { WorldSync } from './building/world-sync.ts';
import { buildCommands } from './building/build-commands.ts';
import { ReferenceImportService } from './migration/reference-import.ts';
import { ReferenceImportRepository } from '../db/repositories/reference-import-repository.ts';
import { ModerationRepository } from '../db/repositories/moderation-repository.ts';
import { AuditLog } from './moderation/audit.ts';
import { IgnoreLists } from './moderation/ignores.ts';
import { ReportService } from './moderation/reports.ts';
import { Announcements } from './moderation/announcements.ts';

export interface Services {
  worlds: WorldCatalog;
  /** Builders' scripts: what wakes them and what their runs do; ScriptClock fires their timers. */
  scripts: ScriptService;
  scriptClock: ScriptClock;
  worldRepository: WorldRepository;
  users: UserRepository;
  hasher: PasswordHasher;
  health: HealthService;
  sessions: SessionService;
  accounts: AccountService;
  /** What each account chose for the telnet door (`config`). */
  telnetSettings: TelnetSettingsService;
  userAdmin: UserAdminService;
  inspection: InspectionService;
  /** Moderation (src/services/moderation/): the audit log of staff actions, reports to staff, staff announcements. */
  audit: AuditLog;
  reports: ReportService;
  announcements: Announcements;
  policies: PolicyService;
  publisher: PublishService;
  importer: ImportService;
  policyRepository: PolicyRepository;
  characters: CharacterService;
  entry: EntryService;
  worldAccess: WorldAccessService;
  game: GameService;
  streams: EventStreams;
  /** The abuse limits, shared by every instance on PostgreSQL or Redis (any front door counts through them). */
  limits: Limits;
  /** The event bus the streams and the caches listen to. */
  events: EventBus;
  lab: LabService;
  llm: LlmCommandService;
  /** World building (rules for the API and the game's `@` commands) and the instance's copy of the builders' rooms. */
  build: BuildService;
  worldSync: WorldSync;
  ledger: LedgerService;
  maintenanceTasks: PeriodicTask[];
  /**
   * The link-dead sweep (a maintenance task): this instance's stream leases renewed and its
   * activity written first, then the sessions link-dead past `[presence] linkdead_seconds` go
   * away. Returns how many went.
   */
  sweepLinkdead(): Promise<number>;
  conditionAxis: ConditionAxisService;
  /** `mud-server import-reference`: the reference server's database into this one. */
  referenceImport: ReferenceImportService;
  /** The upstream entity-state client's counters (shared by character creation and condition-axis); null in builtin mode. */
  entityStateCounters(): EntityStateCounters | null;
  /** Writes the pending session activity and releases what the services hold (the hashing threads); the database is the caller's. */
  close(): Promise<void>;
}

function nameGenerator(config: Config['integrations'], logger: Logger): NameGenerator {
  return config.namegenMode === 'http'
    ? new HttpNameGenerator({ baseUrl: config.namegenBaseUrl, timeoutMs: config.namegenTimeoutSeconds * 1000, logger })
    : new BuiltinNameGenerator();
}

/** The one upstream entity-state client (http mode), so its counters cover every caller; null in builtin mode. */
function entityStateClient(config: Config['integrations'], logger: Logger): HttpEntityStateClient | null {
  if (config.entityStateMode === 'builtin') return null;
  return new HttpEntityStateClient({
    baseUrl: config.entityStateBaseUrl,
    timeoutMs: config.entityStateTimeoutSeconds * 1000,
    includePrompts: config.entityStateIncludePrompts,
    logger,
  });
}

function entityGenerator(client: HttpEntityStateClient | null): EntityGenerator {
  if (client === null) {
    const builtin = new BuiltinEntityGenerator();
    return { source: 'builtin', generate: (seed, bundle) => builtin.generate(seed, bundle) };
  }
  return {
    source: 'entity_state_api',
    generate: async (seed) => {
      try {
        return await client.generate(seed);
      } catch (err) {
        // For a new character the upstream's own wording is about condition-axis generation.
        if (err instanceof EntityStateError) throw new Error(err.failure === 'unsupported' ? 'Entity state integration is not available in the current upstream configuration.' : 'Entity state API unavailable.');
        throw err;
      }
    },
  };
}

/** The PostgreSQL schema the database works in, when one is set (the tests isolate each run in one). */
function schemaOf(db: Db): string | undefined {
  return (db.client.config as { searchPath?: string[] }).searchPath?.[0];
}

/** In-process on SQLite (one instance); LISTEN/NOTIFY on PostgreSQL, per schema. */
function eventBus(db: Db, config: Config, logger: Logger): EventBus {
  if (!config.database.url) return new InProcessEventBus();
  return new PostgresEventBus(db, config.database.url, schemaOf(db), logger);
}

/** How often the database's ended limit windows are deleted. */
const LIMIT_PRUNE_MS = 5 * 60_000;

/**
 * Where the limits count: Redis when configured (keys per schema, like the bus channel), else
 * the database on PostgreSQL, else (SQLite, one instance) memory. Also what has to run and be
 * closed for it, and Redis's state for /health.
 */
function counterStore(db: Db, config: Config, clock: Clock, logger: Logger): { store: CounterStore; tasks: PeriodicTask[]; close: () => Promise<void>; redis: (() => RedisState) | null } {
  if (config.limits.redisUrl) {
    const schema = schemaOf(db);
    const redis = new RedisCounters({
      url: config.limits.redisUrl,
      prefix: `${config.limits.redisPrefix}${schema ? `${schema}:` : ''}limits:`,
      fallback: new MemoryCounters(),
      logger,
    });
    redis.start();
    return { store: redis, tasks: [], close: () => redis.close(), redis: () => redis.state() };
  }
  if (config.database.url) {
    const repo = new LimitRepository(db);
    return { store: repo, tasks: [{ name: 'limit-windows', intervalMs: LIMIT_PRUNE_MS, run: () => repo.pruneEnded(clock().getTime()) }], close: async () => {}, redis: null };
  }
  return { store: new MemoryCounters(), tasks: [], close: async () => {}, redis: null };
}

export function buildServices(db: Db, config: Config, clock: Clock, worlds: WorldCatalog, version: string, logger: Logger): Services {
  const events = eventBus(db, config, logger);
  const counters = counterStore(db, config, clock, logger);
  const limits = createLimits(config.rateLimit, counters.store, clock);
  const users = new UserRepository(db);
  const sessionRepository = new SessionRepository(db);
  const characters = new CharacterRepository(db);
  const permissions = new WorldPermissionRepository(db);
  const hasher = new BcryptPool(config.security.bcryptRounds);
  const presence = new Presence({ db, bus: events, sessions: sessionRepository, characters, clock });
  const activity = new SessionActivity(sessionRepository, logger);
  const sessions = new SessionService(db, sessionRepository, activity, presence, new SessionCache(events), config.session, clock, config.presence.idleSeconds * 1000);
  const worldAccess = new WorldAccessService(worlds, characters, permissions, config);
  const worldRepository = new WorldRepository(db);
  const policyRepository = new PolicyRepository(db);
  const policies = new PolicyService(policyRepository, worldRepository, clock);
  const accounts = new AccountService({ db, users, sessions: sessionRepository, characters, sessionService: sessions, worldAccess, hasher, clock, config, presence, limits });
  const axisState = new AxisStateRepository(db);
  const characterState = new CharacterStateService(db, axisState, characters, clock);
  const entityClient = entityStateClient(config.integrations, logger);
  const builtinEntities = new BuiltinEntityGenerator();
  const characterService = new CharacterService({
    db,
    characters,
    users,
    sessions: sessionRepository,
    axisState,
    state: characterState,
    worldAccess,
    policies,
    names: nameGenerator(config.integrations, logger),
    entities: entityGenerator(entityClient),
    clock,
    presence,
    defaultWorldId: config.worlds.defaultWorldId,
    playerSelfCreateEnabled: config.characterCreation.playerSelfCreateEnabled,
  });
  const ollama = new OllamaClient(logger);
  const gameRepository = new GameRepository(db);
  const ledgerRepository = new LedgerRepository(db);
  const ledger = new LedgerService(ledgerRepository, clock);
  const npcRepository = new NpcRepository(db);
  const core = new GameCore({
    repo: gameRepository,
    worlds,
    clock,
    bus: events,
    npcs: new NpcPlaces(npcRepository, worlds, events, clock),
    idleMs: config.presence.idleSeconds * 1000,
    maxItemsPerRoom: config.building.maxItemsPerRoom,
    chat: { db, policies, axisState, characters, state: characterState, ledger, translator: new Translator(ollama), translation: config.translation, logger },
  });
  const moderation = new ModerationRepository(db);
  const audit = new AuditLog(moderation, clock);
  const ignores = new IgnoreLists(moderation, events, clock);
  const reports = new ReportService({ db, repo: moderation, audit, limit: limits.reportByAccount, clock });
  const announcements = new Announcements({ db, bus: events, audit, clock });
  const commands = new CommandTable(clock);
  commands.add(...gameVerbs(core, commands, { oocLimit: limits.oocByCharacter, ignores, reports, announcements }));
  const game = new GameService(core, commands, limits.commandBySession, ignores);
  const instanceId = randomUUID();
  // Several instances share a PostgreSQL database: the stream limits count theirs too. SQLite serves one.
  const streamsElsewhere = config.database.url
    ? (holder: StreamHolder) => sessionRepository.streamsElsewhere(instanceId, holder.accountId, holder.address, toDbTime(clock()))
    : null;
  const quota = new CountedStreamQuota(config.events, streamsElsewhere);
  const streams = new EventStreams({ bus: events, quota, instanceId, game: core, repo: gameRepository, sessions: sessionRepository, ignores, config: config.events, clock, logger });
  const linkdeadMs = config.presence.linkdeadSeconds * 1000;
  const sweepLinkdead = async (): Promise<number> => {
    await streams.renewLeases();
    await sessions.flushActivity();
    const away = await presence.sweepLinkdead(linkdeadMs, SWEEP_BATCH);
    await sessionRepository.pruneLeases(toDbTime(new Date(clock().getTime() - linkdeadMs)));
    return away;
  };
  const buildRepository = new BuildRepository(db);
  const worldSync = new WorldSync(worlds, buildRepository, events, logger);
  worldSync.onRoomsChanged((worldId, roomIds) => streams.roomsChanged(worldId, roomIds));
  const scripts = new ScriptService({ db, worlds, sync: worldSync, npcs: npcRepository, items: buildRepository, game: core, repo: gameRepository, bus: events, clock, logger, limits: config.scripts });
  const build = new BuildService({
    db,
    repo: buildRepository,
    npcs: npcRepository,
    worlds,
    access: worldAccess,
    sync: worldSync,
    bus: events,
    clock,
    limit: limits.buildByAccount,
    // A bound on what a world's scripts cost, not an abuse limit: it holds whatever [rate_limit] enabled says.
    scriptExits: new Limit({ store: counters.store, name: 'script-exits-world', max: config.scripts.exitChangesPerMinute, windowSeconds: 60, what: `exit changes by this world's scripts (more than ${config.scripts.exitChangesPerMinute} a minute, [scripts] exit_changes_per_minute)`, enabled: true, clock }),
    bounds: config.building,
    checkScript: (source) => scripts.check(source),
  });
  scripts.useBuild(build);
  commands.add(...buildCommands(build));
  // A verb the game does not know may be a room's, an item's or an NPC's own (`pull lever`).
  commands.fallback = (turn) => scripts.command(turn.world.id, turn.room.id, { name: turn.actor.name, characterId: turn.actor.characterId }, turn.verb, turn.args);
  return {
    build,
    worldSync,
    scripts,
    scriptClock: new ScriptClock({ worlds, npcs: npcRepository, scripts, clock, logger, instanceId }),
    lab: new LabService(worlds, policies, policyRepository, new Translator(ollama), config.translation),
    llm: new LlmCommandService(ollama, config.llm),
    ledger,
    characters: characterService,
    game,
    events,
    limits,
    streams,
    sweepLinkdead,
    entry: new EntryService({
      db,
      users,
      characters,
      sessions: sessionRepository,
      accounts,
      characterService,
      worldAccess,
      hasher,
      clock,
      presence,
      defaultWorldId: config.worlds.defaultWorldId,
      allowMultiWorldCharacters: config.worlds.allowMultiWorldCharacters,
    }),
    worlds,
    worldAccess,
    worldRepository,
    policyRepository,
    policies,
    publisher: new PublishService(policyRepository, policies, config.policy),
    importer: new ImportService(policyRepository, policies),
    users,
    hasher,
    health: new HealthService(sessionRepository, clock, version, counters.redis),
    sessions,
    accounts,
    telnetSettings: new TelnetSettingsService(new TelnetSettingsRepository(db), clock),
    userAdmin: new UserAdminService({ db, users, sessions: sessionRepository, characters, items: gameRepository, permissions, worlds, hasher, clock, presence, events, audit }),
    audit,
    reports,
    announcements,
    inspection: new InspectionService(new InspectionRepository(db), worlds, clock, config.presence.idleSeconds * 1000),
    conditionAxis: new ConditionAxisService({
      worlds,
      policies,
      // Condition-axis maps upstream failures itself (501/502/504), so it gets the raw errors.
      generator: entityClient ? { generate: (seed) => entityClient.generate(seed) } : builtinEntities,
      clock,
    }),
    referenceImport: new ReferenceImportService({ db, worlds, repo: new ReferenceImportRepository(), axisState, ledger: ledgerRepository, policies: policyRepository, events, chat: config.chat, clock }),
    entityStateCounters: () => (entityClient ? { ...entityClient.counters } : null),
    maintenanceTasks: [
      { name: 'expired-sessions', intervalMs: config.session.sweepIntervalSeconds * 1000, run: () => sessions.sweepExpired() },
      // A tenth of linkdead_seconds (1 to 30 s): characters leave the lists close to on time.
      { name: 'linkdead-sessions', intervalMs: Math.min(30_000, Math.max(1000, linkdeadMs / 10)), run: sweepLinkdead },
      {
        name: 'expired-temporary-accounts',
        intervalMs: config.accounts.purgeIntervalMinutes * 60_000,
        run: () => users.purgeExpiredTemporary(toDbTime(clock())),
      },
      {
        name: 'chat-retention',
        intervalMs: config.chat.pruneIntervalMinutes * 60_000,
        run: () => gameRepository.pruneMessages(toDbTime(new Date(clock().getTime() - config.chat.retentionDays * 86_400_000)), config.chat.maxMessagesPerRoom),
      },
      ...counters.tasks,
    ],
    close: async () => {
      await activity.close();
      await hasher.close();
      await counters.close();
    },
  };
}
