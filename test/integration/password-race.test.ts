/**
 * Logins in flight during a password change (issue 21, defect 2): a login checks the password
 * against the hash it read, then opens its session; the change may commit in between. No
 * session opened with the old password may survive the change, whether the owner changes it
 * or an admin resets it.
 *
 * The race is made to happen, every time, to every login (test/helpers/held-locks.ts):
 * - PostgreSQL: the test holds a session of the account that the change must end, so the change
 *   stops with the account's new hash written but not committed; the logins then read the old
 *   hash, check it, and wait on the change's row to record the login; the test lets go.
 * - SQLite, where one connection serves a server and nothing can read while the change's
 *   transaction is open: the logins go to a second instance on the same file, which the test
 *   holds once they have read the old hash, so that they open their sessions only after the
 *   change, made on the first instance, has committed.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { createUser, GOOD_PASSWORD, login, OTHER_GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';
import { sessionTokenHash } from '../../src/db/repositories/session-repository.ts';
import { connectionAsks, holdConnection, holdLock } from '../helpers/held-locks.ts';
import { eventually } from '../helpers/eventually.ts';

const LOGINS = 6;

describe(`logins racing a password change (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  let server: TestServer;
  /** Where the logins go: the same server on PostgreSQL, a second instance on SQLite's file. */
  let logins: TestServer;
  let admin: string;

  before(async () => {
    server = await startTestServer();
    logins = usePostgres ? server : await startTestServer({ shareDatabaseWith: server, clock: server.clock });
    admin = await sessionFor(server, 'raceadmin', 'superuser');
  });
  after(async () => {
    if (logins !== server) await logins?.close();
    await server?.close();
  });

  /**
   * Logins with the old password that have all read and checked it before `change` commits, and
   * record their login after. `ending` is a session of the account the change ends.
   */
  async function loginsAround(username: string, ending: string, change: () => Promise<HttpResponse>): Promise<{ changed: HttpResponse; answers: HttpResponse[] }> {
    const loginAs = (i: number) => logins.post('/login', { username, password: GOOD_PASSWORD }, { 'X-Request-Id': `race-${username}-${i}` });
    if (usePostgres) {
      const held = await holdLock(process.env.MUD_TEST_DATABASE_URL!, server.schema, [`select id from sessions where token_hash = '${sessionTokenHash(ending)}' for update`]);
      try {
        const changing = change();
        await held.waitingBehind(1);
        const answers = Array.from({ length: LOGINS }, (_, i) => loginAs(i));
        // Each login waits on the change's uncommitted row, having read and checked the old hash.
        await held.waitingBehind(1 + LOGINS);
        await held.release();
        return { changed: await changing, answers: await Promise.all(answers) };
      } finally {
        await held.release().catch(() => undefined);
      }
    }
    const asks = connectionAsks(logins.db, `race-${username}-`);
    let first = await holdConnection(logins.db);
    try {
      const answers = Array.from({ length: LOGINS }, (_, i) => loginAs(i));
      // Each login asks for the connection to read the account, and waits in line behind the test.
      await eventually(async () => expect(asks.count()).to.equal(LOGINS), 10_000);
      const second = holdConnection(logins.db);
      await first.release();
      // Served in turn: every login has read the old hash; to record its login it waits behind the test.
      first = await second;
      const changed = await change();
      await first.release();
      return { changed, answers: await Promise.all(answers) };
    } finally {
      asks.stop();
      await first.release();
    }
  }

  for (const by of ['the owner', 'an admin reset'] as const) {
    it(`no session opened with the old password survives a change by ${by}`, async () => {
      const username = by === 'the owner' ? 'raceowner' : 'racereset';
      await createUser(server, username, 'player');
      const own = await login(server, username);
      const ending = await login(server, username);
      const { changed, answers } = await loginsAround(username, ending, () =>
        by === 'the owner'
          ? server.post('/change-password', { session_id: own, old_password: GOOD_PASSWORD, new_password: OTHER_GOOD_PASSWORD })
          : server.post('/admin/user/manage', { session_id: admin, action: 'change_password', target_username: username, new_password: OTHER_GOOD_PASSWORD }),
      );
      expect(changed.status, changed.text).to.equal(200);
      // Every login checked the old password before the change and records it after: refused.
      expect(answers.map((a) => `${a.status} ${a.body?.detail ?? ''}`)).to.deep.equal(Array(LOGINS).fill('401 Invalid username or password'));
      const surviving = await server.db('sessions').whereIn('user_id', server.db('users').where({ username }).select('id')).count({ n: '*' }).first();
      expect(Number(surviving?.n), 'sessions of the account after the change').to.equal(by === 'the owner' ? 1 : 0);
      expect((await server.post('/login', { username, password: OTHER_GOOD_PASSWORD })).status).to.equal(200);
    });
  }
});
