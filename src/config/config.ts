/**
 * Server configuration: built-in defaults < optional INI file < MUD_* environment variables.
 *
 * Every key is declared once in SETTINGS (type, default, env name, documentation); the
 * loader parses and validates all of them into one typed object. A bad value of a known
 * key stops start-up with a ConfigError naming the key and the accepted values; unknown
 * keys and unknown MUD_* variables only produce warnings.
 */
import { readFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import ini from 'ini';

export class ConfigError extends Error {}

type Kind =
  | { type: 'string' }
  | { type: 'int'; min: number; max: number }
  | { type: 'number'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'list' }
  | { type: 'url'; protocols: readonly string[] }
  | { type: 'trust_proxy' };

interface Setting {
  section: string;
  key: string;
  env: string;
  kind: Kind;
  default: string;
  doc: string;
}

const s = (section: string, key: string, kind: Kind, def: string, doc: string, env?: string): Setting => ({
  section,
  key,
  kind,
  default: def,
  doc,
  env: env ?? `MUD_${section.toUpperCase()}_${key.toUpperCase()}`,
});

/**
 * The lowest bcrypt cost for real passwords (docs/decisions.md, "Accounts and sessions"). Lower costs start,
 * with a warning, because a test suite that registers thousands of accounts would otherwise spend
 * most of its time hashing.
 */
const SAFE_BCRYPT_ROUNDS = 10;

/** The single list of configuration keys; config/server.example.ini documents the same list. */
export const SETTINGS: readonly Setting[] = [
  s('server', 'host', { type: 'string' }, '127.0.0.1', 'Address to listen on.', 'MUD_HOST'),
  s('server', 'port', { type: 'int', min: 0, max: 65535 }, '8000', 'TCP port (0 picks a free one).', 'MUD_PORT'),
  s('server', 'max_body_bytes', { type: 'int', min: 1024, max: 64 * 1024 * 1024 }, '1048576', 'Largest accepted request body; larger bodies get 413.'),
  s('server', 'shutdown_timeout_seconds', { type: 'int', min: 1, max: 600 }, '10', 'How long a graceful shutdown waits for in-flight requests.'),
  s('server', 'validate_responses', { type: 'bool' }, 'false', 'Validate every response against openapi.yaml (on in tests; costs CPU).'),
  s('server', 'workers', { type: 'int', min: 0, max: 256 }, '1', 'Server processes behind the one port (serve --workers overrides it; 0: one per core); more than 1 needs PostgreSQL.'),
  s('server', 'trust_proxy', { type: 'trust_proxy' }, 'false', 'Reverse proxies whose X-Forwarded-For names the client address (for the per-address limits): false, a hop count, or their addresses.'),
  s('database', 'path', { type: 'string' }, 'data/mud.db', 'SQLite file, relative to the working directory.', 'MUD_DB_PATH'),
  s('database', 'url', { type: 'string' }, '', 'postgres://… connection string; when set, PostgreSQL is used instead of SQLite.', 'DATABASE_URL'),
  s('logging', 'level', { type: 'enum', values: ['error', 'warn', 'info', 'debug', 'silent'] }, 'info', 'Log level of the JSON log lines on stdout.', 'MUD_LOG_LEVEL'),
  s('security', 'cors_origins', { type: 'list' }, 'http://localhost:8000, http://127.0.0.1:8000', 'Comma-separated origins allowed by CORS.', 'MUD_CORS_ORIGINS'),
  s('worlds', 'worlds_root', { type: 'string' }, 'worlds', 'Folder holding one world package per sub-folder.', 'MUD_WORLDS_ROOT'),
  s('worlds', 'default_world_id', { type: 'string' }, 'emberwick', 'World used when a request names none.', 'MUD_DEFAULT_WORLD_ID'),
  s('worlds', 'allow_multi_world_characters', { type: 'bool' }, 'false', 'POST /login-direct may create a character in a second world.', 'MUD_ALLOW_MULTI_WORLD_CHARACTERS'),
  s('session', 'ttl_minutes', { type: 'int', min: 1, max: 525600 }, '480', 'Session lifetime in minutes.', 'MUD_SESSION_TTL_MINUTES'),
  s('session', 'sliding_expiration', { type: 'bool' }, 'true', 'Each validated request extends the session by ttl_minutes.', 'MUD_SESSION_SLIDING_EXPIRATION'),
  s('session', 'max_age_days', { type: 'int', min: 1, max: 365 }, '7', 'A session ends this long after login, however active it is.'),
  s('session', 'allow_multiple_sessions', { type: 'bool' }, 'true', 'When false, a login closes the account\'s other sessions.', 'MUD_SESSION_ALLOW_MULTIPLE'),
  s('session', 'sweep_interval_seconds', { type: 'int', min: 10, max: 86400 }, '300', 'How often expired sessions are removed in bulk.'),
  s('security', 'bcrypt_rounds', { type: 'int', min: 4, max: 15 }, '12', `bcrypt cost for new password hashes (each +1 doubles the time); below ${SAFE_BCRYPT_ROUNDS} only for tests, with a warning.`, 'MUD_BCRYPT_ROUNDS'),
  s('accounts', 'purge_interval_minutes', { type: 'int', min: 1, max: 10080 }, '60', 'How often expired temporary accounts are purged (also once at start).'),
  s('rate_limit', 'enabled', { type: 'bool' }, 'true', 'Master switch of all rate limits (off for load tests).', 'MUD_RATE_LIMIT_ENABLED'),
  s('rate_limit', 'window_seconds', { type: 'int', min: 1, max: 86400 }, '60', 'Length of the window the login, registration and password-change limits count in.'),
  s('rate_limit', 'login_per_address', { type: 'int', min: 1, max: 100000 }, '30', 'Failed logins per client address per window; past it logins from the address are refused before the password is checked. Logins with the right password are not counted.'),
  s('rate_limit', 'login_per_username', { type: 'int', min: 1, max: 100000 }, '10', 'Failed logins per account per window; past it a wrong password gets 429, the right one still logs in. Also failed logins per client address and username, past which that name is refused from the address before the password is checked.'),
  s('rate_limit', 'register_per_address', { type: 'int', min: 1, max: 100000 }, '10', 'Registrations per client address per window.'),
  s('rate_limit', 'register_per_username', { type: 'int', min: 1, max: 100000 }, '5', 'Registration attempts per username per window.'),
  s('rate_limit', 'change_password_per_address', { type: 'int', min: 1, max: 100000 }, '10', 'Password changes per client address per window.'),
  s('rate_limit', 'change_password_per_username', { type: 'int', min: 1, max: 100000 }, '5', 'Failed password changes per account per window; past it a wrong current password gets 429, the right one still works.'),
  s('rate_limit', 'command_per_session', { type: 'int', min: 1, max: 100000 }, '60', 'Game commands (POST /command) per session per command window.'),
  s('rate_limit', 'command_window_seconds', { type: 'int', min: 1, max: 3600 }, '10', 'Length of the window command_per_session counts in.'),
  s('rate_limit', 'ooc_per_character', { type: 'int', min: 1, max: 100000 }, '5', 'Out-of-character messages (ooc) per character per ooc window, on top of the command throttle.'),
  s('rate_limit', 'ooc_window_seconds', { type: 'int', min: 1, max: 3600 }, '60', 'Length of the window ooc_per_character counts in.'),
  s('rate_limit', 'report_per_account', { type: 'int', min: 1, max: 100000 }, '5', 'Reports to staff (report) per account per report window.'),
  s('rate_limit', 'report_window_seconds', { type: 'int', min: 1, max: 86400 }, '3600', 'Length of the window report_per_account counts in.'),
  s('rate_limit', 'build_per_account', { type: 'int', min: 1, max: 100000 }, '120', 'World-building changes (building API and @ commands) per account per build window.'),
  s('rate_limit', 'build_window_seconds', { type: 'int', min: 1, max: 3600 }, '60', 'Length of the window build_per_account counts in.'),
  s('limits', 'redis_url', { type: 'url', protocols: ['redis:', 'rediss:'] }, '', 'redis://… server that holds the rate-limit counts (empty: the database on PostgreSQL, memory on SQLite).'),
  s('limits', 'redis_prefix', { type: 'string' }, 'mud:', 'Prefix of this server\'s keys in that Redis, for deployments sharing one.'),
  s('policy', 'exports_root', { type: 'string' }, 'data/policy-exports', 'Folder that publish writes policy artifacts into.', 'MUD_POLICY_EXPORTS_ROOT'),
  s('policy', 'max_artifact_bytes', { type: 'int', min: 65536, max: 4294967296 }, '16777216', 'Largest publish artifact file; a publish that would write a larger one gets 422.'),
  s('policy', 'max_artifacts_per_scope', { type: 'int', min: 1, max: 10000 }, '10', 'Newest publish artifacts kept in each world or client-profile folder; publish deletes older ones.'),
  s('policy', 'max_client_profiles_per_world', { type: 'int', min: 1, max: 10000 }, '10', 'Client-profile folders kept per world; publish deletes those published longest ago.'),
  s('character_creation', 'player_self_create_enabled', { type: 'bool' }, 'true', 'Players may create their own characters (POST /characters/create).', 'MUD_PLAYER_SELF_CREATE_ENABLED'),
  s('character_creation', 'default_access_mode', { type: 'enum', values: ['open', 'invite'] }, 'invite', 'Access mode of worlds whose package and [world_policy.<id>] set none.', 'MUD_CHAR_CREATE_DEFAULT_MODE'),
  s('character_creation', 'default_naming_mode', { type: 'enum', values: ['generated', 'manual'] }, 'generated', 'Naming mode of worlds that set none.', 'MUD_CHAR_CREATE_DEFAULT_NAMING'),
  s('character_creation', 'default_world_slot_limit', { type: 'int', min: 0, max: 1000 }, '10', 'Character slots per account in worlds that set none.', 'MUD_CHAR_CREATE_DEFAULT_SLOT_LIMIT'),
  s('integrations', 'namegen_mode', { type: 'enum', values: ['builtin', 'http'] }, 'builtin', 'Character names from the built-in generator or an HTTP name service.', 'MUD_NAMEGEN_MODE'),
  s('integrations', 'namegen_base_url', { type: 'string' }, '', 'Base URL of the name service (namegen_mode = http).', 'MUD_NAMEGEN_BASE_URL'),
  s('integrations', 'namegen_timeout_seconds', { type: 'number', min: 0.1, max: 60 }, '3', 'Timeout of one name-service request.', 'MUD_NAMEGEN_TIMEOUT_SECONDS'),
  s('integrations', 'entity_state_mode', { type: 'enum', values: ['builtin', 'http'] }, 'builtin', 'Character axis profiles from the built-in generator or an HTTP entity-state service.', 'MUD_ENTITY_STATE_MODE'),
  s('integrations', 'entity_state_base_url', { type: 'string' }, '', 'Base URL of the entity-state service (entity_state_mode = http).', 'MUD_ENTITY_STATE_BASE_URL'),
  s('integrations', 'entity_state_timeout_seconds', { type: 'number', min: 0.1, max: 60 }, '3', 'Timeout of one entity-state request.', 'MUD_ENTITY_STATE_TIMEOUT_SECONDS'),
  s('integrations', 'entity_state_include_prompts', { type: 'bool' }, 'false', 'Ask the entity-state service to include prompts.', 'MUD_ENTITY_STATE_INCLUDE_PROMPTS'),
  s('translation', 'enabled', { type: 'bool' }, 'true', 'Master switch of OOC→IC translation; a world also needs translation_layer.enabled.', 'MUD_TRANSLATION_ENABLED'),
  s('translation', 'ollama_url', { type: 'string' }, '', "Ollama base URL for every world's translation (empty: each world's translation_layer.ollama_base_url).", 'MUD_TRANSLATION_OLLAMA_URL'),
  s('llm', 'allowed_server_urls', { type: 'list' }, 'http://localhost:11434, http://127.0.0.1:11434', 'Ollama servers /admin/llm/command may talk to (the first is the default).', 'MUD_LLM_ALLOWED_SERVER_URLS'),
  s('llm', 'request_timeout_seconds', { type: 'number', min: 0.1, max: 600 }, '120', 'Timeout of list/ps/show/run requests to Ollama.', 'MUD_LLM_REQUEST_TIMEOUT_SECONDS'),
  s('llm', 'pull_timeout_seconds', { type: 'number', min: 1, max: 3600 }, '300', 'Timeout of a model pull.', 'MUD_LLM_PULL_TIMEOUT_SECONDS'),
  s('llm', 'history_limit', { type: 'int', min: 2, max: 1000 }, '40', 'Messages of /admin/llm/command run history kept per session.', 'MUD_LLM_HISTORY_LIMIT'),
  s('llm', 'allowed_registries', { type: 'list' }, 'registry.ollama.ai', 'Registry hosts (host[:port]) models may come from in pull/show/run; a name without a host means registry.ollama.ai.'),
  s('llm', 'max_prompt_bytes', { type: 'int', min: 64, max: 16384 }, '16384', 'Largest run prompt in UTF-8 bytes (the contract caps the command at 16384 characters).'),
  s('llm', 'max_history_bytes_per_session', { type: 'int', min: 1024, max: 67108864 }, '262144', 'Bytes of run history kept per session; the oldest messages go first.'),
  s('llm', 'max_history_bytes_total', { type: 'int', min: 1024, max: 1073741824 }, '4194304', 'Bytes of run history kept over all sessions; the least recently used sessions go first.'),
  s('metrics', 'mode', { type: 'enum', values: ['off', 'open', 'admin'] }, 'off', 'GET /metrics: off, open to anyone, or for admin sessions only.', 'MUD_METRICS_MODE'),
  s('chat', 'retention_days', { type: 'int', min: 1, max: 3650 }, '7', 'Chat messages older than this are deleted.'),
  s('chat', 'max_messages_per_room', { type: 'int', min: 20, max: 1000000 }, '500', 'Newest chat messages kept per room; older ones are deleted.'),
  s('chat', 'prune_interval_minutes', { type: 'int', min: 1, max: 1440 }, '10', 'How often old and excess chat messages are deleted (also once at start).'),
  s('building', 'max_rooms_per_world', { type: 'int', min: 1, max: 1000000 }, '10000', 'Rooms a world may have; building past it answers 409.'),
  s('building', 'max_items_per_room', { type: 'int', min: 1, max: 100000 }, '200', 'Items that may lie in one room; creating, moving or dropping one more there is refused.'),
  s('building', 'max_npcs_per_world', { type: 'int', min: 1, max: 100000 }, '2000', 'NPCs a world may have; creating one more answers 409.'),
  s('building', 'history_per_world', { type: 'int', min: 100, max: 10000000 }, '20000', 'Newest building changes kept per world in its history; older ones are deleted.'),
  s('scripts', 'cpu_ms', { type: 'int', min: 5, max: 1000 }, '50', 'CPU time one run of a builder\'s script may take (host calls included); past it the run is stopped.'),
  s('scripts', 'memory_mb', { type: 'int', min: 16, max: 1024 }, '32', 'Memory of one world\'s script engine, all its scripts together.'),
  s('scripts', 'actions_per_run', { type: 'int', min: 1, max: 1000 }, '20', 'Says, emotes, echoes, tells, moves and timer calls one run may make.'),
  s('scripts', 'chain_depth', { type: 'int', min: 1, max: 20 }, '4', 'How deep what scripts do may wake other scripts (an NPC\'s say waking another\'s onSay is one level).'),
  s('scripts', 'timers_per_world', { type: 'int', min: 1, max: 100000 }, '200', 'Timers (every, after) a world\'s scripts may hold at once.'),
  s('scripts', 'min_period_seconds', { type: 'number', min: 0.1, max: 3600 }, '1', 'Shortest time a timer may wait.'),
  s('scripts', 'state_bytes', { type: 'int', min: 256, max: 1048576 }, '16384', 'Largest `state` a script keeps, as JSON.'),
  s('scripts', 'faults_to_suspend', { type: 'int', min: 1, max: 1000 }, '5', 'Faults in a row after which a script is suspended until a builder saves it again.'),
  s('scripts', 'max_period_seconds', { type: 'int', min: 60, max: 1000000 }, '604800', 'Longest time a timer may wait; a script asking for more is stopped with an error.'),
  s('scripts', 'runs_per_happening', { type: 'int', min: 1, max: 10000 }, '100', 'Script runs one happening (a player\'s action, a timer, a load) may cause, at every depth together; the rest are dropped with an error.'),
  s('scripts', 'lines_per_happening', { type: 'int', min: 1, max: 10000 }, '100', 'Says, emotes, echoes and tells the scripts woken by one happening may make together; the rest are dropped with an error.'),
  s('scripts', 'queue_per_world', { type: 'int', min: 1, max: 100000 }, '200', 'Script runs waiting their turn in one world; past it new ones are dropped with an error.'),
  s('scripts', 'exit_changes_per_minute', { type: 'int', min: 1, max: 100000 }, '60', 'Exits a world\'s scripts may open or close per minute; past it the script is stopped with an error.'),
  s('presence', 'idle_seconds', { type: 'int', min: 1, max: 86400 }, '60', 'A character without an open event stream stays connected this long after its last request; then it is link-dead.'),
  s('presence', 'linkdead_seconds', { type: 'int', min: 1, max: 604800 }, '300', 'A link-dead character leaves the room and world lists after this long (its session stays valid; it comes back with the next request).'),
  s('events', 'heartbeat_seconds', { type: 'int', min: 1, max: 300 }, '15', 'Seconds between heartbeat comments on an idle event stream (GET /events).'),
  s('events', 'streams_per_session', { type: 'int', min: 1, max: 100 }, '2', 'Open event streams per session; a new one ends the oldest (reason replaced).'),
  s('events', 'streams_per_instance', { type: 'int', min: 1, max: 1000000 }, '5000', 'Open event streams per server instance; past it GET /events answers 503.'),
  s('events', 'streams_per_account', { type: 'int', min: 1, max: 100000 }, '10', 'Open event streams (and telnet connections playing) per account, on all instances of one database together; past it GET /events answers 429.'),
  s('events', 'streams_per_address', { type: 'int', min: 1, max: 1000000 }, '50', 'Open event streams (and telnet connections playing) per client address, on all instances of one database together; past it GET /events answers 429.'),
  s('events', 'backlog_bytes', { type: 'int', min: 16384, max: 67108864 }, '65536', 'Bytes of events a stream may hold for a client that does not read them; past it the stream ends (reason lagging).'),
  s('telnet', 'enabled', { type: 'bool' }, 'false', 'Serve the telnet front door for MUD clients (Mudlet, TinTin++, MUSHclient).'),
  s('telnet', 'host', { type: 'string' }, '127.0.0.1', 'Address the plain (unencrypted) telnet listener binds to; keep it local and offer TLS to others.'),
  s('telnet', 'port', { type: 'int', min: 0, max: 65535 }, '4000', 'TCP port of the plain telnet listener (0 picks a free one).'),
  s('telnet', 'tls_host', { type: 'string' }, '', 'Address of the telnet-over-TLS listener (empty: the same as host).'),
  s('telnet', 'tls_port', { type: 'int', min: 0, max: 65535 }, '4443', 'TCP port of the telnet-over-TLS listener, which runs when tls_cert and tls_key are set (0 picks a free one).'),
  s('telnet', 'tls_cert', { type: 'string' }, '', 'PEM certificate (chain) file of the TLS listener.'),
  s('telnet', 'tls_key', { type: 'string' }, '', 'PEM private key file of the TLS listener.'),
  s('telnet', 'max_connections', { type: 'int', min: 1, max: 100000 }, '1000', 'Open telnet connections per server instance (with workers, per host), TLS handshakes included; more are told so and closed at once.'),
  s('telnet', 'max_connections_per_address', { type: 'int', min: 1, max: 10000 }, '10', 'Open telnet connections per client address, TLS handshakes included (with workers, per host).'),
  s('telnet', 'handshake_timeout_seconds', { type: 'int', min: 1, max: 600 }, '10', 'A TLS connection that has not finished its handshake by then is closed.'),
  s('telnet', 'login_timeout_seconds', { type: 'int', min: 1, max: 3600 }, '120', 'A connection that has not logged in by then is closed.'),
  s('telnet', 'idle_timeout_seconds', { type: 'int', min: 1, max: 604800 }, '1800', 'A logged-in connection that sends nothing for this long is closed (and logged out).'),
  s('telnet', 'compression', { type: 'bool' }, 'true', 'Offer MCCP2 (zlib) compression of what the server sends to clients that take it.'),
  s('telnet', 'mssp_name', { type: 'string' }, 'mud-server', 'The MUD\'s name for MUD directories (MSSP NAME).'),
  s('telnet', 'mssp_hostname', { type: 'string' }, '', 'Host name players connect to, for MUD directories (MSSP HOSTNAME; empty: not sent).'),
  s('telnet', 'mssp_contact', { type: 'string' }, '', 'Contact address for MUD directories (MSSP CONTACT; empty: not sent).'),
  s('telnet', 'mssp_website', { type: 'string' }, '', 'Web site for MUD directories (MSSP WEBSITE; empty: not sent).'),
  s('telnet', 'mssp_language', { type: 'string' }, 'English', 'Language the game is played in (MSSP LANGUAGE).'),
  s('telnet', 'mssp_genre', { type: 'string' }, 'Fantasy', 'Genre for MUD directories (MSSP GENRE).'),
];

/** Keys of the per-world `[world_policy.<world_id>]` sections (they override world.json). */
const WORLD_POLICY_KEYS: Record<string, Setting> = {
  access_mode: s('world_policy', 'access_mode', { type: 'enum', values: ['open', 'invite'] }, '', 'open or invite'),
  naming_mode: s('world_policy', 'naming_mode', { type: 'enum', values: ['generated', 'manual'] }, '', 'generated or manual'),
  slot_limit_per_account: s('world_policy', 'slot_limit_per_account', { type: 'int', min: 0, max: 1000 }, '', 'slots'),
};

/** Environment variables that are read outside SETTINGS and must not be reported as unknown. */
const OTHER_ENV = new Set(['MUD_CONFIG', 'MUD_ADMIN_USER', 'MUD_ADMIN_PASSWORD', 'MUD_TEST_DATABASE_URL', 'MUD_TEST_REDIS_URL']);

export interface Config {
  server: {
    host: string;
    port: number;
    maxBodyBytes: number;
    shutdownTimeoutSeconds: number;
    validateResponses: boolean;
    workers: number;
    trustProxy: TrustProxy;
  };
  database: { path: string; url: string };
  logging: { level: 'error' | 'warn' | 'info' | 'debug' | 'silent' };
  worlds: { worldsRoot: string; defaultWorldId: string; allowMultiWorldCharacters: boolean };
  session: { ttlMinutes: number; slidingExpiration: boolean; maxAgeDays: number; allowMultipleSessions: boolean; sweepIntervalSeconds: number };
  security: { corsOrigins: string[]; bcryptRounds: number };
  accounts: { purgeIntervalMinutes: number };
  rateLimit: {
    enabled: boolean;
    windowSeconds: number;
    loginPerAddress: number;
    loginPerUsername: number;
    registerPerAddress: number;
    registerPerUsername: number;
    changePasswordPerAddress: number;
    changePasswordPerUsername: number;
    commandPerSession: number;
    commandWindowSeconds: number;
    oocPerCharacter: number;
    oocWindowSeconds: number;
    reportPerAccount: number;
    reportWindowSeconds: number;
    buildPerAccount: number;
    buildWindowSeconds: number;
  };
  limits: { redisUrl: string; redisPrefix: string };
  policy: { exportsRoot: string; maxArtifactBytes: number; maxArtifactsPerScope: number; maxClientProfilesPerWorld: number };
  integrations: {
    namegenMode: 'builtin' | 'http';
    namegenBaseUrl: string;
    namegenTimeoutSeconds: number;
    entityStateMode: 'builtin' | 'http';
    entityStateBaseUrl: string;
    entityStateTimeoutSeconds: number;
    entityStateIncludePrompts: boolean;
  };
  translation: { enabled: boolean; ollamaUrl: string };
  metrics: { mode: 'off' | 'open' | 'admin' };
  chat: { retentionDays: number; maxMessagesPerRoom: number; pruneIntervalMinutes: number };
  building: { maxRoomsPerWorld: number; maxItemsPerRoom: number; maxNpcsPerWorld: number; historyPerWorld: number };
  scripts: { cpuMs: number; memoryMb: number; actionsPerRun: number; chainDepth: number; timersPerWorld: number; minPeriodSeconds: number; stateBytes: number; faultsToSuspend: number; maxPeriodSeconds: number; runsPerHappening: number; linesPerHappening: number; queuePerWorld: number; exitChangesPerMinute: number };
  presence: { idleSeconds: number; linkdeadSeconds: number };
  events: { heartbeatSeconds: number; streamsPerSession: number; streamsPerInstance: number; streamsPerAccount: number; streamsPerAddress: number; backlogBytes: number };
  telnet: {
    enabled: boolean;
    host: string;
    port: number;
    tlsHost: string;
    tlsPort: number;
    tlsCert: string;
    tlsKey: string;
    maxConnections: number;
    maxConnectionsPerAddress: number;
    handshakeTimeoutSeconds: number;
    loginTimeoutSeconds: number;
    idleTimeoutSeconds: number;
    compression: boolean;
    msspName: string;
    msspHostname: string;
    msspContact: string;
    msspWebsite: string;
    msspLanguage: string;
    msspGenre: string;
  };
  llm: {
    allowedServerUrls: string[];
    requestTimeoutSeconds: number;
    pullTimeoutSeconds: number;
    /** Most messages (user + assistant) kept per session. */
    historyLimit: number;
    /** Registry hosts (`host[:port]`) model names may name; a name without one means the default registry. */
    allowedRegistries: string[];
    /** Largest `run` prompt, in UTF-8 bytes. */
    maxPromptBytes: number;
    /** Most bytes of kept message contents (UTF-8) per session, and over all sessions. */
    maxHistoryBytesPerSession: number;
    maxHistoryBytesTotal: number;
  };
  characterCreation: { playerSelfCreateEnabled: boolean; defaultAccessMode: 'open' | 'invite'; defaultNamingMode: 'generated' | 'manual'; defaultWorldSlotLimit: number };
  /** `[world_policy.<world_id>]` sections, keyed by world id. */
  worldPolicies: Record<string, WorldPolicyOverride>;
}

/**
 * Express's `trust proxy`: off, the number of proxy hops in front of the server, or the
 * proxies' addresses. `true` (trust every hop) is not offered: any client could then pick its
 * own address by sending X-Forwarded-For.
 */
export type TrustProxy = false | number | string[];

/** What `[server] trust_proxy` accepts, as the example INI and start-up errors say it. */
export const TRUST_PROXY_VALUES =
  'false, a hop count from 1 to 10, or a comma-separated list of proxy addresses, subnets (10.0.0.0/8) and the names loopback, linklocal, uniquelocal';

/** Express's names for address ranges, accepted beside addresses and subnets. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

/** The parsed value, or undefined when `value` is none of TRUST_PROXY_VALUES. */
function parseTrustProxy(value: string): TrustProxy | undefined {
  const lower = value.toLowerCase();
  if (lower === '' || FALSE.includes(lower)) return false;
  if (/^\d+$/.test(lower)) {
    const hops = Number(lower);
    return hops >= 1 && hops <= 10 ? hops : undefined;
  }
  const entries = lower.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
  return entries.length > 0 && entries.every(isProxyAddress) ? entries : undefined;
}

export interface WorldPolicyOverride {
  accessMode?: 'open' | 'invite';
  namingMode?: 'generated' | 'manual';
  slotLimitPerAccount?: number;
}

export interface LoadedConfig {
  config: Config;
  /** Problems worth a warning once a logger exists (unknown keys, unknown variables). */
  warnings: string[];
  /** The INI file that was read, if any. */
  source: string | null;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Path of the INI file; defaults to MUD_CONFIG or config/server.ini when it exists. */
  iniPath?: string | null;
}

const TRUE = ['true', 'yes', '1', 'on'];
const FALSE = ['false', 'no', '0', 'off'];

function parseValue(setting: Setting, raw: string, origin: string): unknown {
  const name = `[${setting.section}] ${setting.key} (${origin})`;
  const value = raw.trim();
  const kind = setting.kind;
  switch (kind.type) {
    case 'string':
      return value;
    case 'list':
      return value.split(',').map((v) => v.trim()).filter((v) => v.length > 0);
    case 'int': {
      const n = Number(value);
      if (!/^-?\d+$/.test(value) || n < kind.min || n > kind.max) {
        throw new ConfigError(`Invalid value '${raw}' for ${name}: expected an integer from ${kind.min} to ${kind.max}`);
      }
      return n;
    }
    case 'number': {
      const n = Number(value);
      if (value === '' || !Number.isFinite(n) || n < kind.min || n > kind.max) {
        throw new ConfigError(`Invalid value '${raw}' for ${name}: expected a number from ${kind.min} to ${kind.max}`);
      }
      return n;
    }
    case 'bool': {
      const lower = value.toLowerCase();
      if (TRUE.includes(lower)) return true;
      if (FALSE.includes(lower)) return false;
      throw new ConfigError(`Invalid value '${raw}' for ${name}: expected one of ${[...TRUE, ...FALSE].join(', ')}`);
    }
    case 'enum': {
      const lower = value.toLowerCase();
      if (!kind.values.includes(lower)) {
        throw new ConfigError(`Invalid value '${raw}' for ${name}: expected one of ${kind.values.join(', ')}`);
      }
      return lower;
    }
    case 'url': {
      if (value === '') return value;
      let protocol = '';
      try {
        protocol = new URL(value).protocol;
      } catch {
        // Not a URL: refused below like a wrong scheme.
      }
      if (!kind.protocols.includes(protocol)) {
        throw new ConfigError(`Invalid value '${raw}' for ${name}: expected empty or a ${kind.protocols.map((p) => `${p}//…`).join(' or ')} URL`);
      }
      return value;
    }
    case 'trust_proxy': {
      const trust = parseTrustProxy(value);
      if (trust === undefined) throw new ConfigError(`Invalid value '${raw}' for ${name}: expected ${TRUST_PROXY_VALUES}`);
      return trust;
    }
  }
}

function camel(key: string): string {
  return key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

function readIni(file: string): Record<string, Record<string, unknown>> {
  try {
    return ini.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
  } catch (err) {
    throw new ConfigError(`Cannot read config file ${file}: ${(err as Error).message}`);
  }
}

function readWorldPolicy(worldId: string, keys: unknown, file: string, warnings: string[]): WorldPolicyOverride {
  const policy: Record<string, unknown> = {};
  if (typeof keys !== 'object' || keys === null) return policy;
  for (const [key, raw] of Object.entries(keys)) {
    const setting = WORLD_POLICY_KEYS[key];
    if (!setting) {
      warnings.push(`Ignoring unknown config key [world_policy.${worldId}] ${key} in ${file}`);
      continue;
    }
    policy[camel(key)] = parseValue({ ...setting, section: `world_policy.${worldId}` }, String(raw), `file ${file}`);
  }
  return policy as WorldPolicyOverride;
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const warnings: string[] = [];
  let iniPath = options.iniPath;
  if (iniPath === undefined) {
    const explicit = env.MUD_CONFIG?.trim();
    if (explicit) {
      if (!existsSync(explicit)) throw new ConfigError(`Config file named by MUD_CONFIG does not exist: ${explicit}`);
      iniPath = explicit;
    } else {
      const fallback = path.join('config', 'server.ini');
      iniPath = existsSync(fallback) ? fallback : null;
    }
  }
  const file = iniPath ? readIni(iniPath) : {};

  const known = new Map(SETTINGS.map((st) => [`${st.section}.${st.key}`, st]));
  const worldPolicies: Record<string, WorldPolicyOverride> = {};
  for (const [section, entries] of Object.entries(file)) {
    if (typeof entries !== 'object' || entries === null) {
      warnings.push(`Ignoring key '${section}' outside any section in ${iniPath}`);
      continue;
    }
    if (section === 'world_policy') {
      // The ini parser nests `[world_policy.<id>]` as world_policy → id → keys.
      for (const [worldId, keys] of Object.entries(entries)) {
        worldPolicies[worldId] = readWorldPolicy(worldId, keys, String(iniPath), warnings);
      }
      continue;
    }
    for (const key of Object.keys(entries)) {
      if (!known.has(`${section}.${key}`)) warnings.push(`Ignoring unknown config key [${section}] ${key} in ${iniPath}`);
    }
  }
  const knownEnv = new Set([...SETTINGS.map((st) => st.env), ...OTHER_ENV]);
  for (const name of Object.keys(env)) {
    if (name.startsWith('MUD_') && !knownEnv.has(name)) warnings.push(`Ignoring unknown environment variable ${name}`);
  }

  const tree: Record<string, Record<string, unknown>> = {};
  for (const st of SETTINGS) {
    const fromEnv = env[st.env];
    const fromIni = file[st.section]?.[st.key];
    let value: unknown;
    if (fromEnv !== undefined && fromEnv.trim() !== '') {
      value = parseValue(st, fromEnv, `environment ${st.env}`);
    } else if (fromIni !== undefined) {
      value = parseValue(st, String(fromIni), `file ${iniPath}`);
    } else {
      value = parseValue(st, st.default, 'default');
    }
    (tree[camel(st.section)] ??= {})[camel(st.key)] = value;
  }
  const config = { ...tree, worldPolicies } as unknown as Config;
  if (config.security.bcryptRounds < SAFE_BCRYPT_ROUNDS) {
    warnings.push(`bcrypt_rounds is ${config.security.bcryptRounds}, below ${SAFE_BCRYPT_ROUNDS}: password hashes are cheap to guess; use such a cost for tests only`);
  }
  return { config, warnings, source: iniPath };
}
