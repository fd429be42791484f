/**
 * The servers a `describe` runs its tests against. Called in the describe's body, each helper
 * registers the mocha hooks that start its servers before the tests and close them after, and
 * returns an accessor for the tests and later hooks. A suite's hooks run in the order they were
 * registered: a `before` registered after the call finds the servers started, and an `after` that
 * must run while they still serve (closing streams or telnet clients) is registered before it.
 */
import { after, before, beforeEach } from 'mocha';
import { ON_POSTGRESQL, skipBecause } from './needs.ts';
import { resetGame } from './players.ts';
import { startTestServer, usePostgres, type TestServer, type TestServerOptions } from './test-server.ts';

export interface OneServerOptions extends TestServerOptions {
  /** Put the game back as it starts (resetGame) before each test. */
  reset?: boolean;
}

/** One server for the suite. */
export function oneServer(options: OneServerOptions = {}): () => TestServer {
  const { reset, ...start } = options;
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer(start);
  });
  after(async () => {
    await server?.close();
  });
  if (reset) beforeEach(() => resetGame(server!));
  return () => server!;
}

export interface TwoInstancesOptions extends TestServerOptions {
  /**
   * Skip the suite on SQLite, which serves one instance (its bus is in-process; docs/decisions.md,
   * "Running several instances"): what needs the instances to hear each other runs in the
   * PostgreSQL run.
   */
  postgresOnly?: boolean;
}

/** Two instances on one database and one clock, started with the same options. */
export function twoInstances(options: TwoInstancesOptions = {}): () => [TestServer, TestServer] {
  const { postgresOnly, ...start } = options;
  let one: TestServer | undefined;
  let two: TestServer | undefined;
  before(async function () {
    if (postgresOnly && !usePostgres) skipBecause(this, ON_POSTGRESQL);
    one = await startTestServer(start);
    // On SQLite the one instance holds every clock: a second one's ticks only add writes that
    // contend for the file's lock with the requests under test (a login answered 503 in CI).
    two = await startTestServer({ ...start, shareDatabaseWith: one, clock: one.clock, ...(usePostgres ? {} : { worldClock: false }) });
  });
  after(async () => {
    // The second instance first: the first one's close() removes the database.
    await two?.close();
    await one?.close();
  });
  return () => [one!, two!];
}
