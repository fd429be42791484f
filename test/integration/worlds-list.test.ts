/**
 * `GET /worlds`: the world list of `POST /login` read again, so a client that stays on it (the
 * play client's lobby) sees a new grant, a revoked one and its character counts without
 * logging in again.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { bearer, createUser, sessionFor, GOOD_PASSWORD } from '../helpers/accounts.ts';

describe('GET /worlds', () => {
  let server: TestServer;
  let admin: string;
  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'worlds_admin', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  const worldsOf = async (session: string) => {
    const res = await server.get('/worlds', bearer(session));
    expect(res.status, res.text).to.equal(200);
    return res.body.worlds as Array<{ id: string; can_access: boolean; has_permission_grant: boolean; current_character_count: number; access_reason: string }>;
  };

  it("answers login's available_worlds, then follows grants, revocations and new characters", async () => {
    await createUser(server, 'worlds_player', 'player');
    const loggedIn = await server.post('/login', { username: 'worlds_player', password: GOOD_PASSWORD });
    const session: string = loggedIn.body.session_id;
    expect(await worldsOf(session)).to.deep.equal(loggedIn.body.available_worlds);
    const hollow = () => worldsOf(session).then((worlds) => worlds.find((w) => w.id === 'hollow_spire')!);
    expect(await hollow()).to.deep.include({ can_access: false, has_permission_grant: false, access_reason: 'invite_required' });

    const grant = (canAccess: boolean) => server.post('/admin/user/world-access', { target_username: 'worlds_player', world_id: 'hollow_spire', can_access: canAccess }, bearer(admin));
    expect((await grant(true)).status).to.equal(200);
    expect(await hollow()).to.deep.include({ can_access: true, has_permission_grant: true, access_reason: 'ok' });

    const created = await server.post('/characters/create', { world_id: 'hollow_spire' }, bearer(session));
    expect(created.status, created.text).to.equal(200);
    expect((await hollow()).current_character_count).to.equal(1);

    expect((await grant(false)).status).to.equal(200);
    expect((await hollow()).has_permission_grant).to.equal(false);
  });

  it('401 without a session; the session may also come as ?session_id=', async () => {
    const none = await server.get('/worlds');
    expect(none.status).to.equal(401);
    expect(none.body.detail).to.equal('Invalid or expired session');
    const byQuery = await server.get(`/worlds?session_id=${encodeURIComponent(admin)}`);
    expect(byQuery.status, byQuery.text).to.equal(200);
    expect(byQuery.body.worlds.map((w: { id: string }) => w.id)).to.include('emberwick');
  });
});
