/**
 * Contract violations answer 400 with a `detail` a player can read (the play client shows it
 * as it comes): each field by its name and its rule in plain words, never the validator's own
 * `request/body/...` wording. `errors` keeps the places and the validator's messages.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { newPlayer, type Player } from '../helpers/players.ts';

describe('readable contract errors', () => {
  let server: TestServer;
  let player: Player;
  let admin: string;
  before(async () => {
    server = await startTestServer();
    player = await newPlayer(server, 'Reada');
    admin = await sessionFor(server, 'readadmin', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  const cases: ReadonlyArray<{ name: string; method: string; url: string; body?: unknown; as: 'player' | 'admin' | 'none'; detail: string; path: string }> = [
    { name: 'too long', method: 'POST', url: '/command', body: { command: 'x'.repeat(2001) }, as: 'player', detail: 'command: must be at most 2000 characters', path: '/body/command' },
    { name: 'missing', method: 'POST', url: '/command', body: {}, as: 'player', detail: 'command: is required', path: '/body/command' },
    { name: 'wrong type', method: 'POST', url: '/command', body: { command: 5 }, as: 'player', detail: 'command: must be a string', path: '/body/command' },
    { name: 'not a whole number', method: 'POST', url: '/characters/select', body: { character_id: 'a' }, as: 'player', detail: 'character_id: must be a whole number', path: '/body/character_id' },
    {
      name: 'not one of the values',
      method: 'POST',
      url: '/admin/user/manage',
      body: { action: 'zap', target_username: 'x' },
      as: 'admin',
      detail: 'action: must be one of: change_role, ban, deactivate, unban, delete, change_password, make_permanent, mute, unmute',
      path: '/body/action',
    },
    { name: 'below the minimum', method: 'GET', url: '/admin/database/chat-messages?limit=0', as: 'admin', detail: 'limit: must be at least 1', path: '/query/limit' },
    { name: 'session_id where the operation takes none', method: 'GET', url: '/health?session_id=00000000-0000-4000-8000-000000000000', as: 'none', detail: 'session_id: is not a known query parameter', path: '/query/session_id' },
    { name: 'empty', method: 'POST', url: '/login', body: { username: '', password: 'secret' }, as: 'none', detail: 'username: must not be empty', path: '/body/username' },
  ];

  for (const c of cases) {
    it(`${c.name}: "${c.detail}"`, async () => {
      const session = c.as === 'player' ? player.sessionId : c.as === 'admin' ? admin : undefined;
      const res = await server.request(c.method, c.url, c.body, session ? { Authorization: `Bearer ${session}` } : {});
      expect(res.status, res.text).to.equal(400);
      expect(res.body.detail).to.equal(`Invalid request: ${c.detail}`);
      expect(res.body.detail).not.to.match(/request\/|must NOT/);
      expect(res.body.errors.map((e: { path: string }) => e.path)).to.include(c.path);
    });
  }
});
