/**
 * Characters through HTTP against the real app: guest registration (every rule in order,
 * the snapshot it returns, rollback of the account when the character cannot be made),
 * self-service creation (rules in order, slots under concurrent requests, the axis event
 * log), selection, listing and the login's world entries, direct login, the name-generation
 * and entity-state integrations against fake upstreams, and admin provisioning.
 */
import { describe, it, before, beforeEach, after } from 'mocha';
import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { startTestServer, type HttpResponse, type TestServer } from '../helpers/test-server.ts';
import { createUser, login, sessionFor, sessionRow, GOOD_PASSWORD } from '../helpers/accounts.ts';
import { closedPortUrl, startFakeUpstream, type CannedResponse, type FakeUpstream } from '../helpers/fake-upstream.ts';
import { toDbTime } from '../../src/db/clock.ts';
import { expectContractError } from '../helpers/contract.ts';
import { worldsCopy } from '../helpers/worlds.ts';

const HOUR = 3_600_000;
const INVALID_SESSION = 'Invalid or expired session';
const BAD_CREDENTIALS = 'Invalid username or password';
const NAME_REQUIRED = 'Character name is required';
const BAD_NAME = 'Character name must be 2-40 characters: letters, spaces, apostrophes and hyphens';
const NAME_TAKEN = 'Character name already taken';
const ACCESS_DENIED = 'World access denied';
const INVITE_ONLY = "World 'hollow_spire' requires an invite. Ask an admin to grant world access.";
const SELF_CREATE_OFF = 'Player self-service character creation is disabled.';
const NEEDS_CREATE_USERS = 'Insufficient permissions. Required: create_users';
const ENTITY_DOWN = 'Entity state API unavailable.';
const BUILTIN_NAME = /^[A-Z][A-Za-z'-]+ [A-Z][A-Za-z'-]+$/;
const HEX64 = /^[0-9a-f]{64}$/;
const DB_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const SUMMARY_KEYS = ['id', 'name', 'user_id', 'world_id', 'is_guest_created', 'created_at', 'updated_at'];
const CREATED_KEYS = ['success', 'message', 'character_id', 'character_name', 'world_id', 'seed', 'entity_state', 'entity_state_error'];
const EMBERWICK_SPAWN = 'lockkeepers_square';
const HOLLOW_SPAWN = 'spire_threshold';

/**
 * Emberwick's shipped label thresholds (worlds/emberwick/policy-artifact.json), each axis in
 * its ordering, so the first range holding a score is the label of the lowest ordinal.
 */
const EMBERWICK_LABELS: Record<string, Array<[label: string, min: number, max: number]>> = {
  demeanor: [['cowed', 0, 0.2], ['wary', 0.2, 0.4], ['even', 0.4, 0.6], ['bold', 0.6, 0.8], ['brazen', 0.8, 1]],
  health: [['consumptive', 0, 0.25], ['worn', 0.25, 0.5], ['sound', 0.5, 0.75], ['hardy', 0.75, 1]],
  physique: [['gaunt', 0, 0.3], ['wiry', 0.3, 0.7], ['broad', 0.7, 1]],
  wealth: [['penniless', 0, 0.25], ['scraping', 0.25, 0.5], ['comfortable', 0.5, 0.75], ['moneyed', 0.75, 1]],
};
const AXES = Object.keys(EMBERWICK_LABELS).sort();
/** A new character's axes before any generator moved them: every score 0.5. */
const DEFAULT_AXES = {
  demeanor: { score: 0.5, label: 'even' },
  health: { score: 0.5, label: 'worn' },
  physique: { score: 0.5, label: 'wiry' },
  wealth: { score: 0.5, label: 'scraping' },
};

function expectedLabel(axis: string, score: number): string | null {
  return EMBERWICK_LABELS[axis]!.find(([, min, max]) => min <= score && score <= max)?.[0] ?? null;
}

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

let seq = 0;

/** A fresh username (≤ 20 characters). */
function uname(prefix: string): string {
  seq += 1;
  return `${prefix}${seq}`;
}

/** A fresh, well-formed character name (letters only). */
function cname(first = 'Tess'): string {
  seq += 1;
  let n = seq;
  let tail = '';
  do {
    tail = String.fromCharCode(97 + (n % 26)) + tail;
    n = Math.floor(n / 26);
  } while (n > 0);
  return `${first} Ab${tail}`;
}

function expectError(res: HttpResponse, status: number, detail: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.detail, res.text).to.equal(detail);
}

function q(sessionId: string): string {
  return `session_id=${encodeURIComponent(sessionId)}`;
}

