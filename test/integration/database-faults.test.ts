/**
 * A database that cannot take writes (issue 21, faults): with SQLite's file at its size limit
 * (`PRAGMA max_page_count`, as a full disk would leave it) writes answer a clear 503 and change
 * nothing, reads keep working, the file stays sound, and writes work again once there is room.
 * PostgreSQL going away is measured by the faults bench (bench/faults.ts) on a throw-away cluster.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { ON_SQLITE, skipBecause } from '../helpers/needs.ts';
import { newPlayer, statusOf } from '../helpers/players.ts';

describe('a full database (SQLite)', function () {
  let server: TestServer;

  before(async function () {
    if (usePostgres) skipBecause(this, ON_SQLITE);
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  it('writes answer 503 and change nothing, reads keep working, and writes work again once there is room', async () => {
    const player = await newPlayer(server, 'Anna');
    await server.services.sessions.flushActivity();
    // A size limit stands in for the full disk. SQLite checks it as pages are added to the file,
    // which in WAL mode happens only at a checkpoint: the rollback journal writes at once.
    await server.db.raw('PRAGMA journal_mode = DELETE');
    const pages = Number((await server.db.raw('PRAGMA page_count'))[0].page_count);
    await server.db.raw(`PRAGMA max_page_count = ${pages}`);
    try {
      let refused;
      let stored = 0;
      // The last free pages of the file may take a few writes before it is full.
      for (let i = 0; i < 200; i++) {
        refused = await server.post('/command', { session_id: player.sessionId, command: `say ${'x'.repeat(1900)}` });
        if (refused.status !== 200) break;
        stored++;
      }
      expect(refused!.status, refused!.text).to.equal(503);
      expect(refused!.body).to.deep.equal({ detail: "The server's disk is full: nothing can be stored until space is freed. Reading still works." });
      expect(refused!.headers.get('retry-after')).to.equal('5');
      expect((await statusOf(player)).current_room).to.be.a('string');
      expect((await server.get(`/chat/${player.sessionId}`)).status).to.equal(200);
      // The refused say stored nothing.
      expect(Number((await server.db('chat_messages').count({ n: '*' }).first())?.n)).to.equal(stored);
    } finally {
      await server.db.raw('PRAGMA max_page_count = 1073741823');
      await server.db.raw('PRAGMA journal_mode = WAL');
    }
    expect((await server.db.raw('PRAGMA integrity_check'))[0].integrity_check).to.equal('ok');
    const again = await server.post('/command', { session_id: player.sessionId, command: 'say room again' });
    expect(again.status, again.text).to.equal(200);
  });
});
