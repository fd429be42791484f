/**
 * Two server instances on one database (one SQLite file, or one PostgreSQL schema with
 * MUD_TEST_DB=postgres): all game state lives in the database (the specification's settled
 * choice), so players on different instances see each other, hear each other and can never both
 * take one item.
 */
import { describe, it, before, beforeEach } from 'mocha';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { usePostgres, type TestServer } from '../helpers/test-server.ts';
import { twoInstances } from '../helpers/suite-servers.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';
import { eventually } from '../helpers/eventually.ts';
import { cmd, newPlayer, okCmd, resetGame, statusOf, type Player } from '../helpers/players.ts';
import { sessionFor } from '../helpers/accounts.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const WORLD_ID = 'emberwick';







async function chatOf(player: Player): Promise<string> {
  const res = await player.server.get(`/chat/${player.sessionId}`);
  expect(res.status, res.text).to.equal(200);
  return res.body.chat;
}

/**
 * Retries `check` until it passes, for at most 2 s: what a change on one instance takes to reach
 * the other's caches (docs/decisions.md, "The hot path").
 */
const within2s = (check: () => Promise<unknown>): Promise<void> => eventually(check, 2000);

async function expectChat(player: Player, chat: string): Promise<void> {
  await within2s(async () => expect(await chatOf(player)).to.equal(chat));
}


/** The item names of the demo world, straight from its files. */
function itemNames(): Map<string, string> {
  const dir = path.resolve('worlds', WORLD_ID);
  const world = JSON.parse(readFileSync(path.join(dir, 'world.json'), 'utf8'));
  const names = new Map<string, string>();
  const add = (raw: unknown): void => {
    const list = Array.isArray(raw) ? raw : Object.values((raw ?? {}) as object);
    for (const item of list as Array<{ id: string; name: string }>) names.set(item.id, item.name);
  };
  add(world.global_items);
  for (const zone of world.zones as string[]) add(JSON.parse(readFileSync(path.join(dir, 'zones', `${zone}.json`), 'utf8')).items);
  return names;
}

async function emberwickItemCount(server: TestServer): Promise<number> {
  const row = await server.db('item_instances').where({ world_id: WORLD_ID }).count({ n: '*' }).first();
  return Number(row!.n);
}


