/**
 * The event ledger: events appended through the service (as the axis engine and the game's
 * translation do), read through GET /admin/ledger (newest first, world filter, limit,
 * checksum verification, permissions) and exported as reference JSONL by the
 * `mud-server ledger-export` command run as a child process (always SQLite there).
 */
import { describe, it, before, after, beforeEach, afterEach } from 'mocha';
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knexFactory from 'knex';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';
import { canonicalJson, parseJson, PyFloat } from '../../src/shared/canonical-json.ts';
import { LedgerRepository } from '../../src/db/repositories/ledger-repository.ts';
import { LedgerService, type LedgerEventInput } from '../../src/services/ledger/ledger-service.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(ROOT, 'src', 'cli.ts');
const ENVELOPE_KEYS = ['data', 'event_id', 'event_type', 'ipc_hash', 'meta', 'schema_version', 'timestamp', 'world_id'];
const IPC = '009c6503c07dd1975420485f7e39067208a662bf687fe21068e46bd33a59eff8';

function resolution(n: number): LedgerEventInput {
  return {
    worldId: 'emberwick',
    eventType: 'chat.mechanical_resolution',
    ipcHash: IPC,
    data: {
      channel: 'say',
      speaker: { character_id: 7, character_name: 'Ada', axis_deltas: { demeanor: 0.0108 } },
      listener: { character_id: 12, character_name: 'Bo', axis_deltas: { demeanor: -0.0108 } },
      axis_snapshot_before: { '7': { demeanor: 0.87, health: new PyFloat(1) }, '12': { demeanor: 0.51, health: 0.44 } },
      grammar_version: '1.0',
      n,
    },
  };
}

function translation(worldId: string, n: number): LedgerEventInput {
  return {
    worldId,
    eventType: 'chat.translation',
    ipcHash: null,
    meta: { phase: 'pre_axis_engine' },
    data: { status: 'success', character_name: 'Ada', channel: 'say', ooc_input: 'héllo ☃', ic_output: 'Well met.', axis_snapshot: {}, n },
  };
}

/** Independent check: "sha256:" + sha256 of Python's sorted-key dumps of the line minus `_checksum`. */
function verifyLine(line: string): boolean {
  const parsed = parseJson(line) as Record<string, unknown>;
  const { _checksum, ...envelope } = parsed;
  const digest = createHash('sha256').update(canonicalJson(envelope), 'utf8').digest('hex');
  return _checksum === `sha256:${digest}`;
}

