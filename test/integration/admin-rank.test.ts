/**
 * An admin acting on an account or session of equal or higher rank: every admin route that acts
 * on another account or session — /admin/user/manage (each action), /admin/session/kick (by
 * token and by row id), /admin/user/world-access, /admin/user/create-character — answers 403
 * when an admin targets a superuser or another admin, and nothing changes: the target's rows
 * stay as they were, it can still log in and its session still works. A control shows the
 * same admin acting on a worldbuilder succeeds, so the 403s are about rank.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { login, sessionFor, GOOD_PASSWORD, OTHER_GOOD_PASSWORD } from '../helpers/accounts.ts';
import type { Role } from '../../src/shared/roles.ts';

interface Target {
  username: string;
  userId: number;
  /** The token its login returned. */
  session: string;
  /** Its session's row id, the handle the admin session listings show. */
  sessionRowId: number;
}

interface RankCase {
  name: string;
  path: string;
  body: (target: Target) => Record<string, unknown>;
  /** The target is banned first (is_active false, no session); it must stay banned. */
  banned?: boolean;
}

const WORLD = 'hollow_spire';

const CASES: readonly RankCase[] = [
  ...(['ban', 'deactivate', 'unban', 'change_role', 'change_password', 'delete'] as const).map(
    (action): RankCase => ({
      name: `POST /admin/user/manage ${action}`,
      path: '/admin/user/manage',
      body: (t) => ({ action, target_username: t.username, new_role: 'player', new_password: OTHER_GOOD_PASSWORD }),
    }),
  ),
  {
    name: 'POST /admin/user/manage unban (of a banned target)',
    path: '/admin/user/manage',
    body: (t) => ({ action: 'unban', target_username: t.username }),
    banned: true,
  },
  { name: 'POST /admin/session/kick (target session token)', path: '/admin/session/kick', body: (t) => ({ target_session_id: t.session }) },
  { name: 'POST /admin/session/kick (target session row id)', path: '/admin/session/kick', body: (t) => ({ target_session_id: String(t.sessionRowId) }) },
  {
    name: 'POST /admin/user/world-access grant',
    path: '/admin/user/world-access',
    body: (t) => ({ target_username: t.username, world_id: WORLD, can_access: true }),
  },
  {
    name: 'POST /admin/user/world-access revoke',
    path: '/admin/user/world-access',
    body: (t) => ({ target_username: t.username, world_id: WORLD, can_access: false }),
  },
  {
    name: 'POST /admin/user/create-character',
    path: '/admin/user/create-character',
    body: (t) => ({ target_username: t.username, world_id: WORLD }),
  },
];

const VOLATILE = new Set(['last_activity', 'expires_at']);
function stable(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !VOLATILE.has(k))));
}

describe('admin rank: an admin acting on a superuser or another admin', () => {
  let server: TestServer;
  let admin: string;
  let made = 0;

  /** A fresh account of the role with one session, so each case starts from a clean target. */
  async function newTarget(role: Role): Promise<Target> {
    const username = `ar${++made}_${role}`;
    const session = await sessionFor(server, username, role);
    const user = await server.db('users').where({ username }).first('id');
    const row = await server.db('sessions').where({ user_id: user.id }).first('id');
    return { username, userId: Number(user.id), session, sessionRowId: Number(row.id) };
  }

  /** Everything of the target an admin route could change. */
  async function stateOf(t: Target): Promise<unknown> {
    return {
      user: stable(await server.db('users').where({ id: t.userId }).select('*')),
      sessions: stable(await server.db('sessions').where({ user_id: t.userId }).orderBy('id').select('*')),
      characters: stable(await server.db('characters').where({ user_id: t.userId }).orderBy('id').select('*')),
      worldPermissions: stable(await server.db('world_permissions').where({ user_id: t.userId }).orderBy('world_id').select('*')),
    };
  }

  function asAdmin(path: string, body: Record<string, unknown>) {
    return server.post(path, body, { Authorization: `Bearer ${admin}` });
  }

  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'ar_admin', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  for (const targetRole of ['superuser', 'admin'] as const) {
    describe(`targeting ${targetRole === 'admin' ? 'another admin' : 'a superuser'}: 403 and nothing changes`, () => {
      for (const c of CASES) {
        it(c.name, async () => {
          const target = await newTarget(targetRole);
          if (c.banned) {
            await server.db('users').where({ id: target.userId }).update({ is_active: false });
            await server.db('sessions').where({ user_id: target.userId }).del();
          }
          const before = await stateOf(target);

          const res = await asAdmin(c.path, c.body(target));
          expect(res.status, res.text).to.equal(403);

          expect(await stateOf(target), 'the target is untouched').to.deep.equal(before);
          const relogin = await server.post('/login', { username: target.username, password: GOOD_PASSWORD });
          if (c.banned) {
            expect(relogin.status, `a banned ${targetRole} stays banned: ${relogin.text}`).to.equal(401);
          } else {
            expect(relogin.status, `the ${targetRole} still logs in: ${relogin.text}`).to.equal(200);
            const ping = await server.post(`/ping/${target.session}`);
            expect(ping.status, `the ${targetRole}'s session still works: ${ping.text}`).to.equal(200);
          }
        });
      }
    });
  }

  describe('control: the same admin acting on a worldbuilder succeeds', () => {
    it('ban, then unban', async () => {
      const target = await newTarget('worldbuilder');
      const ban = await asAdmin('/admin/user/manage', { action: 'ban', target_username: target.username });
      expect(ban.status, ban.text).to.equal(200);
      expect((await server.post(`/ping/${target.session}`)).status, 'a ban ends its sessions').to.equal(401);
      const unban = await asAdmin('/admin/user/manage', { action: 'unban', target_username: target.username });
      expect(unban.status, unban.text).to.equal(200);
      await login(server, target.username);
    });
    it('kick its session', async () => {
      const target = await newTarget('worldbuilder');
      const res = await asAdmin('/admin/session/kick', { target_session_id: target.session });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success, res.text).to.equal(true);
      expect((await server.post(`/ping/${target.session}`)).status).to.equal(401);
    });
    it('grant world access', async () => {
      const target = await newTarget('worldbuilder');
      const res = await asAdmin('/admin/user/world-access', { target_username: target.username, world_id: WORLD, can_access: true });
      expect(res.status, res.text).to.equal(200);
      expect(await server.db('world_permissions').where({ user_id: target.userId, world_id: WORLD }).select('user_id')).to.have.length(1);
    });
    it('create a character', async () => {
      const target = await newTarget('worldbuilder');
      const res = await asAdmin('/admin/user/create-character', { target_username: target.username, world_id: WORLD });
      expect(res.status, res.text).to.equal(200);
      expect(await server.db('characters').where({ user_id: target.userId }).select('id')).to.have.length(1);
    });
  });
});
