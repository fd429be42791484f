/**
 * The benchmark scenarios, as data: bench/run.ts measures each one in order against a
 * freshly started server. Add a scenario by appending to SCENARIOS.
 *
 * A scenario that needs state (a logged-in session, a background load) gets it from
 * `setup`, which runs once against the live server before the warm-up; what it returns
 * can override the request (e.g. put the session id into the path or body) and can
 * name a `teardown` that runs after the measurement, also when the measurement fails.
 *
 * Example (once the routes exist; postJson and startBackgroundLoad come from ./load.ts):
 *
 *   {
 *     name: 'POST /command while 50 logins run',
 *     method: 'POST',
 *     path: '/sessions/{id}/command',
 *     body: { command: 'look' },
 *     async setup(baseUrl) {
 *       const { session_id } = await postJson(baseUrl, '/login', { username: 'bench', password: '…' });
 *       const load = startBackgroundLoad(baseUrl, { method: 'POST', path: '/login', body: { … } }, 50);
 *       return { request: { path: `/sessions/${session_id}/command` }, teardown: load.stop };
 *     },
 *   }
 */
import { postJson, startBackgroundLoad, type RequestSpec } from './load.ts';
import { populate } from './game-world.ts';

export interface Prepared {
  /** Replaces fields of the scenario's request, e.g. a path holding a fresh session id. */
  request?: Partial<RequestSpec>;
  /** Undoes the setup after the measurement, e.g. stops a background load. */
  teardown?: () => Promise<void>;
}

export interface Scenario extends RequestSpec {
  /** Label in the results table. */
  name: string;
  /** Concurrent connections of the measurement, when not the run's default. */
  connections?: number;
  /**
   * Scenarios of the `game` suite run on their own server, populated with characters; the
   * `axis` suite is the same with the demo world's axis engine switched on.
   */
  suite?: 'game' | 'axis';
  setup?: (baseUrl: string) => Promise<Prepared | void>;
}

const BENCH_USER = { username: 'benchuser', password: 'Quiet-Lantern-42' };
const LOGIN: RequestSpec = { method: 'POST', path: '/login', body: BENCH_USER };

/** Registers the bench account once per server; later calls find it taken, which is fine. */
async function ensureBenchUser(baseUrl: string): Promise<void> {
  await postJson(baseUrl, '/register', { ...BENCH_USER, password_confirm: BENCH_USER.password }).catch((err: Error) => {
    if (!/Username already taken/.test(err.message)) throw err;
  });
}

/** Every character says something in turn: one chat row, and with the axis engine on one transaction moving speaker and listener. */
function say(name: string, suite: 'game' | 'axis'): Scenario {
  return {
    name,
    suite,
    method: 'POST',
    path: '/command',
    async setup(baseUrl) {
      const players = await populate(baseUrl);
      return { request: { variants: players.map((p) => ({ body: { session_id: p.sessionId, command: 'say Evening, all' } })) } };
    },
  };
}

export const SCENARIOS: readonly Scenario[] = [
  // Express + middleware only: the floor every other route pays.
  { name: 'GET /', method: 'GET', path: '/' },
  // Adds one database query (active players).
  { name: 'GET /health', method: 'GET', path: '/health' },
  // bcrypt at the default cost dominates: this is the login capacity of the machine. Few
  // connections, because logins abandoned at the end of the warm-up still hold the hashing
  // threads and a deep queue would measure that backlog instead.
  {
    name: 'POST /login',
    ...LOGIN,
    connections: 4,
    async setup(baseUrl) {
      await ensureBenchUser(baseUrl);
    },
  },
  // Hashing runs on worker threads, so a login burst must not stall other traffic.
  {
    name: 'GET /health while 50 logins run',
    method: 'GET',
    path: '/health',
    connections: 10,
    async setup(baseUrl) {
      await ensureBenchUser(baseUrl);
      const load = startBackgroundLoad(baseUrl, LOGIN, 50);
      return { teardown: load.stop };
    },
  },
  // The polling and command routes every client calls every second, with 200 characters
  // logged in and spread over the demo world's rooms.
  {
    name: 'POST /command look',
    suite: 'game',
    method: 'POST',
    path: '/command',
    async setup(baseUrl) {
      const players = await populate(baseUrl);
      return { request: { variants: players.map((p) => ({ body: { session_id: p.sessionId, command: 'look' } })) } };
    },
  },
  {
    name: 'POST /command move (north/south)',
    suite: 'game',
    method: 'POST',
    path: '/command',
    async setup(baseUrl) {
      // Characters parked at the spawn step north and back south.
      const players = (await populate(baseUrl)).filter((p) => p.atSpawn);
      return {
        request: { variants: players.flatMap((p) => [{ body: { session_id: p.sessionId, command: 'north' } }, { body: { session_id: p.sessionId, command: 'south' } }]) },
      };
    },
  },
  {
    name: 'GET /chat/{session_id}',
    suite: 'game',
    method: 'GET',
    path: '/chat',
    async setup(baseUrl) {
      const players = await populate(baseUrl);
      return { request: { variants: players.map((p) => ({ path: `/chat/${p.sessionId}` })) } };
    },
  },
  {
    name: 'GET /status/{session_id}',
    suite: 'game',
    method: 'GET',
    path: '/status',
    async setup(baseUrl) {
      const players = await populate(baseUrl);
      return { request: { variants: players.map((p) => ({ path: `/status/${p.sessionId}` })) } };
    },
  },
  say('POST /command say', 'game'),
  // The same with the axis engine on: about 25 characters share a room, and every speaker
  // there locks the same listener, so this also measures that contention.
  say('POST /command say (axis engine on)', 'axis'),
];
