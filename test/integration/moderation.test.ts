/**
 * A community that looks after itself (docs/decisions.md, "Moderation") through the real stack:
 * ignore and unignore (event streams, GET /chat, the tell refusal, per account), reports (the
 * game's `report`, GET /admin/reports, resolving them), mutes (POST /admin/user/manage, the
 * talking verbs' refusal, its end), the audit log of staff actions (GET /admin/audit) with the
 * action and its entry written together, and staff announcements (`wall`, POST /admin/wall) on
 * the event streams and the telnet door; on two instances sharing PostgreSQL, an ignore, a mute
 * and an announcement hold on the other instance.
 */
import { describe, it, after, afterEach } from 'mocha';
import { expect } from 'chai';
import { usePostgres, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { oneServer, twoInstances } from '../helpers/suite-servers.ts';
import { bearer, createUser, GOOD_PASSWORD, sessionFor, sessionRow } from '../helpers/accounts.ts';
import { cmd, loginAs, newPlayer, okCmd, registerGuest, selectCharacter, uniqueName, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { toDbTime } from '../../src/db/clock.ts';
import type { Role } from '../../src/shared/roles.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const SPAWN = 'lockkeepers_square';

interface ChatMessage {
  sender: string;
  text: string;
  channel: string;
}

let staffCount = 0;
/** An account of the role playing a character of its own (staff play too). */
async function staffPlayer(server: TestServer, role: Role, worldId = 'emberwick'): Promise<Player> {
  const username = `staff${++staffCount}_${role}`;
  const sessionId = await sessionFor(server, username, role);
  const created = await server.post('/characters/create', { session_id: sessionId, world_id: worldId });
  expect(created.status, created.text).to.equal(200);
  await selectCharacter(server, sessionId, created.body.character_id);
  return { server, name: created.body.character_name, username, characterId: created.body.character_id, sessionId };
}

async function chatOf(player: Player): Promise<ChatMessage[]> {
  const res = await player.server.get(`/chat/${player.sessionId}`);
  expect(res.status, res.text).to.equal(200);
  return res.body.messages;
}

async function expectFail(player: Player, command: string, message: string): Promise<void> {
  expect(await cmd(player, command)).to.deep.equal({ success: false, message });
}

function manage(server: TestServer, session: string, body: Record<string, unknown>): Promise<HttpResponse> {
  return server.post('/admin/user/manage', body, bearer(session));
}

async function auditOf(server: TestServer, session: string, query = ''): Promise<{ entries: Array<Record<string, unknown>>; next_before: number | null }> {
  const res = await server.get(`/admin/audit${query}`, bearer(session));
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

/**
 * The chat a stream got before `marker`, said after what it must not get: read up to the marker,
 * a late message is caught where a fixed wait would miss it.
 */
async function chatBefore(stream: SseStream, marker: string): Promise<ChatMessage[]> {
  const before: ChatMessage[] = [];
  for (;;) {
    const event = await stream.next();
    if (event.event !== 'chat') continue;
    if (event.data.text === marker) return before;
    before.push(event.data);
  }
}

async function auditCount(server: TestServer): Promise<number> {
  return Number((await server.db('audit_log').count({ n: '*' }).first())!.n);
}

describe(`moderation (${DB_NAME})`, function () {
  const server = oneServer({ reset: true });
  const open: SseStream[] = [];
  const listen = async (player: Player): Promise<SseStream> => {
    const stream = await openStream(`${player.server.url}/events/${player.sessionId}`);
    open.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };

  afterEach(() => {
    open.splice(0).forEach((s) => s.close());
  });

  describe('ignore', () => {
    it('hides everything the ignored character says or does, live and in /chat, refuses its tells, and unignore undoes it', async () => {
      const a = await newPlayer(server(), 'Ignorer', SPAWN);
      const pest = await newPlayer(server(), 'Pest', SPAWN);
      const other = await newPlayer(server(), 'Bystander', SPAWN);
      const aStream = await listen(a);
      const otherStream = await listen(other);
      expect(await okCmd(a, `ignore ${pest.name}`)).to.equal(`You ignore ${pest.name}: you no longer see what they say or do, and their tells to you are refused.`);
      for (const line of ['say hello', 'yell HELLO', `whisper ${a.name} psst`, 'emote pokes everyone', 'ooc out of character']) await okCmd(pest, line);
      await expectFail(pest, `tell ${a.name} hi`, `Your tell to ${a.name} was not delivered.`);
      await okCmd(other, 'say marker');
      expect(await chatBefore(aStream, 'marker')).to.deep.equal([]);
      // Everyone else hears the pest as before (the whisper was for the ignorer only).
      expect((await chatBefore(otherStream, 'marker')).map((m) => m.channel)).to.deep.equal(['say', 'yell', 'emote', 'ooc']);
      expect((await chatOf(a)).map((m) => m.text)).to.deep.equal(['marker']);
      expect((await chatOf(other)).map((m) => m.sender)).to.deep.equal([pest.name, pest.name, pest.name, pest.name, other.name]);
      // The refused tell is not stored anywhere.
      expect(await server().db('chat_messages').where({ channel: 'tell' }).count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) === 0);

      expect(await okCmd(a, 'ignore')).to.equal(`You ignore:\n  - ${pest.name}\n`);
      expect(await okCmd(a, `unignore ${pest.name}`)).to.equal(`You no longer ignore ${pest.name}.`);
      await okCmd(pest, 'say back again');
      expect((await aStream.nextOf('chat')).data).to.include({ sender: pest.name, text: 'back again' });
      expect(await okCmd(pest, `tell ${a.name} sorry`)).to.equal(`You tell ${a.name}: sorry`);
      expect((await aStream.nextOf('chat')).data).to.include({ channel: 'tell', recipient: a.name });
    });

    it('is kept per account: a new session and another character of the account ignore the same, and a resumed stream skips the ignored', async () => {
      const a = await newPlayer(server(), 'Keeper');
      const pest = await newPlayer(server(), 'Nuisance');
      await okCmd(a, `ignore ${pest.name}`);
      const again = await loginAs(server(), a.username);
      const created = await server().post('/characters/create', { session_id: again, world_id: 'emberwick' });
      expect(created.status, created.text).to.equal(200);
      await selectCharacter(server(), again, created.body.character_id);
      const second: Player = { server: server(), name: created.body.character_name, username: a.username, characterId: created.body.character_id, sessionId: again };
      expect(await okCmd(second, 'ignore')).to.equal(`You ignore:\n  - ${pest.name}\n`);
      const before = await server().db('chat_messages').max({ id: 'id' }).first();
      await okCmd(pest, 'say you cannot hide');
      await okCmd(a, 'say I can');
      expect((await chatOf(second)).map((m) => m.text)).to.deep.equal(['I can']);
      // A stream resuming from before both: the missed chat without the ignored line.
      const resumed = await openStream(`${server().url}/events/${again}`, { 'Last-Event-ID': String(Number(before?.id ?? 0)) });
      open.push(resumed);
      expect((await resumed.nextOf('chat')).data.text).to.equal('I can');
    });

    it('clear answers: nobody by that name, oneself, already, not ignored, and at most 100', async () => {
      const a = await newPlayer(server(), 'Careful');
      const b = await newPlayer(server(), 'Target');
      expect(await okCmd(a, 'ignore')).to.equal('You ignore nobody.');
      await expectFail(a, 'ignore Nobody Here', "Nobody in this world is called 'Nobody Here'.");
      await expectFail(a, `ignore ${a.name}`, 'You cannot ignore yourself.');
      await expectFail(a, `unignore ${b.name}`, `You do not ignore anyone called '${b.name}'.`);
      await expectFail(a, 'unignore', 'Unignore whom? Usage: /unignore <player>');
      await okCmd(a, `ignore ${b.name}`);
      await expectFail(a, `ignore ${b.name}`, `You ignore ${b.name} already.`);
      // 99 more characters on the list (written directly: creating them through the API would take long), then one too many.
      const user = await server().db('users').where({ username: a.username }).first('id');
      const now = toDbTime(new Date());
      for (let i = 0; i < 99; i++) {
        const name = `Filler ${uniqueName('X').split(' ')[1]}`;
        const [row] = await server().db('characters').insert({ name, name_key: name.toLowerCase(), world_id: 'emberwick', created_at: now, updated_at: now }).returning('id');
        await server().db('character_ignores').insert({ user_id: user.id, character_id: typeof row === 'object' ? row.id : row, created_at: now });
      }
      const c = await newPlayer(server(), 'Extra');
      await expectFail(a, `ignore ${c.name}`, 'You ignore 100 characters already: unignore one first.');
      expect(await okCmd(a, `unignore ${b.name}`)).to.equal(`You no longer ignore ${b.name}.`);
      await okCmd(a, `ignore ${c.name}`);
    });
  });

  describe('report', () => {
    it('reaches the staff with reporter, reported (character and account), world, room, the chat the reporter saw and the time; the reported hears nothing', async () => {
      const reporter = await newPlayer(server(), 'Reporter', SPAWN);
      const reported = await newPlayer(server(), 'Rude', SPAWN);
      const admin = await sessionFor(server(), `reports_admin${++staffCount}`, 'admin');
      await okCmd(reported, 'say you are all idiots');
      await okCmd(reporter, 'say please stop');
      // Those the reporter ignores are in its report too: that is often what it is about.
      await okCmd(reporter, `ignore ${reported.name}`);
      const reportedStream = await listen(reported);
      const filedAt = toDbTime(server().clock.now());
      expect(await okCmd(reporter, `report ${reported.name} keeps <insulting> people`)).to.equal(`Thank you: the staff will read your report about ${reported.name}.`);
      await okCmd(reporter, 'say marker');
      expect(await chatBefore(reportedStream, 'marker')).to.deep.equal([]);

      const res = await server().get('/admin/reports', bearer(admin));
      expect(res.status, res.text).to.equal(200);
      const [report] = res.body.reports;
      expect(report).to.deep.include({
        status: 'open',
        created_at: filedAt,
        reporter_username: reporter.username,
        reporter_character: reporter.name,
        reported_username: reported.username,
        reported_character: reported.name,
        world_id: 'emberwick',
        room_id: SPAWN,
        text: 'keeps <insulting> people',
        resolved_at: null,
        resolved_by: null,
        resolution_note: null,
      });
      expect(report.context.map((m: ChatMessage) => [m.sender, m.text])).to.deep.equal([
        [reported.name, 'you are all idiots'],
        [reporter.name, 'please stop'],
      ]);
    });

    it('clear answers for a report without a name, a text, someone by that name, or about oneself', async () => {
      const a = await newPlayer(server(), 'Eager');
      const b = await newPlayer(server(), 'Suspect');
      await expectFail(a, 'report', 'Report whom? Usage: /report <player> <what happened>');
      await expectFail(a, `report ${b.name}`, 'Report what? Usage: /report <player> <what happened>');
      await expectFail(a, 'report Nobody at all', "Nobody in this world is called 'Nobody'.");
      await expectFail(a, `report ${a.name} myself`, 'You cannot report yourself.');
      expect(await server().db('reports').where({ reporter_username: a.username }).count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) === 0);
    });

    it('staff resolve an open report with a note, once (409 after), open ones listed first; 404 unknown, 400 without a note; audited', async () => {
      const a = await newPlayer(server(), 'Witness');
      const b = await newPlayer(server(), 'Offender');
      const admin = `resolver${++staffCount}`;
      const session = await sessionFor(server(), admin, 'admin');
      await okCmd(a, `report ${b.name} first`);
      await okCmd(a, `report ${b.name} second`);
      const ids = (await server().db('reports').where({ reported_character: b.name }).orderBy('id').pluck('id')).map(Number);
      const resolve = (id: number, body: unknown) => server().post(`/admin/reports/${id}/resolve`, body, bearer(session));
      const done = await resolve(ids[1]!, { note: 'Muted for 30 minutes' });
      expect(done.status, done.text).to.equal(200);
      expect(done.body).to.deep.equal({ success: true, message: `Report ${ids[1]} resolved` });
      expect((await resolve(ids[1]!, { note: 'again' })).body).to.deep.equal({ detail: `Report ${ids[1]} is resolved already` });
      expect((await resolve(ids[1]!, { note: 'again' })).status).to.equal(409);
      const unknown = await resolve(999_999, { note: 'x' });
      expect([unknown.status, unknown.body.detail]).to.deep.equal([404, 'Report 999999 not found']);
      const blank = await resolve(ids[0]!, { note: '  \u200b ' });
      expect([blank.status, blank.body.detail]).to.deep.equal([400, 'A note is required to resolve a report']);
      expect((await resolve(ids[0]!, {})).status).to.equal(400);

      const listed = (await server().get('/admin/reports?limit=100', bearer(session))).body.reports.filter((r: { reported_character: string }) => r.reported_character === b.name);
      expect(listed.map((r: { id: number; status: string }) => [r.id, r.status])).to.deep.equal([
        [ids[0], 'open'],
        [ids[1], 'resolved'],
      ]);
      expect(listed[1]).to.deep.include({ resolved_by: admin, resolution_note: 'Muted for 30 minutes' });
      const [entry] = (await auditOf(server(), session, `?actor=${admin}`)).entries;
      expect(entry).to.deep.include({ action: 'resolve_report', actor_role: 'admin', target_username: b.username, reason: 'Muted for 30 minutes', detail: `report ${ids[1]} about ${b.name}`, door: 'http' });
    });

    it('players and worldbuilders may not read or resolve reports (403)', async () => {
      for (const role of ['player', 'worldbuilder'] as const) {
        const session = await sessionFor(server(), `no_reports${++staffCount}`, role);
        expect((await server().get('/admin/reports', bearer(session))).status).to.equal(403);
        expect((await server().post('/admin/reports/1/resolve', { note: 'x' }, bearer(session))).status).to.equal(403);
      }
    });
  });

  describe('mute', () => {
    it('keeps the account from talking, saying until when and why, while it still plays; it ends by itself', async () => {
      const admin = await sessionFor(server(), `muter${++staffCount}`, 'admin');
      const p = await newPlayer(server(), 'Loud', SPAWN);
      const friend = await newPlayer(server(), 'Friend', SPAWN);
      await okCmd(p, 'say before');
      const until = toDbTime(new Date(server().clock.now().getTime() + 2 * 60_000));
      const res = await manage(server(), admin, { action: 'mute', target_username: p.username, minutes: 2, reason: 'Spam in the square' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: `Muted ${p.username} until ${until} UTC` });
      const answer = `You are muted until ${until} UTC. Reason: Spam in the square`;
      for (const line of ['say hi', 'chat hi', 'yell hi', `whisper ${friend.name} hi`, 'emote waves', ':waves', 'pose waves', `tell ${friend.name} hi`, 'ooc hi', 'say']) await expectFail(p, line, answer);
      // Still playing: looking, moving, reporting and ignoring.
      await okCmd(p, 'look');
      await okCmd(p, 'north');
      await okCmd(p, 'south');
      await okCmd(p, `report ${friend.name} testing`);
      const players = (await server().get('/admin/database/players', bearer(admin))).body.players;
      expect(players.find((u: { username: string }) => u.username === p.username)).to.deep.include({ muted_until: until, mute_reason: 'Spam in the square' });
      server().clock.advance(2 * 60_000 + 1000);
      expect(await okCmd(p, 'say after')).to.equal('You say: after');
      expect((await server().get('/admin/database/players', bearer(admin))).body.players.find((u: { username: string }) => u.username === p.username)).to.deep.include({ muted_until: null, mute_reason: null });
      // An ended mute is nothing to unmute.
      const unmute = await manage(server(), admin, { action: 'unmute', target_username: p.username });
      expect([unmute.status, unmute.body.detail]).to.deep.equal([400, `User '${p.username}' is not muted`]);
    });

    it('unmute lifts it at once; a mute without a reason says none; again replaces it; minutes are required', async () => {
      const admin = await sessionFor(server(), `muter${++staffCount}`, 'admin');
      const p = await newPlayer(server(), 'Quiet');
      const missing = await manage(server(), admin, { action: 'mute', target_username: p.username });
      expect([missing.status, missing.body.detail]).to.deep.equal([400, 'minutes is required for mute action']);
      expect((await manage(server(), admin, { action: 'mute', target_username: p.username, minutes: 0 })).status).to.equal(400);
      expect((await manage(server(), admin, { action: 'mute', target_username: p.username, minutes: 60 })).status).to.equal(200);
      const until = toDbTime(new Date(server().clock.now().getTime() + 5 * 60_000));
      expect((await manage(server(), admin, { action: 'MUTE', target_username: p.username, minutes: 5, reason: '   ' })).status).to.equal(200);
      await expectFail(p, 'say hi', `You are muted until ${until} UTC.`);
      const lifted = await manage(server(), admin, { action: 'unmute', target_username: p.username, reason: 'Apologised' });
      expect(lifted.body).to.deep.equal({ success: true, message: `Unmuted ${p.username}` });
      expect(await okCmd(p, 'say thanks')).to.equal('You say: thanks');
    });

    it('follows the ban rules: players and worldbuilders 403, staff only below their rank, never oneself; a refusal leaves no trace', async () => {
      const admin = `rank_admin${++staffCount}`;
      const adminSession = await sessionFor(server(), admin, 'admin');
      const otherAdmin = `rank_admin${++staffCount}`;
      await createUser(server(), otherAdmin, 'admin');
      const superuser = `rank_super${++staffCount}`;
      const superSession = await sessionFor(server(), superuser, 'superuser');
      const target = `rank_player${++staffCount}`;
      await createUser(server(), target, 'player');
      const entries = await auditCount(server());
      for (const role of ['player', 'worldbuilder'] as const) {
        const session = await sessionFor(server(), `rank_${role}${++staffCount}`, role);
        for (const action of ['mute', 'unmute']) {
          const res = await manage(server(), session, { action, target_username: target, minutes: 5 });
          expect([res.status, res.body.detail]).to.deep.equal([403, 'Insufficient permissions. Required: ban_users']);
        }
      }
      for (const [name, role] of [[otherAdmin, 'admin'], [superuser, 'superuser']] as const) {
        for (const action of ['mute', 'unmute']) {
          const res = await manage(server(), adminSession, { action, target_username: name, minutes: 5 });
          expect([res.status, res.body.detail]).to.deep.equal([403, `Insufficient permissions to manage user with role '${role}'`]);
        }
      }
      const self = await manage(server(), adminSession, { action: 'mute', target_username: admin, minutes: 5 });
      expect([self.status, self.body.detail]).to.deep.equal([400, 'Cannot manage your own account']);
      expect(await auditCount(server())).to.equal(entries);
      expect((await manage(server(), superSession, { action: 'mute', target_username: otherAdmin, minutes: 5 })).status).to.equal(200);
      expect((await manage(server(), adminSession, { action: 'mute', target_username: target, minutes: 5 })).status).to.equal(200);
    });
  });

  describe('the audit log', () => {
    it('records every staff action with who, whom, what, why, when and the door, newest first, paged and filtered', async () => {
      const root = `auditor${++staffCount}`;
      const session = await sessionFor(server(), root, 'superuser');
      const { username: target } = await registerGuest(server(), uniqueName('Audited'));
      const targetSession = await loginAs(server(), target);
      const kickId = String((await sessionRow(server(), targetSession)).id);
      const steps: Array<[string, string, unknown]> = [
        ['/admin/user/world-access', 'world_access', { target_username: target, world_id: 'hollow_spire', can_access: true, reason: 'Event team' }],
        ['/admin/user/manage', 'mute', { action: 'mute', target_username: target, minutes: 10, reason: 'Spam' }],
        ['/admin/user/manage', 'unmute', { action: 'unmute', target_username: target }],
        ['/admin/session/kick', 'kick', { target_session_id: kickId, reason: 'Stuck session' }],
        ['/admin/user/manage', 'change_role', { action: 'change_role', target_username: target, new_role: 'worldbuilder' }],
        ['/admin/user/manage', 'change_password', { action: 'change_password', target_username: target, new_password: 'Bright-Otter-Lamp-77' }],
        ['/admin/user/manage', 'make_permanent', { action: 'make_permanent', target_username: target, reason: 'Regular' }],
        ['/admin/user/manage', 'ban', { action: 'deactivate', target_username: target, reason: 'Harassment' }],
        ['/admin/user/manage', 'unban', { action: 'unban', target_username: target, reason: 'Appeal granted' }],
        ['/admin/user/manage', 'delete', { action: 'delete', target_username: target, reason: 'Asked to be forgotten' }],
      ];
      const first = toDbTime(server().clock.now());
      for (const [path, , body] of steps) {
        const res = await server().post(path, body, bearer(session));
        expect([res.status, res.body.success], `${path} ${res.text}`).to.deep.equal([200, true]);
      }
      const { entries, next_before } = await auditOf(server(), session, `?target=${target}`);
      expect(next_before).to.equal(null);
      expect(entries.map((e) => e.action)).to.deep.equal(steps.map(([, action]) => action).reverse());
      for (const entry of entries) {
        expect(entry).to.include({ actor_username: root, actor_role: 'superuser', target_username: target, door: 'http' });
        expect(entry.created_at).to.be.a('string').and.satisfy((t: string) => t >= first);
      }
      const byAction = new Map(entries.map((e) => [e.action, e]));
      expect(byAction.get('world_access')).to.include({ reason: 'Event team', detail: 'granted hollow_spire' });
      expect(byAction.get('mute')).to.include({ reason: 'Spam' });
      expect(byAction.get('mute')!.detail).to.match(/^until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
      expect(byAction.get('kick')).to.include({ reason: 'Stuck session', detail: `session ${kickId}` });
      expect(byAction.get('change_role')).to.include({ reason: null, detail: 'player to worldbuilder' });
      expect(byAction.get('ban')).to.include({ reason: 'Harassment' });
      expect(byAction.get('delete')).to.include({ reason: 'Asked to be forgotten' });

      // Paging by `before`, and by actor.
      const page1 = await auditOf(server(), session, `?target=${target}&limit=4`);
      expect(page1.entries.map((e) => e.action)).to.deep.equal(['delete', 'unban', 'ban', 'make_permanent']);
      const page2 = await auditOf(server(), session, `?target=${target}&limit=4&before=${page1.next_before}`);
      expect(page2.entries.map((e) => e.action)).to.deep.equal(['change_password', 'change_role', 'kick', 'unmute']);
      const page3 = await auditOf(server(), session, `?target=${target}&limit=4&before=${page2.next_before}`);
      expect([page3.entries.map((e) => e.action), page3.next_before]).to.deep.equal([['mute', 'world_access'], null]);
      expect((await auditOf(server(), session, `?actor=${root}`)).entries).to.have.length(steps.length);
      expect((await auditOf(server(), session, '?actor=nobody_at_all')).entries).to.deep.equal([]);
    });

    it('admins read it, players and worldbuilders may not (403); the API cannot change or delete it', async () => {
      const admin = await sessionFor(server(), `reader${++staffCount}`, 'admin');
      await auditOf(server(), admin);
      for (const role of ['player', 'worldbuilder'] as const) {
        const session = await sessionFor(server(), `no_audit${++staffCount}`, role);
        const res = await server().get('/admin/audit', bearer(session));
        expect([res.status, res.body.detail]).to.deep.equal([403, 'Insufficient permissions. Required: view_logs']);
      }
      const count = await auditCount(server());
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const res = await server().request(method, '/admin/audit', {}, bearer(admin));
        expect(res.status, `${method} ${res.text}`).to.be.oneOf([404, 405]);
      }
      expect(await auditCount(server())).to.equal(count);
    });

    it('an action whose entry cannot be written is not done: the ban and its entry commit together', async () => {
      const admin = await sessionFor(server(), `atomic${++staffCount}`, 'admin');
      const p = await newPlayer(server(), 'Spared');
      await server().db.schema.renameTable('audit_log', 'audit_log_away');
      try {
        const res = await manage(server(), admin, { action: 'ban', target_username: p.username, reason: 'x' });
        expect(res.status, res.text).to.equal(500);
        expect(res.body.detail).to.not.match(/audit_log/);
      } finally {
        await server().db.schema.renameTable('audit_log_away', 'audit_log');
      }
      expect((await server().db('users').where({ username: p.username }).first()).is_active).to.satisfy(Boolean);
      expect(await okCmd(p, 'look')).to.include('===');
    });
  });

  describe('wall', () => {
    it('staff announce in the game to every stream of every world, whoever ignores them; players cannot', async () => {
      const admin = await staffPlayer(server(), 'admin');
      const here = await newPlayer(server(), 'Listener', SPAWN);
      const elsewhere = await staffPlayer(server(), 'superuser', 'hollow_spire');
      await okCmd(here, `ignore ${admin.name}`);
      const streams = [await listen(here), await listen(elsewhere), await listen(admin)];
      expect(await okCmd(admin, 'wall The server restarts in 5 minutes & <then> some')).to.equal('Announced to every connected player.');
      for (const stream of streams) {
        const { data } = await stream.nextOf('announcement');
        expect(data).to.deep.equal({ from: admin.username, text: 'The server restarts in 5 minutes &amp; &lt;then&gt; some', sent_at: data.sent_at });
        expect(data.sent_at).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      }
      await expectFail(here, 'wall hello everyone', "Unknown command: wall. Type 'help' for available commands.");
      await expectFail(admin, 'wall', 'Announce what? Usage: /wall <announcement>');
      await expectFail(admin, `wall ${'x'.repeat(501)}`, 'An announcement must be at most 500 characters');
      const [entry] = (await auditOf(server(), admin.sessionId, `?actor=${admin.username}`)).entries;
      expect(entry).to.deep.include({ action: 'wall', actor_role: 'admin', target_username: null, reason: null, detail: 'The server restarts in 5 minutes & <then> some', door: 'http' });
    });

    it('POST /admin/wall does the same for tools: admins and up, 400 for nothing to say, 403 for players', async () => {
      const admin = `tool${++staffCount}`;
      const session = await sessionFor(server(), admin, 'admin');
      const here = await newPlayer(server(), 'Hearer');
      const stream = await listen(here);
      const res = await server().post('/admin/wall', { text: 'Maintenance tonight' }, bearer(session));
      expect(res.body).to.deep.equal({ success: true, message: 'Announced to every connected player.' });
      expect((await stream.nextOf('announcement')).data).to.include({ from: admin, text: 'Maintenance tonight' });
      const blank = await server().post('/admin/wall', { text: ' \u200b\u202e ' }, bearer(session));
      expect([blank.status, blank.body.detail]).to.deep.equal([400, 'Announce what?']);
      expect((await server().post('/admin/wall', { text: 'x'.repeat(501) }, bearer(session))).status).to.equal(400);
      for (const role of ['player', 'worldbuilder'] as const) {
        const other = await sessionFor(server(), `no_wall${++staffCount}`, role);
        const denied = await server().post('/admin/wall', { text: 'hi' }, bearer(other));
        expect([denied.status, denied.body.detail]).to.deep.equal([403, 'Insufficient permissions. Required: announce']);
      }
      expect(await stream.quiet(200, ['announcement'])).to.equal(true);
    });
  });
});

describe(`reports are limited per account (${DB_NAME})`, function () {
  const server = oneServer({ env: { MUD_RATE_LIMIT_ENABLED: 'true' } });

  it('at most 5 an hour by default: then 429 with Retry-After, while the game goes on; the next hour allows them again', async () => {
    const a = await newPlayer(server(), 'Eager');
    const b = await newPlayer(server(), 'Suspect');
    for (let i = 1; i <= 5; i++) await okCmd(a, `report ${b.name} number ${i}`);
    const sixth = await server().post('/command', { session_id: a.sessionId, command: `report ${b.name} number 6` });
    expect(sixth.status, sixth.text).to.equal(429);
    expect(sixth.body.detail).to.equal('Too many reports. Try again in 3600 seconds.');
    expect(sixth.headers.get('retry-after')).to.equal('3600');
    await okCmd(a, 'look');
    expect(await server().db('reports').where({ reported_character: b.name }).count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) === 5);
    server().clock.advance(3600_000);
    await okCmd(a, `report ${b.name} number 7`);
  });
});

