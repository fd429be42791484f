/**
 * What scripts' exits and builders' history cost a world (docs/decisions.md, "Building worlds"):
 * a script opening and closing an exit every second meets `[scripts] exit_changes_per_minute`
 * (its refusals are the script's recorded errors) and never shows in the history, which itself
 * keeps only the newest `[building] history_per_world` changes of a world.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { eventually } from '../helpers/eventually.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const W = '/api/worlds/emberwick';
const EXITS_PER_MINUTE = 4;
const HISTORY = 100;

interface Change {
  id: number;
  via: string;
  actor: string;
  action: string;
  target_id: string;
}

describe(`scripts' exits and the building history are bounded (${DB_NAME})`, function () {
  this.timeout(120_000);
  let server: TestServer;
  let builder: string;
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse> => server.request(method, path, body, { ...bearer(builder), ...headers });

  before(async () => {
    server = await startTestServer({ env: { MUD_SCRIPTS_EXIT_CHANGES_PER_MINUTE: String(EXITS_PER_MINUTE), MUD_BUILDING_HISTORY_PER_WORLD: String(HISTORY) } });
    builder = await sessionFor(server, 'doorwarden', 'worldbuilder');
  });
  after(async () => {
    await server?.close();
  });

  const history = async (): Promise<Change[]> => {
    const res = await call('GET', `${W}/changes?limit=500`);
    expect(res.status, res.text).to.equal(200);
    return res.body.changes;
  };

  it('an NPC flipping an exit every second meets exit_changes_per_minute: refused with a recorded error, and none of its exits is in the history', async () => {
    const room = await call('POST', `${W}/rooms`, { name: 'Flap Hall', description: 'A trapdoor that will not stay still.' });
    expect(room.status, room.text).to.equal(201);
    const hall = room.body.id as string;
    const script = [
      'function onLoad() { every(1, "flip"); }',
      `function flip() { if (state.open) room.closeExit("up"); else room.openExit("up", "${hall}"); state.open = !state.open; }`,
    ].join('\n');
    const made = await call('POST', `${W}/npcs`, { id: 'flapper', name: 'Flapper', description: 'It pulls a rope.', room_id: hall, script });
    expect(made.status, made.text).to.equal(201);
    const before = await history();
    // The create runs onLoad, which sets the timer.
    await eventually(async () => expect(await server.db('script_timers').where({ world_id: 'emberwick', owner: 'npc:flapper' }).first(), 'the timer onLoad sets').to.not.equal(undefined), 10_000);

    const exitsNow = async (): Promise<string[]> => Object.keys((await call('GET', `${W}/rooms/${hall}`)).body.exits);
    // Within the limit the exit opens and closes; each second's change is seen before the next.
    for (let second = 1; second <= EXITS_PER_MINUTE; second++) {
      server.clock.advance(1_000);
      await server.services.scriptClock.tick();
      await eventually(async () => expect(await exitsNow()).to.deep.equal(second % 2 === 1 ? ['up'] : []), 10_000);
    }
    // One more within the minute is refused: the script's error, and the exit stays as it was.
    server.clock.advance(1_000);
    await server.services.scriptClock.tick();
    let refused: { kind: string; hook: string; message: string } | undefined;
    await eventually(async () => {
      const errors = (await call('GET', `${W}/script-errors?owner=npc:flapper`)).body.errors as Array<{ kind: string; hook: string; message: string }>;
      refused = errors.find((e) => e.kind === 'limit');
      expect(refused, `the refusal among ${JSON.stringify(errors)}`).to.not.equal(undefined);
    }, 10_000);
    expect(refused!.hook).to.equal('room.openExit');
    expect(refused!.message).to.match(/^Too many exit changes by this world's scripts \(more than 4 a minute, \[scripts\] exit_changes_per_minute\)\. Try again in \d+ seconds\.$/);
    expect(await exitsNow()).to.deep.equal([]);

    // The history holds the builder's changes only: no exit of the script.
    const after = await history();
    expect(after.filter((c) => c.via === 'script' || c.actor === 'npc:flapper')).to.deep.equal([]);
    expect(after.map((c) => c.id)).to.deep.equal(before.map((c) => c.id));
    const scripted = await server.db('world_changes').where({ world_id: 'emberwick', via: 'script' }).count({ n: '*' }).first();
    expect(Number(scripted!.n)).to.equal(0);
  });

  it('keeps the newest history_per_world changes of a world, deleting the oldest as it writes, and a room still reverts', async () => {
    const renames = HISTORY + 5;
    for (let n = 1; n <= renames; n++) {
      const res = await call('PATCH', `${W}/rooms/chandlers_row`, { name: `Chandlers' Row ${n}` }, { 'If-Match': '*' });
      expect(res.status, res.text).to.equal(200);
    }
    const kept = await history();
    expect(kept).to.have.length(HISTORY);
    expect(kept[0]).to.deep.include({ action: 'room.update', target_id: 'chandlers_row' });
    // Newest first: the last rename on top, and nothing older than the newest HISTORY.
    const names = kept.map((c) => (c as unknown as { after: { name: string } }).after.name);
    expect(names.slice(0, HISTORY)).to.deep.equal(Array.from({ length: HISTORY }, (_, i) => `Chandlers' Row ${renames - i}`));
    const stored = await server.db('world_changes').where({ world_id: 'emberwick' }).count({ n: '*' }).first();
    expect(Number(stored!.n)).to.equal(HISTORY);

    const reverted = await call('POST', `${W}/rooms/chandlers_row/revert`, {}, { 'If-Match': '*' });
    expect(reverted.status, reverted.text).to.equal(200);
    expect(reverted.body.name).to.not.match(/^Chandlers' Row \d+$/);
    const newest = await history();
    expect(newest).to.have.length(HISTORY);
    expect(newest[0]).to.deep.include({ action: 'room.revert', target_id: 'chandlers_row' });
  });
});
