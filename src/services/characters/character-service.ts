/**
 * Characters: listing, self-service creation with generated names, selection, admin
 * provisioning and the admin axis reads. Every access question goes through WorldAccessService
 * so the routes can never disagree; creation is atomic (slot limit and unique names hold under
 * concurrent requests).
 */
import { toDbTime, type Clock } from '../../db/clock.ts';
import { lockKey, type Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { AxisStateRepository } from '../../db/repositories/axis-state-repository.ts';
import type { CharacterRepository, CharacterSummary } from '../../db/repositories/character-repository.ts';
import type { SessionRepository } from '../../db/repositories/session-repository.ts';
import type { UserRepository } from '../../db/repositories/user-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import type { EntityStateResult } from '../../integrations/entity-state.ts';
import { NameGenerationError, type NameGenerator } from '../../integrations/name-generator.ts';
import { Conflict, DomainError, Failure, Forbidden, InvalidInput, NotFound, UpstreamFailed } from '../../shared/errors.ts';
import type { AuthenticatedSession } from '../accounts/session-service.ts';
import { outranks, rank, type Role } from '../../shared/roles.ts';
import { reservedWordIn } from '../accounts/reserved-names.ts';
import { MAX_SEED, randomSeed } from '../../integrations/seeded-random.ts';
import { plainText } from '../../shared/plain-text.ts';
import { mixesScripts } from './name-scripts.ts';
import { normalizeEntityAxes, resolveAxisBundle, type AxisBundle } from '../policy/axis-bundle.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import type { WorldAccessService, WorldPolicy } from '../worlds/world-access.ts';
import type { World } from '../worlds/world-loader.ts';
import { parseSnapshot, type AxisSnapshot, type CharacterStateService } from './character-state.ts';
import type { Presence } from '../presence/presence.ts';

type Schemas = components['schemas'];

/** Produces an axis profile for a seed: built in, or an upstream entity-state service. */
export interface EntityGenerator {
  readonly source: string;
  generate(seed: number, bundle: AxisBundle): Promise<EntityStateResult>;
}

const NAME_ATTEMPTS = 8;
const CHARACTER_NAME = /^[\p{L}' -]{2,40}$/u;


/**
 * A name a player chose: invisible code points removed (as chat loses them), NFC, trimmed;
 * 2..40 letters, spaces, apostrophes and hyphens, of one script, no reserved word (unless
 * `allowReserved`, for a name not being chosen now: an imported one); or 400.
 */
export function validateCharacterName(raw: string, allowReserved = false): string {
  const name = plainText(raw).normalize('NFC');
  if (name === '') throw new InvalidInput('Character name is required');
  if (!CHARACTER_NAME.test(name) || !/\p{L}/u.test(name)) {
    throw new InvalidInput('Character name must be 2-40 characters: letters, spaces, apostrophes and hyphens');
  }
  if (mixesScripts(name)) throw new InvalidInput('Character name must be written in one script: it mixes letters of different alphabets');
  const reserved = allowReserved ? undefined : reservedWordIn(name);
  if (reserved !== undefined) throw new InvalidInput(`Character name must not contain the reserved word '${reserved}'`);
  return name;
}

export interface ProvisionedCharacter {
  id: number;
  name: string;
  worldId: string;
  seed: number;
  entityState: AxisSnapshot | null;
  entityStateError: string | null;
}

export interface CharacterDeps {
  db: Db;
  characters: CharacterRepository;
  users: UserRepository;
  sessions: SessionRepository;
  axisState: AxisStateRepository;
  state: CharacterStateService;
  worldAccess: WorldAccessService;
  policies: PolicyService;
  names: NameGenerator;
  entities: EntityGenerator;
  clock: Clock;
  presence: Presence;
  defaultWorldId: string;
  playerSelfCreateEnabled: boolean;
}

export class CharacterService {
  private readonly d: CharacterDeps;

  constructor(deps: CharacterDeps) {
    this.d = deps;
  }

  async list(session: AuthenticatedSession, worldId: string | undefined): Promise<CharacterSummary[]> {
    const world = worldId?.trim() || this.d.defaultWorldId;
    const access = await this.d.worldAccess.forWorld(session.userId, session.role, world);
    if (!access?.decision.canAccess) throw new Forbidden('World access denied');
    return this.d.characters.listSummaries(session.userId, world);
  }

  /**
   * The one rule for characters players create for themselves (POST /characters/create,
   * /login-direct with create_character, /register-guest), checked where each path starts to
   * create: the server switch `player_self_create_enabled` (admins included, as in the
   * reference), then the world's naming mode, where `manual` leaves naming to admins. Admin
   * provisioning (/admin/user/create-character) is not self-creation and skips it.
   */
  /** 400 when a character of the world has a name that looks like `name` (UTS #39 skeleton). */
  async assertNotLookalike(worldId: string, name: string): Promise<void> {
    const existing = await this.d.characters.findLookalike(worldId, name);
    if (existing !== undefined) throw new InvalidInput(`Character name looks too much like '${existing}', a character of this world`);
  }

  assertSelfCreation(role: Role, { world, policy }: { world: World; policy: WorldPolicy }): void {
    if (!this.d.playerSelfCreateEnabled) throw new Forbidden('Player self-service character creation is disabled.');
    if (policy.namingMode !== 'generated' && rank(role) < rank('admin')) {
      throw new Forbidden(`World '${world.id}' currently requires admin-managed character naming.`);
    }
  }

  async create(session: AuthenticatedSession, rawWorldId: string): Promise<Schemas['CreatedCharacter']> {
    const worldId = rawWorldId.trim();
    if (!worldId) throw new InvalidInput('world_id is required');
    const access = await this.d.worldAccess.forWorld(session.userId, session.role, worldId);
    if (!access) throw new NotFound(`World '${worldId}' not found`);
    if (access.decision.reason === 'world_inactive') throw new Conflict(`World '${worldId}' is inactive`);
    if (!access.decision.canAccess) throw new Forbidden(`World '${worldId}' requires an invite. Ask an admin to grant world access.`);
    this.assertSelfCreation(session.role, access);
    if (access.decision.reason === 'slot_limit_reached') {
      throw new Conflict(
        `No character slots remain in '${worldId}' for account '${session.username}'. ${access.characterCount}/${access.policy.slotLimitPerAccount} used.`,
      );
    }
    const created = await this.provision(session.userId, access.world, access.policy);
    return this.createdResponse(created, session.username);
  }

  /** Admin provisioning: only the slot limit applies, not access or naming modes. */
  async adminCreate(actor: AuthenticatedSession, rawTarget: string, rawWorldId: string): Promise<Schemas['CreatedCharacter']> {
    const targetName = rawTarget.trim();
    if (!targetName) throw new InvalidInput('target_username is required');
    const worldId = rawWorldId.trim();
    if (!worldId) throw new InvalidInput('world_id is required');
    const target = await this.d.users.findByUsername(targetName);
    if (!target) throw new NotFound(`User '${targetName}' not found`);
    if (target.id !== actor.userId && !outranks(actor.role, target.role)) {
      throw new Forbidden(`Insufficient permissions to manage user with role '${target.role}'`);
    }
    const access = await this.d.worldAccess.forWorld(target.id, target.role, worldId);
    if (!access) throw new NotFound(`World '${worldId}' not found`);
    if (!access.world.active) throw new Conflict(`World '${worldId}' is inactive`);
    const created = await this.provision(target.id, access.world, access.policy);
    return this.createdResponse(created, target.username);
  }

  private createdResponse(c: ProvisionedCharacter, owner: string): Schemas['CreatedCharacter'] {
    return {
      success: true,
      message: `Character '${c.name}' created for '${owner}'.`,
      character_id: c.id,
      character_name: c.name,
      world_id: c.worldId,
      seed: c.seed,
      entity_state: c.entityState,
      entity_state_error: c.entityStateError,
    };
  }

  async select(session: AuthenticatedSession, characterId: number, worldId: string | null | undefined): Promise<Schemas['SuccessMessage'] & { character_name: string }> {
    const character = await this.d.characters.findById(characterId);
    if (!character || character.userId !== session.userId) throw new NotFound('Character not found for this user');
    const world = worldId || character.worldId;
    const access = await this.d.worldAccess.forWorld(session.userId, session.role, world);
    if (!access?.decision.canAccess) throw new Forbidden('World access denied');
    if (character.worldId !== world) throw new Conflict('Character does not belong to world');
    if (!(await this.d.db.transaction((trx) => this.d.presence.bind(session, character, trx)))) throw new Failure('Failed to select character');
    return { success: true, message: 'Character selected.', character_name: character.name };
  }

  /**
   * Unbinds the session from its character (the player went back to the character list): the
   * character leaves at once unless another session plays it; the session stays logged in.
   */
  async deselect(session: AuthenticatedSession): Promise<Schemas['SuccessMessage']> {
    const { characterId, characterName } = session;
    if (characterId === null) throw new Conflict('No character selected for session. Select a character first.');
    if (!(await this.d.db.transaction((trx) => this.d.presence.unbind({ id: session.id, characterId }, trx)))) throw new Conflict('No character selected for session. Select a character first.');
    return { success: true, message: `${characterName ?? 'Your character'} leaves the world.` };
  }

  /** The world's axis bundle, or null when the world has no (valid) axis policies. */
  async axisBundle(worldId: string): Promise<AxisBundle | null> {
    try {
      return await resolveAxisBundle(this.d.policies, worldId);
    } catch (err) {
      if (err instanceof DomainError) return null;
      throw err;
    }
  }

  /**
   * Inserts a character in its own transaction, holding the account's slot lock for that
   * world: the slot count and the insert cannot interleave with another creation. A name
   * collision (the unique index) is reported as null so the caller can try another name.
   */
  async insertCharacter(
    c: { userId: number; world: World; policy: WorldPolicy; name: string; seed: number; isGuestCreated: boolean; bundle: AxisBundle | null },
    trx?: Parameters<Parameters<Db['transaction']>[0]>[0],
  ): Promise<number | null> {
    const work = async (t: NonNullable<typeof trx>): Promise<number> => {
      await lockKey(t, `character-slots:${c.userId}:${c.world.id}`);
      const count = await this.d.characters.countInWorld(c.userId, c.world.id, t);
      if (count >= c.policy.slotLimitPerAccount) {
        throw new Conflict(`No character slots are available in this world. ${count}/${c.policy.slotLimitPerAccount} already used.`);
      }
      const id = await this.d.characters.insert(
        {
          userId: c.userId,
          name: c.name,
          worldId: c.world.id,
          roomId: c.world.defaultSpawn.room,
          isGuestCreated: c.isGuestCreated,
          stateSeed: c.seed,
          createdAt: toDbTime(this.d.clock()),
        },
        t,
      );
      await this.d.state.seedInitial(t, { id, worldId: c.world.id, seed: c.seed }, c.bundle);
      return id;
    };
    try {
      return trx ? await trx.transaction(work) : await this.d.db.transaction(work);
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  /** Generated name (retrying the next seed on a collision), then the axis profile. */
  private async provision(userId: number, world: World, policy: WorldPolicy): Promise<ProvisionedCharacter> {
    const bundle = await this.axisBundle(world.id);
    const baseSeed = randomSeed();
    for (let attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
      const seed = ((baseSeed + attempt - 1) % MAX_SEED) + 1;
      let name: string;
      try {
        name = await this.d.names.fullName(seed);
      } catch (err) {
        if (err instanceof NameGenerationError) throw new UpstreamFailed(err.message);
        throw err;
      }
      const id = await this.insertCharacter({ userId, world, policy, name, seed, isGuestCreated: false, bundle });
      if (id !== null) return { id, name, worldId: world.id, seed, ...(await this.seedProfile({ id, worldId: world.id, seed }, bundle)) };
    }
    throw new Conflict('Unable to allocate a unique generated character name. Try again.');
  }

  /**
   * Moves a new character's axes to the generator's profile for its seed. The character is
   * kept whatever happens: a failure only fills `entityStateError`.
   */
  async seedProfile(
    character: { id: number; worldId: string; seed: number },
    bundle: AxisBundle | null,
  ): Promise<{ entityState: AxisSnapshot | null; entityStateError: string | null }> {
    if (!bundle) return { entityState: null, entityStateError: `World '${character.worldId}' has no active axis bundle; character axis state unavailable.` };
    try {
      const result = await this.d.entities.generate(character.seed, bundle);
      // normalizeEntityAxes keeps the upstream's key spelling; the bundle's axes are matched case-insensitively.
      const axisByLower = new Map(bundle.axisNames.map((n) => [n.trim().toLowerCase(), n]));
      const targets: Record<string, number> = {};
      for (const [key, score] of Object.entries(normalizeEntityAxes(result.payload, bundle))) {
        const axis = axisByLower.get(key.trim().toLowerCase());
        if (axis !== undefined && !(axis in targets)) targets[axis] = score;
      }
      const snapshot = await this.d.state.moveTo(character, bundle, targets, {
        type: 'entity_profile_seeded',
        description: 'Axis profile seeded from the entity generator at character creation.',
        metadata: { source: this.d.entities.source, seed: String(character.seed), generator_version: result.generatorVersion, axis_count: String(Object.keys(targets).length) },
      });
      return { entityState: snapshot, entityStateError: null };
    } catch (err) {
      const stored = await this.d.characters.findById(character.id);
      return { entityState: parseSnapshot(stored?.currentStateJson ?? null), entityStateError: (err as Error).message };
    }
  }

  async axisState(characterId: number): Promise<Schemas['CharacterAxisState']> {
    const c = await this.d.characters.findById(characterId);
    if (!c) throw new NotFound('Character not found');
    const current = parseSnapshot(c.currentStateJson);
    const scores = await this.d.axisState.scores(c.id);
    return {
      character_id: c.id,
      world_id: c.worldId,
      state_seed: c.stateSeed,
      state_version: c.stateVersion,
      state_updated_at: c.stateUpdatedAt,
      base_state: parseSnapshot(c.baseStateJson),
      current_state: current,
      axes: scores.map((s) => ({ axis_id: s.axisId, axis_name: s.axisName, axis_score: s.score, axis_label: current?.axes[s.axisName]?.label ?? null })),
    };
  }

  async axisEvents(characterId: number, limit: number): Promise<Schemas['CharacterAxisEvents']> {
    const events = await this.d.axisState.events(characterId, limit);
    return {
      character_id: characterId,
      events: events.map((e) => ({
        event_id: e.eventId,
        world_id: e.worldId,
        event_type: e.eventType,
        event_type_description: e.description,
        timestamp: e.createdAt,
        metadata: e.metadata,
        deltas: e.deltas.map((d) => ({ axis_name: d.axisName, old_score: d.oldScore, new_score: d.newScore, delta: d.delta })),
      })),
    };
  }
}