describe(`moderation on the telnet door (${DB_NAME})`, function () {
  this.timeout(30_000);
  const clients: TelnetClient[] = [];
  // Registered before the server's hooks, so that the clients hang up before it closes.
  after(() => {
    for (const client of clients.splice(0)) client.close();
  });
  const server = oneServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0' } });
  const playing = async (username: string): Promise<TelnetClient> => {
    const client = await TelnetClient.connect(server().telnet!.port);
    clients.push(client);
    await client.read('Username: ');
    client.line(`connect ${username} ${GOOD_PASSWORD}`);
    await client.read('Type play');
    client.line('play 1');
    await client.read('[Exits]:');
    return client;
  };

  it('shows a staff announcement as a marked line, not the chat of the ignored; a wall typed there is audited as telnet', async () => {
    const pest = await newPlayer(server(), 'Heckler', SPAWN);
    const name = uniqueName('Telly');
    const { username } = await registerGuest(server(), name);
    const client = await playing(username);
    client.line(`ignore ${pest.name}`);
    await client.read(`You ignore ${pest.name}`);
    await okCmd(pest, 'say can you hear me');
    const admin = await staffPlayer(server(), 'admin');
    await okCmd(admin, 'say staff here');
    await client.read(`${admin.name} says: staff here`);
    expect(client.count('can you hear me')).to.equal(0);
    // An admin on telnet announces; the player on telnet reads it.
    const adminClient = await playing(admin.username);
    adminClient.line('wall Back in 5 <minutes>');
    await adminClient.read('Announced to every connected player.');
    await client.read(`[Staff announcement] ${admin.username}: Back in 5 <minutes>`);
    const entry = (await server().db('audit_log').where({ action: 'wall', actor_username: admin.username }).first())!;
    expect(entry).to.include({ door: 'telnet', detail: 'Back in 5 <minutes>' });
  });
});