async function count(server: TestServer, table: string, where: Record<string, unknown> = {}): Promise<number> {
  const row = await server.db(table).where(where).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

async function userId(server: TestServer, username: string): Promise<number> {
  const row = await server.db('users').where({ username }).first('id');
  if (!row) throw new Error(`no user ${username}`);
  return Number(row.id);
}

async function characterRow(server: TestServer, id: number): Promise<Record<string, any>> {
  const row = await server.db('characters').where({ id }).first();
  if (!row) throw new Error(`no character ${id}`);
  return row;
}

function registerGuest(server: TestServer, characterName: string, password = GOOD_PASSWORD, confirm = password): Promise<HttpResponse> {
  return server.post('/register-guest', { password, password_confirm: confirm, character_name: characterName });
}

function createCharacter(server: TestServer, sessionId: string, worldId: string): Promise<HttpResponse> {
  return server.post('/characters/create', { session_id: sessionId, world_id: worldId });
}

async function created(server: TestServer, sessionId: string, worldId: string): Promise<any> {
  const res = await createCharacter(server, sessionId, worldId);
  expect(res.status, res.text).to.equal(200);
  return res.body;
}

function adminCreate(server: TestServer, sessionId: string, target: string, worldId: string): Promise<HttpResponse> {
  return server.post('/admin/user/create-character', { session_id: sessionId, target_username: target, world_id: worldId });
}

function loginDirect(server: TestServer, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return server.post('/login-direct', body, headers);
}

async function grant(server: TestServer, username: string, worldId: string): Promise<void> {
  await server.services.userAdmin.grant(await userId(server, username), worldId, true);
}

/** Inserts a character row directly, for states the API cannot produce. */
async function insertCharacter(server: TestServer, ownerId: number, name: string, worldId: string, roomId: string): Promise<number> {
  const stamp = toDbTime(server.clock.now());
  const [row] = await server
    .db('characters')
    .insert({ user_id: ownerId, name, name_key: name.toLowerCase(), world_id: worldId, room_id: roomId, created_at: stamp, updated_at: stamp })
    .returning('id');
  return Number(typeof row === 'object' ? (row as { id: number }).id : row);
}

/** An Emberwick axis snapshot: all four axes, scores in [0, 1], labels by the thresholds. */
function expectEmberwickSnapshot(state: any, seed: number): void {
  expect(state).to.be.an('object');
  expect(state).to.have.all.keys('world_id', 'seed', 'policy_hash', 'axes');
  expect(state.world_id).to.equal('emberwick');
  expect(state.seed).to.equal(seed);
  expect(state.policy_hash).to.match(HEX64);
  expect(Object.keys(state.axes).sort()).to.deep.equal(AXES);
  for (const axis of AXES) {
    const value = state.axes[axis];
    expect(value).to.have.all.keys('score', 'label');
    expect(value.score).to.be.a('number').within(0, 1);
    expect(value.label, `${axis} ${value.score}`).to.equal(expectedLabel(axis, value.score));
  }
}

// ---------------------------------------------------------------------------------------
// The shipped worlds: emberwick (default, open, 3 slots, axis bundle), hollow_spire (invite,
// 1 slot, no policies)
// ---------------------------------------------------------------------------------------

describe('characters (shipped worlds)', () => {
  let server: TestServer;
  let admin: string;

  before(async () => {
    server = await startTestServer();
    admin = await sessionFor(server, 'chief', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  describe('POST /register-guest', () => {
    it('requires a character name first: blank is 400 even with differing passwords', async () => {
      const before = await count(server, 'users');
      expectError(await registerGuest(server, '', 'x', 'y'), 400, NAME_REQUIRED);
      expectError(await registerGuest(server, '   ', 'x', 'y'), 400, NAME_REQUIRED);
      expect(await count(server, 'users')).to.equal(before);
    });

    it('rejects malformed names with 400 before the password checks', async () => {
      const before = await count(server, 'users');
      for (const name of ['A', 'R2D2', '<b>x</b>', 'a'.repeat(41), "--'", 'Wren_Ashdown', 'Wren!']) {
        expectError(await registerGuest(server, name, 'x', 'y'), 400, BAD_NAME);
      }
      expect(await count(server, 'users')).to.equal(before);
    });

    it('accepts the boundary lengths and apostrophes, spaces and hyphens, storing the trimmed name', async () => {
      for (const name of ['Jo', `A${'b'.repeat(39)}`, "Mary-Jane O'Dell"]) {
        const res = await registerGuest(server, `  ${name} `);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.character_name).to.equal(name);
        expect((await characterRow(server, res.body.character_id)).name).to.equal(name);
      }
    });

    it('creates a guest account with one character in the default world at its spawn room', async () => {
      const usersBefore = await count(server, 'users');
      const res = await registerGuest(server, 'Wren Ashdown');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys('success', 'message', 'username', 'character_id', 'character_name', 'world_id', 'entity_state', 'entity_state_error');
      const { username } = res.body;
      expect(username).to.match(/^guest_\d{5}$/);
      expect(res.body.success).to.equal(true);
      expect(res.body.message).to.equal(`Temporary guest account created successfully! You can now login as ${username}.`);
      expect(res.body.character_name).to.equal('Wren Ashdown');
      expect(res.body.world_id).to.equal('emberwick');
      expect(await count(server, 'users')).to.equal(usersBefore + 1);

      const user = await server.db('users').where({ username }).first();
      expect(user.role).to.equal('player');
      expect(Boolean(user.is_guest)).to.equal(true);
      expect(Boolean(user.is_active)).to.equal(true);
      expect(user.account_origin).to.equal('visitor');
      expect(user.guest_expires_at).to.equal(toDbTime(new Date(server.clock.now().getTime() + 24 * HOUR)));

      const row = await characterRow(server, res.body.character_id);
      expect(Number(row.user_id)).to.equal(Number(user.id));
      expect(row.name).to.equal('Wren Ashdown');
      expect(row.world_id).to.equal('emberwick');
      expect(row.room_id).to.equal(server.services.worlds.get('emberwick')!.defaultSpawn.room);
      expect(row.room_id).to.equal(EMBERWICK_SPAWN);
      expect(Boolean(row.is_guest_created)).to.equal(true);

      // The snapshot of the stored character, moved to its generated profile.
      const state = res.body.entity_state;
      expect(res.body.entity_state_error).to.equal(null);
      expectEmberwickSnapshot(state, Number(row.state_seed));
      expect(state.seed).to.be.greaterThan(0);
      expect(state.policy_hash).to.equal(row.state_version);
      expect(JSON.parse(row.current_state_json)).to.deep.equal(state);
      expect(JSON.parse(row.base_state_json).axes).to.deep.equal(DEFAULT_AXES);

      // The guest logs in and finds the character.
      const loggedIn = await server.post('/login', { username, password: GOOD_PASSWORD });
      expect(loggedIn.status, loggedIn.text).to.equal(200);
      expect(loggedIn.body.characters).to.have.length(1);
      expect(loggedIn.body.characters[0]).to.have.all.keys(...SUMMARY_KEYS);
      expect(loggedIn.body.characters[0]).to.include({
        id: res.body.character_id,
        name: 'Wren Ashdown',
        user_id: Number(user.id),
        world_id: 'emberwick',
        is_guest_created: true,
      });
    });

    it('rejects a taken name case-insensitively, before the password checks', async () => {
      const first = await registerGuest(server, 'Corin Vale');
      expect(first.status, first.text).to.equal(200);
      const before = await count(server, 'users');
      expectError(await registerGuest(server, 'corin vale'), 400, NAME_TAKEN);
      expectError(await registerGuest(server, '  CORIN VALE ', 'x', 'y'), 400, NAME_TAKEN);
      expect(await count(server, 'users')).to.equal(before);
    });

    it('rejects differing passwords before the STANDARD policy, then applies the policy', async () => {
      const before = await count(server, 'users');
      expectError(await registerGuest(server, cname(), 'abcd', 'abce'), 400, 'Passwords do not match');
      expectError(await registerGuest(server, cname(), GOOD_PASSWORD, `${GOOD_PASSWORD}x`), 400, 'Passwords do not match');
      expectError(
        await registerGuest(server, cname(), 'abcd'),
        400,
        "Password must be at least 12 characters long (currently 4) Password contains sequential characters (abc). Avoid sequences like 'abc', '123', or 'xyz'.",
      );
      expect(await count(server, 'users')).to.equal(before);
    });

    it('lets exactly one of two simultaneous registrations take a name, leaving no account for the other', async () => {
      const usersBefore = await count(server, 'users');
      const name = cname('Race');
      const results = await Promise.all([registerGuest(server, name), registerGuest(server, name)]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses, results.map((r) => r.text).join('\n')).to.deep.equal([200, 400]);
      expectError(results.find((r) => r.status === 400)!, 400, NAME_TAKEN);
      expect(await count(server, 'users')).to.equal(usersBefore + 1);
      expect(await count(server, 'characters', { name_key: name.toLowerCase() })).to.equal(1);
    });
  });

  describe('POST /characters/create', () => {
    let player: string;
    let playerName: string;

    before(async () => {
      playerName = uname('cp');
      player = await sessionFor(server, playerName, 'player');
    });

    it('answers a bad session with 401 and a blank world_id with 400', async () => {
      expectError(await createCharacter(server, 'no-such-session', 'emberwick'), 401, INVALID_SESSION);
      expectContractError(await createCharacter(server, player, ''), '/body/world_id');
      expectError(await createCharacter(server, player, '   '), 400, 'world_id is required');
    });

    it('answers an unknown world with 404 and an invite-only world without a grant with 403', async () => {
      expectError(await createCharacter(server, player, 'atlantis'), 404, "World 'atlantis' not found");
      expectError(await createCharacter(server, player, 'hollow_spire'), 403, INVITE_ONLY);
      expect(await count(server, 'characters', { user_id: await userId(server, playerName) })).to.equal(0);
    });

    it('creates a generated character with its seed and axis snapshot, and does not select it', async () => {
      const res = await createCharacter(server, player, ' emberwick ');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys(...CREATED_KEYS);
      const body = res.body;
      expect(body.success).to.equal(true);
      expect(body.character_name).to.match(BUILTIN_NAME);
      expect(body.message).to.equal(`Character '${body.character_name}' created for '${playerName}'.`);
      expect(body.world_id).to.equal('emberwick');
      expect(body.seed).to.be.a('number').within(1, 2147483647);
      expect(Number.isInteger(body.seed)).to.equal(true);
      expect(body.entity_state_error).to.equal(null);
      expectEmberwickSnapshot(body.entity_state, body.seed);

      const row = await characterRow(server, body.character_id);
      expect(Number(row.user_id)).to.equal(await userId(server, playerName));
      expect(row.name).to.equal(body.character_name);
      expect(row.world_id).to.equal('emberwick');
      expect(row.room_id).to.equal(EMBERWICK_SPAWN);
      expect(Boolean(row.is_guest_created)).to.equal(false);
      expect(Number(row.state_seed)).to.equal(body.seed);
      expect(row.state_version).to.equal(body.entity_state.policy_hash);

      const session = await sessionRow(server, player);
      expect(session.character_id).to.equal(null);
      expect(session.world_id).to.equal(null);
    });

    it('records the profile as one entity_profile_seeded event moving the axes from 0.5', async () => {
      const body = await created(server, player, 'emberwick');
      const state = body.entity_state;

      const axisState = await server.get(`/admin/characters/${body.character_id}/axis-state?${q(admin)}`);
      expect(axisState.status, axisState.text).to.equal(200);
      expect(axisState.body).to.have.all.keys('character_id', 'world_id', 'state_seed', 'state_version', 'state_updated_at', 'base_state', 'current_state', 'axes');
      expect(axisState.body.character_id).to.equal(body.character_id);
      expect(axisState.body.world_id).to.equal('emberwick');
      expect(axisState.body.state_seed).to.equal(body.seed);
      expect(axisState.body.state_version).to.equal(state.policy_hash);
      expect(axisState.body.state_updated_at).to.be.a('string');
      expect(axisState.body.base_state).to.deep.equal({ world_id: 'emberwick', seed: body.seed, policy_hash: state.policy_hash, axes: DEFAULT_AXES });
      expect(axisState.body.current_state).to.deep.equal(state);
      expect(axisState.body.axes.map((a: any) => a.axis_name)).to.deep.equal(AXES);
      for (const axis of axisState.body.axes) {
        expect(axis).to.have.all.keys('axis_id', 'axis_name', 'axis_score', 'axis_label');
        expect(Number.isInteger(axis.axis_id)).to.equal(true);
        expect(axis.axis_score).to.equal(state.axes[axis.axis_name].score);
        expect(axis.axis_label).to.equal(state.axes[axis.axis_name].label);
      }

      const events = await server.get(`/admin/characters/${body.character_id}/axis-events?${q(admin)}`);
      expect(events.status, events.text).to.equal(200);
      expect(events.body.character_id).to.equal(body.character_id);
      // Axes whose generated score is exactly 0.5 (e.g. the midpoint of `even`) do not move.
      const moved = AXES.filter((a) => state.axes[a].score !== 0.5);
      if (moved.length === 0) {
        expect(events.body.events).to.deep.equal([]);
        return;
      }
      expect(events.body.events).to.have.length(1);
      const [event] = events.body.events;
      expect(event).to.have.all.keys('event_id', 'world_id', 'event_type', 'event_type_description', 'timestamp', 'metadata', 'deltas');
      expect(event.event_type).to.equal('entity_profile_seeded');
      expect(event.world_id).to.equal('emberwick');
      // The built-in generator gives every axis a value, as a number or as a label.
      expect(event.metadata).to.deep.equal({ source: 'builtin', seed: String(body.seed), generator_version: 'builtin-1', axis_count: '4' });
      expect(event.deltas.map((d: any) => d.axis_name)).to.deep.equal(moved);
      for (const d of event.deltas) {
        expect(d.old_score).to.equal(0.5);
        expect(d.new_score).to.equal(state.axes[d.axis_name].score);
        expect(d.delta).to.be.closeTo(d.new_score - 0.5, 1e-12);
      }
    });

    it('answers slot exhaustion with 409 naming the account and the count', async () => {
      // This player already has two characters in emberwick (3 slots).
      await created(server, player, 'emberwick');
      expectError(await createCharacter(server, player, 'emberwick'), 409, `No character slots remain in 'emberwick' for account '${playerName}'. 3/3 used.`);
      expect(await count(server, 'characters', { user_id: await userId(server, playerName), world_id: 'emberwick' })).to.equal(3);
    });

    it('creates in an invite-only world once granted; without an axis bundle the state is null with an error', async () => {
      const name = uname('inv');
      const sid = await sessionFor(server, name, 'player');
      expectError(await createCharacter(server, sid, 'hollow_spire'), 403, INVITE_ONLY);
      await grant(server, name, 'hollow_spire');
      const res = await createCharacter(server, sid, 'hollow_spire');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.world_id).to.equal('hollow_spire');
      expect(res.body.entity_state).to.equal(null);
      expect(res.body.entity_state_error).to.be.a('string').and.not.equal('');
      const row = await characterRow(server, res.body.character_id);
      expect(row.world_id).to.equal('hollow_spire');
      expect(row.room_id).to.equal(HOLLOW_SPAWN);
      expect(row.base_state_json).to.equal(null);
      expectError(await createCharacter(server, sid, 'hollow_spire'), 409, `No character slots remain in 'hollow_spire' for account '${name}'. 1/1 used.`);
    });

    it('lets an admin create in every world without a grant', async () => {
      const res = await createCharacter(server, admin, 'hollow_spire');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.message).to.equal(`Character '${res.body.character_name}' created for 'chief'.`);
    });
  });

  describe('admin axis reads', () => {
    it('answers an unknown character with 404 on axis-state and an empty list on axis-events', async () => {
      expectError(await server.get(`/admin/characters/999999/axis-state?${q(admin)}`), 404, 'Character not found');
      const events = await server.get(`/admin/characters/999999/axis-events?${q(admin)}`);
      expect(events.status, events.text).to.equal(200);
      expect(events.body).to.deep.equal({ character_id: 999999, events: [] });
    });

    it('bounds limit to 1..1000 and needs VIEW_LOGS', async () => {
      for (const limit of ['0', '1001', '-1', 'x']) {
        const res = await server.get(`/admin/characters/1/axis-events?${q(admin)}&limit=${limit}`);
        expect(res.status, `${limit}: ${res.text}`).to.equal(400);
      }
      for (const limit of ['1', '1000']) {
        expect((await server.get(`/admin/characters/1/axis-events?${q(admin)}&limit=${limit}`)).status).to.equal(200);
      }
      const player = await sessionFor(server, uname('ax'), 'player');
      expect((await server.get(`/admin/characters/1/axis-state?${q(player)}`)).status).to.equal(403);
      expect((await server.get(`/admin/characters/1/axis-events?${q(player)}`)).status).to.equal(403);
      expectError(await server.get(`/admin/characters/1/axis-state?${q('nope')}`), 401, INVALID_SESSION);
    });
  });

  describe('POST /characters/select', () => {
    let owner: string;
    let ownerSid: string;
    let first: any;
    let second: any;
    let foreign: any;

    before(async () => {
      owner = uname('sel');
      ownerSid = await sessionFor(server, owner, 'player');
      first = await created(server, ownerSid, 'emberwick');
      second = await created(server, ownerSid, 'emberwick');
      foreign = await created(server, await sessionFor(server, uname('oth'), 'player'), 'emberwick');
    });

    const select = (sid: string, characterId: number, worldId?: string | null) =>
      server.post('/characters/select', { session_id: sid, character_id: characterId, ...(worldId === undefined ? {} : { world_id: worldId }) });

    it('answers a character of someone else or an unknown one with 404, before the world checks', async () => {
      expectError(await select(ownerSid, foreign.character_id), 404, 'Character not found for this user');
      expectError(await select(ownerSid, 999999), 404, 'Character not found for this user');
      expectError(await select(ownerSid, foreign.character_id, 'atlantis'), 404, 'Character not found for this user');
      expectError(await select('nope', first.character_id), 401, INVALID_SESSION);
    });

    it('answers a world the account cannot use with 403, before the world mismatch', async () => {
      expectError(await select(ownerSid, first.character_id, 'hollow_spire'), 403, ACCESS_DENIED);
      expectError(await select(ownerSid, first.character_id, 'atlantis'), 403, ACCESS_DENIED);
      expect((await sessionRow(server, ownerSid)).character_id).to.equal(null);
    });

    it('answers an accessible world that is not the character’s with 409', async () => {
      await grant(server, owner, 'hollow_spire');
      expectError(await select(ownerSid, first.character_id, 'hollow_spire'), 409, 'Character does not belong to world');
      expect((await sessionRow(server, ownerSid)).character_id).to.equal(null);
    });

    it('binds the session to the character and its world, and rebinds on a second selection', async () => {
      const res = await select(ownerSid, first.character_id);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, message: 'Character selected.', character_name: first.character_name });
      let row = await sessionRow(server, ownerSid);
      expect(Number(row.character_id)).to.equal(first.character_id);
      expect(row.world_id).to.equal('emberwick');

      const again = await select(ownerSid, second.character_id, 'emberwick');
      expect(again.status, again.text).to.equal(200);
      expect(again.body.character_name).to.equal(second.character_name);
      row = await sessionRow(server, ownerSid);
      expect(Number(row.character_id)).to.equal(second.character_id);
      expect(row.world_id).to.equal('emberwick');

      const nulled = await select(ownerSid, first.character_id, null);
      expect(nulled.status, nulled.text).to.equal(200);
      expect(Number((await sessionRow(server, ownerSid)).character_id)).to.equal(first.character_id);
    });
  });

  describe('GET /characters and the login world entries', () => {
    let owner: string;
    let sid: string;
    let ownerId: number;

    before(async () => {
      owner = uname('lst');
      sid = await sessionFor(server, owner, 'player');
      ownerId = await userId(server, owner);
    });

    const list = (session: string, worldId?: string) =>
      server.get(`/characters?${q(session)}${worldId === undefined ? '' : `&world_id=${encodeURIComponent(worldId)}`}`);
    const entry = (res: HttpResponse, id: string) => res.body.available_worlds.find((w: any) => w.id === id);

    it('lists nothing for a new account and answers a world it cannot use with 403', async () => {
      const res = await list(sid);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.deep.equal({ characters: [] });
      expectError(await list(sid, 'hollow_spire'), 403, ACCESS_DENIED);
      expectError(await list(sid, 'atlantis'), 403, ACCESS_DENIED);
      expectError(await list('nope'), 401, INVALID_SESSION);

      const loggedIn = await server.post('/login', { username: owner, password: GOOD_PASSWORD });
      expect(loggedIn.body.characters).to.deep.equal([]);
      expect(entry(loggedIn, 'emberwick')).to.include({ can_access: true, can_create: true, current_character_count: 0, slot_limit_per_account: 3, access_mode: 'open', naming_mode: 'generated', is_locked: false });
      expect(entry(loggedIn, 'hollow_spire')).to.include({ can_access: false, can_create: false, current_character_count: 0, slot_limit_per_account: 1, access_mode: 'invite', is_locked: true });
    });

    it("lists only the account's characters of one world, oldest first, as summaries", async () => {
      const a = await created(server, sid, 'emberwick');
      server.clock.advance(2000);
      const b = await created(server, sid, 'emberwick');
      await created(server, await sessionFor(server, uname('nb'), 'player'), 'emberwick');
      const provisioned = await adminCreate(server, admin, owner, 'hollow_spire');
      expect(provisioned.status, provisioned.text).to.equal(200);

      const res = await list(sid);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.characters.map((c: any) => c.id)).to.deep.equal([a.character_id, b.character_id]);
      for (const c of res.body.characters) {
        expect(c).to.have.all.keys(...SUMMARY_KEYS);
        expect(c.user_id).to.equal(ownerId);
        expect(c.world_id).to.equal('emberwick');
        expect(c.is_guest_created).to.equal(false);
        expect(c.created_at).to.match(DB_TIME);
        expect(c.updated_at).to.match(DB_TIME);
      }
      expect(res.body.characters[0].name).to.equal(a.character_name);
      expect(res.body.characters[0].created_at < res.body.characters[1].created_at).to.equal(true);
      expect((await list(sid, 'emberwick')).body).to.deep.equal(res.body);

      // A character in the invite-only world opens it to its owner.
      const hollow = await list(sid, 'hollow_spire');
      expect(hollow.status, hollow.text).to.equal(200);
      expect(hollow.body.characters.map((c: any) => c.id)).to.deep.equal([provisioned.body.character_id]);
    });

    it("filters the login's characters by world_id or the default world, and counts slots in the world entries", async () => {
      const plain = await server.post('/login', { username: owner, password: GOOD_PASSWORD });
      expect(plain.status, plain.text).to.equal(200);
      expect(plain.body.characters.map((c: any) => c.world_id)).to.deep.equal(['emberwick', 'emberwick']);
      expect(plain.body.characters).to.deep.equal((await list(sid)).body.characters);
      expect(entry(plain, 'emberwick')).to.include({ can_access: true, can_create: true, current_character_count: 2, access_reason: 'ok' });
      expect(entry(plain, 'hollow_spire')).to.include({
        can_access: true,
        can_create: false,
        current_character_count: 1,
        is_locked: false,
        has_existing_character: true,
        access_reason: 'slot_limit_reached',
      });

      const hollow = await server.post('/login', { username: owner, password: GOOD_PASSWORD, world_id: 'hollow_spire' });
      expect(hollow.body.characters.map((c: any) => c.world_id)).to.deep.equal(['hollow_spire']);

      await created(server, sid, 'emberwick');
      const full = await server.post('/login', { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick' });
      expect(full.body.characters).to.have.length(3);
      expect(entry(full, 'emberwick')).to.include({ can_access: true, can_create: false, current_character_count: 3, access_reason: 'slot_limit_reached' });
    });
  });

  describe('POST /login-direct', () => {
    let owner: string;
    let ownerChar: any;
    let otherChar: any;

    before(async () => {
      owner = uname('ld');
      await createUser(server, owner, 'player');
      ownerChar = await created(server, await login(server, owner), 'emberwick');
      otherChar = await created(server, await sessionFor(server, uname('ldo'), 'player'), 'emberwick');
    });

    it('requires character_name first, even with a bad username and password', async () => {
      expectContractError(await loginDirect(server, { username: 'x', password: 'nope', world_id: 'atlantis' }), '/body/character_name');
      expectError(await loginDirect(server, { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: '  ' }), 400, 'character_name is required');
    });

    it('then checks the username length and the credentials', async () => {
      expectError(await loginDirect(server, { username: 'x', password: 'nope', world_id: 'atlantis', character_name: 'Any One' }), 400, 'Username must be 2-20 characters');
      expectError(await loginDirect(server, { username: 'a'.repeat(21), password: 'nope', world_id: 'emberwick', character_name: 'Any One' }), 400, 'Username must be 2-20 characters');
      expectError(await loginDirect(server, { username: owner, password: 'Wrong-Guess-Again-5', world_id: 'atlantis', character_name: 'Any One' }), 401, BAD_CREDENTIALS);
      expectError(await loginDirect(server, { username: 'ghost_user', password: GOOD_PASSWORD, world_id: 'emberwick', character_name: 'Any One' }), 401, BAD_CREDENTIALS);

      const banned = uname('ldb');
      await createUser(server, banned, 'player');
      await server.db('users').where({ username: banned }).update({ is_active: false });
      expectError(await loginDirect(server, { username: banned, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: 'Any One' }), 401, 'Account is deactivated');
    });

    it('refuses a world the account cannot use with 403, before looking at the character', async () => {
      const sessions = await count(server, 'sessions');
      for (const world of ['hollow_spire', 'atlantis']) {
        expectError(
          await loginDirect(server, { username: owner, password: GOOD_PASSWORD, world_id: world, character_name: otherChar.character_name, create_character: true }),
          403,
          ACCESS_DENIED,
        );
      }
      expect(await count(server, 'sessions')).to.equal(sessions);
    });

    it("refuses another account's character, and the account's own character of another world, with 403", async () => {
      expectError(
        await loginDirect(server, { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: otherChar.character_name, create_character: true }),
        403,
        'Character not available',
      );
      const roamer = uname('ldr');
      await createUser(server, roamer, 'player');
      const hollow = await adminCreate(server, admin, roamer, 'hollow_spire');
      expect(hollow.status, hollow.text).to.equal(200);
      expectError(
        await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: hollow.body.character_name }),
        403,
        'Character not available',
      );
    });

    it('answers a missing character with 404 unless create_character is true', async () => {
      const name = cname('Lost');
      expectError(await loginDirect(server, { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: name }), 404, 'Character not found');
      expectError(await loginDirect(server, { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: name, create_character: false }), 404, 'Character not found');
      expect(await count(server, 'characters', { name_key: name.toLowerCase() })).to.equal(0);
    });

    it('logs straight in with an existing character: session bound, client type stored', async () => {
      const res = await loginDirect(
        server,
        { username: owner, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: ownerChar.character_name.toUpperCase() },
        { 'X-Client-Type': '  WebClient ' },
      );
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys('success', 'message', 'session_id', 'role', 'character_name', 'world_id');
      expect(res.body).to.include({ success: true, message: 'Login successful.', role: 'player', character_name: ownerChar.character_name, world_id: 'emberwick' });
      const row = await sessionRow(server, res.body.session_id);
      expect(Number(row.character_id)).to.equal(ownerChar.character_id);
      expect(row.world_id).to.equal('emberwick');
      expect(row.client_type).to.equal('webclient');
      expect(Number(row.user_id)).to.equal(await userId(server, owner));
      // Only the token's hash is stored.
      for (const stored of await server.db('sessions').select('*')) expect(JSON.stringify(stored)).to.not.contain(res.body.session_id);
    });

    it('creates the named character with create_character and binds the new session to it', async () => {
      const fresh = uname('ldn');
      await createUser(server, fresh, 'player');
      const name = cname('Dara');
      const res = await loginDirect(server, { username: fresh, password: GOOD_PASSWORD, world_id: ' emberwick ', character_name: `  ${name} `, create_character: true });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ success: true, message: 'Login successful.', character_name: name, world_id: 'emberwick' });
      const character = await server.db('characters').where({ name_key: name.toLowerCase() }).first();
      expect(character.name).to.equal(name);
      expect(Number(character.user_id)).to.equal(await userId(server, fresh));
      expect(character.world_id).to.equal('emberwick');
      expect(character.room_id).to.equal(EMBERWICK_SPAWN);
      expect(Boolean(character.is_guest_created)).to.equal(false);
      expect(JSON.parse(character.base_state_json).axes).to.deep.equal(DEFAULT_AXES);
      const row = await sessionRow(server, res.body.session_id);
      expect(Number(row.character_id)).to.equal(Number(character.id));
      expect(row.world_id).to.equal('emberwick');
      expect(row.client_type).to.equal('unknown');
      // A malformed name is refused like everywhere else.
      expectError(await loginDirect(server, { username: fresh, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: 'R2D2', create_character: true }), 400, BAD_NAME);
    });

    it('refuses to create in a second world while multi-world characters are disabled, and a full world with 409', async () => {
      const roamer = uname('ldm');
      await createUser(server, roamer, 'player');
      await grant(server, roamer, 'hollow_spire');
      const first = await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'hollow_spire', character_name: cname('Spire'), create_character: true });
      expect(first.status, first.text).to.equal(200);
      const name = cname('Second');
      expectError(
        await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: name, create_character: true }),
        409,
        'Multi-world characters are disabled',
      );
      expectError(
        await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'hollow_spire', character_name: name, create_character: true }),
        409,
        'Failed to create character',
      );
      expect(await count(server, 'characters', { user_id: await userId(server, roamer) })).to.equal(1);
    });
  });

  describe('POST /admin/user/create-character', () => {
    let target: string;

    before(async () => {
      target = uname('act');
      await createUser(server, target, 'player');
      await createUser(server, 'peer_admin', 'admin');
      await createUser(server, 'top_super', 'superuser');
    });

    it('needs a valid session with CREATE_USERS', async () => {
      expectError(await adminCreate(server, 'nope', target, 'emberwick'), 401, INVALID_SESSION);
      for (const role of ['player', 'worldbuilder'] as const) {
        const sid = await sessionFor(server, uname(role.slice(0, 3)), role);
        expectError(await adminCreate(server, sid, target, 'emberwick'), 403, NEEDS_CREATE_USERS);
      }
      expect(await count(server, 'characters', { user_id: await userId(server, target) })).to.equal(0);
    });

    it('checks, in order: target given, world given, target exists, rank, world exists', async () => {
      expectContractError(await adminCreate(server, admin, 'anyone', ''), '/body/world_id');
      expectError(await adminCreate(server, admin, '  ', 'emberwick'), 400, 'target_username is required');
      expectError(await adminCreate(server, admin, target, '  '), 400, 'world_id is required');
      expectError(await adminCreate(server, admin, 'ghost', 'atlantis'), 404, "User 'ghost' not found");
      expectError(await adminCreate(server, admin, 'peer_admin', 'atlantis'), 403, "Insufficient permissions to manage user with role 'admin'");
      expectError(await adminCreate(server, admin, 'top_super', 'emberwick'), 403, "Insufficient permissions to manage user with role 'superuser'");
      expectError(await adminCreate(server, admin, target, 'atlantis'), 404, "World 'atlantis' not found");
    });

    it('provisions into an invite-only world without a grant; the slot limit still applies', async () => {
      const res = await adminCreate(server, admin, ` ${target} `, ' hollow_spire ');
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.all.keys(...CREATED_KEYS);
      expect(res.body.message).to.equal(`Character '${res.body.character_name}' created for '${target}'.`);
      expect(res.body.character_name).to.match(BUILTIN_NAME);
      expect(res.body.world_id).to.equal('hollow_spire');
      const row = await characterRow(server, res.body.character_id);
      expect(Number(row.user_id)).to.equal(await userId(server, target));
      expect(row.world_id).to.equal('hollow_spire');
      expect(row.room_id).to.equal(HOLLOW_SPAWN);
      expect(await count(server, 'world_permissions', { user_id: await userId(server, target) })).to.equal(0);

      expectError(await adminCreate(server, admin, target, 'hollow_spire'), 409, 'No character slots are available in this world. 1/1 already used.');
      expect(await count(server, 'characters', { user_id: await userId(server, target), world_id: 'hollow_spire' })).to.equal(1);
    });

    it('lets an admin provision for itself and a superuser for an admin', async () => {
      const self = await adminCreate(server, admin, 'chief', 'emberwick');
      expect(self.status, self.text).to.equal(200);
      expect(self.body.message).to.equal(`Character '${self.body.character_name}' created for 'chief'.`);
      expectEmberwickSnapshot(self.body.entity_state, self.body.seed);

      const superSid = await login(server, 'top_super');
      const forAdmin = await adminCreate(server, superSid, 'peer_admin', 'emberwick');
      expect(forAdmin.status, forAdmin.text).to.equal(200);
      expect(Number((await characterRow(server, forAdmin.body.character_id)).user_id)).to.equal(await userId(server, 'peer_admin'));
    });
  });
});

