/**
 * What one address can hold of the telnet door, and what reaches the game from a line: a
 * refused connection is closed by the server (not left half-open for the client to close), a
 * TLS connection counts from its TCP accept and is closed when it does not finish its
 * handshake in time, the caps hold across `--workers` (the primary counts for the host), a
 * server under a low descriptor limit keeps answering HTTP and new players while one address
 * floods both listeners, and a line holding NUL gets a clear answer on either database.
 */
import { describe, it, before, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect as connectPlain, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';
import { startCliServer, throwAwayDatabase, type CliServer, type LogLine } from '../helpers/cli-server.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { registerGuest, uniqueName } from '../helpers/players.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const TOO_MANY = 'Too many connections from your address';

/** A self-signed certificate for the TLS listener, in a folder of its own. */
function makeCertificate(): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-telnet-bounds-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
  return { dir, env: { MUD_TELNET_TLS_PORT: '0', MUD_TELNET_TLS_CERT: path.join(dir, 'cert.pem'), MUD_TELNET_TLS_KEY: path.join(dir, 'key.pem') } };
}

/** A TCP connection that says nothing (to the TLS port: a handshake never begun), with a promise of its close. */
async function silentSocket(port: number, host = '127.0.0.1'): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connectPlain({ port, host });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, closed };
}

/** Waits for the promise up to `ms`, failing with `what` after. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** GET on a connection of its own; 0 when the connection fails (refused, reset). */
function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

