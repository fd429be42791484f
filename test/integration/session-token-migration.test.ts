/**
 * Migration 20261121000008 on a database that already has sessions (SQLite, or PostgreSQL with
 * MUD_TEST_DB=postgres): each session keeps working with its old token, which the database
 * then holds only as a SHA-256 hash; session ids (the admin handles) are never reused; the
 * foreign keys survive SQLite's table rebuild; and down() ends every session.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { knexConfig, isPostgres } from '../../src/db/database.ts';
import { insertedId } from '../../src/db/inserted-id.ts';
import { SessionRepository } from '../../src/db/repositories/session-repository.ts';
import { createSchema, usePostgres } from '../helpers/test-server.ts';

const MIGRATION = '20261121000008_session_token_hash';
const STAMP = '2026-11-21 20:00:00';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function columnsOf(db: Knex): Promise<string[]> {
  return Object.keys(await db('sessions').columnInfo());
}

describe(`migration ${MIGRATION} (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-migration-'));
  const pgUrl = process.env.MUD_TEST_DATABASE_URL ?? '';
  const schema = usePostgres ? `mud_test_${randomBytes(6).toString('hex')}` : undefined;
  let db: Knex;
  /** Token and client type of each session, by id. */
  const sessions = new Map<number, { token: string; clientType: string }>();
  const userIds: number[] = [];
  /** The highest session id handed out before the migration (its session deleted). */
  let highestId = 0;

  before(async () => {
    if (schema) await createSchema(pgUrl, schema, false);
    db = knexFactory(knexConfig({ sqlitePath: path.join(dir, 'mud.db'), url: usePostgres ? pgUrl : '', schema }));
    // Every migration before this one.
    const nextPending = async (): Promise<string> => {
      const [, pending] = (await db.migrate.list()) as [unknown, Array<readonly [string, unknown]>];
      if (pending.length === 0) throw new Error(`${MIGRATION} is not listed`);
      return pending[0]![0];
    };
    while ((await nextPending()) !== MIGRATION) await db.migrate.up();

    for (const username of ['mig_one', 'mig_two']) {
      const [row] = await db('users')
        .insert({ username, password_hash: 'x', role: 'player', account_origin: 'system', created_at: STAMP })
        .returning('id');
      userIds.push(insertedId(row));
    }
    for (let i = 0; i < 6; i++) {
      const session = { token: randomUUID(), clientType: `client${i}` };
      const [row] = await db('sessions')
        .insert({ session_id: session.token, user_id: userIds[i % 2], client_type: session.clientType, created_at: STAMP, last_activity: STAMP, expires_at: null })
        .returning('id');
      sessions.set(insertedId(row), session);
    }
    // The two newest sessions are gone: their ids lie above every surviving one.
    const ids = [...sessions.keys()].sort((a, b) => a - b);
    for (const id of ids.slice(-2)) {
      await db('sessions').where({ id }).delete();
      sessions.delete(id);
    }
    highestId = ids.at(-1)!;

    await db.migrate.latest();
  });

  after(async () => {
    await db?.destroy();
    if (schema) await createSchema(pgUrl, schema, true);
    rmSync(dir, { recursive: true, force: true });
  });

  it('replaces session_id by token_hash, the SHA-256 (hex) of each token, keeping every other column', async () => {
    const columns = await columnsOf(db);
    expect(columns).to.include('token_hash');
    expect(columns).to.not.include('session_id');
    const rows = await db('sessions').orderBy('id');
    expect(rows.map((r) => Number(r.id))).to.have.members([...sessions.keys()]);
    for (const row of rows) {
      const { token, clientType } = sessions.get(Number(row.id))!;
      expect(row.token_hash).to.equal(sha256(token));
      expect(JSON.stringify(row)).to.not.contain(token);
      expect(row).to.include({ client_type: clientType, created_at: STAMP, expires_at: null });
    }
  });

  it('keeps the sessions valid: each old token finds its session', async () => {
    const repo = new SessionRepository(db);
    for (const [id, { token }] of sessions) expect(await repo.find(token, STAMP)).to.include({ id });
    expect(await repo.find(randomUUID(), STAMP)).to.equal(undefined);
  });

  it('makes token_hash required and unique', async () => {
    const row = { user_id: userIds[0], client_type: 'web', created_at: STAMP, last_activity: STAMP };
    let failed = 0;
    for (const attempt of [row, { ...row, token_hash: sha256(sessions.values().next().value!.token) }]) {
      try {
        await db('sessions').insert(attempt);
      } catch {
        failed += 1;
      }
    }
    expect(failed).to.equal(2);
  });

  it('never reuses the id of a session deleted before the migration (ids are handles)', async () => {
    const repo = new SessionRepository(db);
    const id = await repo.create({ token: randomUUID(), userId: userIds[0]!, clientType: 'web', createdAt: STAMP, expiresAt: null });
    expect(id).to.be.above(highestId);
    await repo.delete(id);
  });

  it("keeps the foreign keys: deleting a user removes that user's sessions", async () => {
    if (!isPostgres(db)) expect((await db.raw('PRAGMA foreign_keys'))[0]).to.deep.equal({ foreign_keys: 1 });
    await db('users').where({ id: userIds[1] }).delete();
    expect(await db('sessions').where({ user_id: userIds[1] })).to.deep.equal([]);
    expect(await db('sessions').where({ user_id: userIds[0] })).to.not.be.empty;
  });

  it('down() ends every session and restores session_id; up() applies again', async () => {
    await db.migrate.down({ name: MIGRATION });
    expect(await columnsOf(db)).to.include('session_id').and.not.include('token_hash');
    expect(await db('sessions')).to.deep.equal([]);
    await db.migrate.latest();
    expect(await columnsOf(db)).to.include('token_hash').and.not.include('session_id');
  });
});