// ---------------------------------------------------------------------------------------
// Edited world packages: an inactive world, a manual-naming world, a default world without
// slots, and emberwick with exactly three slots
// ---------------------------------------------------------------------------------------

describe('characters (edited worlds)', () => {
  let server: TestServer;
  let worldsDir: string;
  let admin: string;

  before(async () => {
    worldsDir = worldsCopy(
      { emberwick: (w) => (w.character_policy = { access_mode: 'open', naming_mode: 'generated', slot_limit_per_account: 3 }) },
      {
        dormant_reach: {
          from: 'hollow_spire',
          edit: (w) => {
            w.name = 'Dormant Reach';
            w.active = false;
            w.character_policy = { access_mode: 'open', naming_mode: 'generated', slot_limit_per_account: 5 };
          },
        },
        scribe_hall: {
          from: 'hollow_spire',
          edit: (w) => {
            w.name = 'Scribe Hall';
            w.character_policy = { access_mode: 'open', naming_mode: 'manual', slot_limit_per_account: 5 };
          },
        },
        sealed_cellar: {
          from: 'hollow_spire',
          edit: (w) => {
            w.name = 'Sealed Cellar';
            w.character_policy = { access_mode: 'open', naming_mode: 'generated', slot_limit_per_account: 0 };
          },
        },
      },
    );
    server = await startTestServer({ env: { MUD_WORLDS_ROOT: worldsDir, MUD_DEFAULT_WORLD_ID: 'sealed_cellar' } });
    admin = await sessionFor(server, 'chief', 'admin');
  });
  after(async () => {
    await server?.close();
    if (worldsDir) rmSync(worldsDir, { recursive: true, force: true });
  });

  it('keeps no account when the guest character cannot be created (no slot in the default world)', async () => {
    const users = await count(server, 'users');
    const name = cname('Cellar');
    const res = await registerGuest(server, name);
    expectError(res, 400, 'No character slots are available in this world. 0/0 already used.');
    expect(await count(server, 'users')).to.equal(users);
    expect(await count(server, 'characters', { name_key: name.toLowerCase() })).to.equal(0);
  });

  it('answers an inactive world with 409, for players and admins alike', async () => {
    const player = await sessionFor(server, uname('dr'), 'player');
    expectError(await createCharacter(server, player, 'dormant_reach'), 409, "World 'dormant_reach' is inactive");
    expectError(await createCharacter(server, admin, 'dormant_reach'), 409, "World 'dormant_reach' is inactive");
    expectError(await adminCreate(server, admin, 'chief', 'dormant_reach'), 409, "World 'dormant_reach' is inactive");
    expect(await count(server, 'characters', { world_id: 'dormant_reach' })).to.equal(0);
  });

  it('refuses selection into an inactive world with 403', async () => {
    const owner = uname('drs');
    const sid = await sessionFor(server, owner, 'player');
    const id = await insertCharacter(server, await userId(server, owner), cname('Sleeper'), 'dormant_reach', 'spire_threshold');
    expectError(await server.post('/characters/select', { session_id: sid, character_id: id }), 403, ACCESS_DENIED);
    expectError(await server.get(`/characters?${q(sid)}&world_id=dormant_reach`), 403, ACCESS_DENIED);
  });

  it('leaves a manual-naming world to admins', async () => {
    const player = await sessionFor(server, uname('sh'), 'player');
    expectError(await createCharacter(server, player, 'scribe_hall'), 403, "World 'scribe_hall' currently requires admin-managed character naming.");
    const res = await createCharacter(server, admin, 'scribe_hall');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.world_id).to.equal('scribe_hall');
  });

  it('gives exactly three of ten simultaneous creations a slot in a three-slot world', async () => {
    const owner = uname('par');
    const sid = await sessionFor(server, owner, 'player');
    const results = await Promise.all(Array.from({ length: 10 }, () => createCharacter(server, sid, 'emberwick')));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 409);
    expect(ok, results.map((r) => `${r.status} ${r.text}`).join('\n')).to.have.length(3);
    expect(refused).to.have.length(7);
    for (const r of refused) {
      expect(r.body.detail).to.be.oneOf([
        `No character slots remain in 'emberwick' for account '${owner}'. 3/3 used.`,
        'No character slots are available in this world. 3/3 already used.',
      ]);
    }
    const rows = await server.db('characters').where({ user_id: await userId(server, owner), world_id: 'emberwick' });
    expect(rows).to.have.length(3);
    expect(new Set(rows.map((r) => r.name)).size).to.equal(3);
    expect(rows.map((r) => Number(r.id)).sort()).to.deep.equal(ok.map((r) => r.body.character_id).sort());
  });
});

