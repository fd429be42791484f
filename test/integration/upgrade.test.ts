/**
 * Upgrades lose nothing. Each release keeps a database it wrote in test/fixtures/upgrade/<name>/
 * (scripts/upgrade-fixture.ts: the real server, through its API and command line, a row in
 * every table), and the server of every later change starts on a copy of each, applies its
 * migrations and serves every row: each table's count through the admin API, every account
 * with its password and role, the sessions open when it was written, characters with what
 * they hold, chat, ledger, axis events, building and policies; and what it writes next gets
 * ids after the old ones. On SQLite the server starts on a copy of the fixture's file; on
 * PostgreSQL on copy-db's copy of it (which has the fixture's schema, so the migrations run on
 * PostgreSQL). The clock stands where the fixture was written, so nothing has expired.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { createSchema, startTestServer, TestClock, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { bearer } from '../helpers/accounts.ts';
import { runCommand, schemaUrl } from '../helpers/cli-command.ts';
import { MIGRATION_NAMES } from '../../src/db/migrations/index.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures', 'upgrade');

interface Facts {
  release: string;
  migrations: string[];
  written_at: string;
  accounts: Array<{ username: string; password: string; role: string; kind: string }>;
  characters: Array<{ id: number; name: string; world_id: string; owner: string }>;
  sessions: Array<{ username: string; token: string; character: string | null }>;
  chat: Array<{ world_id: string; sender: string; command: string }>;
  building: { world_id: string; room_id: string; deleted_room_id: string; room_name: string; item_name: string; item_room: string };
  policy: { policy_id: string; variant: string; world_id: string; client_profile: string; publish_run_id: number };
  tables: Record<string, number>;
}

/** What a table's id counter had handed out in a copy of the fixture (SQLite's sqlite_sequence). */
async function fixtureCounter(file: string, table: string): Promise<number> {
  const db = knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
  try {
    const row = await db('sqlite_sequence').where({ name: table }).first('seq');
    return Number(row?.seq ?? 0);
  } finally {
    await db.destroy();
  }
}

