/**
 * The characters each account ignores (docs/decisions.md, "Moderation"): kept per account in the
 * database, so they hold for all its characters and sessions, on every instance. Chat is
 * filtered where it is delivered (`readable` in src/services/game/game-core.ts, which the
 * event streams and GET /chat apply), and a tell to an account that ignores its sender is
 * refused (`ownerIgnores`). Each instance remembers the lists it read; a change is an event on
 * the bus that drops the account's list everywhere (this instance's at commit, before the
 * command answers), and nothing is remembered while the bus may miss events.
 */
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { IgnoredCharacter, ModerationRepository } from '../../db/repositories/moderation-repository.ts';

/** The most characters one account may ignore. */
export const MAX_IGNORED = 100;
/** Past this many remembered lists the oldest are forgotten first. */
const MAX_REMEMBERED = 20_000;
const NONE: ReadonlySet<number> = new Set();

export class IgnoreLists {
  private readonly repo: ModerationRepository;
  private readonly bus: EventBus;
  private readonly clock: Clock;
  /** Account id → the ids of the characters it ignores, oldest first (a Map keeps insertion order). */
  private readonly lists = new Map<number, ReadonlySet<number>>();
  /** Counts invalidations: a list read before one may be stale and is not remembered. */
  private generation = 0;

  constructor(repo: ModerationRepository, bus: EventBus, clock: Clock) {
    this.repo = repo;
    this.bus = bus;
    this.clock = clock;
    const invalidate = (event: BusEvent): void => {
      if (event.type === 'ignores.changed') {
        this.generation++;
        this.lists.delete(event.userId);
      } else if (event.type === 'reconnected') {
        this.generation++;
        this.lists.clear();
      }
    };
    bus.subscribe(invalidate);
    bus.onCommitted(invalidate);
  }

  /** The ids of the characters an account ignores (for the chat it is shown). */
  async ignoredBy(userId: number): Promise<ReadonlySet<number>> {
    const known = this.lists.get(userId);
    if (known !== undefined && this.bus.connected()) return known;
    const version = this.generation;
    const ids = await this.repo.ignoredBy(userId);
    const list = ids.length === 0 ? NONE : new Set(ids);
    if (version === this.generation && this.bus.connected()) {
      this.lists.delete(userId);
      if (this.lists.size >= MAX_REMEMBERED) this.lists.delete(this.lists.keys().next().value!);
      this.lists.set(userId, list);
    }
    return list;
  }

  list(userId: number): Promise<IgnoredCharacter[]> {
    return this.repo.ignoreList(userId);
  }

  /** Adds a character to the account's list: `already` when it is there, `full` at MAX_IGNORED. */
  async add(userId: number, characterId: number): Promise<'added' | 'already' | 'full'> {
    const outcome = await this.repo.addIgnore(userId, characterId, MAX_IGNORED, toDbTime(this.clock()));
    if (outcome === 'added') await this.bus.publish({ type: 'ignores.changed', userId });
    return outcome;
  }

  /** False when the account did not ignore the character. */
  async remove(userId: number, characterId: number): Promise<boolean> {
    const removed = await this.repo.removeIgnore(userId, characterId);
    if (removed) await this.bus.publish({ type: 'ignores.changed', userId });
    return removed;
  }

  /** Whether the account playing `characterId` ignores `senderId` (a tell between them is refused). */
  ownerIgnores(characterId: number, senderId: number): Promise<boolean> {
    return this.repo.ownerIgnores(characterId, senderId);
  }
}
