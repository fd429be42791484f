/**
 * Two builders change one room at the same moment, both from the version they read
 * (docs/decisions.md, "Building worlds"): one change is stored, the other answers 409 naming
 * the version that won, and nothing of the loser's is kept.
 *
 * On PostgreSQL the two go to two instances and the race is held open (test/helpers/held-locks.ts):
 * the test holds the rooms table against writes (reads go on), so each change gets as far as it
 * can, whether that is reading the room or waiting for the world's lock, before either writes.
 * On SQLite, one instance and one connection, the two are sent together.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { holdLock } from '../helpers/held-locks.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const ROOM = '/api/worlds/emberwick/rooms/chandlers_row';

describe(`two building changes of one version at once (${DB_NAME})`, function () {
  let one: TestServer;
  let two: TestServer;
  let mason: string;
  let tiler: string;

  before(async () => {
    one = await startTestServer();
    two = usePostgres ? await startTestServer({ shareDatabaseWith: one, clock: one.clock }) : one;
    mason = await sessionFor(one, 'mason', 'worldbuilder');
    tiler = await sessionFor(one, 'tiler', 'worldbuilder');
  });
  after(async () => {
    if (two !== one) await two?.close();
    await one?.close();
  });

  it('stores one, answers the other 409 with the version that won, and keeps nothing of the loser', async () => {
    const read = await one.request('GET', ROOM, undefined, bearer(mason));
    expect(read.status, read.text).to.equal(200);
    const version = read.body.version as number;
    const change = (server: TestServer, session: string, name: string): Promise<HttpResponse> =>
      server.request('PATCH', ROOM, { version, name }, bearer(session));
    let answers: HttpResponse[];
    if (usePostgres) {
      const held = await holdLock(process.env.MUD_TEST_DATABASE_URL!, one.schema, ['lock table world_rooms in exclusive mode']);
      try {
        const both = [change(one, mason, "Mason's Row"), change(two, tiler, "Tiler's Row")];
        await held.waitingBehind(2);
        await held.release();
        answers = await Promise.all(both);
      } finally {
        await held.release();
      }
    } else {
      answers = await Promise.all([change(one, mason, "Mason's Row"), change(two, tiler, "Tiler's Row")]);
    }
    expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join('\n')).to.deep.equal([200, 409]);
    const won = answers.find((a) => a.status === 200)!;
    const lost = answers.find((a) => a.status === 409)!;
    expect(won.body.version).to.equal(version + 1);
    expect(lost.body).to.deep.equal({ detail: `Room 'chandlers_row' is at version ${version + 1}, not ${version} as sent; read it again`, current_version: version + 1 });
    for (const server of [one, two]) {
      const now = await server.request('GET', ROOM, undefined, bearer(mason));
      expect(now.body).to.deep.include({ name: won.body.name, version: version + 1 });
    }
    const changes = await one.db('world_changes').where({ target_id: 'chandlers_row' }).pluck('action');
    expect(changes).to.deep.equal(['room.update']);
  });
});
