/**
 * SQL of the reference import: rows written with the history they carry (timestamps, state,
 * inactive accounts, names kept without their unique keys), which creation never sets, and the
 * look-ups that tell what an earlier import already wrote. Every method runs in the import's
 * one transaction.
 */
import type { Knex } from 'knex';
import { insertedId } from '../inserted-id.ts';
import { chatMessageRow, type NewChatMessage } from './game-repository.ts';
import type { UserRecord } from './user-repository.ts';

/** An account as the import writes it (the reference server mutes nobody). */
export type ImportedUser = Omit<UserRecord, 'id' | 'mutedUntil' | 'muteReason'> & {
  /** Null when another account holds the name in another letter case (it still logs in by its exact name). */
  usernameKey: string | null;
};

export interface ImportedCharacter {
  userId: number | null;
  name: string;
  nameKey: string;
  /** Null when a character of the world already has a look-alike name. */
  nameSkeleton: string | null;
  worldId: string;
  roomId: string;
  isGuestCreated: boolean;
  createdAt: string;
  updatedAt: string;
  stateSeed: number;
  stateVersion: string | null;
  baseStateJson: string | null;
  currentStateJson: string | null;
  stateUpdatedAt: string | null;
}

/** A message as the import writes it: its sender's character may not have been imported. */
export type ImportedChat = Omit<NewChatMessage, 'characterId'> & { characterId: number | null };

/** The game tables an import into an "empty" database must find empty. */
const GAME_TABLES = ['users', 'characters', 'chat_messages', 'ledger_events'] as const;

/** Chat rows per INSERT: 8 values each, well under SQLite's limit on bound values. */
const CHAT_BATCH = 200;

export class ReferenceImportRepository {
  /** Row counts of the game tables that are not empty. */
  async gameRows(trx: Knex): Promise<Record<string, number>> {
    const found: Record<string, number> = {};
    for (const table of GAME_TABLES) {
      const row = await trx(table).count({ n: '*' }).first();
      const n = Number(row?.n ?? 0);
      if (n > 0) found[table] = n;
    }
    return found;
  }

  async userByKey(key: string, trx: Knex): Promise<{ id: number; username: string; passwordHash: string } | undefined> {
    const row = await trx('users').where({ username_key: key }).first('id', 'username', 'password_hash');
    return row && { id: Number(row.id), username: String(row.username), passwordHash: String(row.password_hash) };
  }

  async userByName(username: string, trx: Knex): Promise<{ id: number; passwordHash: string } | undefined> {
    const row = await trx('users').where({ username }).first('id', 'password_hash');
    return row && { id: Number(row.id), passwordHash: String(row.password_hash) };
  }

  async insertUser(u: ImportedUser, trx: Knex): Promise<number> {
    const [row] = await trx('users')
      .insert({
        username: u.username,
        username_key: u.usernameKey,
        password_hash: u.passwordHash,
        role: u.role,
        is_active: u.isActive,
        is_guest: u.isGuest,
        guest_expires_at: u.guestExpiresAt,
        account_origin: u.accountOrigin,
        created_at: u.createdAt,
        last_login: u.lastLogin,
      })
      .returning('id');
    return insertedId(row);
  }

  async characterByNameKey(key: string, trx: Knex): Promise<{ id: number; worldId: string; userId: number | null } | undefined> {
    const row = await trx('characters').where({ name_key: key }).first('id', 'world_id', 'user_id');
    return row && { id: Number(row.id), worldId: String(row.world_id), userId: row.user_id === null ? null : Number(row.user_id) };
  }

  async skeletonTaken(worldId: string, skeleton: string, trx: Knex): Promise<boolean> {
    return (await trx('characters').where({ world_id: worldId, name_skeleton: skeleton }).first('id')) !== undefined;
  }

  async insertCharacter(c: ImportedCharacter, trx: Knex): Promise<number> {
    const [row] = await trx('characters')
      .insert({
        user_id: c.userId,
        name: c.name,
        name_key: c.nameKey,
        name_skeleton: c.nameSkeleton,
        world_id: c.worldId,
        room_id: c.roomId,
        is_guest_created: c.isGuestCreated,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
        state_seed: c.stateSeed,
        state_version: c.stateVersion,
        base_state_json: c.baseStateJson,
        current_state_json: c.currentStateJson,
        state_updated_at: c.stateUpdatedAt,
      })
      .returning('id');
    return insertedId(row);
  }

  /** Items a character holds: instances with no room, as `get` leaves them. */
  async insertHeldItems(worldId: string, characterId: number, itemIds: readonly string[], trx: Knex): Promise<void> {
    if (itemIds.length === 0) return;
    await trx('item_instances').insert(itemIds.map((itemId) => ({ world_id: worldId, item_id: itemId, room_id: null, character_id: characterId })));
  }

  async grantExists(userId: number, worldId: string, trx: Knex): Promise<boolean> {
    return (await trx('world_permissions').where({ user_id: userId, world_id: worldId }).first('user_id')) !== undefined;
  }

  async insertGrant(g: { userId: number; worldId: string; canAccess: boolean; createdAt: string }, trx: Knex): Promise<void> {
    await trx('world_permissions').insert({ user_id: g.userId, world_id: g.worldId, can_access: g.canAccess, created_at: g.createdAt });
  }

  async chatExists(m: ImportedChat, trx: Knex): Promise<boolean> {
    const row = await trx('chat_messages')
      .where({ world_id: m.worldId, room_id: m.roomId, sender_name: m.senderName, channel: m.channel, message: m.message, created_at: m.createdAt })
      .first('id');
    return row !== undefined;
  }

  /**
   * Inserts chat in the given order and returns the ids in that order. Ids grow in the order
   * of a statement's rows (as GameService.post relies on), so they ascend as the reference's
   * did: the order of /chat and of event-stream ids.
   */
  async insertChat(messages: readonly ImportedChat[], trx: Knex): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < messages.length; i += CHAT_BATCH) {
      const rows = await trx('chat_messages').insert(messages.slice(i, i + CHAT_BATCH).map(chatMessageRow), 'id');
      // Whatever order RETURNING lists them in.
      ids.push(...rows.map((row) => insertedId(row)).sort((a, b) => a - b));
    }
    return ids;
  }

  async ledgerEventExists(eventId: string, trx: Knex): Promise<boolean> {
    return (await trx('ledger_events').where({ event_id: eventId }).first('id')) !== undefined;
  }

  /** Whether a row with these key values is in the table. */
  async exists(table: string, key: Record<string, unknown>, trx: Knex): Promise<boolean> {
    return (await trx(table).where(key).first(trx.raw('1 as found'))) !== undefined;
  }

  /** Inserts a row of a policy-store table as it is. */
  async insertRow(table: string, row: Record<string, unknown>, trx: Knex): Promise<void> {
    await trx(table).insert(row);
  }
}
