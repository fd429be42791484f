/**
 * Writes a client saw acknowledged, and whether the database holds them after the server was
 * killed: each client says, moves between the spawn room and the room north of it, and takes
 * and drops the spawn room's item; every 2xx is noted, and afterwards every noted write must be
 * in the database. The kill -9 test (test/integration/faults.test.ts) and the faults bench
 * (bench/faults.ts) both use it.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Knex } from 'knex';
import { loadWorld } from '../../src/services/worlds/world-loader.ts';

const WORLDS = path.resolve(import.meta.dirname, '..', '..', 'worlds');

/** An answer to a command; status 0 when none came (the server was gone). */
export interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** The demo world's spawn room, the room north of it, and the item lying in the spawn room. */
export interface SpawnFacts {
  spawn: string;
  north: string;
  item: string;
  itemId: string;
}

export async function spawnFacts(): Promise<SpawnFacts> {
  const world = await loadWorld(path.join(WORLDS, 'emberwick'));
  const spawn = world.rooms.get(world.defaultSpawn.room)!;
  const itemId = spawn.items[0]!;
  return { spawn: spawn.id, north: spawn.exits.north!, item: world.items.get(itemId)!.name, itemId };
}

export interface Ledger {
  accounts: Set<string>;
  says: Set<string>;
  /** Per character: its last acknowledged room, when no later move of it was left unanswered. */
  rooms: Map<number, string>;
  /** Per character: holds the item after its last acknowledged get or drop (same condition). */
  holds: Map<number, boolean>;
  /** Requests answered, and those sent but never answered (in flight when the server died). */
  answered: number;
  unanswered: number;
}

export function newLedger(): Ledger {
  return { accounts: new Set(), says: new Set(), rooms: new Map(), holds: new Map(), answered: 0, unanswered: 0 };
}

const ok = (a: Answer): boolean => a.status >= 200 && a.status < 300;

/**
 * One client's loop (its character stands in the spawn room): say, move north and back, get
 * and drop the item, until `stopped()` or until a command gets no answer.
 */
export async function writeLoad(command: (text: string) => Promise<Answer>, characterId: number, facts: SpawnFacts, ledger: Ledger, stopped: () => boolean): Promise<void> {
  let room = facts.spawn;
  let holding = false;
  while (!stopped()) {
    const roll = Math.random();
    let text: string;
    let apply: (answer: Answer) => void;
    if (roll < 0.6) {
      const token = randomBytes(6).toString('hex');
      text = `say ${token}`;
      apply = () => ledger.says.add(token);
    } else if (roll < 0.8) {
      const north = room === facts.spawn;
      text = north ? 'north' : 'south';
      ledger.rooms.delete(characterId);
      apply = (a) => {
        if (a.body?.success) room = north ? facts.north : facts.spawn;
        ledger.rooms.set(characterId, room);
      };
    } else {
      text = holding ? `drop ${facts.item}` : `get ${facts.item}`;
      ledger.holds.delete(characterId);
      apply = (a) => {
        if (a.body?.success) holding = !holding;
        ledger.holds.set(characterId, holding);
      };
    }
    ledger.unanswered++;
    const answer = await command(text);
    if (answer.status === 0) return; // the server is gone: this request stays unanswered
    ledger.unanswered--;
    ledger.answered++;
    if (ok(answer)) apply(answer);
  }
}

/** What of the ledger the database holds, and what it lost (each lost write named). */
export async function countFound(db: Knex, ledger: Ledger, facts: SpawnFacts): Promise<{ accounts: number; says: number; locations: number; items: number; lost: string[] }> {
  const lost: string[] = [];
  const users = new Set((await db('users').whereIn('username', [...ledger.accounts]).pluck('username')).map(String));
  for (const name of ledger.accounts) if (!users.has(name)) lost.push(`account ${name}`);
  const messages = (await db('chat_messages').pluck('message')).map(String).join('\n');
  let says = 0;
  for (const token of ledger.says) {
    if (messages.includes(token)) says++;
    else lost.push(`say ${token}`);
  }
  const rooms = new Map((await db('characters').whereIn('id', [...ledger.rooms.keys()]).select('id', 'room_id')).map((r: { id: number; room_id: string }) => [Number(r.id), r.room_id]));
  let locations = 0;
  for (const [id, room] of ledger.rooms) {
    if (rooms.get(id) === room) locations++;
    else lost.push(`character ${id} in ${room} (found ${rooms.get(id)})`);
  }
  const holder = await db('item_instances').where({ item_id: facts.itemId }).first('character_id');
  let items = 0;
  for (const [id, holds] of ledger.holds) {
    if ((Number(holder?.character_id) === id) === holds) items++;
    else lost.push(`character ${id} ${holds ? 'holds' : 'does not hold'} the ${facts.item}`);
  }
  return { accounts: users.size, says, locations, items, lost };
}