// ---------------------------------------------------------------------------------------
// Server switches: self-service creation off; multi-world characters on
// ---------------------------------------------------------------------------------------

describe('characters (self-service off)', () => {
  let server: TestServer;
  let admin: string;

  before(async () => {
    server = await startTestServer({ env: { MUD_PLAYER_SELF_CREATE_ENABLED: 'false' } });
    admin = await sessionFor(server, 'chief', 'admin');
  });
  after(async () => {
    await server?.close();
  });

  // The switch is part of the one self-creation rule, checked once the world is known (an
  // unknown world is 404 like any other), for admins too.
  it('refuses self-service creation with 403 once the world is known, admins included', async () => {
    const player = await sessionFor(server, uname('so'), 'player');
    expectError(await createCharacter(server, player, ' '), 400, 'world_id is required');
    expectError(await createCharacter(server, player, 'emberwick'), 403, SELF_CREATE_OFF);
    expectError(await createCharacter(server, player, 'atlantis'), 404, "World 'atlantis' not found");
    expectError(await createCharacter(server, admin, 'hollow_spire'), 403, SELF_CREATE_OFF);
    expect(await count(server, 'characters')).to.equal(0);
  });

  it('still lets an admin provision characters', async () => {
    const target = uname('sot');
    await createUser(server, target, 'player');
    const res = await adminCreate(server, admin, target, 'emberwick');
    expect(res.status, res.text).to.equal(200);
  });
});