for (const name of readdirSync(FIXTURES).sort()) {
  const fixture = path.join(FIXTURES, name);
  const facts: Facts = JSON.parse(readFileSync(path.join(fixture, 'facts.json'), 'utf8'));

  describe(`upgrade from the ${name} fixture (${DB_NAME})`, function () {
    this.timeout(60_000);
    let dir: string;
    let schema: string | undefined;
    let server: TestServer;
    /** The sessions' id counter in the fixture. */
    let sessionsHandedOut: number;
    const pgUrl = process.env.MUD_TEST_DATABASE_URL ?? '';
    const root = (): string => facts.sessions.find((s) => s.username === 'root')!.token;

    before(async () => {
      dir = mkdtempSync(path.join(tmpdir(), 'mud-upgrade-'));
      const copy = path.join(dir, 'fixture.db');
      copyFileSync(path.join(fixture, 'mud.db'), copy);
      sessionsHandedOut = await fixtureCounter(copy, 'sessions');
      const env = { MUD_WORLDS_ROOT: path.join(fixture, 'worlds') };
      const clock = new TestClock(new Date(facts.written_at));
      if (usePostgres) {
        schema = `mud_test_${randomBytes(6).toString('hex')}`;
        await createSchema(pgUrl, schema, false);
        const run = await runCommand(['copy-db', '--to', schemaUrl(pgUrl, schema)], { MUD_DB_PATH: copy });
        expect(run.code, run.stderr).to.equal(0);
        server = await startTestServer({ env, clock, schema });
      } else {
        server = await startTestServer({ env: { ...env, MUD_DB_PATH: copy }, clock });
      }
    });

    after(async () => {
      await server?.close();
      if (schema) await createSchema(pgUrl, schema, true);
      rmSync(dir, { recursive: true, force: true });
    });

    it("applies this change's migrations after the fixture's own", async () => {
      expect(facts.migrations).to.deep.equal(MIGRATION_NAMES.slice(0, facts.migrations.length));
      expect(await server.db('knex_migrations').orderBy('id').pluck('name')).to.deep.equal(MIGRATION_NAMES);
    });

    it('keeps every row of every table, and serves each through the admin API', async () => {
      const listed = await server.get('/admin/database/tables', bearer(root()));
      expect(listed.status, listed.text).to.equal(200);
      const counts = Object.fromEntries(listed.body.tables.map((t: { name: string; row_count: number }) => [t.name, t.row_count]));
      for (const [table, rows] of Object.entries(facts.tables)) {
        expect(rows, table).to.be.above(0);
        expect(counts[table], table).to.equal(rows);
        let read = 0;
        for (let offset = 0; ; offset += 1000) {
          const page = await server.get(`/admin/database/table/${table}?limit=1000&offset=${offset}`, bearer(root()));
          expect(page.status, page.text).to.equal(200);
          read += page.body.rows.length;
          if (page.body.rows.length < 1000) break;
        }
        expect(read, table).to.equal(rows);
      }
    });

    it('what it writes next gets ids after the old ones, past ids the fixture handed out and deleted', async () => {
      // Nothing has logged in yet: the largest id is still the fixture's.
      const handedOut = sessionsHandedOut;
      expect(handedOut, 'the fixture deleted its last sessions').to.be.above(Number((await server.db('sessions').max({ id: 'id' }).first())?.id));
      const account = facts.accounts.find((a) => a.kind === 'player')!;
      const res = await server.post('/login', { username: account.username, password: account.password });
      expect(res.status, res.text).to.equal(200);
      expect(Number((await server.db('sessions').max({ id: 'id' }).first())?.id)).to.equal(handedOut + 1);
      const made = await server.post('/register', { username: 'after_upgrade', password: account.password, password_confirm: account.password });
      expect(made.status, made.text).to.equal(200);
      expect(Number((await server.db('users').where({ username: 'after_upgrade' }).first('id'))?.id)).to.equal(facts.tables.users! + 1);
    });
    it('every account logs in with its password and keeps its role; the banned one is still refused', async () => {
      const players = await server.get('/admin/database/players', bearer(root()));
      expect(players.status, players.text).to.equal(200);
      for (const account of facts.accounts) {
        const row = players.body.players.find((p: { username: string }) => p.username === account.username);
        expect(row, account.username).to.include({ role: account.role });
        const res = await server.post('/login', { username: account.username, password: account.password });
        if (account.kind === 'banned') expect(res.status, account.username).to.equal(401);
        else expect(res.status, `${account.username}: ${res.text}`).to.equal(200);
      }
    });

    it('the sessions open when it was written still serve their characters, with what they hold', async () => {
      for (const session of facts.sessions) {
        const res = await server.get(`/characters`, bearer(session.token));
        expect(res.status, `${session.username}: ${res.text}`).to.equal(200);
        const owned = facts.characters.filter((c) => c.owner === session.username && c.world_id === 'emberwick').map((c) => c.name);
        expect(res.body.characters.map((c: { name: string }) => c.name), session.username).to.include.members(owned);
        if (!session.character) continue;
        const status = await server.get(`/status/${session.token}`);
        expect(status.status, status.text).to.equal(200);
        expect(status.body.active_players, session.username).to.include(session.character);
      }
      // Presence: the streams open when it was written are leased still (the clock stands then).
      const listed = await server.get('/admin/database/sessions', bearer(root()));
      expect(listed.status, listed.text).to.equal(200);
      const streaming = listed.body.sessions.filter((s: { open_streams: number }) => s.open_streams > 0).map((s: { username: string }) => s.username);
      expect(streaming.sort()).to.deep.equal(['corin', 'tamsin']);
      const holding = async (username: string): Promise<string> => (await server.get(`/status/${facts.sessions.find((s) => s.username === username)!.token}`)).body.inventory;
      expect(await holding('tamsin')).to.include('Tin Whistle');
      expect(await holding('corin')).to.include('Tallow Candle');
    });

    it('chat, the ledger (every checksum verified) and axis events are all there', async () => {
      const chat = await server.get('/admin/database/chat-messages?limit=1000', bearer(root()));
      expect(chat.status, chat.text).to.equal(200);
      expect(chat.body.messages).to.have.length(facts.tables.chat_messages!);
      for (const said of facts.chat) {
        const text = said.command.split(' ').slice(-2).join(' ');
        expect(chat.body.messages.some((m: { message: string; world_id: string }) => m.world_id === said.world_id && m.message.includes(text)), said.command).to.equal(true);
      }
      const ledger = await server.get('/admin/ledger?world_id=emberwick&limit=1000', bearer(root()));
      expect(ledger.status, ledger.text).to.equal(200);
      expect(ledger.body.events).to.have.length(facts.tables.ledger_events!);
      expect(ledger.body.events.every((e: { checksum_verified: boolean }) => e.checksum_verified)).to.equal(true);
      const speaker = facts.characters.find((c) => c.owner === 'tamsin' && c.world_id === 'emberwick')!;
      const axis = await server.get(`/admin/characters/${speaker.id}/axis-events`, bearer(root()));
      expect(axis.status, axis.text).to.equal(200);
      expect(axis.body.events).to.not.be.empty;
    });

    it("the builders' changes and the policy store are served as they were", async () => {
      const builder = bearer(facts.sessions.find((s) => s.username === 'mason')!.token);
      const { world_id: world, room_id: room, deleted_room_id: deleted } = facts.building;
      const cellar = await server.get(`/api/worlds/${world}/rooms/${room}`, builder);
      expect(cellar.status, cellar.text).to.equal(200);
      expect(cellar.body.name).to.equal(facts.building.room_name);
      expect((await server.get(`/api/worlds/${world}/rooms/${deleted}`, builder)).status).to.equal(404);
      const square = await server.get(`/api/worlds/${world}/rooms/${facts.building.item_room}`, builder);
      expect(square.body.items.map((i: { name: string }) => i.name)).to.include(facts.building.item_name);
      const changes = await server.get(`/api/worlds/${world}/changes?limit=100`, builder);
      expect(changes.body.changes).to.have.length(facts.tables.world_changes!);

      const { policy_id: policyId, variant, world_id: policyWorld, client_profile: profile } = facts.policy;
      const read = await server.get(`/api/policies/${encodeURIComponent(policyId)}?variant=${variant}`, bearer(root()));
      expect(read.status, read.text).to.equal(200);
      const active = await server.get(`/api/policy-activations?scope=${policyWorld}:${profile}`, bearer(root()));
      expect(active.status, active.text).to.equal(200);
      expect(active.body.items.map((i: { policy_id: string }) => i.policy_id)).to.include(policyId);
      const run = await server.get(`/api/policy-publish/${facts.policy.publish_run_id}`, bearer(root()));
      expect(run.status, run.text).to.equal(200);
    });

  });
}
