/**
 * `mud-server backup <file>`. On SQLite: a consistent copy taken while the server answers
 * writes (players saying things the whole time), with progress lines for a database of several
 * megabytes, checked and renamed into place, that a server then starts on; a file already there
 * is replaced only with --force; a backup that fails leaves nothing at the destination. On
 * PostgreSQL: it names pg_dump and prints the command (without the URL's password), and that
 * command's dump, restored with pg_restore into an empty database, is served by the server.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import { createSchema, startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, type Player } from '../helpers/players.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { runCommand } from '../helpers/cli-command.ts';
import { throwAwayDatabase } from '../helpers/cli-server.ts';
import { needs, ON_POSTGRESQL, ON_SQLITE, skipBecause } from '../helpers/needs.ts';

const PG_DUMP = '/usr/bin/pg_dump';
const PG_RESTORE = '/usr/bin/pg_restore';

function sqlite(file: string): Knex {
  return knexFactory({ client: 'sqlite3', connection: { filename: file }, useNullAsDefault: true });
}

describe(`backup (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  this.timeout(60_000);

  describe('on SQLite', function () {
    let dir: string;
    let server: TestServer;

    before(async function () {
      if (usePostgres) skipBecause(this, ON_SQLITE);
      dir = mkdtempSync(path.join(tmpdir(), 'mud-backup-'));
      server = await startTestServer();
    });

    after(async () => {
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('copies the database while the server answers writes: consistent, checked, with progress, and a server starts on it', async () => {
      // Several megabytes of chat, so that the copy takes several steps and reports them.
      const speaker = await newPlayer(server, 'Bulk');
      await server.db.raw(
        `with recursive n(i) as (select 1 union all select i + 1 from n where i < 12000)
         insert into chat_messages (world_id, room_id, character_id, sender_name, channel, message, created_at)
         select 'emberwick', 'lockkeepers_square', ?, ?, 'say', printf('%0500d', i), '2026-11-27 12:00:00' from n`,
        [speaker.characterId, speaker.name],
      );
      const players: Player[] = [await newPlayer(server, 'Anna'), await newPlayer(server, 'Bert')];
      const said = players.map(() => 0);
      let writing = true;
      const writers = players.map(async (player, i) => {
        while (writing) {
          await okCmd(player, `say line ${said[i]}`);
          said[i]! += 1;
        }
      });
      const total = (): number => said.reduce((a, b) => a + b, 0);
      const file = path.join(dir, 'mud-backup.db');
      try {
        // Writes answered before the copy began, so it starts under a server that is writing.
        while (total() < 20) await new Promise((resolve) => setTimeout(resolve, 10));
        const run = await runCommand(['backup', file], { MUD_DB_PATH: server.config.database.path });
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.match(/^Backed up .* to .*mud-backup\.db: \d+ pages \([\d.]+ MB\), integrity_check ok, in [\d.]+ s\.\n$/);
        expect(run.stderr).to.match(/^backup: \d+% \(\d+ of \d+ pages\)$/m);
        expect(run.stderr.trimEnd().split('\n').at(-1)).to.match(/^backup: 100% /);
      } finally {
        writing = false;
        await Promise.all(writers);
      }
      expect(total(), 'says answered meanwhile').to.be.above(20);
      expect(readdirSync(dir).sort(), 'no WAL and no partial file beside it').to.deep.equal(['mud-backup.db']);

      const copy = sqlite(file);
      try {
        expect(await copy.raw('pragma integrity_check')).to.deep.equal([{ integrity_check: 'ok' }]);
        expect(await copy.raw('pragma journal_mode')).to.deep.equal([{ journal_mode: 'delete' }]);
        expect(await copy.raw('pragma foreign_key_check')).to.deep.equal([]);
        // One moment's state: of each player's says, one after the other, it has the first ones, without a gap.
        let copied = 0;
        for (const [i, player] of players.entries()) {
          const lines: string[] = await copy('chat_messages').where({ sender_name: player.name }).orderBy('id').pluck('message');
          expect(lines, player.name).to.deep.equal(lines.map((_line, n) => `line ${n}`));
          expect(lines.length, player.name).to.be.at.most(said[i]!);
          copied += lines.length;
        }
        expect(copied).to.be.at.least(20);
        expect(Number((await copy('chat_messages').count({ n: '*' }).first())?.n)).to.equal(12_000 + copied);
      } finally {
        await copy.destroy();
      }

      const restored = await startTestServer({ env: { MUD_DB_PATH: file } });
      try {
        const login = await restored.post('/login', { username: players[0]!.username, password: GOOD_PASSWORD });
        expect(login.status, login.text).to.equal(200);
        const characters = await restored.get('/characters', { Authorization: `Bearer ${login.body.session_id}` });
        expect(characters.body.characters.map((c: { name: string }) => c.name)).to.deep.equal([players[0]!.name]);
      } finally {
        await restored.close();
      }
    });

    it('replaces a file already there only with --force', async () => {
      const file = path.join(dir, 'kept.db');
      writeFileSync(file, 'an older backup\n');
      const refused = await runCommand(['backup', file], { MUD_DB_PATH: server.config.database.path });
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.equal(`mud-server: '${file}' already exists: pass --force to replace it.\n`);
      expect(readFileSync(file, 'utf8')).to.equal('an older backup\n');
      const forced = await runCommand(['backup', file, '--force'], { MUD_DB_PATH: server.config.database.path });
      expect(forced.code, forced.stderr).to.equal(0);
      expect(readFileSync(file).subarray(0, 15).toString()).to.equal('SQLite format 3');
    });

    it('leaves nothing at the destination when it fails, and says why in one line', async () => {
      const garbage = path.join(dir, 'not-a-database.db');
      writeFileSync(garbage, 'x'.repeat(8192));
      const before = readdirSync(dir).sort();
      const file = path.join(dir, 'never.db');
      const failed = await runCommand(['backup', file], { MUD_DB_PATH: garbage });
      expect(failed.code).to.equal(1);
      expect(failed.stderr).to.equal(`mud-server: '${garbage}' cannot be read as a SQLite database (SQLITE_NOTADB: file is not a database).\n`);
      expect(readdirSync(dir).sort()).to.deep.equal(before);

      const missing = await runCommand(['backup', file], { MUD_DB_PATH: path.join(dir, 'missing.db') });
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.equal(`mud-server: There is no SQLite database at '${path.join(dir, 'missing.db')}' ([database] path, MUD_DB_PATH).\n`);
      expect(existsSync(path.join(dir, 'missing.db'))).to.equal(false);

      const usage = await runCommand(['backup'], { MUD_DB_PATH: server.config.database.path });
      expect(usage.code).to.equal(1);
      expect(usage.stderr).to.equal('mud-server: Usage: mud-server backup <file> [--force]\n');
    });
  });

  describe('on PostgreSQL', function () {
    let dir: string;
    const databases: Array<{ url: string; drop: () => Promise<void> }> = [];

    before(function () {
      if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
      for (const tool of [PG_DUMP, PG_RESTORE]) needs(this, tool, existsSync(tool), "apt-get install postgresql-client (Debian's, the server's major version)");
      dir = mkdtempSync(path.join(tmpdir(), 'mud-pgdump-'));
    });

    after(async () => {
      for (const database of databases) await database.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("prints pg_dump's command, whose dump pg_restore puts into an empty database that the server serves", async () => {
      const source = await throwAwayDatabase();
      databases.push(source);
      // The server's schema of its own, created here so that it outlives the server.
      const schema = `mud_test_${randomBytes(6).toString('hex')}`;
      await createSchema(source.url, schema, false);
      const server = await startTestServer({ databaseUrl: source.url, schema });
      let player: Player;
      try {
        player = await newPlayer(server, 'Dumped');
        await okCmd(player, 'say Before the dump.');
      } finally {
        await server.close();
      }
      const withPassword = Object.assign(new URL(source.url), { password: 'not-for-the-log' }).href;
      const file = path.join(dir, 'mud.dump');
      const run = await runCommand(['backup', file], { DATABASE_URL: withPassword });
      expect(run.code).to.equal(1);
      expect(run.stderr).to.include('on PostgreSQL the backup tool is pg_dump');
      expect(run.stderr).to.include('Nothing was written');
      expect(run.stderr).to.include('PGPASSWORD');
      expect(run.stdout + run.stderr).to.not.include('not-for-the-log');
      expect(run.stdout).to.equal(`pg_dump --format=custom --no-owner --no-privileges --file=${file} ${source.url}\n`);
      expect(existsSync(file)).to.equal(false);

      await promisify(execFile)('/bin/sh', ['-c', run.stdout]);
      const target = await throwAwayDatabase();
      databases.push(target);
      await promisify(execFile)(PG_RESTORE, ['--no-owner', `--dbname=${target.url}`, file]);
      const restored = await startTestServer({ databaseUrl: target.url, schema });
      try {
        const login = await restored.post('/login', { username: player.username, password: GOOD_PASSWORD });
        expect(login.status, login.text).to.equal(200);
        const session = login.body.session_id;
        const select = await restored.post('/characters/select', { session_id: session, character_id: player.characterId });
        expect(select.status, select.text).to.equal(200);
        const chat = await restored.get(`/chat/${session}`);
        expect(chat.status, chat.text).to.equal(200);
        expect(JSON.stringify(chat.body)).to.include('Before the dump.');
      } finally {
        await restored.close();
      }
    });
  });
});
