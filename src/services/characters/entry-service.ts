/**
 * The two ways into the game that create or bind a character in the same call: guest
 * registration (a temporary account with one character, or nothing at all) and direct login.
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { SessionRepository } from '../../db/repositories/session-repository.ts';
import type { UserRepository } from '../../db/repositories/user-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, Failure, Forbidden, InvalidInput, NotFound } from '../../shared/errors.ts';
import { assertStandardPassword, temporaryAccount, type AccountService } from '../accounts/account-service.ts';
import type { PasswordHasher } from '../accounts/password-hasher.ts';
import type { WorldAccessService } from '../worlds/world-access.ts';
import { validateCharacterName, type CharacterService } from './character-service.ts';
import { randomSeed } from '../../integrations/seeded-random.ts';
import type { Presence } from '../presence/presence.ts';

type Schemas = components['schemas'];

const GUEST_USERNAME_ATTEMPTS = 20;

export interface EntryDeps {
  db: Db;
  users: UserRepository;
  characters: CharacterRepository;
  sessions: SessionRepository;
  accounts: AccountService;
  characterService: CharacterService;
  worldAccess: WorldAccessService;
  hasher: PasswordHasher;
  clock: Clock;
  presence: Presence;
  defaultWorldId: string;
  allowMultiWorldCharacters: boolean;
}

export class EntryService {
  private readonly d: EntryDeps;

  constructor(deps: EntryDeps) {
    this.d = deps;
  }

  private async freeGuestUsername(): Promise<string> {
    for (let i = 0; i < GUEST_USERNAME_ATTEMPTS; i++) {
      const username = `guest_${String(randomInt(100000)).padStart(5, '0')}`;
      if (!(await this.d.users.usernameTaken(username))) return username;
    }
    throw new Failure('Failed to allocate a guest username');
  }

  /** A guest creates its own character: the self-creation rule comes first, then the specification's checks. */
  async registerGuest(password: string, passwordConfirm: string, rawName: string): Promise<Schemas['GuestRegistration']> {
    const worldId = this.d.defaultWorldId;
    // Guests start in the default world; its access mode and grants do not apply, its slot limit does.
    const world = this.d.worldAccess.worldAndPolicy(worldId);
    if (!world) throw new Failure(`Default world '${worldId}' is not loaded`);
    this.d.characterService.assertSelfCreation('player', world);
    const name = validateCharacterName(rawName);
    if (await this.d.characters.findByName(name)) throw new InvalidInput('Character name already taken');
    await this.d.characterService.assertNotLookalike(worldId, name);
    if (password !== passwordConfirm) throw new InvalidInput('Passwords do not match');
    assertStandardPassword(password);
    const username = await this.freeGuestUsername();
    const passwordHash = await this.d.hasher.hash(password);
    const bundle = await this.d.characterService.axisBundle(worldId);
    const seed = randomSeed();
    const now = this.d.clock();
    // Account and character in one transaction: a character that cannot be created leaves no account.
    const created = await this.d.db.transaction(async (trx) => {
      let userId: number;
      try {
        userId = await this.d.users.create(temporaryAccount(username, passwordHash, now), trx);
      } catch (err) {
        if (isUniqueViolation(err)) throw new Failure('Failed to create guest account. Please try again.');
        throw err;
      }
      let characterId: number | null;
      try {
        characterId = await this.d.characterService.insertCharacter(
          { userId, world: world.world, policy: world.policy, name, seed, isGuestCreated: true, bundle },
          trx,
        );
      } catch (err) {
        // The spec answers any failure to create the guest's character with 400 (no slot left in the default world).
        if (err instanceof Conflict) throw new InvalidInput(err.message);
        throw err;
      }
      if (characterId === null) throw new InvalidInput('Character name already taken');
      return characterId;
    });
    const profile = await this.d.characterService.seedProfile({ id: created, worldId, seed }, bundle);
    return {
      success: true,
      message: `Temporary guest account created successfully! You can now login as ${username}.`,
      username,
      character_id: created,
      character_name: name,
      world_id: worldId,
      entity_state: profile.entityState,
      entity_state_error: profile.entityStateError,
    };
  }

  async loginDirect(
    req: { username: string; password: string; worldId: string; characterName?: string; createCharacter: boolean },
    clientType: string,
    address: string,
  ): Promise<Schemas['DirectLoginResult']> {
    if (!req.characterName?.trim()) throw new InvalidInput('character_name is required');
    const user = await this.d.accounts.authenticate(req.username, req.password, address);
    const worldId = req.worldId.trim();
    const access = await this.d.worldAccess.forWorld(user.id, user.role, worldId);
    if (!access?.decision.canAccess) throw new Forbidden('World access denied');
    const existing = await this.d.characters.findByName(req.characterName);
    if (existing && (existing.userId !== user.id || existing.worldId !== worldId)) throw new Forbidden('Character not available');
    let characterId = existing?.id;
    let characterName = existing?.name;
    if (characterId === undefined) {
      if (!req.createCharacter) throw new NotFound('Character not found');
      this.d.characterService.assertSelfCreation(user.role, access);
      const counts = await this.d.characters.countByWorld(user.id);
      if (!this.d.allowMultiWorldCharacters && counts.size > 0 && !counts.has(worldId)) throw new Conflict('Multi-world characters are disabled');
      const name = validateCharacterName(req.characterName);
      await this.d.characterService.assertNotLookalike(worldId, name);
      const seed = randomSeed();
      const bundle = await this.d.characterService.axisBundle(worldId);
      let id: number | null;
      try {
        id = await this.d.characterService.insertCharacter({ userId: user.id, world: access.world, policy: access.policy, name, seed, isGuestCreated: false, bundle });
      } catch (err) {
        if (err instanceof Conflict) throw new Conflict('Failed to create character');
        throw err;
      }
      if (id === null) throw new Conflict('Failed to create character');
      await this.d.characterService.seedProfile({ id, worldId, seed }, bundle);
      characterId = id;
      characterName = name;
    }
    const boundId = characterId;
    const session = await this.d.db.transaction(async (trx) => {
      const opened = await this.d.accounts.openSession(user, clientType, trx);
      const character = await this.d.characters.findById(boundId, trx);
      if (!character || !(await this.d.presence.bind({ id: opened.id, characterId: null }, character, trx))) throw new Failure('Failed to select character');
      return opened;
    });
    return { success: true, message: 'Login successful.', session_id: session.token, role: user.role, character_name: characterName!, world_id: worldId };
  }
}
