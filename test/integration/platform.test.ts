import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { startTestServer, send, type TestServer } from '../helpers/test-server.ts';
import { createUser, login, GOOD_PASSWORD } from '../helpers/accounts.ts';

const VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

describe('platform: public routes, errors, logging, CORS, docs', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  describe('public routes', () => {
    it('GET / names the service and its version', async () => {
      const res = await server.get('/');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ message: 'MUD Server API', version: VERSION });
    });

    it('GET /health reports the database and active players', async () => {
      const res = await server.get('/health');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok', database: 'ok', active_players: 0, version: VERSION });
    });
  });

  describe('error shapes', () => {
    it('answers malformed JSON with 400 {detail}', async () => {
      const res = await server.request('POST', '/login', '{bad');
      expect(res.status).to.equal(400);
      expect(res.body).to.deep.equal({ detail: 'Malformed JSON in request body' });
    });

    it('answers an unknown path with 404 {detail}', async () => {
      const res = await server.get('/no/such/path');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ detail: 'Not Found' });
    });

    it('answers a wrong method with 405 {detail} and an Allow header', async () => {
      const res = await server.request('DELETE', '/health');
      expect(res.status).to.equal(405);
      expect(res.body).to.deep.equal({ detail: 'Method Not Allowed' });
      expect(res.headers.get('allow')).to.contain('GET');
    });

    it('answers a body over the limit with 413 {detail}', async () => {
      const big = JSON.stringify({ username: 'x'.repeat(server.config.server.maxBodyBytes + 10) });
      const res = await server.request('POST', '/login', big);
      expect(res.status).to.equal(413);
      expect(res.body.detail).to.match(/larger than the limit of 1048576 bytes/);
    });

    // docs/decisions.md, "Platform": ignored, as the reference server ignores them.
    it('ignores query parameters an operation does not list, but names a session_id where it takes none (400)', async () => {
      const res = await server.get('/health?verbose=1&_=1732214400');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal('ok');
      const stray = await server.get('/health?session_id=00000000-0000-4000-8000-000000000000');
      expect(stray.status, stray.text).to.equal(400);
      expect(stray.body.detail).to.equal('Invalid request: session_id: is not a known query parameter');
      expect(stray.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/query/session_id']);
      // A listed parameter is still held to its schema.
      const bad = await server.get('/admin/database/chat-messages?limit=0&colour=red');
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/query/limit']);
    });

    // The game routes have a validator of their own (src/http/openapi.ts): it must refuse alike.
    it('the game routes are held to the contract like every other: 400, 401, 405 and 404', async () => {
      const sid = '00000000-0000-4000-8000-000000000000';
      const noCommand = await server.post('/command', { session_id: sid });
      expect(noCommand.status).to.equal(400);
      expect(noCommand.body.detail).to.match(/command/);
      const badAfter = await server.get(`/chat/${sid}?after=abc`);
      expect(badAfter.status).to.equal(400);
      expect(badAfter.body.detail).to.match(/after/);
      expect((await server.get(`/status/${sid}?verbose=1`)).status).to.equal(401);
      expect((await server.get(`/status/${sid}?session_id=${sid}`)).status).to.equal(400);
      expect((await server.get('/status/not-a-session')).status).to.equal(401);
      const wrongMethod = await server.get('/command');
      expect(wrongMethod.status).to.equal(405);
      expect(wrongMethod.headers.get('allow')).to.contain('POST');
      expect((await server.get('/chat')).body).to.deep.equal({ detail: 'Not Found' });
      expect((await server.get(`/chat/${sid}/more`)).status).to.equal(404);
    });

    it('never answers plain text, even for HEAD-less odd methods', async () => {
      const res = await server.request('PATCH', '/');
      expect(res.status).to.equal(405);
      expect(res.headers.get('content-type')).to.match(/application\/json/);
    });
  });

  describe('request ids and logs', () => {
    it('echoes a client X-Request-Id and logs it with method, path, status and duration', async () => {
      const res = await server.get('/health', { 'X-Request-Id': 'client-id-123' });
      expect(res.headers.get('x-request-id')).to.equal('client-id-123');
      const line = server.logs.entries.find((e) => e.request_id === 'client-id-123' && e.message === 'request');
      expect(line).to.include({ method: 'GET', path: '/health', status: 200, level: 'info' });
      expect(line?.duration_ms).to.be.a('number');
      expect(line?.timestamp).to.be.a('string');
    });

    it('generates a UUID request id when none (or an unusable one) is sent', async () => {
      const a = await server.get('/');
      expect(a.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      const b = await server.get('/', { 'X-Request-Id': 'bad id with spaces' });
      expect(b.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('logs only the first 8 characters of a session id that appears in a path', async () => {
      const sid = '0b6c4a1e-1111-4a2b-8c3d-123456789abc';
      await server.get(`/no/${sid}`);
      expect(server.logs.text()).to.not.contain(sid);
      expect(server.logs.text()).to.contain('/no/0b6c4a1e…');
    });
  });

  describe('CORS', () => {
    it('allows a configured localhost origin', async () => {
      const res = await server.get('/', { Origin: 'http://localhost:8000' });
      expect(res.headers.get('access-control-allow-origin')).to.equal('http://localhost:8000');
    });

    it('does not allow other origins', async () => {
      const res = await server.get('/', { Origin: 'https://evil.example' });
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('answers an allowed preflight', async () => {
      const res = await server.request('OPTIONS', '/login', undefined, {
        Origin: 'http://127.0.0.1:8000',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      });
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal('http://127.0.0.1:8000');
    });
  });

  describe('documentation (served from npm packages, no CDN)', () => {
    it('serves Swagger UI at /docs pointing at our contract', async () => {
      const page = await server.get('/docs/');
      expect(page.status).to.equal(200);
      expect(page.text).to.contain('swagger-ui-bundle.js');
      expect(page.text).to.not.match(/https?:\/\/(?!127\.0\.0\.1|localhost)[^"']*\.js/);
      const init = await server.get('/docs/swagger-initializer.js');
      expect(init.text).to.contain("url: '/openapi.json'");
      const bundle = await server.get('/docs/swagger-ui-bundle.js');
      expect(bundle.status).to.equal(200);
      const redirect = await fetch(`${server.url}/docs`, { redirect: 'manual' });
      expect(redirect.status).to.equal(301);
      expect(redirect.headers.get('location')).to.equal('/docs/');
    });

    it('serves ReDoc at /redoc with a local bundle', async () => {
      const page = await server.get('/redoc');
      expect(page.status).to.equal(200);
      expect(page.text).to.contain('/redoc/redoc.standalone.js');
      const bundle = await send(server.url, 'GET', '/redoc/redoc.standalone.js');
      expect(bundle.status).to.equal(200);
      expect(bundle.text.length).to.be.greaterThan(100_000);
    });

    it('serves the contract as JSON and YAML, identical in content', async () => {
      const json = await server.get('/openapi.json');
      const yaml = await server.get('/openapi.yaml');
      expect(json.status).to.equal(200);
      expect(yaml.headers.get('content-type')).to.match(/yaml/);
      expect(json.body).to.deep.equal(parse(yaml.text));
      expect(json.body.info.version).to.equal(VERSION);
    });
  });
});

// These tests pull the connection pool from under the running server (db.destroy()), which no
// outage does: a tick of the worlds' clock caught waiting for a connection then waits past the
// test's timeout, and the server's close with it. Their servers run without the clock.
describe('platform: health when the database is gone', () => {
  it('answers 503 with database "error"', async () => {
    const server = await startTestServer({ worldClock: false });
    try {
      await server.db.destroy();
      const res = await server.get('/health');
      expect(res.status).to.equal(503);
      expect(res.body).to.deep.equal({ status: 'unavailable', database: 'error', version: VERSION });
    } finally {
      await server.close();
    }
  });
});

describe('platform: unexpected failures', () => {
  it('answers 500 {detail: "Internal server error"} and keeps the stack in the log with the request id', async () => {
    const server = await startTestServer({ worldClock: false });
    try {
      await server.db.destroy();
      const res = await server.post('/login', { username: 'someone', password: 'whatever-it-is' }, { 'X-Request-Id': 'boom-1' });
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ detail: 'Internal server error' });
      const logged = server.logs.entries.find((e) => e.request_id === 'boom-1' && e.level === 'error');
      expect(logged?.message).to.equal('Unhandled error');
      expect(String(logged?.error)).to.match(/\n\s+at /);
    } finally {
      await server.close();
    }
  });

  it('answers a body that is not JSON with 415 {detail}', async () => {
    const server = await startTestServer();
    try {
      const res = await server.request('POST', '/login', 'username=a', { 'content-type': 'text/plain' });
      expect(res.status).to.equal(415);
      expect(res.body.detail).to.match(/application\/json/);
    } finally {
      await server.close();
    }
  });
});

describe('platform: a client that hangs up', () => {
  it('cancels its work, logs status 499 and no error, and the server carries on', async () => {
    const server = await startTestServer();
    try {
      await createUser(server, 'quitter', 'player');
      const controller = new AbortController();
      // Hang up once the server is verifying the password, so the request is surely in flight.
      const hasher = server.services.hasher;
      const verify = hasher.verify.bind(hasher);
      hasher.verify = (password, hash) => {
        controller.abort();
        return verify(password, hash);
      };
      const pending = fetch(`${server.url}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'gone-1' },
        body: JSON.stringify({ username: 'quitter', password: GOOD_PASSWORD }),
        signal: controller.signal,
      });
      await pending.catch(() => undefined);
      hasher.verify = verify;
      const deadline = Date.now() + 5000;
      let line;
      while (!(line = server.logs.entries.find((e) => e.request_id === 'gone-1' && e.message === 'request')) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(line?.status).to.equal(499);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.logs.entries.filter((e) => e.level === 'error')).to.deep.equal([]);
      expect(await login(server, 'quitter')).to.match(/^[0-9a-f-]{36}$/);
    } finally {
      await server.close();
    }
  });
});

describe('platform: world catalog sync', () => {
  it('lists every loaded world in the worlds table', async () => {
    const server = await startTestServer();
    try {
      const rows = await server.db('worlds').select('id', 'name', 'is_active').orderBy('id');
      expect(rows.map((r) => [r.id, Boolean(r.is_active)])).to.deep.equal([
        ['emberwick', true],
        ['hollow_spire', true],
      ]);
      // A package removed from disk stays in the table (characters may point at it) but inactive.
      await server.services.worldRepository.sync([{ id: 'emberwick', name: 'Emberwick', description: '', active: true }], new Date());
      const after = await server.db('worlds').select('id', 'is_active').orderBy('id');
      expect(after.map((r) => [r.id, Boolean(r.is_active)])).to.deep.equal([
        ['emberwick', true],
        ['hollow_spire', false],
      ]);
    } finally {
      await server.close();
    }
  });
});
