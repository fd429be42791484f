/**
 * SQL of the game: where characters are, items in rooms and inventories, chat, and who is
 * active. Everything lives in the database so several server instances share one world.
 */
import type { Knex } from 'knex';
import { lockKey, type Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import { isUniqueViolation } from '../errors.ts';
import { insertedId } from '../inserted-id.ts';
import { nameKey } from '../../shared/names.ts';

export interface ItemInstance {
  id: number;
  itemId: string;
  /** A builder's name for this item; null: its package item's. */
  name: string | null;
  /** A builder's description for this item; null: its package item's. */
  description: string | null;
}

/** Every channel a chat message is stored in. */
export type MessageChannel = 'say' | 'yell' | 'whisper' | 'emote' | 'tell' | 'ooc';
/**
 * Channels that reach past the room (docs/decisions.md, "Social verbs"): `ooc` the whole world,
 * `tell` its recipient wherever they are. Their rows keep the sender's room but are read by world.
 */
export const WORLD_CHANNELS: readonly MessageChannel[] = ['tell', 'ooc'];

/** Who spoke a chat line: a character, an NPC, or a room or item's script (the room's echo). */
export type Speaker = 'character' | 'npc' | 'world';

export interface NewChatMessage {
  worldId: string;
  roomId: string;
  /** The speaking character; null for an NPC or a script (`speaker`). */
  characterId: number | null;
  speaker?: Exclude<Speaker, 'character'>;
  /** The speaking NPC. */
  npcId?: string;
  senderName: string;
  channel: MessageChannel;
  recipientCharacterId: number | null;
  message: string;
  createdAt: string;
}

/** A `chat_messages` row of a message (a message carried over from elsewhere may have no sender character). */
export function chatMessageRow(m: NewChatMessage): Record<string, unknown> {
  return {
    world_id: m.worldId,
    room_id: m.roomId,
    character_id: m.characterId,
    speaker_kind: m.speaker ?? 'character',
    npc_id: m.npcId ?? null,
    sender_name: m.senderName,
    channel: m.channel,
    recipient_character_id: m.recipientCharacterId,
    message: m.message,
    created_at: m.createdAt,
  };
}

/**
 * A character in its world's lists: bound to an unexpired session that is not away.
 * `expiresAt` is the earliest its sessions end (null: one never does). It is link-dead when no
 * such session has an open event stream or a request since `idleSince` (docs/decisions.md,
 * "Presence means connected"); `activeAt` is the latest request that counts (one before its
 * last stream closed does not).
 */
export interface ActiveCharacter {
  id: number;
  name: string;
  roomId: string | null;
  expiresAt: string | null;
  linkdead: boolean;
  /** One of its sessions has an open event stream (on any instance). */
  streaming: boolean;
  activeAt: string | null;
}

/**
 * Who reads chat: a character, and the characters its account ignores, whose messages it is not
 * shown (src/services/game/game-core.ts `readable` is the same rule for rows in memory).
 */
export interface ChatReader {
  characterId: number;
  ignored: ReadonlySet<number>;
}

export interface ChatRow {
  id: number;
  roomId: string;
  /** Null once the sender's character is deleted. */
  senderId: number | null;
  recipientId: number | null;
  sender: string;
  text: string;
  channel: MessageChannel;
  recipient: string | null;
  createdAt: string;
  speaker: Speaker;
  /** The NPC that spoke, when one did. */
  npcId: string | null;
}

export class GameRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Places a world's items in their rooms the first time the world is seen; later calls do nothing. */
  async seedWorldItems(worldId: string, placements: ReadonlyArray<{ roomId: string; itemId: string }>, now: Date): Promise<boolean> {
    try {
      await this.db.transaction(async (trx) => {
        await trx('world_seeds').insert({ world_id: worldId, seeded_at: toDbTime(now) });
        if (placements.length > 0) {
          await trx('item_instances').insert(placements.map((p) => ({ world_id: worldId, item_id: p.itemId, room_id: p.roomId, character_id: null })));
        }
      });
      return true;
    } catch (err) {
      // Another instance seeded it first.
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async setRoom(characterId: number, roomId: string, now: Date): Promise<void> {
    await this.db('characters').where({ id: characterId }).update({ room_id: roomId, updated_at: toDbTime(now) });
  }

  async roomItems(worldId: string, roomId: string): Promise<ItemInstance[]> {
    const rows = await this.db('item_instances').where({ world_id: worldId, room_id: roomId }).orderBy('id').select('id', 'item_id', 'name', 'description');
    return rows.map(itemInstance);
  }

  async inventory(characterId: number): Promise<ItemInstance[]> {
    const rows = await this.db('item_instances').where({ character_id: characterId }).orderBy('id').select('id', 'item_id', 'name', 'description');
    return rows.map(itemInstance);
  }

  /** Moves an item from the room to the character; false when someone else got it first. */
  async take(instanceId: number, roomId: string, characterId: number): Promise<boolean> {
    const moved = await this.db('item_instances').where({ id: instanceId, room_id: roomId }).whereNull('character_id').update({ room_id: null, character_id: characterId });
    return moved === 1;
  }

  /** Puts a held item into a room; false when the character no longer holds it. */
  async drop(instanceId: number, characterId: number, roomId: string): Promise<boolean> {
    const moved = await this.db('item_instances').where({ id: instanceId, character_id: characterId }).update({ room_id: roomId, character_id: null });
    return moved === 1;
  }

  /** Puts everything the character holds into the room; returns how many items were moved. */
  async dropAll(characterId: number, roomId: string, trx: Knex): Promise<number> {
    return trx('item_instances').where({ character_id: characterId }).update({ room_id: roomId, character_id: null });
  }

  private activeSessions(q: Knex.QueryBuilder, worldId: string, now: Date): Knex.QueryBuilder {
    return q
      .join('sessions as s', 's.character_id', 'c.id')
      .where('s.world_id', worldId)
      .andWhere('s.away', false)
      .andWhere((w) => w.whereNull('s.expires_at').orWhere('s.expires_at', '>', toDbTime(now)));
  }

  /**
   * The world's characters in its lists (or those of `characterIds` among them), sorted by name;
   * a request after `idleSince` keeps one connected.
   */
  async activeCharacters(worldId: string, now: Date, idleSince: Date, characterIds?: readonly number[]): Promise<ActiveCharacter[]> {
    const live = this.db('event_stream_leases').where('lease_until', '>', toDbTime(now)).distinct('session_id').as('l');
    const rows = await this.activeSessions(this.db('characters as c'), worldId, now)
      .modify((q) => {
        if (characterIds) q.whereIn('c.id', characterIds);
      })
      .leftJoin(live, 'l.session_id', 's.id')
      .groupBy('c.id', 'c.name', 'c.room_id')
      .select('c.id', 'c.name', 'c.room_id', {
        expires_at: this.db.raw('min(s.expires_at)'),
        streaming: this.db.raw('max(case when l.session_id is null then 0 else 1 end)'),
        active_at: this.db.raw('max(case when s.disconnected_at is null or s.last_activity > s.disconnected_at then s.last_activity end)'),
      })
      .orderBy('c.name');
    const idle = toDbTime(idleSince);
    return rows.map((r) => {
      const activeAt = (r.active_at as string | null) ?? null;
      const streaming = Number(r.streaming) === 1;
      return {
        id: Number(r.id),
        name: String(r.name),
        roomId: (r.room_id as string | null) ?? null,
        expiresAt: (r.expires_at as string | null) ?? null,
        linkdead: !streaming && (activeAt === null || activeAt <= idle),
        streaming,
        activeAt,
      };
    });
  }

  async activeInRoom(worldId: string, roomId: string, now: Date): Promise<Array<{ id: number; name: string }>> {
    const rows = await this.activeSessions(this.db('characters as c'), worldId, now).where('c.room_id', roomId).distinct('c.id', 'c.name').orderBy('c.name');
    return rows.map((r) => ({ id: Number(r.id), name: String(r.name) }));
  }

  /** Where these characters are (callers pass at most a few hundred ids). */
  async roomsOf(characterIds: readonly number[]): Promise<Map<number, string | null>> {
    if (characterIds.length === 0) return new Map();
    const rows = await this.db('characters').whereIn('id', characterIds).select('id', 'room_id');
    return new Map(rows.map((r: { id: number | string; room_id: string | null }) => [Number(r.id), r.room_id ?? null]));
  }

  /** The world's character of this name in any letter case (names are unique so: `characters.name_key`). */
  async findInWorldByName(worldId: string, name: string): Promise<{ id: number; name: string; roomId: string | null } | undefined> {
    const row = await this.db('characters').where({ world_id: worldId, name_key: nameKey(name) }).first('id', 'name', 'room_id');
    return row && { id: Number(row.id), name: String(row.name), roomId: (row.room_id as string | null) ?? null };
  }

  /**
   * Up to `limit` of the world's characters whose name, or one of its words (after a space,
   * hyphen or apostrophe), starts with `text` in any letter case: the candidates of a name
   * typed in part.
   */
  async charactersNamedLike(worldId: string, text: string, limit = 6): Promise<Array<{ id: number; name: string; roomId: string | null }>> {
    const start = nameKey(text).replace(/[\\%_]/g, (c) => `\\${c}`);
    const rows = await this.db('characters')
      .where({ world_id: worldId })
      .where((q) => {
        for (const pattern of [`${start}%`, `% ${start}%`, `%-${start}%`, `%'${start}%`, `%\u2019${start}%`]) q.orWhereRaw("name_key like ? escape '\\'", [pattern]);
      })
      .orderBy('name_key')
      .limit(limit)
      .select('id', 'name', 'room_id');
    return rows.map((r: { id: number | string; name: string; room_id: string | null }) => ({ id: Number(r.id), name: String(r.name), roomId: r.room_id ?? null }));
  }

  /** Returns the new messages' ids. */
  async insertMessages(messages: readonly NewChatMessage[]): Promise<number[]> {
    const rows = await this.db('chat_messages').insert(messages.map(chatMessageRow), 'id');
    return rows.map((row) => insertedId(row));
  }

  /**
   * Deletes, in one statement, the messages written before `before` and those beyond the
   * newest `keepPerRoom` of their room; returns how many went. Instances pruning at once take
   * turns: two such deletes scanning the table from different places (PostgreSQL synchronizes
   * sequential scans) could otherwise deadlock on each other's row locks.
   */
  async pruneMessages(before: string, keepPerRoom: number): Promise<number> {
    return this.db.transaction(async (trx): Promise<number> => {
      await lockKey(trx, 'chat-retention');
      const ranked = trx('chat_messages').select('id').rowNumber('recency', { column: 'id', order: 'desc' }, ['world_id', 'room_id']);
      const excess = trx.from(ranked.as('ranked')).where('recency', '>', keepPerRoom).select('id');
      return trx('chat_messages').where('created_at', '<', before).orWhereIn('id', excess).del();
    });
  }

  /** Chat rows with their sender's and recipient's current names. */
  private chatQuery(): Knex.QueryBuilder {
    return this.db('chat_messages as m')
      .leftJoin('characters as sender', 'sender.id', 'm.character_id')
      .leftJoin('characters as recipient', 'recipient.id', 'm.recipient_character_id')
      .select('m.id', 'm.room_id', 'm.character_id', 'm.speaker_kind', 'm.npc_id', 'm.recipient_character_id', 'm.sender_name', { sender_now: 'sender.name' }, 'm.message', 'm.channel', { recipient: 'recipient.name' }, 'm.created_at');
  }

  /**
   * The latest messages the reader may read where it is, oldest first: its room's (public,
   * or whispers to or from it) and its world's (ooc, and tells to or from it), none from a
   * character it ignores; with `afterId`, only those newer than that message.
   */
  async recentMessages(worldId: string, roomId: string, reader: ChatReader, limit: number, afterId = 0): Promise<ChatRow[]> {
    const { characterId, ignored } = reader;
    const query = this.chatQuery()
      .where('m.world_id', worldId)
      .andWhere('m.id', '>', afterId)
      .andWhere((where) =>
        where
          .where((room) => room.where('m.room_id', roomId).whereNotIn('m.channel', WORLD_CHANNELS))
          .orWhere((world) => world.whereIn('m.channel', WORLD_CHANNELS)),
      )
      .andWhere((w) => w.whereNull('m.recipient_character_id').orWhere('m.recipient_character_id', characterId).orWhere('m.character_id', characterId))
      .orderBy('m.id', 'desc')
      .limit(limit);
    if (ignored.size > 0) query.andWhere((w) => w.whereNull('m.character_id').orWhereNotIn('m.character_id', [...ignored]));
    const rows = await query;
    return rows.reverse().map(chatRow);
  }

  /** The room's newest `limit` messages of its own channels, whoever may read them, oldest first. */
  async roomTail(worldId: string, roomId: string, limit: number): Promise<ChatRow[]> {
    const rows = await this.chatQuery().where({ 'm.world_id': worldId, 'm.room_id': roomId }).whereNotIn('m.channel', WORLD_CHANNELS).orderBy('m.id', 'desc').limit(limit);
    return rows.reverse().map(chatRow);
  }

  /** The world's newest `limit` messages of WORLD_CHANNELS, whoever may read them, oldest first. */
  async worldTail(worldId: string, limit: number): Promise<ChatRow[]> {
    const rows = await this.chatQuery().where('m.world_id', worldId).whereIn('m.channel', WORLD_CHANNELS).orderBy('m.id', 'desc').limit(limit);
    return rows.reverse().map(chatRow);
  }

  /** Messages by id, in id order (for the event streams, which filter them per character). */
  async messagesByIds(ids: readonly number[]): Promise<ChatRow[]> {
    if (ids.length === 0) return [];
    return (await this.chatQuery().whereIn('m.id', ids).orderBy('m.id')).map(chatRow);
  }

  /** The newest message id (0 when there is none): where a new event stream's chat starts. */
  async lastMessageId(): Promise<number> {
    const row = await this.db('chat_messages').max({ id: 'id' }).first();
    return Number(row?.id ?? 0);
  }
}

function itemInstance(r: Record<string, unknown>): ItemInstance {
  return { id: Number(r.id), itemId: String(r.item_id), name: (r.name as string | null) ?? null, description: (r.description as string | null) ?? null };
}

function chatRow(r: Record<string, unknown>): ChatRow {
  return {
    id: Number(r.id),
    roomId: String(r.room_id),
    senderId: r.character_id === null ? null : Number(r.character_id),
    recipientId: r.recipient_character_id === null ? null : Number(r.recipient_character_id),
    sender: String(r.sender_now ?? r.sender_name),
    text: String(r.message),
    channel: r.channel as ChatRow['channel'],
    recipient: (r.recipient as string | null) ?? null,
    createdAt: String(r.created_at),
    speaker: (r.speaker_kind as Speaker | undefined) ?? 'character',
    npcId: (r.npc_id as string | null | undefined) ?? null,
  };
}