describe(`telnet door bounds (${DB_NAME})`, function () {
  this.timeout(60_000);
  let certificate: ReturnType<typeof makeCertificate>;
  const clients: TelnetClient[] = [];
  const sockets: Socket[] = [];

  before(() => {
    certificate = makeCertificate();
  });
  after(() => {
    rmSync(certificate.dir, { recursive: true, force: true });
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  /** A connection that got the banner (accepted) or the refusal. */
  const telnet = async (port: number, host = '127.0.0.1'): Promise<{ client: TelnetClient; accepted: boolean }> => {
    const client = await TelnetClient.connect(port, { halfOpen: true }, host);
    clients.push(client);
    const first = await client.read(/Username: |Too many connections from your address|The server is full/);
    return { client, accepted: first.endsWith('Username: ') };
  };

  describe('one instance', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({
        env: {
          MUD_TELNET_ENABLED: 'true',
          MUD_TELNET_PORT: '0',
          MUD_TELNET_MAX_CONNECTIONS_PER_ADDRESS: '2',
          MUD_TELNET_HANDSHAKE_TIMEOUT_SECONDS: '5',
          ...certificate.env,
        },
      });
    });
    after(async () => {
      await server?.close();
    });

    it('closes a refused connection itself, after its one line, however long the client keeps its end open', async () => {
      const port = server.telnet!.port;
      expect((await telnet(port)).accepted).to.equal(true);
      expect((await telnet(port)).accepted).to.equal(true);
      const refused = await telnet(port);
      expect(refused.accepted).to.equal(false);
      expect(refused.client.all).to.contain(`${TOO_MANY}; close one and try again.`);
      await refused.client.closedByServer();
    });

    it('counts a TLS connection from its TCP accept, against the same cap, and closes one that does not finish its handshake in time', async () => {
      const { port, tlsPort } = server.telnet!;
      const handshaking = [await silentSocket(tlsPort!), await silentSocket(tlsPort!)];
      sockets.push(...handshaking.map((h) => h.socket));
      // The address holds its two connections in handshakes: a third, of either kind, is refused
      // (the TLS one closed at once, which also tells that the server has taken the two before it).
      const third = await silentSocket(tlsPort!);
      sockets.push(third.socket);
      await within(third.closed, 8000, 'the server to close a TLS connection over the cap');
      const plain = await telnet(port);
      expect(plain.accepted).to.equal(false);
      await plain.client.closedByServer();
      // handshake_timeout_seconds (5 here) closes the two that never began; their slots are free again.
      await within(Promise.all(handshaking.map((h) => h.closed)), 15_000, 'the handshake timeout');
      const after = await telnet(port);
      expect(after.accepted).to.equal(true);
    });

    it('answers a line holding NUL clearly, on every screen, and logs no failure', async () => {
      const client = (await telnet(server.telnet!.port)).client;
      const nul = 'That line must not contain the NUL character (U+0000); it was ignored.';
      client.line(`connect ab\0cd ${GOOD_PASSWORD}`);
      await client.read(nul);
      await client.read('Username: ');
      client.line(`create new\0name ${GOOD_PASSWORD}`);
      await client.read(nul);
      await client.read('Username: ');
      // At a question, the answer is asked for again.
      const { username } = await registerGuest(server, uniqueName('Nula'));
      client.line(username);
      await client.read('Password: ');
      client.line(`${GOOD_PASSWORD}\0`);
      await client.read(nul);
      client.line(GOOD_PASSWORD);
      await client.read('or quit.');
      client.line('play 1');
      await client.read('[Exits]:');
      client.line('say hello\0there');
      await client.read(nul);
      client.line('say still here');
      await client.read('You say: still here');
      expect(client.all).not.to.contain('Something went wrong');
      const failures = server.logs.entries.filter((e) => e.level === 'error' || 'stack' in e);
      expect(failures, server.logs.text()).to.deep.equal([]);
    });
  });

  describe('a flood from one address under a low descriptor limit', () => {
    let server: CliServer;
    let db: { url: string; drop: () => Promise<void> } | undefined;
    let dataDir: string;
    let url = '';
    let ports: { port: number; tlsPort: number };

    before(async () => {
      dataDir = mkdtempSync(path.join(tmpdir(), 'mud-telnet-flood-'));
      db = usePostgres ? await throwAwayDatabase() : undefined;
      server = startCliServer(
        ['serve'],
        {
          ...(db ? { DATABASE_URL: db.url } : { MUD_DB_PATH: path.join(dataDir, 'mud.db') }),
          MUD_LOG_LEVEL: 'info',
          MUD_TELNET_ENABLED: 'true',
          MUD_TELNET_HOST: '::',
          MUD_TELNET_PORT: '0',
          MUD_TELNET_HANDSHAKE_TIMEOUT_SECONDS: '30',
          ...certificate.env,
        },
        { maxOpenFiles: 128 },
      );
      const listening = await server.waitFor((l: LogLine) => l.message === 'Server listening', 60_000);
      url = String(listening.url);
      ports = { port: Number(listening.telnet_port), tlsPort: Number(listening.telnet_tls_port) };
    });
    after(async () => {
      server?.kill();
      await server?.exited;
      await db?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('keeps answering HTTP and new players while one address holds 300 plain and 300 TLS connections open', async () => {
      /** Connections that read what they get but never close their end: only the server can let go of them. */
      const flood = (port: number) =>
        Promise.all(
          Array.from({ length: 300 }, () => {
            const socket = connectPlain({ port, host: '127.0.0.1', allowHalfOpen: true });
            sockets.push(socket);
            socket.on('error', () => undefined);
            const state = { answered: false, letGo: false };
            socket.on('data', () => (state.answered = true));
            socket.once('end', () => (state.letGo = true));
            socket.once('close', () => (state.letGo = true));
            return new Promise<typeof state>((resolve) => socket.once('connect', () => resolve(state)).once('close', () => resolve(state)));
          }),
        );
      // Plain: each connection is answered (the banner, or the one line of a refusal) or let go.
      const plain = await flood(ports.port);
      await eventually(async () => expect(plain.filter((c) => !c.answered && !c.letGo)).to.have.length(0), 20_000);
      expect(await getStatus(`${url}/health`)).to.equal(200);
      // TLS, never a handshake: the server lets go of all but the address's cap (10, the plain ones counted).
      const tls = await flood(ports.tlsPort);
      await eventually(async () => expect(tls.filter((c) => !c.letGo).length).to.be.at.most(10), 20_000);
      expect(await getStatus(`${url}/health`)).to.equal(200);
      // Another address still gets in.
      const player = await TelnetClient.connect(ports.port, {}, '::1');
      clients.push(player);
      await player.read('Username: ');
    });
  });

  describe('serve --workers 2', function () {
    this.timeout(240_000);
    let db: { url: string; drop: () => Promise<void> };
    let server: CliServer;
    let serving: LogLine;
    let telnetPort = 0;
    const workerPids = (): number[] => [...new Set(server.lines.filter((l) => l.message === 'Worker listening').map((l) => Number(l.worker_pid)))];

    before(async function () {
      if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
      db = await throwAwayDatabase();
      server = startCliServer(['serve', '--workers', '2'], { DATABASE_URL: db.url, MUD_LOG_LEVEL: 'info', MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0', MUD_TELNET_MAX_CONNECTIONS_PER_ADDRESS: '3' });
      serving = await server.waitFor((l) => l.message === 'Serving with workers', 90_000);
      telnetPort = Number(server.lines.find((l) => l.message === 'Server listening')!.telnet_port);
    });
    after(async () => {
      server?.kill();
      for (const pid of server ? workerPids() : []) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      await db?.drop();
    });

    it('"Serving with workers" names the HTTP URL', async () => {
      const workersUrl = server.lines.filter((l) => l.message === 'Server listening').map((l) => l.url);
      expect(workersUrl).to.have.length(2);
      expect(serving.url).to.equal(workersUrl[0]);
      expect(await getStatus(`${String(serving.url)}/health`)).to.equal(200);
    });

    it('holds the per-address cap for the host, and frees the slots of a worker that dies', async () => {
      const tries = [];
      for (let i = 0; i < 12; i++) tries.push(await telnet(telnetPort));
      const accepted = tries.filter((t) => t.accepted);
      expect(accepted).to.have.length(3);
      for (const t of tries.filter((t) => !t.accepted)) await t.client.closedByServer();
      // Every worker dies; their replacements find the address's slots free.
      const from = server.lines.length;
      for (const pid of workerPids()) process.kill(pid, 'SIGKILL');
      await Promise.all(accepted.map((t) => t.client.closedByServer(30_000)));
      await eventually(async () => {
        const since = server.lines.slice(from);
        expect(since.filter((l) => l.message === 'Worker listening'), `logged since the kill: ${JSON.stringify(since.map((l) => l.message))}; stderr: ${server.stderr().slice(-2000)}`).to.have.length(2);
        // Two new processes start the whole server: under CI's load (both databases' suites on 2 cores) that has taken over a minute.
      }, 150_000);
      // With no worker left, port 0 picked a new port.
      const port = Number(server.lines.slice(from).find((l) => l.message === 'Server listening')!.telnet_port);
      const again = [];
      for (let i = 0; i < 3; i++) again.push(await telnet(port));
      expect(again.filter((t) => t.accepted)).to.have.length(3);
    });
  });
});
