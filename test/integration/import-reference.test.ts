/**
 * `mud-server import-reference` on the reference sample (test/fixtures/reference-sample: a
 * database and ledger the reference server wrote, its worlds as packages, and facts.json
 * listing every account's password, character and chat row): every account logs
 * in with its old password and has its role and state, characters stand in their rooms with
 * their items, chat is where it was (GET /chat, the event stream by chat id), axis scores,
 * the policy store and the ledger arrive; a second run is refused or, under --merge, finds
 * everything there; a dry run, a skip without --allow-skips and a failure half-way write
 * nothing; a file that is not a reference database gets a clear error. Then the command itself
 * as a child process (exit codes, the report).
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { startTestServer, TestClock, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { ON_SQLITE, skipBecause } from '../helpers/needs.ts';
import { openStream } from '../helpers/sse.ts';
import { startCliServer, throwAwayDatabase } from '../helpers/cli-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { newPlayer } from '../helpers/players.ts';
import { ReferenceDatabaseError } from '../../src/integrations/reference-database.ts';
import { ledgerLines, ReferenceLedgerError } from '../../src/integrations/reference-ledger.ts';
import { ReferenceImportError, type ImportReport } from '../../src/services/migration/reference-import.ts';
import { Conflict } from '../../src/shared/errors.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SAMPLE = path.join(ROOT, 'test', 'fixtures', 'reference-sample');
const REFERENCE_DB = path.join(SAMPLE, 'mud.db');
const LEDGER = path.join(SAMPLE, 'ledger');

interface Account {
  username: string;
  password: string;
  role: string;
  temporary: boolean;
  banned: boolean;
  deleted: boolean;
  guest_expires_at: string | null;
}
interface Character {
  name: string;
  world_id: string;
  room_id: string;
  owner_username: string | null;
  inventory_names: string[];
  is_guest_created: boolean;
}
interface Message {
  id: number;
  kind: string;
  world_id: string;
  room: string;
  sender: string;
  recipient: string | null;
  message: string;
}

const facts = JSON.parse(readFileSync(path.join(SAMPLE, 'facts.json'), 'utf8'));
const accounts: Account[] = facts.accounts;
const characters: Character[] = facts.characters;
const messages: Message[] = facts.chat.messages;

/** The sample's worlds, with pipeworks_web as the default world. */
const SAMPLE_ENV = { MUD_WORLDS_ROOT: path.join(SAMPLE, 'worlds'), MUD_DEFAULT_WORLD_ID: 'pipeworks_web' };

/** An hour after the sample was written, so that its temporary accounts have not expired whenever the suite runs. */
const SAMPLE_TIME = new Date('2026-11-25T10:33:00Z');

function startSampleServer(): Promise<TestServer> {
  return startTestServer({ env: SAMPLE_ENV, clock: new TestClock(SAMPLE_TIME) });
}

async function gameRows(server: TestServer): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['users', 'characters', 'item_instances', 'chat_messages', 'ledger_events', 'character_axis_scores', 'axis_events', 'policy_items', 'world_permissions']) {
    counts[table] = Number((await server.db(table).count({ n: '*' }).first())?.n);
  }
  return counts;
}

