/**
 * The client flow through openapi-fetch typed by generated/openapi.d.ts: every request and
 * response shape comes from the contract (no casts, no hand-written bodies), so a contract
 * change that breaks clients fails `npm run typecheck`, and a server that strays from it fails
 * here (responses are validated against openapi.yaml as well).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/openapi.d.ts';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';

/** openapi-fetch's result: `data` on 2xx, `error` otherwise. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Asserts a 200 and narrows to the typed body, so the assertions below need no casts. */
function ok<T>(result: FetchResult<T>, what: string): T {
  expect(result.response.status, `${what}: ${JSON.stringify(result.error)}`).to.equal(200);
  if (result.data === undefined) throw new Error(`${what}: 200 without a body`);
  return result.data;
}

describe('typed client (openapi-fetch on generated/openapi.d.ts)', () => {
  let server: TestServer;
  let client: Client<paths>;
  before(async () => {
    server = await startTestServer();
    client = createClient<paths>({ baseUrl: server.url });
  });
  after(async () => {
    await server.close();
  });

  it('registers, logs in, creates and selects a character, plays, reads chat and status, logs out', async () => {
    // Letters and digits, 14 characters: inside the 2..20 the contract allows.
    const username = `typed${randomBytes(4).toString('hex')}x`;
    const registered = ok(
      await client.POST('/register', { body: { username, password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD } }),
      'register',
    );
    expect(registered.success).to.equal(true);

    const loggedIn = ok(await client.POST('/login', { body: { username, password: GOOD_PASSWORD } }), 'login');
    expect(loggedIn.role).to.equal('player');
    expect(loggedIn.characters).to.deep.equal([]);
    expect(loggedIn.available_worlds.map((w) => w.id)).to.include('emberwick');
    const sessionId = loggedIn.session_id;

    // Set once: every later call authenticates by the bearer token, none sends session_id.
    client.use({
      onRequest({ request }) {
        request.headers.set('Authorization', `Bearer ${sessionId}`);
        return request;
      },
    });

    const none = ok(await client.GET('/characters', { params: { query: { world_id: 'emberwick' } } }), 'list characters');
    expect(none.characters).to.deep.equal([]);

    const created = ok(await client.POST('/characters/create', { body: { world_id: 'emberwick' } }), 'create character');
    expect(created.success).to.equal(true);
    expect(created.world_id).to.equal('emberwick');
    expect(created.character_name).to.be.a('string').and.not.equal('');

    const listed = ok(await client.GET('/characters', { params: { query: { world_id: 'emberwick' } } }), 'list characters');
    expect(listed.characters.map((c) => [c.id, c.name])).to.deep.equal([[created.character_id, created.character_name]]);

    const selected = ok(await client.POST('/characters/select', { body: { character_id: created.character_id } }), 'select');
    expect(selected.character_name).to.equal(created.character_name);

    const look = ok(await client.POST('/command', { body: { command: 'look' } }), 'look');
    expect(look.success).to.equal(true);
    expect(look.message).to.contain('[Exits]');

    const said = ok(await client.POST('/command', { body: { command: 'say hello' } }), 'say');
    expect(said.success).to.equal(true);

    const path = { session_id: sessionId };
    const chat = ok(await client.GET('/chat/{session_id}', { params: { path } }), 'chat');
    expect(chat.messages.map((m) => [m.sender, m.channel, m.text])).to.deep.include([created.character_name, 'say', 'hello']);

    const status = ok(await client.GET('/status/{session_id}', { params: { path } }), 'status');
    expect(status.active_players).to.include(created.character_name);
    expect(status.current_room).to.be.a('string');
    expect(status.inventory).to.be.a('string');

    const loggedOut = ok(await client.POST('/logout'), 'logout');
    expect(loggedOut.success).to.equal(true);

    // The session is gone: the same client now gets the contract's 401 body.
    const closed = await client.GET('/characters');
    expect(closed.response.status).to.equal(401);
    expect(closed.error).to.deep.equal({ detail: 'Invalid or expired session' });
  });
});
