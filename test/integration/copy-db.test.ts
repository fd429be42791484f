/**
 * `mud-server copy-db --to <target>`, from the database of the run: on SQLite, from a copy of
 * the upgrade fixture (a row in every table) to PostgreSQL and to a new SQLite file; on
 * PostgreSQL, from a schema a server is serving to a new SQLite file. Every table arrives with
 * its ids, the printed counts and checksums match the source's, the id counters are past
 * what the source handed out, and a server started on the target serves it. Refused: a SQLite
 * source a server is serving, a target that holds our tables. A copy that fails half-way
 * leaves the target as it was.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createSchema, startTestServer, TestClock, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer } from '../helpers/accounts.ts';
import { runCommand, schemaUrl, type CommandRun } from '../helpers/cli-command.ts';
import { needs, ON_POSTGRESQL, ON_SQLITE, skipBecause } from '../helpers/needs.ts';
import { describeTables, rowsInKeyOrder, TableChecksum } from '../../src/db/tables.ts';

const FIXTURE = path.resolve(import.meta.dirname, '..', 'fixtures', 'upgrade', readdirSync(path.resolve(import.meta.dirname, '..', 'fixtures', 'upgrade')).sort().at(-1)!);
const facts = JSON.parse(readFileSync(path.join(FIXTURE, 'facts.json'), 'utf8'));
const WORLDS = { MUD_WORLDS_ROOT: path.join(FIXTURE, 'worlds') };
const PASSWORD = 'Quiet-Lantern-42';
const pgUrl = process.env.MUD_TEST_DATABASE_URL ?? '';
/** Chat rows added to the SQLite source: more than copy-db's batches and its progress step. */
const MANY = 12_000;

const clock = (): TestClock => new TestClock(new Date(facts.written_at));

function sqlite(file: string): Knex {
  return knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
}

function postgres(schema: string): Knex {
  return knexFactory({ client: 'pg', connection: pgUrl, searchPath: [schema], pool: { min: 0, max: 2 } });
}

/** Each table's row count and checksum, read the way copy-db reads them. */
async function contents(db: Knex): Promise<Record<string, { rows: number; checksum: string }>> {
  const out: Record<string, { rows: number; checksum: string }> = {};
  for (const table of await describeTables(db)) {
    const sum = new TableChecksum(table);
    for await (const rows of rowsInKeyOrder(db, table, 500)) for (const row of rows) sum.add(row);
    out[table.name] = { rows: sum.rows, checksum: sum.digest() };
  }
  return out;
}

/** The per-table lines of copy-db's report. */
function reported(run: CommandRun): Record<string, { source: number; target: number; checksum: string; same: boolean }> {
  const out: Record<string, { source: number; target: number; checksum: string; same: boolean }> = {};
  for (const line of run.stdout.split('\n')) {
    const match = /^(\w+)\s+(\d+)\s+(\d+)\s+([0-9a-f]{16})\s+(same|DIFFERS.*)$/.exec(line);
    if (match) out[match[1]!] = { source: Number(match[2]), target: Number(match[3]), checksum: match[4]!, same: match[5] === 'same' };
  }
  return out;
}

