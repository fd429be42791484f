/**
 * User administration: create, manage (role, ban/unban, delete, password, mute/unmute), world
 * grants and kicks — each rule of the interface specification in its order, with its status.
 * Each action done is recorded in the audit log (src/services/moderation/audit.ts), with its
 * reason, in the transaction that does it.
 */
import type { Knex } from 'knex';
import type { Db } from '../../db/database.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { UserRecord, UserRepository } from '../../db/repositories/user-repository.ts';
import type { CharacterRecord, CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { GameRepository } from '../../db/repositories/game-repository.ts';
import type { SessionRecord, SessionRepository } from '../../db/repositories/session-repository.ts';
import type { WorldPermissionRepository } from '../../db/repositories/world-permission-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, Forbidden, InvalidInput, NotFound } from '../../shared/errors.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { assertStandardPassword, newUsername } from '../accounts/account-service.ts';
import type { PasswordHasher } from '../accounts/password-hasher.ts';
import type { Presence } from '../presence/presence.ts';
import type { EventBus } from '../../db/event-bus.ts';
import type { AuthenticatedSession } from '../accounts/session-service.ts';
import { hasPermission, isRole, outranks, rank, type Permission, type Role } from '../../shared/roles.ts';
import { MAX_REASON_CHARACTERS, staffText, type AuditLog, type AuditRecord, type Door } from '../moderation/audit.ts';

type SuccessMessage = components['schemas']['SuccessMessage'];
type CharacterKickResult = components['schemas']['CharacterKickResult'];

/** What `POST /admin/character/manage` does to a character (docs/decisions.md, "Accounts and sessions"). */
export type CharacterAction = components['schemas']['ManageCharacterRequest']['action'];

/** A tombstoned character's name: free of its old one, and told apart by the reference's clients by its prefix. */
const tombstoneName = (characterId: number): string => `tombstone_${characterId}`;

const MANAGE_ACTIONS = ['change_role', 'ban', 'deactivate', 'unban', 'delete', 'change_password', 'make_permanent', 'mute', 'unmute'] as const;
type ManageAction = 'change_role' | 'ban' | 'unban' | 'delete' | 'change_password' | 'make_permanent' | 'mute' | 'unmute';

const ACTION_PERMISSION: Record<ManageAction, Permission> = {
  change_role: 'manage_users',
  delete: 'manage_users',
  change_password: 'manage_users',
  ban: 'ban_users',
  unban: 'ban_users',
  // The same rules as a ban (docs/decisions.md, "Moderation").
  mute: 'ban_users',
  unmute: 'ban_users',
  // A temporary account made permanent is as if staff had created it (docs/decisions.md).
  make_permanent: 'create_users',
};

export const ADMIN_PASSWORD_MIN_LENGTH = 8;

/** A session handle: its row id in canonical decimal (no sign, no leading zero). Anything else is taken as a token. */
const SESSION_HANDLE = /^[1-9][0-9]*$/;
/** Row ids are 32-bit (PostgreSQL `serial`); a larger handle names no session. */
const MAX_SESSION_HANDLE = 2_147_483_647;

export function insufficientPermission(permission: Permission): Forbidden {
  return new Forbidden(`Insufficient permissions. Required: ${permission}`);
}

/** The 403 for acting on an account (or its session) whose role is not below the actor's. */
function outranked(role: Role): Forbidden {
  return new Forbidden(`Insufficient permissions to manage user with role '${role}'`);
}

/** Superusers may assign any role; everyone else only roles below their own. */
function canAssignRole(actor: Role, role: Role): boolean {
  return actor === 'superuser' || outranks(actor, role);
}

export interface ManageRequest {
  action: string;
  targetUsername: string;
  newRole?: string;
  newPassword?: string;
  /** How long a mute lasts. */
  minutes?: number;
  /** Why, for the audit log (and a mute's answer). */
  reason?: string;
}

/** The longest mute: a year. */
export const MAX_MUTE_MINUTES = 525_600;

export interface UserAdminDeps {
  db: Db;
  users: UserRepository;
  sessions: SessionRepository;
  characters: CharacterRepository;
  /** Where a deleted character's belongings are put down. */
  items: GameRepository;
  permissions: WorldPermissionRepository;
  worlds: WorldCatalog;
  hasher: PasswordHasher;
  clock: Clock;
  presence: Presence;
  events: EventBus;
  audit: AuditLog;
}

export class UserAdminService {
  private readonly d: UserAdminDeps;

  constructor(deps: UserAdminDeps) {
    this.d = deps;
  }

  async createUser(
    actor: AuthenticatedSession,
    req: { username: string; role: string; password: string; passwordConfirm: string },
  ): Promise<SuccessMessage> {
    const username = newUsername(req.username);
    const role = req.role.trim().toLowerCase();
    if (!isRole(role)) throw new InvalidInput('Invalid role. Valid roles: admin, player, superuser, worldbuilder');
    if (!canAssignRole(actor.role, role)) throw new Forbidden(`Insufficient permissions to create role '${role}'`);
    if (await this.d.users.usernameTaken(username)) throw new InvalidInput('Username already taken');
    if (req.password !== req.passwordConfirm) throw new InvalidInput('Passwords do not match');
    assertStandardPassword(req.password);
    try {
      await this.d.users.create({
        username,
        passwordHash: await this.d.hasher.hash(req.password),
        role,
        isGuest: false,
        guestExpiresAt: null,
        accountOrigin: actor.role,
        createdAt: toDbTime(this.d.clock()),
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new InvalidInput('Username already taken');
      throw err;
    }
    return { success: true, message: `User '${username}' created with role '${role}'. No character was provisioned automatically.` };
  }

  async manageUser(actor: AuthenticatedSession, req: ManageRequest, door: Door): Promise<SuccessMessage> {
    const lowered = req.action.toLowerCase();
    if (!(MANAGE_ACTIONS as readonly string[]).includes(lowered)) {
      throw new InvalidInput(`Invalid action '${req.action}'. Valid actions: ${MANAGE_ACTIONS.join(', ')}`);
    }
    const action = (lowered === 'deactivate' ? 'ban' : lowered) as ManageAction;
    const permission = ACTION_PERMISSION[action];
    if (!hasPermission(actor.role, permission)) throw insufficientPermission(permission);

    const target = await this.d.users.findByUsername(req.targetUsername);
    if (!target) throw new NotFound(`User '${req.targetUsername}' not found`);
    if (target.id === actor.userId && action !== 'change_password') throw new InvalidInput('Cannot manage your own account');
    if (!outranks(actor.role, target.role)) throw outranked(target.role);
    const reason = staffText(req.reason, MAX_REASON_CHARACTERS, 'reason');
    /** Runs the action's writes and its audit entry in one transaction (the entry first, while the target still exists). */
    const audited = (record: Omit<AuditRecord, 'target' | 'reason'>, work: (trx: Knex.Transaction) => Promise<void>): Promise<void> =>
      this.d.db.transaction(async (trx) => {
        await this.d.audit.record(actor, door, { ...record, target: { id: target.id, username: target.username }, reason }, trx);
        await work(trx);
      });

    switch (action) {
      case 'change_role':
        return this.changeRole(actor, target, req.newRole, audited);
      case 'ban':
        await audited({ action }, async (trx) => {
          await this.d.users.update(target.id, { isActive: false }, trx);
          await this.d.presence.ended(await this.d.sessions.deleteForUser(target.id, trx), 'ban', trx);
        });
        return { success: true, message: `Successfully banned ${target.username}` };
      case 'unban':
        await audited({ action }, (trx) => this.d.users.update(target.id, { isActive: true }, trx));
        return { success: true, message: `Successfully unbanned ${target.username}` };
      case 'delete':
        if (actor.role !== 'superuser') throw new Forbidden('Only superusers may permanently delete users');
        await audited({ action }, async (trx) => {
          // Sessions first, so the characters still exist to be announced offline.
          await this.d.presence.ended(await this.d.sessions.deleteForUser(target.id, trx), 'deleted', trx);
          await this.d.users.delete(target.id, trx);
        });
        return { success: true, message: `Successfully deleted ${target.username}` };
      case 'change_password': {
        if (!req.newPassword) throw new InvalidInput('new_password is required for change_password action');
        if ([...req.newPassword].length < ADMIN_PASSWORD_MIN_LENGTH) {
          throw new InvalidInput(`Password must be at least ${ADMIN_PASSWORD_MIN_LENGTH} characters long`);
        }
        // Stricter than the specification's 8 characters: a reset password is as exposed as any other (docs/decisions.md).
        assertStandardPassword(req.newPassword);
        const passwordHash = await this.d.hasher.hash(req.newPassword);
        // A reset is for an account someone else may hold: none of its sessions survives it.
        await audited({ action }, async (trx) => {
          await this.d.users.update(target.id, { passwordHash }, trx);
          await this.d.presence.ended(await this.d.sessions.deleteForUser(target.id, trx), 'password_change', trx);
        });
        return { success: true, message: `Successfully changed password for ${target.username}` };
      }
      case 'make_permanent':
        // Its sessions learn it through the bus (session cache, streams).
        await audited({ action }, async (trx) => {
          if (!(await this.d.users.makePermanent(target.id, trx))) throw new InvalidInput(`User '${target.username}' is not a temporary account`);
          await this.d.events.publish({ type: 'account.changed', userId: target.id }, trx);
        });
        return { success: true, message: `${target.username}'s account is now permanent` };
      case 'mute': {
        const minutes = req.minutes;
        if (minutes === undefined) throw new InvalidInput('minutes is required for mute action');
        if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_MUTE_MINUTES) throw new InvalidInput(`minutes must be a whole number from 1 to ${MAX_MUTE_MINUTES}`);
        const until = toDbTime(new Date(this.d.clock().getTime() + minutes * 60_000));
        // The account's sessions carry the mute: every instance's session cache drops them.
        await audited({ action, detail: `until ${until} UTC` }, async (trx) => {
          await this.d.users.update(target.id, { mute: { until, reason } }, trx);
          await this.d.events.publish({ type: 'account.changed', userId: target.id }, trx);
        });
        return { success: true, message: `Muted ${target.username} until ${until} UTC` };
      }
      case 'unmute':
        if (target.mutedUntil === null || target.mutedUntil <= toDbTime(this.d.clock())) throw new InvalidInput(`User '${target.username}' is not muted`);
        await audited({ action }, async (trx) => {
          await this.d.users.update(target.id, { mute: null }, trx);
          await this.d.events.publish({ type: 'account.changed', userId: target.id }, trx);
        });
        return { success: true, message: `Unmuted ${target.username}` };
    }
  }

  private async changeRole(
    actor: AuthenticatedSession,
    target: UserRecord,
    newRole: string | undefined,
    audited: (record: Omit<AuditRecord, 'target' | 'reason'>, work: (trx: Knex.Transaction) => Promise<void>) => Promise<void>,
  ): Promise<SuccessMessage> {
    if (!newRole) throw new InvalidInput('new_role is required for change_role action');
    const role = newRole.trim().toLowerCase();
    if (!isRole(role)) throw new InvalidInput('Invalid role. Valid roles: player, worldbuilder, admin, superuser');
    if (!canAssignRole(actor.role, role)) throw new Forbidden(`Insufficient permissions to assign role '${role}'`);
    await audited({ action: 'change_role', detail: `${target.role} to ${role}` }, async (trx) => {
      await this.d.users.update(target.id, { role }, trx);
      await this.d.events.publish({ type: 'account.changed', userId: target.id }, trx);
    });
    return { success: true, message: `Successfully changed ${target.username}'s role to ${role}` };
  }

  async setWorldAccess(
    actor: AuthenticatedSession,
    req: { targetUsername: string; worldId: string; canAccess: boolean; reason?: string },
    door: Door,
  ): Promise<SuccessMessage> {
    if (rank(actor.role) < rank('admin')) throw new Forbidden('World access grants require admin or superuser role.');
    const target = await this.d.users.findByUsername(req.targetUsername.trim());
    if (!target) throw new NotFound(`User '${req.targetUsername}' not found`);
    const worldId = req.worldId.trim();
    if (!this.d.worlds.get(worldId)) throw new NotFound(`World '${worldId}' not found`);
    if (!outranks(actor.role, target.role)) throw outranked(target.role);
    const reason = staffText(req.reason, MAX_REASON_CHARACTERS, 'reason');
    await this.d.db.transaction(async (trx) => {
      await this.grant(target.id, worldId, req.canAccess, trx);
      const detail = `${req.canAccess ? 'granted' : 'revoked'} ${worldId}`;
      await this.d.audit.record(actor, door, { action: 'world_access', target: { id: target.id, username: target.username }, reason, detail }, trx);
    });
    return {
      success: true,
      message: req.canAccess
        ? `Granted ${target.username} access to world '${worldId}'`
        : `Revoked ${target.username}'s access to world '${worldId}'`,
    };
  }

  /** Records a grant; shared with the `grant-world` CLI command. */
  async grant(userId: number, worldId: string, canAccess: boolean, trx?: Knex.Transaction): Promise<void> {
    await this.d.permissions.set(userId, worldId, canAccess, toDbTime(this.d.clock()), trx);
  }

  /**
   * Ends a session named by its token or by its handle (the row id, as listed). The actor must
   * outrank the session's owner, except for sessions of the actor's own account (like logout).
   */
  async kick(actor: AuthenticatedSession, target: string, rawReason: string | undefined, door: Door): Promise<SuccessMessage> {
    const session = await this.findSession(target);
    if (session === undefined) return { success: false, message: 'Session not found' };
    if (session.userId !== actor.userId && !outranks(actor.role, session.role)) throw outranked(session.role);
    const reason = staffText(rawReason, MAX_REASON_CHARACTERS, 'reason');
    const removed = await this.d.db.transaction(async (trx) => {
      const count = await this.d.sessions.delete(session.id, trx);
      if (count > 0) {
        await this.d.presence.ended([session], 'kick', trx);
        const detail = `session ${session.id}${session.characterName === null ? '' : ` (${session.characterName})`}`;
        await this.d.audit.record(actor, door, { action: 'kick', target: { id: session.userId, username: session.username }, reason, detail }, trx);
      }
      return count;
    });
    return removed > 0 ? { success: true, message: 'Session disconnected' } : { success: false, message: 'Session not found' };
  }

  /**
   * Ends every session playing the character, under the kick's rank rule: the caller must
   * outrank the character's owner, unless the character is the caller's own. 404 for an
   * unknown character; none playing it answers `success` false and records nothing.
   */
  async kickCharacter(actor: AuthenticatedSession, characterId: number, rawReason: string | undefined, door: Door): Promise<CharacterKickResult> {
    const { character, owner } = await this.characterInReach(actor, characterId);
    const reason = staffText(rawReason, MAX_REASON_CHARACTERS, 'reason');
    const removed = await this.d.db.transaction(async (trx) => {
      const ended = await this.d.sessions.deleteForCharacter(character.id, trx);
      if (ended.length > 0) {
        await this.d.presence.ended(ended, 'kick', trx);
        const detail = `character ${character.id} (${character.name}): ${ended.length} session${ended.length === 1 ? '' : 's'}`;
        await this.d.audit.record(actor, door, { action: 'kick', target: owner && { id: owner.id, username: owner.username }, reason, detail }, trx);
      }
      return ended.length;
    });
    return removed > 0
      ? { success: true, message: `Disconnected ${removed} session(s) for ${character.name}.`, removed_sessions: removed }
      : { success: false, message: `No active sessions found for ${character.name}.`, removed_sessions: 0 };
  }

  /**
   * Tombstones or deletes a character (MANAGE_USERS, checked by the route) under the rank rule of
   * kickCharacter. Either ends the sessions playing it first. A tombstone keeps the row without an
   * owner, renamed `tombstone_<id>`; a delete removes it, its belongings put down where it stood.
   * The audit entry is written first, in the same transaction.
   */
  async manageCharacter(actor: AuthenticatedSession, characterId: number, action: CharacterAction, door: Door): Promise<SuccessMessage> {
    const { character, owner } = await this.characterInReach(actor, characterId);
    if (action === 'tombstone' && character.userId === null && character.name === tombstoneName(character.id)) {
      throw new Conflict(`Character '${character.name}' is already tombstoned`);
    }
    const now = toDbTime(this.d.clock());
    await this.d.db.transaction(async (trx) => {
      const record = { action: action === 'tombstone' ? ('tombstone_character' as const) : ('delete_character' as const), target: owner && { id: owner.id, username: owner.username } };
      await this.d.audit.record(actor, door, { ...record, detail: `character ${character.id} (${character.name}) in ${character.worldId}` }, trx);
      // Before the name changes or the row goes: the character leaves its room as it was known.
      await this.d.presence.ended(await this.d.sessions.deleteForCharacter(character.id, trx), 'deleted', trx);
      if (action === 'tombstone') {
        if (!(await this.d.characters.tombstone(character.id, tombstoneName(character.id), now, trx))) throw new NotFound('Character not found');
        return;
      }
      const room = character.roomId ?? this.d.worlds.get(character.worldId)?.defaultSpawn.room ?? null;
      if (room !== null && (await this.d.items.dropAll(character.id, room, trx)) > 0) {
        await this.d.events.publish({ type: 'world.changed', worldId: character.worldId, roomIds: [], itemRoomIds: [room], characterIds: [character.id] }, trx);
      }
      if (!(await this.d.characters.delete(character.id, trx))) throw new NotFound('Character not found');
    });
    return { success: true, message: action === 'tombstone' ? `Character '${character.name}' tombstoned.` : `Character '${character.name}' deleted.` };
  }

  /** The character and its owner (null when detached), 404 when unknown, 403 when the owner is not below the caller (the caller's own characters excepted). */
  private async characterInReach(actor: AuthenticatedSession, characterId: number): Promise<{ character: CharacterRecord; owner: UserRecord | null }> {
    const character = await this.d.characters.findById(characterId);
    if (!character) throw new NotFound('Character not found');
    const owner = character.userId === null ? null : ((await this.d.users.findById(character.userId)) ?? null);
    if (owner && owner.id !== actor.userId && !outranks(actor.role, owner.role)) throw outranked(owner.role);
    return { character, owner };
  }

  private async findSession(target: string): Promise<SessionRecord | undefined> {
    const now = toDbTime(this.d.clock());
    if (!SESSION_HANDLE.test(target)) return this.d.sessions.find(target, now);
    const id = Number(target);
    return id <= MAX_SESSION_HANDLE ? this.d.sessions.findById(id, now) : undefined;
  }
}