/** A writable copy of the sample database, changed by `craft`. */
async function craftedCopy(dir: string, craft: (db: knexFactory.Knex) => Promise<void>): Promise<string> {
  const file = path.join(dir, `crafted-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(REFERENCE_DB, file);
  chmodSync(file, 0o600);
  const db = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
  try {
    await craft(db);
  } finally {
    await db.destroy();
  }
  return file;
}

function summary(report: ImportReport, table: string) {
  return report.tables.find((t) => t.table === table);
}

async function login(server: TestServer, username: string, password: string) {
  return server.post('/login', { username, password });
}

/** Logs in and plays the named character; returns the session id. */
async function play(server: TestServer, account: Account, characterName: string): Promise<string> {
  const res = await login(server, account.username, account.password);
  expect(res.status, res.text).to.equal(200);
  const character = await server.db('characters').where({ name: characterName }).first('id', 'world_id');
  const selected = await server.post('/characters/select', { session_id: res.body.session_id, character_id: character.id, world_id: character.world_id });
  expect(selected.status, selected.text).to.equal(200);
  return res.body.session_id;
}

async function command(server: TestServer, sessionId: string, text: string): Promise<string> {
  const res = await server.post('/command', { session_id: sessionId, command: text });
  expect(res.status, res.text).to.equal(200);
  return res.body.message;
}

async function chatOf(server: TestServer, sessionId: string): Promise<string[]> {
  const chat = await server.get(`/chat/${sessionId}`);
  expect(chat.status, chat.text).to.equal(200);
  return chat.body.messages.map((m: { text: string }) => m.text);
}

const account = (username: string): Account => accounts.find((a) => a.username === username)!;

describe('import-reference: the reference sample', function () {
  this.timeout(180_000);
  let server: TestServer;
  let report: ImportReport;

  before(async () => {
    server = await startSampleServer();
    report = await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER });
  });
  after(async () => {
    await server?.close();
  });

  it('reports every table: all rows imported, the deleted account mapped, sessions not carried over', () => {
    expect(report.committed).to.equal(true);
    expect(report.skipped).to.equal(0);
    expect(summary(report, 'users')).to.include({ read: 15, imported: 14, mapped: 1, skipped: 0 });
    expect(summary(report, 'characters')).to.include({ read: 14, imported: 14, skipped: 0 });
    expect(summary(report, 'items')).to.include({ read: 4, imported: 4 });
    expect(summary(report, 'chat_messages')).to.include({ read: 19, imported: 19 });
    expect(summary(report, 'character_axis_score')).to.include({ read: 99, imported: 99 });
    expect(summary(report, 'ledger')).to.include({ read: 22, imported: 22 });
    expect(summary(report, 'policy_variant')).to.include({ read: 30, imported: 30 });
    expect(report.lines.find((l) => l.row.includes("'tmp_gone'"))?.reason).to.match(/deleted in the reference/);
    expect(report.lines.find((l) => l.table === 'sessions')?.reason).to.match(/5 session\(s\) not carried over.*logs in again/);
  });

  it('every account logs in with its old password and has its role and state', async function () {
    const warden = await login(server, 'warden', account('warden').password);
    const players = (await server.get(`/admin/database/players?session_id=${warden.body.session_id}`)).body.players as Array<Record<string, unknown>>;
    for (const a of accounts) {
      const res = await login(server, a.username, a.password);
      if (a.deleted) {
        expect(res.status, a.username).to.equal(401);
        expect(players.some((p) => p.username === a.username), a.username).to.equal(false);
        continue;
      }
      const row = players.find((p) => p.username === a.username)!;
      expect(row, a.username).to.include({ role: a.role, is_guest: a.temporary, is_active: !a.banned, guest_expires_at: a.guest_expires_at });
      if (a.banned) {
        expect(res.status, a.username).to.equal(401);
        expect(res.body.detail).to.equal('Account is deactivated');
      } else {
        expect(res.status, `${a.username}: ${res.text}`).to.equal(200);
        expect(res.body.role).to.equal(a.role);
      }
      expect((await login(server, a.username, `${a.password}x`)).status, a.username).to.equal(401);
    }
  });

  it('characters stand in their rooms with their items, owned as before', async () => {
    for (const c of characters) {
      const row = await server.db('characters').where({ name: c.name }).first();
      expect(row, c.name).to.not.equal(undefined);
      expect({ world: row.world_id, room: row.room_id, guest: Boolean(row.is_guest_created) }, c.name).to.deep.equal({ world: c.world_id, room: c.room_id, guest: c.is_guest_created });
      const owner = row.user_id === null ? null : (await server.db('users').where({ id: row.user_id }).first('username')).username;
      expect(owner, c.name).to.equal(c.owner_username);
      const a = c.owner_username ? account(c.owner_username) : undefined;
      if (!a || a.banned) continue;
      const sessionId = await play(server, a, c.name);
      const world = JSON.parse(readFileSync(path.join(SAMPLE, 'worlds', c.world_id, 'zones', `${(await zoneOf(c.world_id, c.room_id))}.json`), 'utf8'));
      const roomName = world.rooms.find((r: { id: string }) => r.id === c.room_id).name;
      expect(await command(server, sessionId, 'look'), c.name).to.include(roomName);
      const inventory = await command(server, sessionId, 'inventory');
      for (const item of c.inventory_names) expect(inventory, c.name).to.include(item);
      if (c.inventory_names.length === 0) expect(inventory, c.name).to.match(/empty|nothing/i);
      await server.post('/logout', { session_id: sessionId });
    }
  });

  it('an imported item is a real object: dropped, it lies in the room for others', async () => {
    const sessionId = await play(server, account('hazel'), 'Hazel Underhill');
    expect(await command(server, sessionId, 'drop mud puddle')).to.match(/drop/i);
    expect(await command(server, sessionId, 'inventory')).to.not.include('Mud Puddle');
    expect(await server.db('item_instances').where({ item_id: 'mud_puddle', room_id: 'street_west' }).whereNull('character_id').count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) >= 1);
    await command(server, sessionId, 'get mud puddle');
    expect(await command(server, sessionId, 'inventory')).to.include('Mud Puddle');
    await server.post('/logout', { session_id: sessionId });
  });

  it('chat is where it was: each row in its room (zone:room resolved), in order, with its channel', async () => {
    const rows = await server.db('chat_messages').orderBy('id').select('room_id', 'world_id', 'channel', 'message', 'sender_name');
    expect(rows.map((r) => [r.world_id, r.room_id.replace(/^cobbled_street:/, ''), r.channel, r.message, r.sender_name])).to.deep.equal(
      messages.map((m) => [m.world_id, m.room.replace(/^cobbled_street:/, ''), m.kind, m.message, m.sender]),
    );
  });

  it('GET /chat shows a room its messages, whispers only to their two ends', async () => {
    const spawn = messages.filter((m) => m.world_id === 'pipeworks_web' && m.room === 'spawn');
    const seenBy = (name: string) => spawn.filter((m) => m.kind !== 'whisper' || m.sender === name || m.recipient === name).map((m) => m.message);
    for (const [username, name] of [['rowan', 'Rowan Thistlewood'], ['guest_81025', 'Pip'], ['guest_68268', 'Quill']] as const) {
      const sessionId = await play(server, account(username), name);
      const chat = await server.get(`/chat/${sessionId}`);
      expect(chat.status, chat.text).to.equal(200);
      expect(chat.body.messages.map((m: { text: string }) => m.text), name).to.deep.equal(seenBy(name));
      const ids = chat.body.messages.map((m: { id: number }) => m.id);
      expect(ids, 'ids ascend in the original order').to.deep.equal([...ids].sort((a: number, b: number) => a - b));
      await server.post('/logout', { session_id: sessionId });
    }
    const fern = await chatOf(server, await play(server, account('tmp_fern'), 'Fern Addison'));
    // Stored HTML-escaped as this server stores chat; the text is the reference's.
    expect(fern).to.include('First time visiting &amp; it&#x27;s lovely.');
    const warden = await play(server, account('warden'), 'Warden Greystone');
    await command(server, warden, 'south');
    const middle = messages.filter((m) => m.world_id === 'daily_undertaking' && m.room.replace(/^cobbled_street:/, '') === 'street_middle').map((m) => m.message);
    expect(await chatOf(server, warden)).to.deep.equal(middle);
  });

  it('the event stream resumes after an imported message by its chat id', async () => {
    const sessionId = await play(server, account('maple'), 'Maple Orrin');
    const chat = (await server.get(`/chat/${sessionId}`)).body.messages as Array<{ id: number; text: string }>;
    const from = chat.findIndex((m) => m.text === 'I might add a few rooms later.');
    const stream = await openStream(`${server.url}/events/${sessionId}`, { 'last-event-id': String(chat[from]!.id) });
    try {
      expect(stream.status).to.equal(200);
      for (const expected of chat.slice(from + 1)) expect((await stream.nextOf('chat', 10_000)).data.text).to.equal(expected.text);
    } finally {
      stream.close();
    }
  });

  it('axis scores, the policy store and the ledger arrive; the ledger checksums verify', async () => {
    const pip = await server.db('characters').where({ name: 'Pip' }).first('id');
    const scores = await server.services.characters.axisState(pip.id);
    const expected = facts.axis.scores.filter((s: { character: string }) => s.character === 'Pip');
    expect(scores.axes.map((a) => [a.axis_name, a.axis_score]).sort()).to.deep.equal(expected.map((s: { axis: string; axis_score: number }) => [s.axis, s.axis_score]).sort());
    expect(Number((await server.db('policy_activations').count({ n: '*' }).first())?.n)).to.equal(60);
    // The imported policy store is this server's: a new character gets the imported axis bundle's axes.
    expect((await server.services.characters.axisBundle('pipeworks_web'))?.axisNames).to.have.length(11);
    const newcomer = await newPlayer(server, 'Newcomer');
    expect((await server.services.characters.axisState(newcomer.characterId)).axes.map((a) => a.axis_name).sort()).to.deep.equal(scores.axes.map((a) => a.axis_name).sort());
    await server.post('/logout', { session_id: newcomer.sessionId });
    const warden = (await login(server, 'warden', account('warden').password)).body.session_id;
    const ledger = await server.get(`/admin/ledger?session_id=${warden}&world_id=pipeworks_web&limit=1000`);
    expect(ledger.status, ledger.text).to.equal(200);
    expect(ledger.body.events).to.have.length(22);
    expect(ledger.body.events.every((e: { checksum_verified: boolean }) => e.checksum_verified)).to.equal(true);
    // ledger-export gives back the reference's file, line for line.
    const file = readFileSync(path.join(LEDGER, 'pipeworks_web.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    expect(await server.services.ledger.exportLines('pipeworks_web')).to.deep.equal(file);
  });

  it('a second run is refused; under --merge it finds everything there and adds nothing', async () => {
    const before = await gameRows(server);
    let refused: unknown;
    try {
      await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER });
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(Conflict);
    expect((refused as Error).message).to.match(/already has game data.*--merge/);
    const merged = await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER, merge: true });
    expect(merged.committed).to.equal(true);
    for (const table of ['characters', 'chat_messages', 'ledger', 'character_axis_score', 'policy_variant']) {
      const s = summary(merged, table)!;
      expect(s, table).to.include({ imported: 0, mapped: 0, skipped: 0 });
      expect(s.existing, table).to.equal(s.read);
    }
    expect(summary(merged, 'users')).to.include({ existing: 14, imported: 0 });
    expect(await gameRows(server)).to.deep.equal(before);
  });
});

describe('import-reference: what it refuses, and all or nothing', function () {
  this.timeout(180_000);
  let server: TestServer;
  let dir: string;

  before(async () => {
    server = await startSampleServer();
    dir = mkdtempSync(path.join(tmpdir(), 'mud-import-'));
    empty = await gameRows(server);
    expect(empty).to.include({ users: 0, characters: 0, chat_messages: 0, ledger_events: 0, policy_items: 0 });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The database before any import: the worlds' items seeded in their rooms, nothing else. */
  let empty: Record<string, number>;

  it('a dry run reports what the import would do and writes nothing', async () => {
    const dry = await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER, dryRun: true });
    expect(dry.committed).to.equal(false);
    expect(summary(dry, 'users')).to.include({ read: 15, imported: 14, mapped: 1 });
    expect(summary(dry, 'chat_messages')).to.include({ imported: 19 });
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('says what this server will not keep: expired temporary accounts, chat past its retention', async () => {
    const week = 8 * 86_400_000;
    server.clock.advance(week);
    try {
      const later = await server.services.referenceImport.run(REFERENCE_DB, { dryRun: true });
      const expired = later.lines.filter((l) => l.table === 'users' && /temporary account expired at .*not recreated/.test(l.reason)).map((l) => l.row);
      expect(expired).to.have.length(accounts.filter((a) => a.temporary && !a.deleted).length);
      expect(later.lines.map((l) => l.reason)).to.include(
        '19 message(s) are older than [chat] retention_days (7): this server deletes them at its next chat prune; raise retention_days before starting it to keep them',
      );
      expect(later.skipped).to.equal(0);
    } finally {
      server.clock.advance(-week);
    }
  });

  it('a file that is not a reference database gets a clear error', async () => {
    const text = path.join(dir, 'notes.db');
    writeFileSync(text, 'these are not the tables you are looking for\n'.repeat(200));
    const other = await craftedCopy(dir, async (db) => {
      await db.schema.dropTable('chat_messages');
    });
    const cases: Array<[string, RegExp]> = [
      [text, /is not a reference database: not an SQLite file/],
      [other, /is not a reference database: it has no table 'chat_messages'/],
      [path.join(dir, 'missing.db'), /Cannot read .*ENOENT/],
    ];
    for (const [file, message] of cases) {
      let error: unknown;
      try {
        await server.services.referenceImport.run(file);
      } catch (err) {
        error = err;
      }
      expect(error, file).to.be.instanceOf(ReferenceDatabaseError);
      expect((error as Error).message).to.match(message);
    }
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('reads regular ledger files only: a FIFO or a link named *.jsonl is refused at once, and nothing is written', async function () {
    // Before, reading a FIFO nobody writes to blocked for ever: this test must end by itself.
    this.timeout(30_000);
    const withFifo = path.join(dir, 'ledger-fifo');
    const withLink = path.join(dir, 'ledger-link');
    for (const ledgerDir of [withFifo, withLink]) {
      mkdirSync(ledgerDir);
      copyFileSync(path.join(LEDGER, 'pipeworks_web.jsonl'), path.join(ledgerDir, 'pipeworks_web.jsonl'));
    }
    execFileSync('mkfifo', [path.join(withFifo, 'x.jsonl')]);
    symlinkSync('/etc/passwd', path.join(withLink, 'passwd.jsonl'));
    for (const [ledgerDir, what] of [[withFifo, "x.jsonl' is a FIFO \\(named pipe\\)"], [withLink, "passwd.jsonl' is a symbolic link"]] as const) {
      let error: unknown;
      try {
        await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir, allowSkips: true });
      } catch (err) {
        error = err;
      }
      expect(error, ledgerDir).to.be.instanceOf(ReferenceImportError);
      expect((error as Error).message).to.match(new RegExp(`^The ledger file '.*${what}: the import reads regular files only \\(copy the real file there\\)\\. Nothing was written\\.$`));
    }
    // The file itself is checked once open too, so a link or FIFO put there after the listing is refused as well.
    for (const [file, what] of [[path.join(withFifo, 'x.jsonl'), /is a FIFO/], [path.join(withLink, 'passwd.jsonl'), /is a symbolic link/]] as const) {
      let error: unknown;
      try {
        for await (const line of ledgerLines(file, 1024)) expect.fail(`read ${JSON.stringify(line)}`);
      } catch (err) {
        error = err;
      }
      expect(error, file).to.be.instanceOf(ReferenceLedgerError);
      expect((error as Error).message).to.match(what);
    }
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('a row that would be skipped holds the import back unless skips are allowed, and is reported', async () => {
    const file = await craftedCopy(dir, async (db) => {
      await db('chat_messages').where({ id: 3 }).update({ room: 'no_such_room' });
      // As the reference leaves a whisper whose recipient was deleted.
      await db('chat_messages').where({ id: 15 }).update({ recipient_character_id: null });
      // A Cyrillic і among Latin letters: no rule of this server's names keeps it.
      await db('characters').where({ id: 2 }).update({ name: 'Qu\u0456ll' });
    });
    const held = await server.services.referenceImport.run(file);
    expect(held.committed).to.equal(false);
    expect(held.skipped).to.be.greaterThan(0);
    const reasons = held.lines.filter((l) => l.outcome === 'skipped').map((l) => `${l.row}: ${l.reason}`);
    expect(reasons).to.include("chat_messages#3: room 'no_such_room' is not in world 'daily_undertaking'");
    expect(reasons).to.include("characters#2 'Qu\u0456ll': this server refuses the name: Character name must be written in one script: it mixes letters of different alphabets");
    expect(reasons).to.include('chat_messages#15: a whisper whose recipient no longer exists in the reference');
    // Quill's whispers lose their recipient, so they are skipped too rather than shown to the room.
    expect(reasons.filter((r) => r.includes('a whisper whose recipient was not imported'))).to.have.length(1);
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('a failure half-way leaves the database as it was', async () => {
    // The database refuses the ledger, the last step: accounts, characters, chat and policies are written before it.
    if (usePostgres) {
      await server.db.raw("CREATE FUNCTION refuse_ledger() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql");
      await server.db.raw('CREATE TRIGGER refuse_ledger BEFORE INSERT ON ledger_events FOR EACH ROW EXECUTE FUNCTION refuse_ledger()');
    } else {
      await server.db.raw("CREATE TRIGGER refuse_ledger BEFORE INSERT ON ledger_events BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
    }
    let error: unknown;
    try {
      await server.services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER, allowSkips: true });
    } catch (err) {
      error = err;
    } finally {
      await server.db.raw('DROP TRIGGER refuse_ledger' + (usePostgres ? ' ON ledger_events' : ''));
      if (usePostgres) await server.db.raw('DROP FUNCTION refuse_ledger()');
    }
    expect(error).to.be.instanceOf(ReferenceImportError);
    expect((error as Error).message).to.match(/failed while writing the ledger, and wrote nothing: .*refused by the test/);
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('with --allow-skips the rest is imported and the skips stay listed', async () => {
    const file = await craftedCopy(dir, async (db) => {
      await db('users').insert({ id: 16, username: 'Rowan', password_hash: (await db('users').where({ id: 5 }).first('password_hash')).password_hash, role: 'player', is_active: 1, is_guest: 0, account_origin: 'admin', created_at: '2026-11-25 09:40:00' });
      await db('characters').where({ id: 13 }).update({ inventory: '["gas_lamp", "no_such_item"]' });
      // The reference keeps names unique per world, this server across worlds; it takes any text as a name.
      await db('characters').where({ id: 12 }).update({ name: 'Hazel Marchbank' });
      await db('characters').where({ id: 7 }).update({ name: 'Fern Addison #2' });
      await db('users').where({ id: 9 }).update({ username: 'admin_fern' });
      // The reference's API has no grant endpoint, but its table does.
      await db('world_permissions').insert({ user_id: 8, world_id: 'daily_undertaking', can_access: 1, created_at: '2026-11-25 09:40:00' });
      // As the reference's admin character tombstone leaves Moss Calder.
      await db('characters').where({ id: 8 }).update({ name: 'tombstone_8_Moss Calder', user_id: null });
    });
    const done = await server.services.referenceImport.run(file, { allowSkips: true });
    expect(done.committed).to.equal(true);
    expect(done.lines).to.deep.include({ table: 'items', row: "characters#13 item 'no_such_item'", outcome: 'skipped', reason: "no item 'no_such_item' in world 'daily_undertaking'" });
    // A name that differs only in case is kept and logs in by its exact name.
    expect(done.lines.find((l) => l.row === "users#16 'Rowan'")?.reason).to.match(/only in letter case/);
    expect((await login(server, 'Rowan', account('rowan').password)).status).to.equal(200);
    expect((await login(server, 'rowan', account('rowan').password)).status).to.equal(200);
    const mapped = (row: string) => done.lines.filter((l) => l.row === row).map((l) => l.reason);
    expect(mapped("characters#12 'Hazel Marchbank'")).to.deep.equal([
      "the name 'Hazel Marchbank' is taken here (names are unique across worlds in any letter case): renamed 'Hazel Marchbank II'",
    ]);
    expect(mapped("characters#7 'Fern Addison #2'")).to.deep.equal(["renamed 'Fern Addison': Character name must be 2-40 characters: letters, spaces, apostrophes and hyphens"]);
    expect(mapped("characters#8 'tombstone_8_Moss Calder'")).to.deep.equal([
      "tombstoned in the reference: kept unowned under its name 'Moss Calder' (the reference keeps it, and its name taken, too)",
    ]);
    expect(await server.db('characters').where({ name: 'Moss Calder' }).first('user_id')).to.deep.equal({ user_id: null });
    const maple = await login(server, 'maple', account('maple').password);
    expect(maple.body.available_worlds.find((w: { id: string }) => w.id === 'daily_undertaking')).to.include({ has_permission_grant: true, can_access: true });
    expect(summary(done, 'world_permissions')).to.include({ read: 1, imported: 1 });
    expect(mapped("users#9 'admin_fern'")).to.deep.equal(["kept as it is, though a self-registered name may not carry the reserved word 'admin' here"]);
    // Hazel plays the renamed character where it was, and its chat carries the new name.
    const hazel = await play(server, account('hazel'), 'Hazel Marchbank II');
    expect(await command(server, hazel, 'look')).to.include('West End of Cobbled Street');
    const fern = await play(server, { ...account('tmp_fern'), username: 'admin_fern' }, 'Fern Addison');
    expect(await chatOf(server, fern)).to.include('First time visiting &amp; it&#x27;s lovely.');
    expect((await server.db('chat_messages').where({ message: '[YELL] Is anyone out here in the fog?' }).select('sender_name')).map((r) => r.sender_name)).to.deep.equal(['Hazel Marchbank II', 'Hazel Marchbank II']);
  });
});

describe('import-reference: rows this server could not serve', function () {
  this.timeout(180_000);
  let server: TestServer;
  let dir: string;
  let empty: Record<string, number>;
  let file: string;
  let ledgerDir: string;
  let axis: number;
  const longLine = JSON.stringify({ _checksum: 'sha256:0', event_id: 'f'.repeat(32), timestamp: '2026-11-25T09:40:00.000000+00:00', world_id: 'pipeworks_web', event_type: 'chat.translation', schema_version: '1.0', ipc_hash: null, meta: {}, data: { ooc_input: 'x'.repeat(100_000) } });

  before(async () => {
    server = await startSampleServer();
    dir = mkdtempSync(path.join(tmpdir(), 'mud-import-rows-'));
    empty = await gameRows(server);
    file = await craftedCopy(dir, async (db) => {
      // Not JSON: every read of the policy store (listing, hash snapshot, publish, character creation) would fail on it.
      await db('policy_variant').where({ id: 26 }).update({ content_json: '{"axes": {' });
      await db('policy_item').where({ policy_id: 'tone_profile:image.tone_profiles:ledger_engraving' }).update({ policy_type: 'prompt' });
      await db('policy_variant').where({ id: 3 }).update({ content_json: '{"text": ""}' });
      // 300 KB said at once; a command carries 2000 characters.
      await db('chat_messages').where({ id: 10 }).update({ message: `Hi Rowan! ${'x'.repeat(300_000)}` });
      await db('users').where({ id: 4 }).update({ account_origin: 'imported-by-hand-in-2026' });
      await db('characters').where({ id: 11 }).update({ state_seed: 2 ** 40 });
      axis = (await db('character_axis_score').where({ character_id: 1 }).orderBy('axis_id').first('axis_id')).axis_id;
      await db('character_axis_score').where({ character_id: 1, axis_id: axis }).update({ axis_score: 7 });
    });
    ledgerDir = path.join(dir, 'ledger');
    mkdirSync(ledgerDir);
    const lines = readFileSync(path.join(LEDGER, 'pipeworks_web.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
    lines[0] = lines[0]!.replace(/"event_type": "[^"]*"/, '"event_type": "chat.whatever"');
    writeFileSync(path.join(ledgerDir, 'pipeworks_web.jsonl'), `${[...lines, longLine].join('\n')}\n`);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("skips every row that breaks this server's rules, with the table, the row and the rule, and writes nothing", async () => {
    const held = await server.services.referenceImport.run(file, { ledgerDir });
    expect(held.committed).to.equal(false);
    const skipped = held.lines.filter((l) => l.outcome === 'skipped').map((l) => `${l.row}: ${l.reason}`);
    for (const line of [
      'policy_variant axis_bundle:axis.bundles:axis_core_v1 v1: content_json is not JSON',
      "policy_item tone_profile:image.tone_profiles:ledger_engraving: policy_type is not the one its policy_id names ('tone_profile')",
      "policy_variant tone_profile:image.tone_profiles:ledger_engraving v1: its policy_item 'tone_profile:image.tone_profiles:ledger_engraving' was not imported",
      "policy_variant clothing_block:image.blocks.clothing.activity:clerical v1: this server's policy validation refuses it: clothing_block content.text must be a non-empty string",
      "policy_activation pipeworks_web  axis_bundle:axis.bundles:axis_core_v1: its variant 'v1' was not imported",
      "chat_messages#10: the message is 300010 characters long: this server's chat carries at most 2000 (a command's limit)",
      "users#4 'builder_cleo': account_origin is 24 characters long, over the 20 this server stores",
      "characters#11 'Gone Wanderer': state_seed 1099511627776 is not a whole number from 0 to 2147483647",
      `character_axis_score character#1 axis#${axis}: axis_score 7 is not a number from 0 to 1`,
      "pipeworks_web.jsonl:1: 'event_type' is none of chat.mechanical_resolution, chat.translation",
      `pipeworks_web.jsonl:23: the line is ${Buffer.byteLength(longLine)} bytes long, over the 65536 of a ledger line`,
    ]) {
      expect(skipped).to.include(line);
    }
    // The skipped bundle's activation events go with its pointer: history and pointers stay in step.
    const events = held.lines.filter((l) => l.table === 'policy_audit_event' && l.row.includes('axis_bundle:axis.bundles:axis_core_v1'));
    expect(events.map((l) => l.reason)).to.have.length(2);
    expect(events[0]!.reason).to.match(/pointer would name variant 'none' while the activation history of \w+ ends with 'v1'/);
    expect(await gameRows(server)).to.deep.equal(empty);
  });

  it('with --allow-skips the rest is imported, and the routes that read those rows answer', async () => {
    const done = await server.services.referenceImport.run(file, { ledgerDir, allowSkips: true });
    expect(done.committed).to.equal(true);
    const warden = (await login(server, 'warden', account('warden').password)).body.session_id;
    const policies = await server.get(`/api/policies?session_id=${warden}`);
    expect(policies.status, policies.text).to.equal(200);
    expect(policies.body.items).to.have.length(27);
    const snapshot = await server.get(`/api/policy/hash-snapshot?session_id=${warden}&world_id=pipeworks_web`);
    expect(snapshot.status, snapshot.text).to.equal(200);
    // Another policy can still be activated in the scope: its pointers and history agree.
    const activated = await server.post(`/api/policy-activations?session_id=${warden}`, { world_id: 'pipeworks_web', policy_id: 'species_block:image.blocks.species:goblin', variant: 'v1' });
    expect(activated.status, activated.text).to.equal(200);
    const rowan = (await login(server, 'rowan', account('rowan').password)).body.session_id;
    const createdCharacter = await server.post('/characters/create', { session_id: rowan, world_id: 'pipeworks_web' });
    expect(createdCharacter.status, createdCharacter.text).to.equal(200);
    const sessionId = await play(server, account('rowan'), 'Rowan Thistlewood');
    const chat = await server.get(`/chat/${sessionId}`);
    expect(chat.status, chat.text).to.equal(200);
    const texts = (chat.body.messages as Array<{ text: string }>).map((m) => m.text);
    expect(texts).to.include('Hello everyone, welcome to the web.');
    expect(texts.some((t) => t.startsWith('Hi Rowan!'))).to.equal(false);
    // A stream resumes from before the skipped message and hears the rest.
    const ids = (chat.body.messages as Array<{ id: number }>).map((m) => m.id);
    const stream = await openStream(`${server.url}/events/${sessionId}`, { 'last-event-id': String(ids[0]) });
    try {
      expect(stream.status).to.equal(200);
      expect((await stream.nextOf('chat', 10_000)).data.text).to.equal(texts[1]);
    } finally {
      stream.close();
    }
  });
});

describe('import-reference under --merge while a server runs', function () {
  this.timeout(180_000);
  let one: TestServer;
  let two: TestServer | undefined;

  before(async () => {
    one = await startSampleServer();
    // On PostgreSQL the import runs on a second instance; SQLite serves one.
    if (usePostgres) two = await startTestServer({ env: SAMPLE_ENV, shareDatabaseWith: one, clock: one.clock });
  });
  after(async () => {
    await two?.close();
    await one?.close();
  });

  it("adds to a database with players of its own, and every instance's chat shows the imported messages", async () => {
    const player = await newPlayer(one, 'Native');
    // The room is read once and cached by the instance that serves the player.
    expect((await one.get(`/chat/${player.sessionId}`)).body.messages).to.deep.equal([]);
    const report = await (two ?? one).services.referenceImport.run(REFERENCE_DB, { ledgerDir: LEDGER, merge: true });
    expect(report.committed).to.equal(true);
    expect(summary(report, 'users')).to.include({ imported: 14, existing: 0 });
    const publicSpawn = messages.filter((m) => m.world_id === 'pipeworks_web' && m.room === 'spawn' && m.kind !== 'whisper').map((m) => m.message);
    await eventually(async () => {
      const chat = await one.get(`/chat/${player.sessionId}`);
      expect(chat.body.messages.map((m: { text: string }) => m.text)).to.deep.equal(publicSpawn);
    }, 10_000);
    expect((await login(one, 'rowan', account('rowan').password)).status).to.equal(200);
  });
});

/** The zone file that defines a room of a sample world. */
async function zoneOf(worldId: string, roomId: string): Promise<string> {
  const world = JSON.parse(readFileSync(path.join(SAMPLE, 'worlds', worldId, 'world.json'), 'utf8'));
  for (const zone of world.zones as string[]) {
    const data = JSON.parse(readFileSync(path.join(SAMPLE, 'worlds', worldId, 'zones', `${zone}.json`), 'utf8'));
    if ((data.rooms as Array<{ id: string }>).some((r) => r.id === roomId)) return zone;
  }
  throw new Error(`no room ${roomId} in ${worldId}`);
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string>): Promise<Exit> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('MUD_') && name !== 'DATABASE_URL') clean[name] = value;
  const child = spawn(process.execPath, [path.join(ROOT, 'src', 'cli.ts'), ...args], { cwd: ROOT, env: { ...clean, ...SAMPLE_ENV, MUD_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('mud-server import-reference (the command)', function () {
  this.timeout(180_000);
  let dir: string;
  let env: Record<string, string>;
  let drop = async () => {};

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mud-import-cli-'));
    env = { MUD_DB_PATH: path.join(dir, 'mud.db') };
    if (usePostgres) {
      const database = await throwAwayDatabase();
      env.DATABASE_URL = database.url;
      drop = database.drop;
    }
  });
  after(async () => {
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('dry run, import, refused second run, merge; a clear error for a file that is not one', async () => {
    const dry = await cli(['import-reference', REFERENCE_DB, '--ledger', LEDGER, '--dry-run'], env);
    expect(dry.code, dry.stderr).to.equal(0);
    // The command runs on the real clock: the sample's temporary accounts may have expired (mapped) by now.
    expect(dry.stdout).to.match(/^users\s+15\s+\d+\s+\d+\s+0\s+0$/m);
    expect(dry.stdout).to.include('Dry run: nothing was written.');

    const run = await cli(['import-reference', REFERENCE_DB, '--ledger', LEDGER], env);
    expect(run.code, run.stderr).to.equal(0);
    // The same report, but for its last line.
    expect(run.stdout.split('\n').slice(1, -2)).to.deep.equal(dry.stdout.split('\n').slice(1, -2));
    expect(run.stdout).to.include("mapped   users#13 'tmp_gone': deleted in the reference");
    expect(run.stdout).to.match(/Imported\. Sessions are not carried over/);

    const again = await cli(['import-reference', REFERENCE_DB, '--ledger', LEDGER], env);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/already has game data \(\d+ users, 14 characters, 19 chat_messages, 22 ledger_events\).*--merge/);

    const merged = await cli(['import-reference', REFERENCE_DB, '--ledger', LEDGER, '--merge'], env);
    expect(merged.code, merged.stderr).to.equal(0);
    expect(merged.stdout).to.match(/^chat_messages\s+19\s+0\s+0\s+19\s+0$/m);

    const notOne = await cli(['import-reference', path.join(SAMPLE, 'README.md')], env);
    expect(notOne.code).to.equal(1);
    expect(notOne.stderr.trim()).to.match(/^mud-server: '.*README\.md' is not a reference database: not an SQLite file$/);

    const usage = await cli(['import-reference'], env);
    expect(usage.code).to.equal(1);
    expect(usage.stderr).to.include('Usage: mud-server import-reference <mud.db>');
  });

  it('prints progress on a large table to stderr and keeps a long chat in its order', async () => {
    const big: Record<string, string> = { ...env, MUD_DB_PATH: path.join(dir, 'big.db') };
    let dropBig = async () => {};
    if (usePostgres) {
      const database = await throwAwayDatabase();
      big.DATABASE_URL = database.url;
      dropBig = database.drop;
    }
    const target = knexFactory(usePostgres ? { client: 'pg', connection: big.DATABASE_URL } : { client: 'sqlite3', connection: { filename: big.MUD_DB_PATH! }, useNullAsDefault: true });
    try {
      const lines = 1200;
      const file = await craftedCopy(dir, async (db) => {
        const template = await db('chat_messages').where({ id: 9 }).first();
        const rows = Array.from({ length: lines }, (_, i) => ({ ...template, id: undefined, message: `Line ${i}` }));
        for (let i = 0; i < rows.length; i += 100) await db('chat_messages').insert(rows.slice(i, i + 100));
      });
      const total = messages.length + lines;
      const run = await cli(['import-reference', file], big);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.include(`import-reference: chat_messages: 1000/${total}\n`);
      expect(run.stderr).to.include(`import-reference: chat_messages: ${total}/${total}\n`);
      expect(run.stdout).to.match(new RegExp(`^chat_messages\\s+${total}\\s+${total}\\s+0\\s+0\\s+0$`, 'm'));
      const texts = (await target('chat_messages').orderBy('id').select('message')).map((r) => r.message);
      expect(texts).to.deep.equal([...messages.map((m) => m.message), ...Array.from({ length: lines }, (_, i) => `Line ${i}`)]);
    } finally {
      await target.destroy();
      await dropBig();
    }
  });

  it('exits 1 and writes nothing when a row would be skipped, unless --allow-skips', async () => {
    const fresh: Record<string, string> = { ...env, MUD_DB_PATH: path.join(dir, 'fresh.db') };
    let dropFresh = async () => {};
    if (usePostgres) {
      const database = await throwAwayDatabase();
      fresh.DATABASE_URL = database.url;
      dropFresh = database.drop;
    }
    try {
      const file = await craftedCopy(dir, async (db) => {
        await db('chat_messages').where({ id: 3 }).update({ room: 'no_such_room' });
      });
      const held = await cli(['import-reference', file], fresh);
      expect(held.code).to.equal(1);
      expect(held.stdout).to.include("skipped  chat_messages#3: room 'no_such_room' is not in world 'daily_undertaking'");
      expect(held.stdout).to.include('Nothing was written: 1 row(s) would be skipped');
      const allowed = await cli(['import-reference', file, '--allow-skips'], fresh);
      expect(allowed.code, allowed.stderr).to.equal(0);
      expect(allowed.stdout).to.include('Imported, without the 1 skipped row(s) listed above.');
    } finally {
      await dropFresh();
    }
  });
});

describe('mud-server import-reference beside a server on SQLite', function () {
  this.timeout(180_000);
  let dir: string;

  before(function () {
    // On PostgreSQL it runs beside the servers (rows, not the database, are locked).
    if (usePostgres) skipBecause(this, ON_SQLITE);
    dir = mkdtempSync(path.join(tmpdir(), 'mud-import-serving-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is refused while a server serves the file, says what to do, and runs once the server is gone, even killed', async () => {
    const database = path.join(dir, 'mud.db');
    const server = startCliServer(['serve'], { ...SAMPLE_ENV, MUD_DB_PATH: database });
    try {
      await server.waitFor((line) => line.message === 'Server listening');
      const refused = await cli(['import-reference', REFERENCE_DB, '--merge'], { MUD_DB_PATH: database });
      expect(refused.code, refused.stdout).to.equal(1);
      expect(refused.stderr.trim()).to.equal(
        `mud-server: A server is serving the SQLite database '${database}': import-reference would hold its write lock for the whole run, and the server's logins and writes would fail meanwhile. Stop the server, run the command, then start the server again.`,
      );
      expect(refused.stdout).to.equal('');
    } finally {
      server.kill();
      await server.exited;
    }
    // Killed with -9: its mark is left behind, but the lock under it went with the process.
    expect(existsSync(`${database}-serving`)).to.equal(true);
    const run = await cli(['import-reference', REFERENCE_DB, '--merge'], { MUD_DB_PATH: database });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/Imported\. Sessions are not carried over/);
  });
});
