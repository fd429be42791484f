/**
 * `POST /admin/user/manage` with `make_permanent`: staff keep a temporary account (a guest's
 * or one from `/register`, which last 24 hours) for good. Who may, the refusals in their
 * order, and what changes: the account is no longer purged and its sessions outlive the 24 hours.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, login, sessionFor, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { registerGuest } from '../helpers/players.ts';

const HOUR = 3_600_000;

function expectError(res: HttpResponse, status: number, detail: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.detail, res.text).to.equal(detail);
}

describe('admin: make a temporary account permanent', () => {
  let server: TestServer;
  let admin: string;
  let superuser: string;

  const makePermanent = (session: string, target: string) => server.post('/admin/user/manage', { action: 'make_permanent', target_username: target }, bearer(session));
  const userRow = (username: string) => server.db('users').where({ username }).first();
  const purge = () => server.services.maintenanceTasks.find((t) => t.name === 'expired-temporary-accounts')!.run();

  before(async () => {
    // Sessions long enough to outlive a temporary account's 24 hours.
    server = await startTestServer({ env: { MUD_SESSION_TTL_MINUTES: String(3 * 24 * 60) } });
    admin = await sessionFor(server, 'perm_admin', 'admin');
    superuser = await sessionFor(server, 'perm_super', 'superuser');
  });
  after(async () => {
    await server?.close();
  });

  it('an admin keeps a guest account: never purged, its session outlives the 24 hours', async () => {
    const guest = await registerGuest(server, 'Perma Nent');
    const guestSession = await login(server, guest.username);
    const res = await makePermanent(admin, guest.username);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, message: `${guest.username}'s account is now permanent` });
    const row = await userRow(guest.username);
    expect(Boolean(row.is_guest)).to.equal(false);
    expect(row.guest_expires_at).to.equal(null);

    server.clock.advance(30 * HOUR);
    await purge();
    expect(await userRow(guest.username)).to.not.equal(undefined);
    const status = await server.get('/characters', bearer(guestSession));
    expect(status.status, status.text).to.equal(200);
    expect((await server.post('/login', { username: guest.username, password: GOOD_PASSWORD })).status).to.equal(200);
  });

  it('a self-registered account too; one left alone is purged after 24 hours', async () => {
    for (const username of ['kept_reg', 'gone_reg']) {
      const reg = await server.post('/register', { username, password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD });
      expect(reg.status, reg.text).to.equal(200);
    }
    expect((await makePermanent(superuser, 'kept_reg')).status).to.equal(200);
    server.clock.advance(25 * HOUR);
    await purge();
    expect(await userRow('kept_reg')).to.not.equal(undefined);
    expect(await userRow('gone_reg')).to.equal(undefined);
  });

  it('refuses an account that is not temporary, and a second time', async () => {
    await createUser(server, 'perm_made', 'player');
    expectError(await makePermanent(admin, 'perm_made'), 400, "User 'perm_made' is not a temporary account");
    const guest = await registerGuest(server, 'Twice Kept');
    expect((await makePermanent(admin, guest.username)).status).to.equal(200);
    expectError(await makePermanent(admin, guest.username), 400, `User '${guest.username}' is not a temporary account`);
  });

  it('denials: players and worldbuilders lack create_users; unknown target 404; oneself 400; equal rank 403', async () => {
    const guest = await registerGuest(server, 'Still Temp');
    const player = await sessionFor(server, 'perm_player', 'player');
    const builder = await sessionFor(server, 'perm_builder', 'worldbuilder');
    expectError(await makePermanent(player, guest.username), 403, 'Insufficient permissions. Required: create_users');
    expectError(await makePermanent(builder, guest.username), 403, 'Insufficient permissions. Required: create_users');
    expectError(await makePermanent(admin, 'nobody_here'), 404, "User 'nobody_here' not found");
    expectError(await makePermanent(admin, 'perm_admin'), 400, 'Cannot manage your own account');
    await createUser(server, 'perm_admin2', 'admin');
    expectError(await makePermanent(admin, 'perm_admin2'), 403, "Insufficient permissions to manage user with role 'admin'");
    expectError(await server.post('/admin/user/manage', { action: 'make_permanent', target_username: guest.username }), 401, 'Invalid or expired session');
    // Nothing changed for the refused target.
    expect(Boolean((await userRow(guest.username)).is_guest)).to.equal(true);
  });
});