describe(`moderation on two instances sharing one database (${DB_NAME})`, function () {
  const open: SseStream[] = [];
  // Registered before the instances' hooks, so that the streams end before they close.
  after(() => {
    open.splice(0).forEach((s) => s.close());
  });
  // SQLite serves one instance (docs/decisions.md, "Running several instances").
  const servers = twoInstances({ postgresOnly: true });

  it('an ignore, a mute and an announcement made on one instance hold on the other', async () => {
    const [one, two] = servers();
    const a = await newPlayer(two, 'Ignorer', SPAWN);
    const pest = await newPlayer(two, 'Pest', SPAWN);
    const other = await newPlayer(two, 'Other', SPAWN);
    const stream = await openStream(`${two.url}/events/${a.sessionId}`);
    open.push(stream);
    // Instance two has read a's (empty) list already, for the stream and for /chat.
    expect(await chatOf(a)).to.deep.equal([]);
    // The ignore, made through instance one.
    const viaOne: Player = { ...a, server: one };
    await okCmd(viaOne, `ignore ${pest.name}`);
    // Everything said after it, on instance two, is filtered there.
    await okCmd(pest, 'say heard on two?');
    await okCmd(other, 'say marker');
    expect(await chatBefore(stream, 'marker')).to.deep.equal([]);
    await eventually(async () => expect((await chatOf(a)).map((m) => m.text)).to.deep.equal(['marker']), 2000);
    await expectFail(pest, `tell ${a.name} hi`, `Your tell to ${a.name} was not delivered.`);

    // A mute made on instance one, with the player's session validated on two before it.
    const admin = await sessionFor(one, `multi_admin${++staffCount}`, 'admin');
    await okCmd(pest, 'look');
    const res = await manage(one, admin, { action: 'mute', target_username: pest.username, minutes: 10 });
    expect(res.status, res.text).to.equal(200);
    await eventually(async () => expect((await cmd(pest, 'say hi')).message).to.match(/^You are muted until /), 2000);

    // An announcement sent through instance one reaches the stream on two.
    expect((await one.post('/admin/wall', { text: 'Across instances' }, bearer(admin))).status).to.equal(200);
    expect((await stream.nextOf('announcement')).data).to.include({ text: 'Across instances' });
  });
});
