/**
 * What generated SDKs, Postman and fuzzers rely on: the session as a bearer token on every
 * protected operation, and query values read the way HTTP clients send them.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { bearer, login, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, type Player } from '../helpers/players.ts';
import { SESSION_MISMATCH } from '../../src/http/middleware/auth.ts';


describe('client conventions: bearer sessions and query encoding', () => {
  let server: TestServer;
  let admin: string;
  let player: Player;
  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'keeper', 'admin');
    player = await newPlayer(server, 'Bearer');
  });
  after(async () => {
    await server.close();
  });

  describe('Authorization: Bearer <session_id>', () => {
    it('authenticates a GET that otherwise takes session_id in the query', async () => {
      const res = await server.get('/characters', bearer(player.sessionId));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.characters.map((c: { name: string }) => c.name)).to.deep.equal([player.name]);
    });

    it('authenticates a POST whose body has no session_id', async () => {
      const res = await server.post('/command', { command: 'look' }, bearer(player.sessionId));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.success).to.equal(true);
    });

    it('authenticates a path-session route when both name the same session', async () => {
      const res = await server.get(`/status/${player.sessionId}`, bearer(player.sessionId));
      expect(res.status, res.text).to.equal(200);
    });

    it('accepts a body-less POST (logout) with only the bearer token', async () => {
      const sessionId = await login(server, player.username);
      const res = await server.request('POST', '/logout', undefined, bearer(sessionId));
      expect(res.status, res.text).to.equal(200);
      expect((await server.get('/characters', bearer(sessionId))).status).to.equal(401);
    });

    it('carries the role: admin routes answer by the bearer session', async () => {
      expect((await server.get('/admin/database/players', bearer(admin))).status).to.equal(200);
      expect((await server.get('/admin/database/players', bearer(player.sessionId))).status).to.equal(403);
    });

    it('answers 400 when session_id and the bearer token name different sessions', async () => {
      const inQuery = await server.get(`/characters?session_id=${admin}`, bearer(player.sessionId));
      expect(inQuery.status).to.equal(400);
      expect(inQuery.body).to.deep.equal({ detail: SESSION_MISMATCH });
      const inBody = await server.post('/command', { session_id: admin, command: 'look' }, bearer(player.sessionId));
      expect(inBody.status).to.equal(400);
      const inPath = await server.get(`/chat/${admin}`, bearer(player.sessionId));
      expect(inPath.status).to.equal(400);
    });

    it('answers 401 with WWW-Authenticate: Bearer for no session, an unknown token or another scheme', async () => {
      for (const headers of [{}, bearer('0b6c4a1e-9f0d-4a2b-8c3d-5e6f7a8b9c0d'), { Authorization: 'Basic a2VlcGVyOng=' }]) {
        const res = await server.get('/characters', headers);
        expect(res.status, JSON.stringify(headers)).to.equal(401);
        expect(res.body).to.deep.equal({ detail: 'Invalid or expired session' });
        expect(res.headers.get('www-authenticate')).to.equal('Bearer');
      }
    });

    it('answers a malformed session_id anywhere with 401, not 400', async () => {
      expect((await server.get('/characters?session_id=not-a-session')).status).to.equal(401);
      expect((await server.get('/characters?session_id=')).status).to.equal(401);
      expect((await server.post('/command', { session_id: 42, command: 'look' })).status).to.equal(401);
      expect((await server.get('/status/NOT-A-SESSION')).status).to.equal(401);
    });
  });

  describe('query values as clients send them', () => {
    it('takes reserved characters unencoded (scope=emberwick:mobile)', async () => {
      const res = await server.get(`/api/policy-activations?session_id=${admin}&scope=emberwick:mobile`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.client_profile).to.equal('mobile');
    });

    it('reads + as a space, the form encoding (scope=emberwick:night+market)', async () => {
      const res = await server.get('/api/policy-activations?scope=emberwick:night+market', bearer(admin));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.client_profile).to.equal('night market');
    });

    it('answers session_id=a+b with 401 like any unknown session', async () => {
      const res = await server.get('/characters?session_id=a+b');
      expect(res.status).to.equal(401);
    });
  });
});
