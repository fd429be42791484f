/**
 * What the reference server's own web clients ask of the API beyond the specification (issue 36;
 * README, "Keeping the reference's web clients"): the query parameters its routes declare, the
 * world status and schema listings, the `character_locations` table, session rows that carry a
 * `session_id` handle (never the token), and the kick and tombstone or delete of a character,
 * under this server's rank rules and written to the audit log with the action. The clients
 * themselves run in test/browser/reference-clients.test.ts.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { bearer, sessionFor } from '../helpers/accounts.ts';
import { builderPlayer, newPlayer, okCmd, statusOf, type Player } from '../helpers/players.ts';

describe('the reference clients’ API', function () {
  let server: TestServer;
  let superuser: string;
  let admin: string;
  let staff = 0;
  before(async () => {
    server = await startTestServer();
    superuser = await sessionFor(server, 'ref_root', 'superuser');
    admin = await sessionFor(server, 'ref_admin', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  const auditOf = async (action: string): Promise<Array<Record<string, unknown>>> => {
    const res = await server.get(`/admin/audit?limit=100`, bearer(superuser));
    expect(res.status, res.text).to.equal(200);
    return res.body.entries.filter((e: { action: string }) => e.action === action);
  };

  describe('query parameters', () => {
    it('GET /characters takes exclude_legacy_defaults, which changes nothing here', async () => {
      const p = await newPlayer(server, 'Legacy');
      const plain = await server.get(`/characters?session_id=${p.sessionId}&world_id=emberwick`);
      expect(plain.status, plain.text).to.equal(200);
      for (const value of ['true', 'false']) {
        const res = await server.get(`/characters?session_id=${p.sessionId}&world_id=emberwick&exclude_legacy_defaults=${value}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal(plain.body);
      }
      const bad = await server.get(`/characters?session_id=${p.sessionId}&exclude_legacy_defaults=maybe`);
      expect(bad.status, bad.text).to.equal(400);
      expect(bad.body.detail).to.equal('Invalid request: exclude_legacy_defaults: must be true or false');
    });

    it('GET /admin/database/chat-messages takes world_id: that world only, within the caller’s', async () => {
      const p = await newPlayer(server, 'Chatter');
      await okCmd(p, 'say lanterns at dusk');
      const inWorld = await server.get('/admin/database/chat-messages?world_id=emberwick', bearer(admin));
      expect(inWorld.status, inWorld.text).to.equal(200);
      expect(inWorld.body.messages.map((m: { message: string }) => m.message)).to.include('lanterns at dusk');
      const elsewhere = await server.get('/admin/database/chat-messages?world_id=hollow_spire', bearer(admin));
      expect(elsewhere.body.messages).to.deep.equal([]);
      // Staff playing in emberwick see only emberwick, whatever they ask for.
      const playing = await builderPlayer(server, `ref_staff${++staff}`, 'admin');
      expect((await server.get('/admin/database/chat-messages?world_id=hollow_spire', bearer(playing.sessionId))).body.messages).to.deep.equal([]);
      const own = await server.get('/admin/database/chat-messages?world_id=emberwick', bearer(playing.sessionId));
      expect(own.body.messages.map((m: { message: string }) => m.message)).to.include('lanterns at dusk');
    });

    it('a parameter no operation lists is ignored (the reference ignores them), a stray session_id is not', async () => {
      const p = await newPlayer(server, 'Stray');
      const res = await server.get(`/characters?session_id=${p.sessionId}&world_id=emberwick&_=1732214400&colour=red`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.characters.map((c: { name: string }) => c.name)).to.deep.equal([p.name]);
      const stray = await server.get(`/commands/${p.sessionId}?session_id=${p.sessionId}`);
      expect(stray.status, stray.text).to.equal(400);
      expect(stray.body.detail).to.equal('Invalid request: session_id: is not a known query parameter');
    });
  });

  describe('listings', () => {
    it('session rows carry session_id, the handle as a string, which kicks the session; no listing shows a token', async () => {
      const target = await newPlayer(server, 'Handled');
      const sessions = await server.get('/admin/database/sessions', bearer(admin));
      expect(sessions.status, sessions.text).to.equal(200);
      const row = sessions.body.sessions.find((s: { character_name: string | null }) => s.character_name === target.name);
      expect(row.session_id).to.equal(String(row.id));
      const connections = await server.get('/admin/database/connections', bearer(admin));
      for (const c of connections.body.connections) expect(c.session_id).to.equal(String(c.id));
      const worlds = await server.get('/admin/database/worlds', bearer(admin));
      const listings = [sessions.text, connections.text, worlds.text, (await server.get('/admin/database/table/sessions', bearer(admin))).text];
      for (const token of [target.sessionId, admin, superuser]) for (const text of listings) expect(text).not.to.include(token);

      const kick = await server.post('/admin/session/kick', { target_session_id: row.session_id }, bearer(admin));
      expect(kick.body, kick.text).to.deep.equal({ success: true, message: 'Session disconnected' });
      expect((await server.get(`/status/${target.sessionId}`)).status).to.equal(401);
    });

    it('GET /admin/database/worlds: every world, whether anyone plays it, and who, by session handle', async () => {
      const p = await newPlayer(server, 'Wanderer');
      const res = await server.get('/admin/database/worlds', bearer(admin));
      expect(res.status, res.text).to.equal(200);
      const ids = res.body.worlds.map((w: { world_id: string }) => w.world_id);
      expect(ids).to.deep.equal([...ids].sort()).and.to.include.members(['emberwick', 'hollow_spire']);
      const ember = res.body.worlds.find((w: { world_id: string }) => w.world_id === 'emberwick');
      expect(ember).to.include({ name: 'Emberwick', is_active: true, is_online: true });
      const mine = ember.active_characters.find((c: { character_id: number }) => c.character_id === p.characterId);
      const handle = (await server.db('sessions').where({ character_id: p.characterId }).first('id')).id;
      expect(mine).to.deep.include({ character_name: p.name, username: p.username, session_id: String(handle), client_type: 'unknown' });
      expect(ember.active_session_count).to.equal(ember.active_characters.length);
      expect(ember.active_character_count).to.equal(new Set(ember.active_characters.map((c: { character_id: number }) => c.character_id)).size);
      expect(ember.last_activity).to.equal(ember.active_characters[0].last_activity);
      const spire = res.body.worlds.find((w: { world_id: string }) => w.world_id === 'hollow_spire');
      expect(spire).to.include({ is_online: false, active_session_count: 0, active_character_count: 0, last_activity: null });
    });

    it('GET /admin/database/schema: each table’s columns and foreign keys, with their actions', async () => {
      const res = await server.get('/admin/database/schema', bearer(admin));
      expect(res.status, res.text).to.equal(200);
      const tables = await server.get('/admin/database/tables', bearer(admin));
      expect(res.body.tables.map((t: { name: string }) => t.name)).to.deep.equal(tables.body.tables.map((t: { name: string }) => t.name));
      const sessions = res.body.tables.find((t: { name: string }) => t.name === 'sessions');
      expect(sessions.columns).to.include.members(['id', 'token_hash', 'user_id', 'character_id']);
      expect(sessions.foreign_keys).to.deep.include({ from_column: 'user_id', ref_table: 'users', ref_column: 'id', on_update: 'NO ACTION', on_delete: 'CASCADE' });
      expect(sessions.foreign_keys).to.deep.include({ from_column: 'character_id', ref_table: 'characters', ref_column: 'id', on_update: 'NO ACTION', on_delete: 'SET NULL' });
      expect(res.body.tables.find((t: { name: string }) => t.name === 'worlds').foreign_keys).to.deep.equal([]);
    });

    it('GET /admin/database/table/character_locations: where characters stand, from characters, paged', async () => {
      const p = await newPlayer(server, 'Located');
      const res = await server.get('/admin/database/table/character_locations?limit=1000', bearer(admin));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.columns).to.deep.equal(['character_id', 'world_id', 'room_id', 'updated_at']);
      const room = (await statusOf(p)).current_room;
      expect(res.body.rows.find((r: unknown[]) => r[0] === p.characterId)).to.deep.equal([p.characterId, 'emberwick', room, (await server.db('characters').where({ id: p.characterId }).first()).updated_at]);
      const page = await server.get('/admin/database/table/character_locations?limit=1&offset=1', bearer(admin));
      expect(page.body.rows).to.deep.equal([res.body.rows[1]]);
      expect((await server.get('/admin/database/tables', bearer(admin))).body.tables.map((t: { name: string }) => t.name)).not.to.include('character_locations');
    });
  });

  describe('POST /admin/character/kick', () => {
    it('ends every session playing the character, says how many, and records one audit entry', async () => {
      const p = await newPlayer(server, 'Kicked');
      const second = (await server.post('/login', { username: p.username, password: 'Quiet-Lantern-42' })).body.session_id;
      expect((await server.post('/characters/select', { character_id: p.characterId }, bearer(second))).status).to.equal(200);
      const res = await server.post('/admin/character/kick', { character_id: p.characterId, reason: 'Spam' }, bearer(admin));
      expect(res.body, res.text).to.deep.equal({ success: true, message: `Disconnected 2 session(s) for ${p.name}.`, removed_sessions: 2 });
      for (const sid of [p.sessionId, second]) expect((await server.get(`/status/${sid}`)).status).to.equal(401);
      const entries = (await auditOf('kick')).filter((e) => e.target_username === p.username);
      expect(entries.map((e) => [e.actor_username, e.reason, e.detail])).to.deep.equal([['ref_admin', 'Spam', `character ${p.characterId} (${p.name}): 2 sessions`]]);

      const again = await server.post('/admin/character/kick', { character_id: p.characterId }, bearer(admin));
      expect(again.body).to.deep.equal({ success: false, message: `No active sessions found for ${p.name}.`, removed_sessions: 0 });
      expect((await auditOf('kick')).filter((e) => e.target_username === p.username)).to.have.length(1);
    });

    it('404 for an unknown character; 403 for a character whose owner is not below the caller, but one’s own may be kicked', async () => {
      expect((await server.post('/admin/character/kick', { character_id: 999999 }, bearer(admin))).body).to.deep.equal({ detail: 'Character not found' });
      const otherAdmin = await builderPlayer(server, `ref_staff${++staff}`, 'admin');
      const denied = await server.post('/admin/character/kick', { character_id: otherAdmin.characterId }, bearer(admin));
      expect([denied.status, denied.body.detail]).to.deep.equal([403, "Insufficient permissions to manage user with role 'admin'"]);
      expect((await statusOf(otherAdmin)).current_room).to.be.a('string');
      const own = await server.post('/admin/character/kick', { character_id: otherAdmin.characterId }, bearer(otherAdmin.sessionId));
      expect(own.body.removed_sessions, own.text).to.equal(1);
      const player = await sessionFor(server, `ref_player${++staff}`, 'player');
      expect((await server.post('/admin/character/kick', { character_id: otherAdmin.characterId }, bearer(player))).status).to.equal(403);
    });
  });

  describe('POST /admin/character/manage', () => {
    it('tombstone: sessions end, the character keeps its row without an owner as tombstone_<id>, its name is free again', async () => {
      const p = await newPlayer(server, 'Buried');
      await okCmd(p, 'look');
      const res = await server.post('/admin/character/manage', { character_id: p.characterId, action: 'Tombstone' }, bearer(superuser));
      expect(res.body, res.text).to.deep.equal({ success: true, message: `Character '${p.name}' tombstoned.` });
      expect((await server.get(`/status/${p.sessionId}`)).status).to.equal(401);
      const row = await server.db('characters').where({ id: p.characterId }).first();
      expect([row.user_id, row.name, row.world_id]).to.deep.equal([null, `tombstone_${p.characterId}`, 'emberwick']);
      const [entry] = (await auditOf('tombstone_character')).filter((e) => e.target_username === p.username);
      expect(entry?.detail).to.equal(`character ${p.characterId} (${p.name}) in emberwick`);
      // The name is free: a new guest takes it.
      expect((await server.post('/register-guest', { password: 'Quiet-Lantern-42', password_confirm: 'Quiet-Lantern-42', character_name: p.name })).status).to.equal(200);
      const again = await server.post('/admin/character/manage', { character_id: p.characterId, action: 'tombstone' }, bearer(superuser));
      expect([again.status, again.body.detail]).to.deep.equal([409, `Character 'tombstone_${p.characterId}' is already tombstoned`]);
    });

    it('delete: sessions end, the row goes, what it carried is put down where it stood, its chat keeps its name', async () => {
      const p = await newPlayer(server, 'Gone');
      const room = (await statusOf(p)).current_room!;
      const lying = async (): Promise<number> => (await server.db('item_instances').where({ item_id: 'tin_whistle', room_id: room }).whereNull('character_id')).length;
      const before = await lying();
      await server.db('item_instances').insert({ world_id: 'emberwick', item_id: 'tin_whistle', room_id: null, character_id: p.characterId });
      await okCmd(p, 'say farewell');
      const res = await server.post('/admin/character/manage', { character_id: p.characterId, action: 'delete' }, bearer(superuser));
      expect(res.body, res.text).to.deep.equal({ success: true, message: `Character '${p.name}' deleted.` });
      expect(await server.db('characters').where({ id: p.characterId }).first()).to.equal(undefined);
      expect(await server.db('sessions').where({ character_id: p.characterId })).to.deep.equal([]);
      expect((await server.get(`/status/${p.sessionId}`)).status).to.equal(401);
      expect(await lying()).to.equal(before + 1);
      expect(await server.db('chat_messages').where({ sender_name: p.name, message: 'farewell' })).to.have.length(1);
      const watcher = await newPlayer(server, 'Finder', room);
      expect(await okCmd(watcher, 'look')).to.match(/whistle/i);
      expect((await auditOf('delete_character')).filter((e) => e.target_username === p.username)).to.have.length(1);
      expect((await server.post('/admin/character/manage', { character_id: p.characterId, action: 'delete' }, bearer(superuser))).status).to.equal(404);
    });

    it('superusers only, and not another superuser’s character; one’s own is one’s own', async () => {
      const p: Player = await newPlayer(server, 'Kept');
      const denied = await server.post('/admin/character/manage', { character_id: p.characterId, action: 'delete' }, bearer(admin));
      expect([denied.status, denied.body.detail]).to.deep.equal([403, 'Insufficient permissions. Required: manage_users']);
      const other = await builderPlayer(server, `ref_staff${++staff}`, 'superuser');
      const outranked = await server.post('/admin/character/manage', { character_id: other.characterId, action: 'tombstone' }, bearer(superuser));
      expect([outranked.status, outranked.body.detail]).to.deep.equal([403, "Insufficient permissions to manage user with role 'superuser'"]);
      expect((await server.db('characters').where({ id: other.characterId }).first()).name).to.equal(other.name);
      const own = await server.post('/admin/character/manage', { character_id: other.characterId, action: 'tombstone' }, bearer(other.sessionId));
      expect(own.status, own.text).to.equal(200);
      expect((await statusOf(p)).current_room).to.be.a('string');
    });

    it('an action whose audit entry cannot be written is not done: the delete and its entry commit together', async () => {
      const p = await newPlayer(server, 'Spared');
      await server.db.schema.renameTable('audit_log', 'audit_log_away');
      try {
        const res = await server.post('/admin/character/manage', { character_id: p.characterId, action: 'delete' }, bearer(superuser));
        expect(res.status, res.text).to.equal(500);
        expect(res.body.detail).to.not.match(/audit_log/);
        const kick = await server.post('/admin/character/kick', { character_id: p.characterId }, bearer(superuser));
        expect(kick.status, kick.text).to.equal(500);
      } finally {
        await server.db.schema.renameTable('audit_log_away', 'audit_log');
      }
      expect((await server.db('characters').where({ id: p.characterId }).first()).name).to.equal(p.name);
      expect(await okCmd(p, 'look')).to.include('===');
    });
  });
});
