/**
 * The reference nginx configuration (deploy/nginx/mud-server.conf) in front of two instances on
 * one PostgreSQL database (one of the test's own): players on different instances talk through
 * the balancer, events stream unbuffered with heartbeats and nginx holds nothing for a client
 * that stops reading (the configuration's proxy_buffering off alone: this nginx ignores the
 * server's X-Accel-Buffering), the client address reaches the per-address limits, and when one
 * instance is killed (SIGKILL) its players' streams reconnect through nginx to the other, and
 * Last-Event-ID resume loses no chat.
 *
 * nginx runs as a child of the test with its own prefix, configuration, pid, logs and temp paths
 * in a temporary folder, on an ephemeral port (test/helpers/nginx.ts). Without nginx (Debian's package, /usr/sbin/nginx,
 * or the binary MUD_NGINX names) the test is skipped with a message, and fails under CI.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { freePort } from '../helpers/free-port.ts';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCliServer, throwAwayDatabase, type CliServer } from '../helpers/cli-server.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { usePostgres } from '../helpers/test-server.ts';
import { needs, ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';
import { NGINX, NGINX_REMEDY, startNginx, writeNginxConf } from '../helpers/nginx.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { uniqueName } from '../helpers/players.ts';

const REFERENCE = path.resolve(import.meta.dirname, '..', '..', 'deploy', 'nginx', 'mud-server.conf');

/** The reference configuration with this test's instances and port. */
function nginxSnippet(port: number, instances: number[]): string {
  let snippet = readFileSync(REFERENCE, 'utf8');
  const replace = (from: string, to: string): void => {
    if (!snippet.includes(from)) throw new Error(`deploy/nginx/mud-server.conf no longer has '${from}'`);
    snippet = snippet.replace(from, to);
  };
  replace('server 127.0.0.1:8001', `server 127.0.0.1:${instances[0]}`);
  replace('server 127.0.0.1:8002', `server 127.0.0.1:${instances[1]}`);
  // The test also learns which instance answered. Small send buffers to clients (the kernel
  // would grow them to megabytes), so that what nginx holds for a client that does not read
  // shows after a little.
  replace('listen 127.0.0.1:8000;', `listen 127.0.0.1:${port} sndbuf=16k;\n    add_header X-Upstream-Addr $upstream_addr always;`);
  return snippet;
}

interface Reply {
  status: number;
  body: any;
}

