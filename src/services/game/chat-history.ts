/**
 * Per-instance memory of each room's newest messages, so a chat poll needs no query. A room is
 * read from the database on its first poll and forgotten whenever the bus tells of chat in it
 * (this instance's at commit, before the say answers; other instances' as they arrive), so the
 * next poll reads it again. Like the session cache, nothing is served from memory while the bus
 * may be missing events, and everything is forgotten when it listens again.
 */
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { ChatRow, GameRepository } from '../../db/repositories/game-repository.ts';

interface RoomChat {
  /** The room's newest messages, oldest first. */
  rows: ChatRow[];
  /** True when `rows` are all the room's messages. */
  complete: boolean;
}

export class ChatHistory {
  private readonly bus: EventBus;
  private readonly repo: GameRepository;
  /** Messages kept per room: what one poll shows, so retention (never fewer per room) cannot have removed them. */
  private readonly kept: number;
  private readonly rooms = new Map<string, RoomChat>();
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
   * The room's latest `limit` messages the character may read, newer than `afterId`, oldest
   * first (GameRepository.recentMessages), from memory when it holds every message that could
   * be among them.
   */
  async recent(worldId: string, roomId: string, characterId: number, limit: number, afterId: number): Promise<ChatRow[]> {
    const room = await this.room(worldId, roomId);
    if (room) {
      const visible = room.rows.filter((r) => r.id > afterId && (r.recipientId === null || r.recipientId === characterId || r.senderId === characterId));
      // Memory holds every message from its oldest row on (or all of them, when complete).
      if (visible.length >= limit || room.complete || afterId >= room.rows[0]!.id - 1) return visible.slice(-limit);
    }
    return this.repo.recentMessages(worldId, roomId, characterId, limit, afterId);
  }

  private async room(worldId: string, roomId: string): Promise<RoomChat | undefined> {
    if (!this.bus.connected()) return undefined;
    const key = `${worldId}\n${roomId}`;
    const known = this.rooms.get(key);
    if (known) return known;
    const version = this.generation;
    const rows = await this.repo.roomTail(worldId, roomId, this.kept);
    const room = { rows, complete: rows.length < this.kept };
    if (version === this.generation && this.bus.connected()) this.rooms.set(key, room);
    return room;
  }

  private invalidate(event: BusEvent): void {
    if (event.type === 'chat') {
      this.generation++;
      for (const roomId of event.roomIds) this.rooms.delete(`${event.worldId}\n${roomId}`);
    } else if (event.type === 'reconnected' || (event.type === 'session.ended' && event.reason === 'deleted')) {
      // A deleted account's characters no longer name the recipients of their whispers.
      this.generation++;
      this.rooms.clear();
    }
  }
}