describe(`game on two instances sharing one database (${DB_NAME})`, function () {
  const servers = twoInstances();
  let itemsAfterStart = -1;
  before(async () => {
    const [one] = servers();
    itemsAfterStart = await emberwickItemCount(one);
  });

  it('the world\'s items are placed once although two instances started on the database', async () => {
    const [, two] = servers();
    expect(itemsAfterStart).to.equal(11);
    expect(await two.db('world_seeds').where({ world_id: WORLD_ID }).count({ n: '*' }).first()).to.satisfy((r: { n: number | string }) => Number(r.n) === 1);
  });

  describe('players on different instances', () => {
    beforeEach(async () => {
      const [one] = servers();
      await resetGame(one);
    });

    // Each instance remembers sessions, chat and who is where, which only the PostgreSQL bus
    // keeps coherent between instances: SQLite serves one instance (docs/decisions.md).
    const onPostgres = (title: string, test: (this: Mocha.Context) => Promise<void>) =>
      it(title, function () {
        if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
        return test.call(this);
      });

    onPostgres('see each other in look, who and /status', async () => {
      const [one, two] = servers();
      const a = await newPlayer(one, 'Anna');
      const b = await newPlayer(two, 'Bert');
      await within2s(async () => expect(await okCmd(a, 'look')).to.include(`\n[Players here]:\n  - ${b.name}\n`));
      await within2s(async () => expect(await okCmd(b, 'look')).to.include(`\n[Players here]:\n  - ${a.name}\n`));
      expect(await okCmd(a, 'who')).to.equal(`Active players:\n - ${b.name}`);
      expect(await okCmd(b, 'who')).to.equal(`Active players:\n - ${a.name}`);
      const everyone = [a.name, b.name].sort();
      expect((await statusOf(a)).active_players).to.deep.equal(everyone);
      expect((await statusOf(b)).active_players).to.deep.equal(everyone);
      // A move on instance 1 is seen on instance 2.
      await okCmd(a, 'north');
      await within2s(async () => expect(await okCmd(b, 'look')).to.not.include('[Players here]'));
      await okCmd(b, 'north');
      expect(await okCmd(b, 'look')).to.include(`\n[Players here]:\n  - ${a.name}\n`);
      // A logout on instance 1 is seen on instance 2.
      expect((await one.post('/logout', { session_id: a.sessionId })).status).to.equal(200);
      await within2s(async () => expect(await okCmd(b, 'who')).to.equal('No other players online.'));
    });

    onPostgres('hear each other: say in the room, a yell from an adjoining room, a whisper', async () => {
      const [one, two] = servers();
      const a = await newPlayer(one, 'Anna');
      const b = await newPlayer(two, 'Bert');
      expect(await chatOf(b)).to.equal('[No messages in this room yet]');
      expect(await okCmd(a, 'say hello from <one>')).to.equal('You say: hello from &lt;one&gt;');
      await expectChat(b, `[Recent messages]:\n${a.name}: hello from &lt;one&gt;\n`);
      await okCmd(a, 'north');
      expect(await okCmd(a, 'yell over here!')).to.equal('You yell: over here!');
      await expectChat(b, `[Recent messages]:\n${a.name}: hello from &lt;one&gt;\n${a.name}: [YELL] over here!\n`);
      // The yell reached the bridge too; the say did not.
      expect(await chatOf(a)).to.equal(`[Recent messages]:\n${a.name}: [YELL] over here!\n`);
      await okCmd(b, 'north');
      expect(await okCmd(b, `whisper ${a.name} psst`)).to.equal(`You whisper to ${a.name}: psst`);
      await expectChat(a, `[Recent messages]:\n${a.name}: [YELL] over here!\n${b.name}: [WHISPER: ${b.name} \u2192 ${a.name}] psst\n`);
    });

    onPostgres('a session remembered by one instance follows what the other does within 2 s: move, role change, logout, kick, ban, expiry', async () => {
      const [one, two] = servers();
      const boss = await sessionFor(two, `mi_boss${Date.now() % 100000}`, 'superuser');
      const onOne = (p: Player): Player => ({ ...p, server: one });
      const onTwo = (p: Player): Player => ({ ...p, server: two });
      const statusOn = (server: TestServer, sid: string) => server.get(`/status/${sid}`);
      // Move: played on two, seen by one, which has the session in memory.
      const mover = await newPlayer(one, 'Mo');
      expect((await statusOf(onOne(mover))).current_room).to.equal('lockkeepers_square');
      await okCmd(onTwo(mover), 'north');
      await within2s(async () => expect((await statusOf(onOne(mover))).current_room).to.equal('ropewalk_bridge'));
      // Role change on two: one lets the session into an admin route.
      const roleName = `mi_role${Date.now() % 100000}`;
      const roleSid = await sessionFor(one, roleName, 'player');
      const adminRoute = () => one.get(`/admin/database/players?session_id=${roleSid}`);
      expect((await adminRoute()).status).to.equal(403);
      expect((await two.post('/admin/user/manage', { session_id: boss, action: 'change_role', target_username: roleName, new_role: 'admin' })).body.success).to.equal(true);
      await within2s(async () => expect((await adminRoute()).status).to.equal(200));
      // Logout, kick and ban on two: one refuses the session.
      const ended = async (end: (p: Player) => Promise<unknown>) => {
        const p = await newPlayer(one, 'Eve');
        expect((await statusOn(one, p.sessionId)).status).to.equal(200);
        await end(p);
        await within2s(async () => expect((await statusOn(one, p.sessionId)).status).to.equal(401));
      };
      await ended((p) => two.post('/logout', { session_id: p.sessionId }));
      await ended(async (p) => {
        const row = await two.db('sessions').where({ character_id: p.characterId }).first('id');
        expect((await two.post('/admin/session/kick', { session_id: boss, target_session_id: String(row!.id) })).body.success).to.equal(true);
      });
      await ended(async (p) => expect((await two.post('/admin/user/manage', { session_id: boss, action: 'ban', target_username: p.username })).body.success).to.equal(true));
      // Expiry needs no message: a remembered session is checked against the clock on every request.
      const old = await newPlayer(one, 'Olga');
      expect((await statusOn(one, old.sessionId)).status).to.equal(200);
      one.clock.advance(481 * 60_000);
      expect((await statusOn(one, old.sessionId)).status).to.equal(401);
    });

    onPostgres('activity recorded on one instance slides the expiry the other reads, once the first has written it', async () => {
      const [one, two] = servers();
      const p = await newPlayer(one, 'Sly');
      const hours = (n: number) => n * 60 * 60_000;
      one.clock.advance(hours(7));
      expect((await one.get(`/status/${p.sessionId}`)).status).to.equal(200);
      await one.services.sessions.flushActivity();
      // Nine hours after login: only the expiry slid on one keeps the session alive on two.
      one.clock.advance(hours(2));
      await two.services.sessions.sweepExpired();
      const res = await two.get(`/status/${p.sessionId}`);
      expect(res.status, res.text).to.equal(200);
    });

    onPostgres('an item dropped on one instance is in the room on the other', async () => {
      const [one, two] = servers();
      const a = await newPlayer(one, 'Anna');
      const b = await newPlayer(two, 'Bert');
      expect(await okCmd(b, 'look')).to.include('Canal Penny');
      expect(await okCmd(a, 'get canal penny')).to.equal('You picked up the Canal Penny.');
      await within2s(async () => expect(await okCmd(b, 'look')).to.not.include('Canal Penny'));
      await okCmd(b, 'north');
      await okCmd(a, 'north');
      expect(await okCmd(a, 'drop canal penny')).to.equal('You dropped the Canal Penny.');
      await within2s(async () => expect(await okCmd(b, 'look')).to.include('  - Canal Penny\n'));
      expect(await okCmd(b, 'get canal penny')).to.equal('You picked up the Canal Penny.');
      expect((await statusOf(b)).inventory).to.equal('Your inventory:\n  - Canal Penny\n');
      expect((await statusOf(a)).inventory).to.equal('Your inventory is empty.');
    });

    it('race for one item through different instances: exactly one holder, five times over', async () => {
      const [one, two] = servers();
      const a = await newPlayer(one, 'Anna');
      const b = await newPlayer(two, 'Bert');
      const names = itemNames();
      const items = ['canal_penny', 'hemp_coil', 'tallow_candle', 'pewter_tankard', 'tin_whistle'];
      // Arrangement: gather the five items in the square.
      await one.db('item_instances').where({ world_id: WORLD_ID }).whereIn('item_id', items).update({ room_id: 'lockkeepers_square', character_id: null });
      for (const itemId of items) {
        const name = names.get(itemId)!;
        const replies = await Promise.all([cmd(a, `get ${name}`), cmd(b, `get ${name}`)]);
        expect(
          replies.filter((r) => r.success),
          `${name}: ${JSON.stringify(replies)}`,
        ).to.have.length(1);
        const rows = await two.db('item_instances').where({ world_id: WORLD_ID, item_id: itemId }).select('room_id', 'character_id');
        expect(rows).to.have.length(1);
        expect(rows[0].room_id ?? null).to.equal(null);
        expect(Number(rows[0].character_id)).to.equal(replies[0]!.success ? a.characterId : b.characterId);
      }
      const held = await one.db('item_instances').where({ world_id: WORLD_ID }).whereIn('character_id', [a.characterId, b.characterId]).count({ n: '*' }).first();
      expect(Number(held!.n)).to.equal(items.length);
    });
  });
});
