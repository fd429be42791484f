import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { insertedId } from '../inserted-id.ts';
import type { Role } from '../../shared/roles.ts';
import { usernameKey } from '../../shared/names.ts';


export interface UserRecord {
  id: number;
  username: string;
  passwordHash: string;
  role: Role;
  isActive: boolean;
  isGuest: boolean;
  guestExpiresAt: string | null;
  accountOrigin: string;
  createdAt: string;
  lastLogin: string | null;
  /** When its mute ends (it may have ended already); null when none was set. */
  mutedUntil: string | null;
  muteReason: string | null;
}

export interface NewUser {
  username: string;
  passwordHash: string;
  role: Role;
  isGuest: boolean;
  guestExpiresAt: string | null;
  accountOrigin: string;
  createdAt: string;
}

interface UserRow {
  id: number;
  username: string;
  password_hash: string;
  role: Role;
  is_active: boolean | number;
  is_guest: boolean | number;
  guest_expires_at: string | null;
  account_origin: string;
  created_at: string;
  last_login: string | null;
  muted_until: string | null;
  mute_reason: string | null;
}

function toRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    passwordHash: row.password_hash,
    role: row.role,
    isActive: Boolean(row.is_active),
    isGuest: Boolean(row.is_guest),
    guestExpiresAt: row.guest_expires_at,
    accountOrigin: row.account_origin,
    createdAt: row.created_at,
    lastLogin: row.last_login,
    mutedUntil: row.muted_until ?? null,
    muteReason: row.mute_reason ?? null,
  };
}

/** SQL for the `users` table. Methods take an optional transaction. */
export class UserRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async findByUsername(username: string, trx: Knex = this.db): Promise<UserRecord | undefined> {
    const row = await trx<UserRow>('users').where({ username }).first();
    return row && toRecord(row);
  }

  /** The account whose name is `username` in any letter case (`username_key`: unique). */
  async findByUsernameKey(username: string, trx: Knex = this.db): Promise<UserRecord | undefined> {
    const row = (await trx('users').where({ username_key: usernameKey(username) }).first()) as UserRow | undefined;
    return row && toRecord(row);
  }

  async findById(id: number, trx: Knex = this.db): Promise<UserRecord | undefined> {
    const row = await trx<UserRow>('users').where({ id }).first();
    return row && toRecord(row);
  }

  /** Whether an account holds this name in any letter case. */
  async usernameTaken(username: string, trx: Knex = this.db): Promise<boolean> {
    return (await trx('users').where({ username_key: usernameKey(username) }).first('id')) !== undefined;
  }

  /** Inserts and returns the new id; a name taken in any letter case surfaces as a unique violation. */
  async create(user: NewUser, trx: Knex = this.db): Promise<number> {
    const [row] = await trx('users')
      .insert({
        username: user.username,
        username_key: usernameKey(user.username),
        password_hash: user.passwordHash,
        role: user.role,
        is_active: true,
        is_guest: user.isGuest,
        guest_expires_at: user.guestExpiresAt,
        account_origin: user.accountOrigin,
        created_at: user.createdAt,
      })
      .returning('id');
    return insertedId(row);
  }

  async update(
    id: number,
    changes: Partial<{ passwordHash: string; role: Role; isActive: boolean; mute: { until: string; reason: string | null } | null }>,
    trx: Knex = this.db,
  ): Promise<void> {
    const row: Record<string, unknown> = {};
    if (changes.passwordHash !== undefined) row.password_hash = changes.passwordHash;
    if (changes.role !== undefined) row.role = changes.role;
    if (changes.isActive !== undefined) row.is_active = changes.isActive;
    if (changes.mute !== undefined) {
      row.muted_until = changes.mute?.until ?? null;
      row.mute_reason = changes.mute?.reason ?? null;
    }
    await trx('users').where({ id }).update(row);
  }

  /**
   * Stamps a login, only while the account is active and its password hash is still the one
   * the login checked; false otherwise. The UPDATE locks the row until commit (PostgreSQL), so
   * a password change either waits for the login's session to commit and then ends it, or
   * commits first and this matches nothing.
   */
  async recordLogin(id: number, checkedHash: string, now: string, trx: Knex.Transaction): Promise<boolean> {
    return (await trx('users').where({ id, password_hash: checkedHash, is_active: true }).update({ last_login: now })) > 0;
  }

  /** Replaces the password hash only if it is still `checkedHash` (no concurrent change won); false otherwise. */
  async replacePasswordHash(id: number, checkedHash: string, passwordHash: string, trx: Knex.Transaction): Promise<boolean> {
    return (await trx('users').where({ id, password_hash: checkedHash }).update({ password_hash: passwordHash })) > 0;
  }

  /** Clears a temporary account's guest flag and expiry; false when it was not temporary. */
  async makePermanent(id: number, trx: Knex = this.db): Promise<boolean> {
    return (await trx('users').where({ id, is_guest: true }).update({ is_guest: false, guest_expires_at: null })) > 0;
  }

  /** Removes the account; sessions and grants go with it, characters are detached. */
  async delete(id: number, trx: Knex = this.db): Promise<void> {
    await trx('users').where({ id }).delete();
  }

  async countByRole(role: Role): Promise<number> {
    const row = await this.db('users').where({ role }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /**
   * Deletes temporary accounts whose expiry has passed, in one statement, so instances
   * running it at the same time simply find nothing left to delete.
   */
  async purgeExpiredTemporary(now: string): Promise<number> {
    return this.db('users').where({ is_guest: true }).whereNotNull('guest_expires_at').andWhere('guest_expires_at', '<=', now).delete();
  }
}
