/**
 * Chat mechanics through HTTP (SQLite, or PostgreSQL with MUD_TEST_DB=postgres): the axis
 * engine (the reference server's chat resolution) turning say/yell/whisper with a listener into
 * per-character axis events, score and snapshot updates and a checksummed ledger row, all with
 * one ipc_hash; nothing for a solo speaker or a world whose engine is off; and the translation
 * layer replacing chat text with the model's IC text, falling back to the OOC text when the
 * model is down, never failing the command.
 */
import { describe, it, before, after, beforeEach } from 'mocha';
import { expect } from 'chai';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, resetGame, type Player } from '../helpers/players.ts';
import { createUser, login } from '../helpers/accounts.ts';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { parseGrammar, resolveChat, seedFromIpcHash, type ChatGrammar, type ChatResolution } from '../../src/services/axis/axis-engine.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const WORLD = 'emberwick';
const SPAWN = 'lockkeepers_square';

/** A copy of the shipped worlds with emberwick's world.json changed by `edit`. */
function worldsWith(edit: (world: Record<string, any>) => void): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mud-chat-axis-'));
  cpSync(path.resolve('worlds'), dir, { recursive: true });
  const file = path.join(dir, WORLD, 'world.json');
  const world = JSON.parse(readFileSync(file, 'utf8'));
  edit(world);
  writeFileSync(file, JSON.stringify(world, null, 2));
  return dir;
}

/** The chat grammar of emberwick's shipped axis bundle. */
function shippedGrammar(): ChatGrammar {
  const artifact = JSON.parse(readFileSync(path.resolve('worlds', WORLD, 'policy-artifact.json'), 'utf8'));
  const variant = artifact.variants.find((v: any) => String(v.policy_id).startsWith('axis_bundle:'));
  return parseGrammar(variant.content.resolution);
}

/**
 * A playing character whose chat axes start at fixed scores. Generated profiles are random per
 * character, and a health already at 0 with a demeanor gap under the grammar's threshold would
 * make an interaction change nothing; fixed starting points make every test's chain of
 * events predictable: health far from the clamp, demeanors 0.15 apart in turn.
 */
let chatterCount = 0;
async function chatter(server: TestServer, first: string, roomId: string): Promise<Player> {
  const player = await newPlayer(server, first, roomId);
  const pinned: Record<string, number> = { health: 0.9, demeanor: 0.2 + 0.15 * (chatterCount++ % 5) };
  for (const [axis, score] of Object.entries(pinned)) {
    const updated = await server
      .db('character_axis_scores')
      .where({ character_id: player.characterId })
      .whereIn('axis_id', server.db('axes').select('id').where({ world_id: WORLD, name: axis }))
      .update({ score });
    expect(updated, `${axis} of ${player.name}`).to.equal(1);
  }
  return player;
}

async function scores(server: TestServer, admin: string, characterId: number): Promise<Record<string, number>> {
  const res = await server.get(`/admin/characters/${characterId}/axis-state?session_id=${admin}`);
  expect(res.status, res.text).to.equal(200);
  return Object.fromEntries(res.body.axes.map((a: any) => [a.axis_name, a.axis_score]));
}

