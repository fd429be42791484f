/**
 * Sessions at scale (issue 21, defect 1): an account with thousands of sessions can still have
 * its password changed, be banned and be deleted, and thousands of sessions expiring at once
 * are swept. PostgreSQL refuses a NOTIFY payload over 8000 bytes, so `session.ended` used to
 * fail the whole transaction; every bus payload is now bounded (src/db/event-bus.ts), here on
 * both databases.
 */
import { describe, it } from 'mocha';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { GOOD_PASSWORD, OTHER_GOOD_PASSWORD, sessionFor } from '../helpers/accounts.ts';
import { newPlayer, wroteBehindServer, type Player } from '../helpers/players.ts';
import { openStream } from '../helpers/sse.ts';
import { toDbTime } from '../../src/db/clock.ts';
import { sessionTokenHash } from '../../src/db/repositories/session-repository.ts';

const MANY = 5000;
const HOUR = 3_600_000;

describe(`sessions at scale (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  this.timeout(120_000);
  const server = oneServer({ reset: true });

  /** `count` sessions of the account, written straight into the table (as thousands of logins would). */
  async function addSessions(userId: number, count: number, fields: { characterId?: number | null; worldId?: string | null; expiresAt?: Date } = {}): Promise<void> {
    const now = server().clock.now();
    const rows = Array.from({ length: count }, () => ({
      token_hash: sessionTokenHash(randomUUID()),
      user_id: userId,
      client_type: 'bulk',
      character_id: fields.characterId ?? null,
      world_id: fields.worldId ?? null,
      created_at: toDbTime(new Date(now.getTime() - 2 * HOUR)),
      last_activity: toDbTime(new Date(now.getTime() - 2 * HOUR)),
      expires_at: toDbTime(fields.expiresAt ?? new Date(now.getTime() + HOUR)),
    }));
    for (let i = 0; i < rows.length; i += 500) await server().db('sessions').insert(rows.slice(i, i + 500));
  }

  const sessionsOf = async (userId: number): Promise<number> => Number((await server().db('sessions').where({ user_id: userId }).count({ n: '*' }).first())?.n);

  it(`an account with ${MANY} sessions changes its password, is banned and is deleted; its streams end`, async () => {
    const admin = await sessionFor(server(), 'bulkadmin', 'superuser');
    const player: Player = await newPlayer(server(), 'Many');
    const userId = (await server().db('users').where({ username: player.username }).first('id')).id as number;
    const stream = await openStream(`${server().url}/events/${player.sessionId}`);
    try {
      await addSessions(userId, MANY, { characterId: player.characterId, worldId: 'emberwick' });
      const changed = await server().post('/change-password', { session_id: player.sessionId, old_password: GOOD_PASSWORD, new_password: OTHER_GOOD_PASSWORD });
      expect(changed.status, changed.text).to.equal(200);
      expect(await sessionsOf(userId)).to.equal(1);

      await addSessions(userId, MANY, { characterId: player.characterId, worldId: 'emberwick' });
      const banned = await server().post('/admin/user/manage', { session_id: admin, action: 'ban', target_username: player.username });
      expect(banned.status, banned.text).to.equal(200);
      expect(await sessionsOf(userId)).to.equal(0);
      expect((await stream.nextOf('end')).data.reason).to.equal('ban');

      await server().post('/admin/user/manage', { session_id: admin, action: 'unban', target_username: player.username });
      await addSessions(userId, MANY);
      const deleted = await server().post('/admin/user/manage', { session_id: admin, action: 'delete', target_username: player.username });
      expect(deleted.status, deleted.text).to.equal(200);
      expect(await sessionsOf(userId)).to.equal(0);
    } finally {
      stream.close();
    }
  });

  it(`${MANY} sessions expiring at once are swept, and their characters leave`, async () => {
    const watcher = await newPlayer(server(), 'Watcher');
    const stream = await openStream(`${server().url}/events/${watcher.sessionId}`);
    try {
      const owners: Array<{ userId: number; characterId: number; name: string }> = [];
      for (let i = 0; i < 2; i++) {
        const p = await newPlayer(server(), 'Sleeper');
        owners.push({ userId: (await server().db('users').where({ username: p.username }).first('id')).id, characterId: p.characterId, name: p.name });
      }
      // The players' own sessions expire too (their characters are in the watcher's room).
      await server().db('sessions').whereIn('user_id', owners.map((o) => o.userId)).update({ expires_at: toDbTime(new Date(server().clock.now().getTime() - 1000)) });
      const past = new Date(server().clock.now().getTime() - 1000);
      for (const owner of owners) await addSessions(owner.userId, MANY / owners.length, { characterId: owner.characterId, worldId: 'emberwick', expiresAt: past });
      await wroteBehindServer(server());

      const swept = await server().services.sessions.sweepExpired();
      expect(swept).to.equal(MANY + owners.length);
      expect(Number((await server().db('sessions').count({ n: '*' }).first())?.n)).to.equal(1);
      const offline = new Set<string>();
      while (offline.size < owners.length) {
        const event = await stream.nextOf('presence');
        if (!event.data.online) offline.add(event.data.character);
      }
      expect([...offline].sort()).to.deep.equal(owners.map((o) => o.name).sort());
    } finally {
      stream.close();
    }
  });
});
