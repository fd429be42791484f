/**
 * Per-instance memory of each room's newest messages, and each world's newest messages of the
 * world-wide channels (ooc, tell), so a chat poll needs no query. A room (or world) is
 * read from the database on its first poll and forgotten whenever the bus tells of chat in it
 * (this instance's at commit, before the say answers; other instances' as they arrive), so the
 * next poll reads it again. Like the session cache, nothing is served from memory while the bus
 * may be missing events, and everything is forgotten when it listens again.
 */
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { ChatReader, ChatRow, GameRepository } from '../../db/repositories/game-repository.ts';
import { readable } from './game-core.ts';

/** The key of a world's world-wide messages: a room id never holds a newline. */
const worldKey = (worldId: string): string => `${worldId}\n`;
const roomKey = (worldId: string, roomId: string): string => `${worldId}\n${roomId}`;

interface ChatTail {
  /** The newest messages of a room (or of a world's world-wide channels), oldest first. */
  rows: ChatRow[];
  /** True when `rows` are all of them. */
  complete: boolean;
}

export class ChatHistory {
  private readonly bus: EventBus;
  private readonly repo: GameRepository;
  /** Messages kept per room: what one poll shows, so retention (never fewer per room) cannot have removed them. */
  private readonly kept: number;
  private readonly tails = new Map<string, ChatTail>();
  /** Counts invalidations: a room read before one may be stale and is not remembered. */
  private generation = 0;

  constructor(bus: EventBus, repo: GameRepository, kept: number) {
    this.bus = bus;
    this.repo = repo;
    this.kept = kept;
    const invalidate = (event: BusEvent): void => this.invalidate(event);
    bus.subscribe(invalidate);
    bus.onCommitted(invalidate);
  }

  /**
   * The latest `limit` messages the reader may read in its room, newer than `afterId`, oldest
   * first (GameRepository.recentMessages), from memory when it holds every message that could
   * be among them: the newest `limit` of the room's and of the world's that are each exact.
   */
  async recent(worldId: string, roomId: string, reader: ChatReader, limit: number, afterId: number): Promise<ChatRow[]> {
    const room = await this.tail(roomKey(worldId, roomId), () => this.repo.roomTail(worldId, roomId, this.kept));
    const world = room && (await this.tail(worldKey(worldId), () => this.repo.worldTail(worldId, this.kept)));
    if (room && world) {
      const visible = (source: ChatTail): ChatRow[] | null => {
        const rows = source.rows.filter((r) => r.id > afterId && readable(r, reader));
        // Memory holds every message from its oldest row on (or all of them, when complete).
        return rows.length >= limit || source.complete || afterId >= source.rows[0]!.id - 1 ? rows.slice(-limit) : null;
      };
      const [inRoom, inWorld] = [visible(room), visible(world)];
      if (inRoom && inWorld) return [...inRoom, ...inWorld].sort((a, b) => a.id - b.id).slice(-limit);
    }
    return this.repo.recentMessages(worldId, roomId, reader, limit, afterId);
  }

  private async tail(key: string, read: () => Promise<ChatRow[]>): Promise<ChatTail | undefined> {
    if (!this.bus.connected()) return undefined;
    const known = this.tails.get(key);
    if (known) return known;
    const version = this.generation;
    const rows = await read();
    const room = { rows, complete: rows.length < this.kept };
    if (version === this.generation && this.bus.connected()) this.tails.set(key, room);
    return room;
  }

  private invalidate(event: BusEvent): void {
    if (event.type === 'chat') {
      this.generation++;
      for (const roomId of event.roomIds) this.tails.delete(roomKey(event.worldId, roomId));
      if (event.worldWide) this.tails.delete(worldKey(event.worldId));
    } else if (event.type === 'reconnected' || (event.type === 'session.ended' && event.reason === 'deleted')) {
      // A deleted account's characters no longer name the recipients of their whispers.
      this.generation++;
      this.tails.clear();
    }
  }
}