async function axisState(server: TestServer, admin: string, characterId: number): Promise<any> {
  const res = await server.get(`/admin/characters/${characterId}/axis-state?session_id=${admin}`);
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

async function events(server: TestServer, admin: string, characterId: number): Promise<any[]> {
  const res = await server.get(`/admin/characters/${characterId}/axis-events?session_id=${admin}`);
  expect(res.status, res.text).to.equal(200);
  return res.body.events;
}

async function chatEvents(server: TestServer, admin: string, characterId: number): Promise<any[]> {
  return (await events(server, admin, characterId)).filter((e) => e.event_type === 'chat.mechanical_resolution');
}

async function ledgerRows(server: TestServer, eventType: string): Promise<any[]> {
  return (await server.services.ledger.list(WORLD, 1000)).filter((e) => e.event_type === eventType);
}

async function roomChat(player: Player): Promise<any[]> {
  const res = await player.server.get(`/chat/${player.sessionId}`);
  expect(res.status, res.text).to.equal(200);
  return res.body.messages;
}

/** What the engine must do for this interaction, from the scores before it. */
async function expected(server: TestServer, admin: string, speaker: Player, listener: Player, channel: string): Promise<ChatResolution> {
  return resolveChat({
    worldId: WORLD,
    speaker: { id: speaker.characterId, scores: await scores(server, admin, speaker.characterId) },
    listener: { id: listener.characterId, scores: await scores(server, admin, listener.characterId) },
    channel,
    grammar: shippedGrammar(),
  });
}

/** The character's newest chat event matches the resolution's changes for it. */
async function expectResolved(server: TestServer, admin: string, character: Player, peer: Player, channel: string, changes: ChatResolution['speaker'], ipcHash: string): Promise<void> {
  const [event] = await chatEvents(server, admin, character.characterId);
  expect(event, `${character.name} has a chat event`).to.not.equal(undefined);
  expect(event.world_id).to.equal(WORLD);
  expect(event.event_type_description).to.equal('Axis mutation produced by a chat interaction.');
  expect(event.metadata).to.deep.equal({ ipc_hash: ipcHash, channel, peer_id: String(peer.characterId) });
  expect(event.deltas.map((d: any) => d.axis_name)).to.deep.equal(Object.keys(changes).sort());
  for (const d of event.deltas) {
    const c = changes[d.axis_name]!;
    expect(d.old_score).to.be.closeTo(c.oldScore, 1e-12);
    expect(d.new_score).to.be.closeTo(c.newScore, 1e-12);
    expect(d.delta).to.be.closeTo(c.delta, 1e-12);
  }
  const state = await axisState(server, admin, character.characterId);
  for (const [axis, c] of Object.entries(changes)) {
    expect(state.axes.find((a: any) => a.axis_name === axis).axis_score).to.be.closeTo(c.newScore, 1e-12);
    expect(state.current_state.axes[axis].score).to.be.closeTo(c.newScore, 1e-12);
  }
}

describe(`chat axis engine and translation (${DB_NAME})`, function () {
  this.timeout(60_000);

  describe('with the axis engine enabled', () => {
    let server: TestServer;
    let admin: string;
    let worldsDir: string;

    before(async () => {
      worldsDir = worldsWith((w) => (w.axis_engine = { enabled: true }));
      server = await startTestServer({ env: { MUD_WORLDS_ROOT: worldsDir } });
      await createUser(server, 'chataxisadmin', 'admin');
    });
    after(async () => {
      await server?.close();
      rmSync(worldsDir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await resetGame(server);
      admin = await login(server, 'chataxisadmin');
    });

    it('resolves a say between two players: both characters move, one ipc_hash, a verified ledger row', async () => {
      const a = await chatter(server, 'Talker', SPAWN);
      const b = await chatter(server, 'Hearer', SPAWN);
      const want = await expected(server, admin, a, b, 'say');
      expect(Object.keys(want.speaker).length + Object.keys(want.listener).length).to.be.greaterThan(0);

      expect(await okCmd(a, 'say Good evening, neighbour')).to.equal('You say: Good evening, neighbour');

      await expectResolved(server, admin, a, b, 'say', want.speaker, want.ipcHash);
      await expectResolved(server, admin, b, a, 'say', want.listener, want.ipcHash);

      const rows = (await ledgerRows(server, 'chat.mechanical_resolution')).filter((r) => r.ipc_hash === want.ipcHash);
      expect(rows).to.have.length(1);
      const [row] = rows;
      expect(row.checksum_verified).to.equal(true);
      expect(row.meta).to.deep.equal({});
      expect(row.data.channel).to.equal('say');
      expect(row.data.grammar_version).to.equal('1.0');
      expect(row.data.speaker.character_id).to.equal(a.characterId);
      expect(row.data.speaker.character_name).to.equal(a.name);
      expect(row.data.listener.character_id).to.equal(b.characterId);
      expect(Object.keys(row.data.axis_snapshot_before).sort()).to.deep.equal([String(a.characterId), String(b.characterId)].sort());
      expect(Object.keys(row.data.axis_snapshot_before[String(a.characterId)]).sort()).to.deep.equal(['demeanor', 'health']);
      for (const [axis, c] of Object.entries(want.speaker)) expect(row.data.speaker.axis_deltas[axis]).to.be.closeTo(c.delta, 1e-12);
      for (const [axis, c] of Object.entries(want.listener)) expect(row.data.listener.axis_deltas[axis]).to.be.closeTo(c.delta, 1e-12);
    });

    it('is deterministic: the same scores and channel give the same ipc_hash', async () => {
      const a = await chatter(server, 'Twin', SPAWN);
      const b = await chatter(server, 'Echo', SPAWN);
      const want = await expected(server, admin, a, b, 'yell');
      await okCmd(a, 'yell Who goes there?');
      const [event] = await chatEvents(server, admin, a.characterId);
      expect(event.metadata.ipc_hash).to.equal(want.ipcHash);
      await expectResolved(server, admin, b, a, 'yell', want.listener, want.ipcHash);
    });

    it('whispers resolve with the target as listener, even with others in the room', async () => {
      const a = await chatter(server, 'Murmur', SPAWN);
      const first = await chatter(server, 'Bystander', SPAWN);
      const target = await chatter(server, 'Confidant', SPAWN);
      expect(first.characterId).to.be.lessThan(target.characterId);
      const want = await expected(server, admin, a, target, 'whisper');
      await okCmd(a, `whisper ${target.name} meet me at the lock`);
      await expectResolved(server, admin, a, target, 'whisper', want.speaker, want.ipcHash);
      await expectResolved(server, admin, target, a, 'whisper', want.listener, want.ipcHash);
      expect(await chatEvents(server, admin, first.characterId)).to.deep.equal([]);
    });

    it('picks the first other active character in the room, by id, as the listener', async () => {
      const a = await chatter(server, 'Orator', SPAWN);
      const first = await chatter(server, 'Early', SPAWN);
      const second = await chatter(server, 'Later', SPAWN);
      const elsewhere = await chatter(server, 'Elsewhere', 'ropewalk_bridge');
      const want = await expected(server, admin, a, first, 'say');
      await okCmd(a, 'say Listen, all of you');
      await expectResolved(server, admin, first, a, 'say', want.listener, want.ipcHash);
      expect(await chatEvents(server, admin, second.characterId)).to.deep.equal([]);
      expect(await chatEvents(server, admin, elsewhere.characterId)).to.deep.equal([]);
    });

    it('serializes concurrent interactions: every event starts where the previous one ended', async () => {
      const a = await chatter(server, 'Rapid', SPAWN);
      const b = await chatter(server, 'Fire', SPAWN);
      await Promise.all([...Array(5)].flatMap((_, i) => [okCmd(a, `say ping ${i}`), okCmd(b, `say pong ${i}`)]));
      for (const p of [a, b]) {
        const chain = (await chatEvents(server, admin, p.characterId)).reverse();
        expect(chain).to.have.length(10);
        const last = new Map<string, number>();
        for (const e of chain) {
          for (const d of e.deltas) {
            if (last.has(d.axis_name)) expect(d.old_score).to.be.closeTo(last.get(d.axis_name)!, 1e-12);
            last.set(d.axis_name, d.new_score);
          }
        }
        const final = await scores(server, admin, p.characterId);
        for (const [axis, score] of last) expect(final[axis]).to.be.closeTo(score, 1e-12);
      }
      expect((await ledgerRows(server, 'chat.mechanical_resolution')).filter((r) => [a.characterId, b.characterId].includes(r.data.speaker.character_id))).to.have.length(10);
    });

    it('changes nothing when the speaker is alone in the room', async () => {
      const a = await chatter(server, 'Hermit', SPAWN);
      await chatter(server, 'Faraway', 'ropewalk_bridge');
      const before = await axisState(server, admin, a.characterId);
      const ledgerBefore = (await ledgerRows(server, 'chat.mechanical_resolution')).length;
      expect(await okCmd(a, 'say Is anyone here?')).to.equal('You say: Is anyone here?');
      expect(await chatEvents(server, admin, a.characterId)).to.deep.equal([]);
      expect(await axisState(server, admin, a.characterId)).to.deep.equal(before);
      expect((await ledgerRows(server, 'chat.mechanical_resolution')).length).to.equal(ledgerBefore);
    });
  });

  describe('with the axis engine disabled (shipped worlds)', () => {
    let server: TestServer;
    let admin: string;

    before(async () => {
      server = await startTestServer();
      await createUser(server, 'chatoffadmin', 'admin');
    });
    after(async () => {
      await server?.close();
    });

    it('chat changes no axis state and writes no ledger row', async () => {
      await resetGame(server);
      admin = await login(server, 'chatoffadmin');
      const a = await newPlayer(server, 'Quiet', SPAWN);
      const b = await newPlayer(server, 'Calm', SPAWN);
      const before = [await axisState(server, admin, a.characterId), await axisState(server, admin, b.characterId)];
      await okCmd(a, 'say Nice weather');
      await okCmd(a, `whisper ${b.name} psst`);
      await okCmd(b, 'yell Hello!');
      expect([await axisState(server, admin, a.characterId), await axisState(server, admin, b.characterId)]).to.deep.equal(before);
      expect(await chatEvents(server, admin, a.characterId)).to.deep.equal([]);
      expect(await server.services.ledger.list(WORLD, 100)).to.deep.equal([]);
    });
  });

  describe('with translation enabled', () => {
    let server: TestServer;
    let admin: string;
    let worldsDir: string;
    let fake: FakeUpstream;
    let reply: { content: string } | 'down' = { content: 'Well met, traveller.' };

    before(async () => {
      fake = await startFakeUpstream(() => (reply === 'down' ? { destroy: true } : { status: 200, body: { message: { role: 'assistant', content: reply.content }, done: true } }));
      worldsDir = worldsWith((w) => {
        w.axis_engine = { enabled: true };
        w.translation_layer = { ...w.translation_layer, enabled: true, deterministic: true, timeout_seconds: 5 };
      });
      server = await startTestServer({ env: { MUD_WORLDS_ROOT: worldsDir, MUD_TRANSLATION_ENABLED: 'true', MUD_TRANSLATION_OLLAMA_URL: fake.url } });
      await createUser(server, 'chattranslateadmin', 'admin');
    });
    after(async () => {
      await server?.close();
      await fake?.close();
      rmSync(worldsDir, { recursive: true, force: true });
    });
    beforeEach(async () => {
      await resetGame(server);
      admin = await login(server, 'chattranslateadmin');
      reply = { content: 'Well met, traveller.' };
    });

    it('stores and echoes the IC text, seeded from the ipc_hash, and writes a translation ledger row', async () => {
      const a = await chatter(server, 'Bard', SPAWN);
      const b = await chatter(server, 'Audience', SPAWN);
      const want = await expected(server, admin, a, b, 'say');
      const sent = fake.requests.length;
      expect(await okCmd(a, 'say hi there')).to.equal('You say: Well met, traveller.');
      expect((await roomChat(b)).map((m) => m.text)).to.deep.equal(['Well met, traveller.']);

      expect(fake.requests.length).to.equal(sent + 1);
      const request = fake.requests[sent]!;
      expect(request.url).to.equal('/api/chat');
      // The seed can exceed 2^53: compare the raw JSON digits.
      expect(request.bodyText).to.contain(`"seed":${seedFromIpcHash(want.ipcHash).toString()}`);
      const body = request.body as any;
      expect(body.options.temperature).to.equal(0);
      expect(body.messages[1]).to.deep.equal({ role: 'user', content: 'hi there' });
      expect(body.messages[0].content).to.contain(`Character: ${a.name}`);

      const [row] = (await ledgerRows(server, 'chat.translation')).filter((r) => r.ipc_hash === want.ipcHash);
      expect(row, 'translation ledger row').to.not.equal(undefined);
      expect(row.checksum_verified).to.equal(true);
      expect(row.meta).to.deep.equal({});
      expect(row.data).to.deep.include({ status: 'success', character_name: a.name, channel: 'say', ooc_input: 'hi there', ic_output: 'Well met, traveller.' });
      expect(Object.keys(row.data.axis_snapshot)).to.deep.equal(['demeanor', 'health', 'physique', 'wealth']);
    });

    it('escapes the IC text like any chat text', async () => {
      const a = await chatter(server, 'Cook', SPAWN);
      reply = { content: 'Fish & chips <hot>, friend.' };
      expect(await okCmd(a, 'yell food')).to.equal('You yell: Fish &amp; chips &lt;hot&gt;, friend.');
      const [row] = (await ledgerRows(server, 'chat.translation')).filter((r) => r.data.character_name === a.name);
      // Alone in the room: no resolution, so no ipc_hash.
      expect(row.ipc_hash).to.equal(null);
      expect(row.meta).to.deep.equal({ phase: 'pre_axis_engine' });
    });

    it('falls back to the OOC text when the model is down, and the command still succeeds', async () => {
      const a = await chatter(server, 'Crier', SPAWN);
      const b = await chatter(server, 'Listener', SPAWN);
      reply = 'down';
      expect(await okCmd(a, 'say <plain> words')).to.equal('You say: &lt;plain&gt; words');
      expect((await roomChat(b)).map((m) => m.text)).to.deep.equal(['&lt;plain&gt; words']);
      expect(await okCmd(a, `whisper ${b.name} still here`)).to.equal(`You whisper to ${b.name}: still here`);
      const rows = (await ledgerRows(server, 'chat.translation')).filter((r) => r.data.character_name === a.name);
      expect(rows.map((r) => r.data.status)).to.deep.equal(['fallback.api_error', 'fallback.api_error']);
      expect(rows.every((r) => r.data.ic_output === null && r.checksum_verified)).to.equal(true);
      // The axis engine still ran for both interactions.
      expect(await chatEvents(server, admin, a.characterId)).to.have.length(2);
    });

    it('falls back when the model answers something the validator rejects', async () => {
      const a = await chatter(server, 'Mime', SPAWN);
      reply = { content: 'PASSTHROUGH' };
      expect(await okCmd(a, 'say ok')).to.equal('You say: ok');
      const [row] = (await ledgerRows(server, 'chat.translation')).filter((r) => r.data.character_name === a.name);
      expect(row.data.status).to.equal('fallback.validation_failed');
    });
  });
});
