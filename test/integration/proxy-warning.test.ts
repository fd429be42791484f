/**
 * A proxy on this host that `[server] trust_proxy` does not trust (the default trusts none)
 * makes every client count as the proxy's address in the per-address limits: the server says so
 * in one warning, naming what to set, the first time such a proxy forwards a request.
 */
import { describe, it, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const FORWARDED = { 'X-Forwarded-For': '203.0.113.5' };

const warnings = (server: TestServer) =>
  server.logs.entries.filter((e) => e.level === 'warn' && /trust_proxy/.test(String(e.message)));

describe(`a proxy on this host that trust_proxy does not trust (${DB_NAME})`, () => {
  const servers: TestServer[] = [];
  const start = async (env: Record<string, string>): Promise<TestServer> => {
    const server = await startTestServer({ env });
    servers.push(server);
    return server;
  };
  after(async () => {
    for (const server of servers) await server.close();
  });

  it('with trust_proxy off, the first request from 127.0.0.1 with X-Forwarded-For logs one warning naming what to set; later ones log none', async () => {
    const server = await start({});
    expect(server.config.server.trustProxy).to.equal(false);
    expect((await server.get('/health')).status).to.equal(200);
    expect(warnings(server), 'a request without X-Forwarded-For').to.have.length(0);
    for (let i = 0; i < 3; i++) expect((await server.get('/health', FORWARDED)).status).to.equal(200);
    expect((await server.post('/login', { username: 'nobody', password: 'Wrong-Lantern-42' }, FORWARDED)).status).to.equal(401);
    const logged = warnings(server);
    expect(logged).to.have.length(1);
    expect(String(logged[0]!.message)).to.contain('[server] trust_proxy = loopback').and.contain('MUD_SERVER_TRUST_PROXY=loopback');
    expect(logged[0]!.proxy).to.match(/^(::ffff:)?127\.0\.0\.1$/);
  });

  it('with trust_proxy naming other proxies only, warns the same', async () => {
    const server = await start({ MUD_SERVER_TRUST_PROXY: '10.0.0.1' });
    await server.get('/health', FORWARDED);
    await server.get('/health', FORWARDED);
    expect(warnings(server)).to.have.length(1);
  });

  it('with trust_proxy = loopback, or a hop count, logs none', async () => {
    for (const trust of ['loopback', '1']) {
      const server = await start({ MUD_SERVER_TRUST_PROXY: trust });
      for (let i = 0; i < 2; i++) expect((await server.get('/health', FORWARDED)).status).to.equal(200);
      expect(warnings(server), `trust_proxy = ${trust}`).to.have.length(0);
    }
  });
});