describe('characters (multi-world on)', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { MUD_ALLOW_MULTI_WORLD_CHARACTERS: 'true' } });
  });
  after(async () => {
    await server?.close();
  });

  it('lets direct login create a character in a second world', async () => {
    const roamer = uname('mw');
    await createUser(server, roamer, 'player');
    await grant(server, roamer, 'hollow_spire');
    const first = await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'hollow_spire', character_name: cname('Spire'), create_character: true });
    expect(first.status, first.text).to.equal(200);
    const second = await loginDirect(server, { username: roamer, password: GOOD_PASSWORD, world_id: 'emberwick', character_name: cname('Canal'), create_character: true });
    expect(second.status, second.text).to.equal(200);
    expect(second.body.world_id).to.equal('emberwick');
    const worlds = (await server.db('characters').where({ user_id: await userId(server, roamer) }).select('world_id')).map((r) => r.world_id).sort();
    expect(worlds).to.deep.equal(['emberwick', 'hollow_spire']);
  });
});

// ---------------------------------------------------------------------------------------
// HTTP integrations against a fake upstream: name generation and entity state
// ---------------------------------------------------------------------------------------

const PAYLOAD = {
  axes: { health: 0.9 },
  character: { demeanor: 'bold' },
  occupation: { wealth: 'moneyed' },
  generator_version: 't1',
};