describe('ledger: GET /admin/ledger', function () {
  this.timeout(30_000);
  let server: TestServer;
  let admin: string;

  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'ledgeradmin', 'admin');
    await server.services.ledger.append(resolution(1));
    server.clock.advance(1_000);
    await server.services.ledger.append(translation('hollow_spire', 2));
    server.clock.advance(1_000);
    await server.services.ledger.append(translation('emberwick', 3));
    server.clock.advance(1_000);
    // Inside a caller's transaction, as the axis engine appends.
    await server.db.transaction((trx) => server.services.ledger.append(resolution(4), trx));
  });

  after(async () => {
    await server?.close();
  });

  it('lists events newest first with the reference envelope and verified checksums', async () => {
    const res = await server.get(`/admin/ledger?session_id=${admin}`);
    expect(res.status, res.text).to.equal(200);
    const events = res.body.events as Array<Record<string, any>>;
    expect(events.map((e) => e.data.n)).to.deep.equal([4, 3, 2, 1]);
    expect(events.map((e) => e.world_id)).to.deep.equal(['emberwick', 'emberwick', 'hollow_spire', 'emberwick']);
    for (const e of events) {
      expect(e.checksum_verified).to.equal(true);
      expect(e.event_id).to.match(/^[0-9a-f]{32}$/);
      expect(e.event_id[12]).to.equal('4');
      expect(e.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
      expect(e.schema_version).to.equal('1.0');
      expect(e.checksum).to.match(/^sha256:[0-9a-f]{64}$/);
    }
    expect(new Set(events.map((e) => e.event_id)).size).to.equal(4);
    expect(events[1]).to.deep.include({ event_type: 'chat.translation', ipc_hash: null, meta: { phase: 'pre_axis_engine' } });
    expect(events[1]!.data.ooc_input).to.equal('héllo ☃');
    expect(events[0]).to.deep.include({ event_type: 'chat.mechanical_resolution', ipc_hash: IPC, meta: {} });
    // The float 1.0 survives storage: the response text keeps it.
    expect(res.text).to.contain('"health":1.0');
    const t0 = Date.parse(events[3]!.timestamp);
    expect(Date.parse(events[2]!.timestamp) - t0).to.equal(1_000);
  });

  it('filters by world and honours the limit', async () => {
    const world = await server.get(`/admin/ledger?session_id=${admin}&world_id=emberwick`);
    expect(world.status).to.equal(200);
    expect(world.body.events.map((e: any) => e.data.n)).to.deep.equal([4, 3, 1]);
    const limited = await server.get(`/admin/ledger?session_id=${admin}&world_id=emberwick&limit=2`);
    expect(limited.body.events.map((e: any) => e.data.n)).to.deep.equal([4, 3]);
    const none = await server.get(`/admin/ledger?session_id=${admin}&world_id=nowhere`);
    expect(none.body).to.deep.equal({ events: [] });
    const bad = await server.get(`/admin/ledger?session_id=${admin}&limit=0`);
    expect(bad.status).to.equal(400);
  });

  it('reports a row changed in the database as not verified', async () => {
    const target = (await server.get(`/admin/ledger?session_id=${admin}&world_id=hollow_spire`)).body.events[0];
    const row = await server.db('ledger_events').where({ id: target.id }).first();
    await server.db('ledger_events').where({ id: target.id }).update({ data_json: String(row.data_json).replace('Well met.', 'Well met!') });
    const events = (await server.get(`/admin/ledger?session_id=${admin}`)).body.events as Array<Record<string, any>>;
    const changed = events.find((e) => e.id === target.id)!;
    expect(changed.checksum_verified).to.equal(false);
    expect(changed.data.ic_output).to.equal('Well met!');
    expect(events.filter((e) => e.id !== target.id).every((e) => e.checksum_verified)).to.equal(true);
    // Restore it for the export test.
    await server.db('ledger_events').where({ id: target.id }).update({ data_json: row.data_json });
  });

  it('exports reference JSONL lines oldest first whose checksums verify', async () => {
    const lines = await server.services.ledger.exportLines('emberwick');
    expect(lines).to.have.length(3);
    const listed = (await server.get(`/admin/ledger?session_id=${admin}&world_id=emberwick`)).body.events as Array<Record<string, any>>;
    for (const [i, line] of lines.entries()) {
      expect(line.startsWith('{"_checksum": "sha256:')).to.equal(true);
      expect(verifyLine(line), line).to.equal(true);
      const parsed = JSON.parse(line);
      expect(Object.keys(parsed).sort()).to.deep.equal(['_checksum', ...ENVELOPE_KEYS]);
      expect(parsed._checksum).to.equal(listed[lines.length - 1 - i]!.checksum);
    }
    expect(lines[0]).to.contain('"health": 1.0');
    expect(lines.map((l) => JSON.parse(l).data.n)).to.deep.equal([1, 3, 4]);
  });

  it('is VIEW_LOGS only: 403 for player and worldbuilder, 401 without a session', async () => {
    for (const role of ['player', 'worldbuilder'] as const) {
      const session = await sessionFor(server, `ledger_${role}`.slice(0, 20), role);
      const res = await server.get(`/admin/ledger?session_id=${session}`);
      expect(res.status, role).to.equal(403);
    }
    expect((await server.get('/admin/ledger')).status).to.equal(401);
    expect((await server.get('/admin/ledger?session_id=nope')).status).to.equal(401);
  });
});

describe('ledger: mud-server ledger-export', function () {
  this.timeout(30_000);
  let dir: string;
  let dbPath: string;
  let env: NodeJS.ProcessEnv;

  function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mud-ledger-'));
    dbPath = path.join(dir, 'mud.db');
    const iniPath = path.join(dir, 'server.ini');
    writeFileSync(iniPath, '');
    env = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith('MUD_') && name !== 'DATABASE_URL') env[name] = value;
    }
    Object.assign(env, { MUD_CONFIG: iniPath, MUD_DB_PATH: dbPath, MUD_LOG_LEVEL: 'error', MUD_WORLDS_ROOT: path.join(ROOT, 'worlds') });
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the world ledger as JSONL, oldest first, and refuses an unknown world', async () => {
    const migrate = await runCli(['migrate']);
    expect(migrate.code, migrate.stderr).to.equal(0);
    const db = knexFactory({ client: 'sqlite3', connection: { filename: dbPath }, useNullAsDefault: true });
    try {
      const ledger = new LedgerService(new LedgerRepository(db), () => new Date());
      await ledger.append(resolution(1));
      await ledger.append(translation('hollow_spire', 2));
      await ledger.append(translation('emberwick', 3));
    } finally {
      await db.destroy();
    }

    const run = await runCli(['ledger-export', 'emberwick']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.endsWith('\n')).to.equal(true);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).to.have.length(2);
    for (const line of lines) {
      expect(line.startsWith('{"_checksum": "sha256:')).to.equal(true);
      expect(verifyLine(line), line).to.equal(true);
      expect(JSON.parse(line).world_id).to.equal('emberwick');
    }
    expect(lines.map((l) => JSON.parse(l).data.n)).to.deep.equal([1, 3]);

    const empty = await runCli(['ledger-export', 'hollow_spire']);
    expect(empty.code, empty.stderr).to.equal(0);
    expect(empty.stdout.trimEnd().split('\n')).to.have.length(1);

    const unknown = await runCli(['ledger-export', 'atlantis']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain("mud-server: World 'atlantis' not found");
    expect(unknown.stdout).to.equal('');

    const usage = await runCli(['ledger-export']);
    expect(usage.code).to.equal(1);
    expect(usage.stderr).to.contain('Usage: mud-server ledger-export <world_id>');
  });
});