/** Checks copy-db's answer against the source's own tables, read before. */
function expectFaithful(run: CommandRun, source: Record<string, { rows: number; checksum: string }>): void {
  expect(run.code, run.stderr).to.equal(0);
  const lines = reported(run);
  expect(Object.keys(lines).sort()).to.deep.equal(Object.keys(source).sort());
  for (const [table, { rows, checksum }] of Object.entries(source)) {
    expect(lines[table], table).to.deep.equal({ source: rows, target: rows, checksum: checksum.slice(0, 16), same: true });
    expect(run.stderr, table).to.include(`copy-db: ${table}: ${rows} rows copied`);
  }
  expect(run.stdout).to.match(/every table's row count and checksum match the source\.\n$/);
}

async function schemaTables(schema: string): Promise<string[]> {
  const db = knexFactory({ client: 'pg', connection: pgUrl, pool: { min: 0, max: 1 } });
  try {
    return (await db('information_schema.tables').where({ table_schema: schema }).pluck('table_name')) as string[];
  } finally {
    await db.destroy();
  }
}

/** The id each table's counter would hand out next, read through a running server's database. */
async function nextSessionId(server: TestServer): Promise<number> {
  const res = await server.post('/login', { username: 'tamsin', password: PASSWORD });
  expect(res.status, res.text).to.equal(200);
  return Number((await server.db('sessions').max({ id: 'id' }).first())?.id);
}

describe(`copy-db (from ${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  this.timeout(90_000);
  let dir: string;
  const schemas: string[] = [];

  const newSchema = async (): Promise<string> => {
    const schema = `mud_test_${randomBytes(6).toString('hex')}`;
    await createSchema(pgUrl, schema, false);
    schemas.push(schema);
    return schema;
  };

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mud-copy-db-'));
  });

  after(async () => {
    for (const schema of schemas) await createSchema(pgUrl, schema, true);
    rmSync(dir, { recursive: true, force: true });
  });

  describe('from SQLite', function () {
    let source: string;
    let sourceContents: Record<string, { rows: number; checksum: string }>;
    let sessionsHandedOut: number;

    before(async function () {
      if (usePostgres) skipBecause(this, ON_SQLITE);
      source = path.join(dir, 'source.db');
      copyFileSync(path.join(FIXTURE, 'mud.db'), source);
    });

    it('refuses while a server serves the source, and writes nothing to the target', async function () {
      const server = await startTestServer({ env: { ...WORLDS, MUD_DB_PATH: source }, clock: clock() });
      try {
        // The server writes while it runs: a new account, a say.
        const made = await server.post('/register', { username: 'latecomer', password: PASSWORD, password_confirm: PASSWORD });
        expect(made.status, made.text).to.equal(200);
        const target = path.join(dir, 'refused.db');
        const run = await runCommand(['copy-db', '--to', target], { MUD_DB_PATH: source });
        expect(run.code).to.equal(1);
        expect(run.stderr).to.match(/^mud-server: A server is serving '.*source\.db': what it writes during the copy would not be in it\. Stop the server, then copy; or copy a backup taken while it runs/);
        expect(existsSync(target)).to.equal(false);
      } finally {
        await server.close();
      }
      const db = sqlite(source);
      try {
        // A table of many batches (read 1,000 rows at a time, written 500), with progress lines.
        await db.raw(
          `with recursive n(i) as (select 1 union all select i + 1 from n where i < ${MANY})
           insert into chat_messages (world_id, room_id, sender_name, channel, message, created_at)
           select 'emberwick', 'lockkeepers_square', 'Crowd', 'say', 'Line ' || i, '2026-11-27 12:00:00' from n`,
        );
        sourceContents = await contents(db);
        sessionsHandedOut = Number((await db('sqlite_sequence').where({ name: 'sessions' }).first('seq'))?.seq);
        expect(sessionsHandedOut, 'the source deleted its last sessions').to.be.above(Number((await db('sessions').max({ id: 'id' }).first())?.id));
      } finally {
        await db.destroy();
      }
      for (const [table, rows] of Object.entries(facts.tables)) expect(sourceContents[table]!.rows, table).to.be.at.least(rows as number);
    });

    it('copies every table to PostgreSQL, ids kept and counters moved past them, and a server serves it', async function () {
      needs(this, 'PostgreSQL to copy into', pgUrl !== '', 'set MUD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test');
      const schema = await newSchema();
      const run = await runCommand(['copy-db', '--to', schemaUrl(pgUrl, schema)], { MUD_DB_PATH: source });
      expectFaithful(run, sourceContents);
      const chatRows = sourceContents.chat_messages!.rows;
      expect(run.stderr).to.include(`copy-db: chat_messages: copying ${chatRows} rows\ncopy-db: chat_messages: 10000/${chatRows} rows\ncopy-db: chat_messages: ${chatRows} rows copied\n`);
      const copy = postgres(schema);
      try {
        expect(await contents(copy)).to.deep.equal(sourceContents);
      } finally {
        await copy.destroy();
      }
      const server = await startTestServer({ env: WORLDS, clock: clock(), schema, postgres: true });
      try {
        expect(await nextSessionId(server)).to.equal(sessionsHandedOut + 1);
        const late = await server.post('/login', { username: 'latecomer', password: PASSWORD });
        expect(late.status, late.text).to.equal(200);
        const made = await server.post('/register', { username: 'after_copy', password: PASSWORD, password_confirm: PASSWORD });
        expect(made.status, made.text).to.equal(200);
        expect(Number((await server.db('users').where({ username: 'after_copy' }).first('id'))?.id)).to.equal(sourceContents.users!.rows + 1);
      } finally {
        await server.close();
      }

      const again = await runCommand(['copy-db', '--to', schemaUrl(pgUrl, schema)], { MUD_DB_PATH: source });
      expect(again.code).to.equal(1);
      expect(again.stderr).to.match(/^mud-server: The target is not empty: it holds \d+ tables of a mud-server database \(.*\)\. copy-db writes only into an empty database: give it a new one\.\n$/);
    });

    it('copies every table to a new SQLite file that a server serves', async () => {
      const target = path.join(dir, 'copy.db');
      const run = await runCommand(['copy-db', '--to', target], { MUD_DB_PATH: source });
      expectFaithful(run, sourceContents);
      const copy = sqlite(target);
      try {
        expect(await contents(copy)).to.deep.equal(sourceContents);
        expect(Number((await copy('sqlite_sequence').where({ name: 'sessions' }).first('seq'))?.seq)).to.equal(sessionsHandedOut);
      } finally {
        await copy.destroy();
      }
      const server = await startTestServer({ env: { ...WORLDS, MUD_DB_PATH: target }, clock: clock() });
      try {
        expect(await nextSessionId(server)).to.equal(sessionsHandedOut + 1);
        const listed = await server.get('/admin/database/tables', bearer(facts.sessions.find((s: { username: string }) => s.username === 'root').token));
        expect(listed.status, listed.text).to.equal(200);
      } finally {
        await server.close();
      }
    });

    it('a copy that fails half-way leaves the target as it was: no tables, no new file', async function () {
      // SQLite lets a row point at nothing when its foreign keys are off; no target takes it.
      const broken = path.join(dir, 'broken.db');
      copyFileSync(source, broken);
      const db = sqlite(broken);
      try {
        await db.raw('pragma foreign_keys = off');
        await db('chat_messages').insert({ world_id: 'emberwick', room_id: 'lockkeepers_square', character_id: 9999, sender_name: 'Nobody', channel: 'say', message: 'orphan', created_at: '2026-11-27 12:00:00' });
      } finally {
        await db.destroy();
      }
      const file = path.join(dir, 'half.db');
      const toFile = await runCommand(['copy-db', '--to', file], { MUD_DB_PATH: broken });
      expect(toFile.code).to.equal(1);
      expect(toFile.stderr.trimEnd().split('\n').at(-1)).to.equal('mud-server: Copying chat_messages failed: SQLITE_CONSTRAINT: FOREIGN KEY constraint failed. Nothing was written to the target.');
      expect(existsSync(file)).to.equal(false);
      needs(this, 'PostgreSQL to copy into', pgUrl !== '', 'set MUD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test');
      const schema = await newSchema();
      const toPostgres = await runCommand(['copy-db', '--to', schemaUrl(pgUrl, schema)], { MUD_DB_PATH: broken });
      expect(toPostgres.code).to.equal(1);
      expect(toPostgres.stderr.trimEnd().split('\n').at(-1)).to.match(/^mud-server: Copying chat_messages failed: .*violates foreign key constraint "chat_messages_character_id_foreign"\. Nothing was written to the target\.$/);
      expect(await schemaTables(schema)).to.deep.equal([]);
    });

    it('names what is wrong with how it was called', async () => {
      const usage = await runCommand(['copy-db', 'somewhere.db'], { MUD_DB_PATH: source });
      expect(usage.code).to.equal(1);
      expect(usage.stderr).to.equal('mud-server: Usage: mud-server copy-db --to <postgres://... URL | SQLite file>\n');
      const itself = await runCommand(['copy-db', '--to', source], { MUD_DB_PATH: source });
      expect(itself.stderr).to.equal('mud-server: The target is the source itself.\n');
      const missing = await runCommand(['copy-db', '--to', path.join(dir, 'x.db')], { MUD_DB_PATH: path.join(dir, 'missing.db') });
      expect(missing.stderr).to.equal(`mud-server: There is no SQLite database at '${path.join(dir, 'missing.db')}' ([database] path, MUD_DB_PATH).\n`);
      const notes = path.join(dir, 'notes.txt');
      writeFileSync(notes, 'x'.repeat(4096));
      const notDatabase = await runCommand(['copy-db', '--to', notes], { MUD_DB_PATH: source });
      expect(notDatabase.stderr.trimEnd().split('\n').at(-1)).to.equal(`mud-server: '${notes}' is not a SQLite database.`);
      expect(readFileSync(notes, 'utf8')).to.equal('x'.repeat(4096));
    });
  });

  describe('from PostgreSQL', function () {
    let schema: string;
    let server: TestServer;

    before(async function () {
      if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
      // The fixture, copied in, then served: the server writes on while it is copied out again.
      schema = await newSchema();
      const fixture = path.join(dir, 'fixture.db');
      copyFileSync(path.join(FIXTURE, 'mud.db'), fixture);
      const run = await runCommand(['copy-db', '--to', schemaUrl(pgUrl, schema)], { MUD_DB_PATH: fixture });
      expect(run.code, run.stderr).to.equal(0);
      // Idle while it runs (no clock ticking), so that what the test reads before the copy is what it copies.
      server = await startTestServer({ env: WORLDS, clock: clock(), schema, worldClock: false });
      const made = await server.post('/register', { username: 'latecomer', password: PASSWORD, password_confirm: PASSWORD });
      expect(made.status, made.text).to.equal(200);
      const out = await server.post('/logout', {}, bearer((await server.post('/login', { username: 'latecomer', password: PASSWORD })).body.session_id));
      expect(out.status, out.text).to.equal(200);
    });

    after(async () => {
      await server?.close();
    });

    it('copies every table to a new SQLite file while the server runs (a snapshot), ids and counters kept, and a server serves it', async () => {
      const source = postgres(schema);
      let before: Record<string, { rows: number; checksum: string }>;
      let handedOut: number;
      try {
        before = await contents(source);
        const result = await source.raw("select pg_sequence_last_value(pg_get_serial_sequence('sessions', 'id')) as value");
        handedOut = Number(result.rows[0].value);
        expect(handedOut, 'the source deleted its last sessions').to.be.above(Number((await source('sessions').max({ id: 'id' }).first())?.id));
      } finally {
        await source.destroy();
      }
      const target = path.join(dir, 'from-postgres.db');
      const run = await runCommand(['copy-db', '--to', target], { DATABASE_URL: schemaUrl(pgUrl, schema) });
      expectFaithful(run, before);
      expect(run.stderr).to.include('copy-db: the source is read in one snapshot');
      const copy = sqlite(target);
      try {
        expect(await contents(copy)).to.deep.equal(before);
        expect(Number((await copy('sqlite_sequence').where({ name: 'sessions' }).first('seq'))?.seq)).to.equal(handedOut);
      } finally {
        await copy.destroy();
      }
      const served = await startTestServer({ env: { ...WORLDS, MUD_DB_PATH: target }, clock: clock(), postgres: false });
      try {
        expect(await nextSessionId(served)).to.equal(handedOut + 1);
        const late = await served.post('/login', { username: 'latecomer', password: PASSWORD });
        expect(late.status, late.text).to.equal(200);
      } finally {
        await served.close();
      }

      const again = await runCommand(['copy-db', '--to', target], { DATABASE_URL: schemaUrl(pgUrl, schema) });
      expect(again.code).to.equal(1);
      expect(again.stderr).to.match(/^mud-server: The target is not empty/m);
    });
  });
});