describe('characters (HTTP name generation and entity state)', () => {
  let server: TestServer;
  let upstream: FakeUpstream;
  let player: string;
  let playerName: string;
  let firstNames: string[] = [];
  let namegen: (body: any) => CannedResponse;
  let entity: (body: any) => CannedResponse;

  const FIRSTS = ['Bryn', 'Cass', 'Dara', 'Edda', 'Fenn', 'Gwen', 'Hale', 'Isla', 'Jory', 'Kell', 'Lorn', 'Mave', 'Nell', 'Orla'];
  const okNames = (body: any): CannedResponse => ({ body: { names: [body.class_key === 'first_name' ? (firstNames.shift() ?? 'Zed') : 'Quill'] } });
  const okEntity = (): CannedResponse => ({ body: PAYLOAD });
  const generateRequests = () => upstream.requests.filter((r) => r.url === '/api/generate');
  const entityRequests = () => upstream.requests.filter((r) => r.url === '/api/entity');

  before(async () => {
    upstream = await startFakeUpstream((req) => (req.url === '/api/generate' ? namegen(req.body) : req.url === '/api/entity' ? entity(req.body) : { status: 404 }));
    server = await startTestServer({
      env: {
        MUD_NAMEGEN_MODE: 'http',
        MUD_NAMEGEN_BASE_URL: `${upstream.url}/`,
        MUD_NAMEGEN_TIMEOUT_SECONDS: '2',
        MUD_ENTITY_STATE_MODE: 'http',
        MUD_ENTITY_STATE_BASE_URL: upstream.url,
        MUD_ENTITY_STATE_TIMEOUT_SECONDS: '2',
      },
    });
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  beforeEach(async () => {
    upstream.requests.length = 0;
    firstNames = [...FIRSTS];
    namegen = okNames;
    entity = okEntity;
    playerName = uname('up');
    player = await sessionFor(server, playerName, 'player');
  });

  it('names the character from two namegen calls (first name with seed s, last name with s+1)', async () => {
    firstNames = ['Ada'];
    const res = await createCharacter(server, player, 'emberwick');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.character_name).to.equal('Ada Quill');
    expect(res.body.message).to.equal(`Character 'Ada Quill' created for '${playerName}'.`);
    const seed = res.body.seed;
    const calls = generateRequests();
    expect(calls.map((r) => r.method)).to.deep.equal(['POST', 'POST']);
    const common = { package_id: 2, syllable_key: 'all', generation_count: 1, unique_only: true, output_format: 'json', render_style: 'title' };
    expect(calls[0]!.body).to.deep.equal({ class_key: 'first_name', ...common, seed });
    expect(calls[1]!.body).to.deep.equal({ class_key: 'last_name', ...common, seed: seed + 1 });
    expect(Number((await characterRow(server, res.body.character_id)).state_seed)).to.equal(seed);
  });

  it('maps the entity payload through the thresholds: numbers as given, labels at their midpoints', async () => {
    const res = await createCharacter(server, player, 'emberwick');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state_error).to.equal(null);
    const state = res.body.entity_state;
    expectEmberwickSnapshot(state, res.body.seed);
    expect(state.axes.health).to.deep.equal({ score: 0.9, label: 'hardy' });
    expect(state.axes.demeanor.score).to.be.closeTo(0.7, 1e-9);
    expect(state.axes.demeanor.label).to.equal('bold');
    expect(state.axes.wealth).to.deep.equal({ score: 0.875, label: 'moneyed' });
    expect(state.axes.physique).to.deep.equal({ score: 0.5, label: 'wiry' });
    expect(entityRequests().map((r) => r.body)).to.deep.equal([{ seed: res.body.seed, include_prompts: false }]);

    const events = await server.get(`/admin/characters/${res.body.character_id}/axis-events?${q(await sessionFor(server, uname('upa'), 'admin'))}`);
    expect(events.body.events).to.have.length(1);
    const [event] = events.body.events;
    expect(event.event_type).to.equal('entity_profile_seeded');
    expect(event.metadata).to.deep.equal({ source: 'entity_state_api', seed: String(res.body.seed), generator_version: 't1', axis_count: '3' });
    expect(event.deltas.map((d: any) => [d.axis_name, d.old_score])).to.deep.equal([
      ['demeanor', 0.5],
      ['health', 0.5],
      ['wealth', 0.5],
    ]);
    expect(event.deltas.map((d: any) => d.new_score)).to.deep.equal([state.axes.demeanor.score, 0.9, 0.875]);
  });

  it('matches axis keys and labels case-insensitively', async () => {
    entity = () => ({ body: { axes: { HEALTH: 0.1 }, character: { Demeanor: 'Brazen' }, occupation: { wealth: 'PENNILESS' } } });
    const res = await createCharacter(server, player, 'emberwick');
    expect(res.status, res.text).to.equal(200);
    const axes = res.body.entity_state.axes;
    expect(axes.health).to.deep.equal({ score: 0.1, label: 'consumptive' });
    expect(axes.demeanor).to.deep.equal({ score: 0.9, label: 'brazen' });
    expect(axes.wealth).to.deep.equal({ score: 0.125, label: 'penniless' });
  });

  it('keeps the character with the default snapshot when the entity service fails', async () => {
    entity = () => ({ destroy: true });
    const res = await createCharacter(server, player, 'emberwick');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state_error).to.equal(ENTITY_DOWN);
    expect(res.body.entity_state).to.deep.include({ world_id: 'emberwick', seed: res.body.seed, axes: DEFAULT_AXES });
    expect(entityRequests()).to.have.length(2);
    await characterRow(server, res.body.character_id);
    expect(await count(server, 'axis_events', { character_id: res.body.character_id })).to.equal(0);
  });

  it('does not ask the entity service for a world without an axis bundle', async () => {
    const res = await adminCreate(server, await sessionFor(server, uname('upb'), 'admin'), playerName, 'hollow_spire');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state).to.equal(null);
    expect(entityRequests()).to.have.length(0);
  });

  it('gives a guest the mapped snapshot too, asking with the character seed', async () => {
    const res = await registerGuest(server, cname('Guest'));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state.axes.health).to.deep.equal({ score: 0.9, label: 'hardy' });
    expect(entityRequests().map((r) => r.body)).to.deep.equal([{ seed: res.body.entity_state.seed, include_prompts: false }]);
    expect(generateRequests()).to.have.length(0);
  });

  it('registers a guest when the entity service fails, with the default snapshot and the error', async () => {
    entity = () => ({ status: 503, body: 'down' });
    const res = await registerGuest(server, cname('Guest'));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state_error).to.equal(ENTITY_DOWN);
    expect(res.body.entity_state.axes).to.deep.equal(DEFAULT_AXES);
  });

  it('answers HTTP 500 three times with 502 and creates nothing', async () => {
    namegen = () => ({ status: 500, body: 'boom' });
    const before = await count(server, 'characters');
    expectError(await createCharacter(server, player, 'emberwick'), 502, 'Name generation API returned HTTP 500.');
    expect(generateRequests()).to.have.length(3);
    expect(await count(server, 'characters')).to.equal(before);
  });

  it('answers invalid JSON and a payload without names with 502', async () => {
    namegen = () => ({ body: 'not json{' });
    expectError(await createCharacter(server, player, 'emberwick'), 502, 'Name generation API returned invalid JSON.');
    namegen = () => ({ body: { names: [] } });
    expectError(await createCharacter(server, player, 'emberwick'), 502, 'Name generation API did not return a valid name.');
    namegen = () => ({ body: { names: ['   '] } });
    expectError(await createCharacter(server, player, 'emberwick'), 502, 'Name generation API returned an empty name.');
    expect(await count(server, 'characters', { user_id: await userId(server, playerName) })).to.equal(0);
  });
});

