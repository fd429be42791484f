/**
 * Logins in flight during a password change (issue 21, defect 2): a login checks the password
 * against the hash it read, then opens its session; the change may commit in between. No
 * session opened with the old password may survive the change, whether the owner changes it
 * or an admin resets it.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { createUser, GOOD_PASSWORD, login, OTHER_GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';

const LOGINS = 16;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`logins racing a password change (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  let server: TestServer;
  let admin: string;

  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'raceadmin', 'superuser');
  });
  after(async () => {
    await server?.close();
  });

  for (const by of ['the owner', 'an admin reset'] as const) {
    it(`no session opened with the old password survives a change by ${by}`, async () => {
      const username = by === 'the owner' ? 'raceowner' : 'racereset';
      await createUser(server, username, 'player');
      const own = await login(server, username);
      const changePassword = () =>
        by === 'the owner'
          ? server.post('/change-password', { session_id: own, old_password: GOOD_PASSWORD, new_password: OTHER_GOOD_PASSWORD })
          : server.post('/admin/user/manage', { session_id: admin, action: 'change_password', target_username: username, new_password: OTHER_GOOD_PASSWORD });
      // Logins 25 ms apart, the change among them: some check the old hash before it commits
      // and open their session after.
      const logins: Array<ReturnType<TestServer['post']>> = [];
      let change: ReturnType<TestServer['post']> | undefined;
      for (let i = 0; i < LOGINS; i++) {
        if (i === 4) change = changePassword();
        logins.push(server.post('/login', { username, password: GOOD_PASSWORD }));
        await sleep(25);
      }
      const changed = await change!;
      expect(changed.status, changed.text).to.equal(200);
      const answers = await Promise.all(logins);
      expect(answers.map((a) => a.status).filter((s) => s !== 200 && s !== 401)).to.deep.equal([]);
      const surviving: string[] = [];
      for (const answer of answers.filter((a) => a.status === 200)) {
        const res = await server.get(`/characters?session_id=${answer.body.session_id}`);
        if (res.status !== 401) surviving.push(`${res.status}`);
      }
      expect(surviving, `${surviving.length} of ${answers.filter((a) => a.status === 200).length} sessions opened with the old password still work`).to.deep.equal([]);
    });
  }
});
