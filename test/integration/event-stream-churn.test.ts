/**
 * Event streams opened and closed many times leave nothing behind: the streams' indexes (by
 * session, world, room and character), their lease bookkeeping and the link-dead characters
 * they were told of are back at their levels once every stream is closed and its players gone,
 * as /metrics shows them (src/http/metrics.ts). Streams are closed by their clients, replaced
 * by a newer stream of their session, and followed while their characters walk, which moves
 * them between rooms of the index. The heap is printed, not asserted: without a forced GC its
 * level says little.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { eventually } from '../helpers/eventually.ts';
import { metricValue } from '../helpers/metrics-text.ts';

const PLAYERS = 6;
const ROUNDS = 8;
const INDEXES = ['session', 'world', 'room', 'character'] as const;

/** Every gauge of the streams' bookkeeping, by its exposition name (and label). */
type Levels = Record<string, number>;

describe(`event streams opened and closed many times (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  this.timeout(120_000);
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { MUD_METRICS_MODE: 'open' } });
  });
  after(async () => {
    await server?.close();
  });

  const scrape = async (): Promise<string> => {
    const res = await server.get('/metrics');
    expect(res.status, res.text).to.equal(200);
    return res.text;
  };

  const levels = (text: string): Levels => {
    const read: Levels = {
      open: metricValue(text, 'mud_event_streams_open'),
      leases_pending: metricValue(text, 'mud_event_stream_leases_pending'),
      leased_sessions: metricValue(text, 'mud_event_stream_leased_sessions'),
      linkdead_told: metricValue(text, 'mud_event_stream_linkdead_told'),
    };
    for (const index of INDEXES) {
      read[`keys{${index}}`] = metricValue(text, 'mud_event_stream_index_keys', `index="${index}"`);
      read[`streams{${index}}`] = metricValue(text, 'mud_event_stream_index_streams', `index="${index}"`);
    }
    return read;
  };

  it('leaves every index, lease and link-dead count at its level once the streams close and their players leave', async () => {
    const first = await scrape();
    const baseline = levels(first);
    expect(first, 'the gauges are exposed').to.contain('mud_event_stream_index_keys{index="character"}');
    const heapBefore = metricValue(first, 'nodejs_heap_size_used_bytes');

    const players: Player[] = [];
    for (let i = 0; i < PLAYERS; i++) players.push(await newPlayer(server, 'Churner', 'lockkeepers_square'));
    let opened = 0;

    for (let round = 0; round < ROUNDS; round++) {
      const streams: SseStream[] = [];
      const open = async (player: Player): Promise<SseStream> => {
        const stream = await openStream(`${server.url}/events/${player.sessionId}`);
        expect(stream.status).to.equal(200);
        streams.push(stream);
        opened++;
        return stream;
      };
      // Two streams a session, the most it may hold; a third for half of them replaces the
      // oldest (the server ends it, reason replaced).
      const oldest: SseStream[] = [];
      for (const player of players) oldest.push(await open(player));
      for (const player of players) await open(player);
      for (const [i, player] of players.entries()) {
        if (i % 2 === 0) {
          await open(player);
          expect((await oldest[i]!.nextOf('end', 10_000)).data).to.deep.equal({ reason: 'replaced' });
        }
      }
      // A walk moves its streams to another room of the index, and back the next round.
      const walker = players[Math.floor(round / 2) % PLAYERS]!;
      await okCmd(walker, round % 2 === 0 ? 'north' : 'south');

      await eventually(async () => {
        const now = levels(await scrape());
        expect(now.open, 'two streams a session').to.equal(baseline.open! + 2 * PLAYERS);
        for (const index of INDEXES) expect(now[`streams{${index}}`], `the ${index} index holds each open stream once`).to.equal(now.open);
        expect(now['keys{session}']).to.equal(baseline['keys{session}']! + PLAYERS);
        expect(now['keys{character}']).to.equal(baseline['keys{character}']! + PLAYERS);
      }, 15_000);

      for (const stream of streams) stream.close();
      await eventually(async () => expect(levels(await scrape()).open).to.equal(baseline.open), 15_000);
    }
    expect(opened).to.equal(ROUNDS * (2 * PLAYERS + PLAYERS / 2));

    // Gone from the world: nobody is link-dead any more, so nothing is remembered of them.
    for (const player of players) expect((await server.post('/logout', { session_id: player.sessionId })).status).to.equal(200);
    await eventually(async () => expect(levels(await scrape())).to.deep.equal(baseline), 15_000);

    const heapAfter = metricValue(await scrape(), 'nodejs_heap_size_used_bytes');
    console.log(`      heap used: ${(heapBefore / 2 ** 20).toFixed(1)} MiB before, ${(heapAfter / 2 ** 20).toFixed(1)} MiB after ${opened} streams (no forced GC)`);
  });
});
