/**
 * GET /metrics in its three modes: off (404), open (Prometheus text with per-route request
 * counts and latencies, process metrics and the upstream counters, and no session id in
 * any label) and admin (401 without a session, 403 below admin, 200 for admin/superuser).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { login, sessionFor } from '../helpers/accounts.ts';
import { closedPortUrl } from '../helpers/fake-upstream.ts';
import { registerGuest } from '../helpers/players.ts';

const INVALID_SESSION = 'Invalid or expired session';

describe('GET /metrics', () => {
  describe('mode off (the default)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(async () => server.close());

    it('answers 404 Not Found', async () => {
      expect(server.config.metrics.mode).to.equal('off');
      const res = await server.get('/metrics');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ detail: 'Not Found' });
    });
  });

  describe('mode open', () => {
    let server: TestServer;
    let sessionId: string;
    before(async () => {
      server = await startTestServer({ env: { MUD_METRICS_MODE: 'open' } });
      sessionId = await sessionFor(server, 'metrics_player', 'player');
    });
    after(async () => server.close());

    it('exposes request counts and latencies per route template, without session ids', async () => {
      expect((await server.get('/health')).status).to.equal(200);
      await server.get(`/status/${sessionId}`);
      await server.get('/status/not-a-real-session');
      await server.get(`/admin/database/players?session_id=${sessionId}`);
      await server.get('/no/such/path');

      const res = await server.get('/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      const text = res.text;

      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="\/health",status="200"\} 1$/m);
      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="\/status\/:session_id",status="\d{3}"\} 1$/m);
      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="\/status\/:session_id",status="401"\} 1$/m);
      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="unmatched",status="404"\} 1$/m);
      expect(text).to.match(/^mud_http_requests_total\{method="POST",route="\/login",status="200"\} 1$/m);
      expect(text).to.include('# TYPE mud_http_request_duration_seconds histogram');
      expect(text).to.match(/^mud_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/health",status="200"\} 1$/m);
      expect(text).to.match(/^mud_http_request_duration_seconds_count\{method="GET",route="\/health",status="200"\} 1$/m);
      expect(text).to.match(/^process_cpu_user_seconds_total \d/m);
      expect(text).to.match(/^mud_condition_axis_upstream_requests_total 0$/m);

      expect(text).not.to.include(sessionId);
      expect(text).not.to.include('not-a-real-session');
      expect(text).not.to.include('/no/such/path');
    });

    it('holds no token after requests carrying tokens in the path, query, body and bearer header', async () => {
      const valid = { path: await login(server, 'metrics_player'), query: await login(server, 'metrics_player'), body: await login(server, 'metrics_player'), bearer: await login(server, 'metrics_player') };
      const unknown = { path: randomUUID(), query: randomUUID(), body: randomUUID(), bearer: randomUUID() };
      for (const t of [valid, unknown]) {
        await server.get(`/status/${t.path}`);
        await server.post(`/ping/${t.path}`);
        await server.get(`/characters?session_id=${t.query}`);
        await server.get(`/admin/database/players?session_id=${t.query}`);
        await server.post('/command', { session_id: t.body, command: 'look' });
        await server.post('/admin/session/kick', { session_id: t.body, target_session_id: t.path });
        await server.get('/characters', { Authorization: `Bearer ${t.bearer}` });
        await server.post('/logout', {}, { Authorization: `Bearer ${t.bearer}` });
      }

      const res = await server.get('/metrics');
      expect(res.status).to.equal(200);
      expect(res.text).to.match(/^mud_http_requests_total\{method="POST",route="\/logout",status="200"\} 1$/m);
      for (const token of [...Object.values(valid), ...Object.values(unknown)]) expect(res.text).not.to.include(token);
    });

    it('counts its own earlier scrapes', async () => {
      await server.get('/metrics');
      const text = (await server.get('/metrics')).text;
      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="\/metrics",status="200"\} [2-9]\d*$/m);
    });
  });

  describe('upstream counters', () => {
    let server: TestServer;
    before(async () => {
      const down = await closedPortUrl();
      server = await startTestServer({ env: { MUD_METRICS_MODE: 'open', MUD_ENTITY_STATE_MODE: 'http', MUD_ENTITY_STATE_BASE_URL: down } });
    });
    after(async () => server.close());

    it('reads the entity-state client counters at scrape time', async () => {
      const before = (await server.get('/metrics')).text;
      expect(before).to.match(/^mud_condition_axis_upstream_requests_total 0$/m);
      await registerGuest(server, 'Metra Abq');
      const text = (await server.get('/metrics')).text;
      expect(text).to.include('# TYPE mud_condition_axis_upstream_requests_total counter');
      expect(text).to.match(/^mud_condition_axis_upstream_requests_total [1-9]\d*$/m);
      expect(text).to.match(/^mud_condition_axis_upstream_request_exceptions_total [1-9]\d*$/m);
      expect(text).to.match(/^mud_condition_axis_upstream_success_total 0$/m);
    });
  });

  describe('mode admin', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ env: { MUD_METRICS_MODE: 'admin' } });
    });
    after(async () => server.close());

    it('answers 401 without a session or with an unknown one', async () => {
      for (const path of ['/metrics', '/metrics?session_id=nope']) {
        const res = await server.get(path);
        expect(res.status, path).to.equal(401);
        expect(res.body).to.deep.equal({ detail: INVALID_SESSION });
      }
    });

    it('answers 403 below admin', async () => {
      for (const role of ['player', 'worldbuilder'] as const) {
        const sid = await sessionFor(server, `metrics_${role}`, role);
        const res = await server.get(`/metrics?session_id=${sid}`);
        expect(res.status, role).to.equal(403);
        expect(res.body).to.deep.equal({ detail: 'Metrics require admin or superuser role.' });
      }
    });

    it('answers 200 for admins and superusers, without their session ids', async () => {
      for (const role of ['admin', 'superuser'] as const) {
        const sid = await sessionFor(server, `metrics_${role}`, role);
        const res = await server.get(`/metrics?session_id=${sid}`);
        expect(res.status, role).to.equal(200);
        expect(res.text).to.include('# TYPE mud_http_requests_total counter');
        expect(res.text).to.match(/^process_cpu_user_seconds_total \d/m);
        expect(res.text).not.to.include(sid);
      }
      const text = (await server.get(`/metrics?session_id=${await sessionFor(server, 'metrics_admin2', 'admin')}`)).text;
      expect(text).to.match(/^mud_http_requests_total\{method="GET",route="\/metrics",status="403"\} 2$/m);
    });
  });
});