/** A JSON request through the balancer from a client address of the test's choosing (127.0.0.0/8). */
function call(baseUrl: string, method: string, urlPath: string, body?: unknown, from = '127.0.0.1'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(new URL(urlPath, baseUrl), { method, agent: false, localAddress: from, headers: payload ? { 'content-type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('nginx in front of two instances (deploy/nginx/mud-server.conf)', function () {
  // Two servers, nginx and a killed instance's streams moving over: seconds on a busy machine.
  this.timeout(90_000);
  let db: { url: string; drop: () => Promise<void> } | undefined;
  const instances: CliServer[] = [];
  const ports: number[] = [];
  let nginx: ChildProcess | undefined;
  let dir = '';
  let url = '';
  const streams: SseStream[] = [];

  before(async function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    needs(this, `nginx at ${NGINX}`, existsSync(NGINX), NGINX_REMEDY);
    db = await throwAwayDatabase();
    const env = {
      DATABASE_URL: db.url,
      MUD_LOG_LEVEL: 'info',
      MUD_SERVER_TRUST_PROXY: 'loopback',
      MUD_EVENTS_HEARTBEAT_SECONDS: '1',
      MUD_RATE_LIMIT_ENABLED: 'true',
      MUD_RATE_LIMIT_LOGIN_PER_ADDRESS: '3',
      // Says as fast as the test of a silent client makes them.
      MUD_RATE_LIMIT_COMMAND_PER_SESSION: '100000',
    };
    // One after the other: the first applies the migrations.
    for (let i = 0; i < 2; i++) {
      const server = startCliServer(['serve'], env);
      instances.push(server);
      ports.push(Number(new URL(String((await server.waitFor((l) => l.message === 'Server listening', 60_000)).url)).port));
    }
    dir = mkdtempSync(path.join(tmpdir(), 'mud-nginx-'));
    const port = await freePort();
    // The server's X-Accel-Buffering: no would switch buffering off by itself; ignored here, the
    // streams' going out at once is the configuration's doing (proxy_buffering off).
    writeNginxConf(dir, nginxSnippet(port, ports), '  proxy_ignore_headers X-Accel-Buffering;\n');
    url = `http://127.0.0.1:${port}`;
    nginx = await startNginx(dir, async () => (await call(url, 'GET', '/health')).status === 200);
  });

  after(async () => {
    for (const stream of streams) stream.close();
    nginx?.kill('SIGTERM');
    for (const server of instances) server.kill();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A guest with a character, logged in and playing, all through nginx from its own client address. */
  async function player(first: string, from: string): Promise<{ name: string; sid: string }> {
    const name = uniqueName(first);
    const guest = await call(url, 'POST', '/register-guest', { password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD, character_name: name }, from);
    expect(guest.status, JSON.stringify(guest.body)).to.equal(200);
    const login = await call(url, 'POST', '/login', { username: guest.body.username, password: GOOD_PASSWORD }, from);
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    const select = await call(url, 'POST', '/characters/select', { session_id: login.body.session_id, character_id: guest.body.character_id }, from);
    expect(select.status, JSON.stringify(select.body)).to.equal(200);
    return { name, sid: login.body.session_id };
  }

  const say = async (sid: string, text: string): Promise<void> => {
    const reply = await call(url, 'POST', '/command', { session_id: sid, command: `say ${text}` });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
  };

  /** Opens a stream through nginx, retrying until it lands on the instance at `port` (round robin alternates). */
  async function streamOn(sid: string, port: number, headers: Record<string, string> = {}): Promise<SseStream> {
    for (let i = 0; i < 10; i++) {
      const stream = await openStream(`${url}/events/${sid}`, headers);
      expect(stream.status).to.equal(200);
      if (stream.headers.get('x-upstream-addr') === `127.0.0.1:${port}`) {
        streams.push(stream);
        return stream;
      }
      stream.close();
    }
    throw new Error(`no stream reached 127.0.0.1:${port}`);
  }

  it('passes the client address on: the per-address login limit counts each client, not the proxy', async () => {
    for (let i = 0; i < 3; i++) expect((await call(url, 'POST', '/login', { username: 'nobody', password: 'Wrong-Lantern-42' }, '127.0.0.9')).status).to.equal(401);
    expect((await call(url, 'POST', '/login', { username: 'nobody', password: 'Wrong-Lantern-42' }, '127.0.0.9')).status).to.equal(429);
    expect((await call(url, 'POST', '/login', { username: 'nobody', password: 'Wrong-Lantern-42' }, '127.0.0.10')).status).to.equal(401);
    // trust_proxy = loopback trusts this nginx: no instance warns that it does not.
    for (const server of instances) expect(server.lines.filter((l) => l.level === 'warn' && /trust_proxy/.test(String(l.message)))).to.deep.equal([]);
  });

  it('holds nothing of a stream whose client stops reading (proxy_buffering off): nothing is spooled to a file', async () => {
    const speaker = await player('Sayer', '127.0.0.4');
    const silent = await player('Quiet', '127.0.0.5');
    const listener = await streamOn(speaker.sid, ports[0]!);
    // Asks for the stream and never reads it.
    const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
    socket.pause();
    socket.write(`GET /events/${silent.sid} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`);
    try {
      // Stored HTML-escaped, each `'` becomes `&#x27;`: about 12 kB a frame, 700 kB in all, some
      // times what the sockets to the silent client hold (sndbuf above; its own receive buffer
      // stays at the kernel's default while it does not read). Buffering, nginx would keep 32 kB
      // in memory and the rest in a temporary file (up to a gigabyte), and say so in its log: here
      // after about 20 says.
      const text = "'".repeat(1990);
      const spooled = (): string[] => readFileSync(path.join(dir, 'error.log'), 'utf8').split('\n').filter((line) => line.includes('buffered to a temporary file'));
      let said = 0;
      for (; said < 60 && spooled().length === 0; said++) {
        await say(speaker.sid, text);
        // Each say heard before the next (the silent stream's copy was written with it); a
        // busy machine may take its time.
        await listener.nextOf('chat', 30_000);
      }
      expect(spooled(), `after ${said} says`).to.deep.equal([]);
    } finally {
      socket.destroy();
      listener.close();
    }
  });

  it('players on different instances hear each other live, with heartbeats, through the balancer; when one instance is killed its player resumes on the other with no chat lost', async () => {
    const anna = await player('Anna', '127.0.0.2');
    const bert = await player('Bert', '127.0.0.3');
    const annaStream = await streamOn(anna.sid, ports[0]!);
    let bertStream = await streamOn(bert.sid, ports[1]!);
    await say(anna.sid, 'hello from the first instance');
    expect((await bertStream.nextOf('chat', 10_000)).data.text).to.equal('hello from the first instance');
    // A speaker's stream shows its own say too.
    expect((await annaStream.nextOf('chat', 10_000)).data.text).to.equal('hello from the first instance');
    await say(bert.sid, 'and from the second');
    expect((await annaStream.nextOf('chat', 10_000)).data.text).to.equal('and from the second');
    // The last message Bert has seen.
    const lastSeen = await bertStream.nextOf('chat', 10_000);
    expect(lastSeen.data.text).to.equal('and from the second');
    // Unbuffered: idle heartbeats (1 s here) come through too.
    const beats = bertStream.heartbeats;
    await bertStream.quiet(2500);
    expect(bertStream.heartbeats).to.be.greaterThan(beats);

    // Bert's instance dies; what Anna says meanwhile must reach Bert when he reconnects.
    instances[1]!.kill();
    await instances[1]!.exited;
    for (let i = 0; i < 50 && !bertStream.done; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bertStream.done, 'the killed instance\'s stream ends').to.equal(true);
    await say(anna.sid, 'while you were away');
    await say(anna.sid, 'still here?');
    bertStream = await streamOn(bert.sid, ports[0]!, { 'Last-Event-ID': lastSeen.id! });
    const missed = [(await bertStream.nextOf('chat', 10_000)).data.text, (await bertStream.nextOf('chat', 10_000)).data.text];
    expect(missed).to.deep.equal(['while you were away', 'still here?']);
    // Live again, on the surviving instance.
    await say(anna.sid, 'welcome back');
    const live = await bertStream.nextOf('chat', 10_000);
    expect(live.data.text).to.equal('welcome back');
  });
});