describe('characters (upstreams down)', () => {
  let server: TestServer;

  before(async () => {
    const down = await closedPortUrl();
    server = await startTestServer({
      env: { MUD_NAMEGEN_MODE: 'http', MUD_NAMEGEN_BASE_URL: down, MUD_ENTITY_STATE_MODE: 'http', MUD_ENTITY_STATE_BASE_URL: down },
    });
  });
  after(async () => {
    await server?.close();
  });

  it('answers creation with 502 when the name service is unreachable, creating nothing', async () => {
    const owner = uname('dn');
    const sid = await sessionFor(server, owner, 'player');
    expectError(await createCharacter(server, sid, 'emberwick'), 502, 'Name generation API unavailable.');
    const admin = await sessionFor(server, uname('dna'), 'admin');
    expectError(await adminCreate(server, admin, owner, 'emberwick'), 502, 'Name generation API unavailable.');
    expect(await count(server, 'characters')).to.equal(0);
  });

  it('still registers a guest, with the default snapshot and the entity error', async () => {
    const res = await registerGuest(server, cname('Lone'));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.entity_state_error).to.equal(ENTITY_DOWN);
    expectEmberwickSnapshot(res.body.entity_state, res.body.entity_state.seed);
    expect(res.body.entity_state.axes).to.deep.equal(DEFAULT_AXES);
    const row = await characterRow(server, res.body.character_id);
    expect(JSON.parse(row.current_state_json)).to.deep.equal(res.body.entity_state);
  });
});
