/**
 * Per-instance memory of recently validated sessions (with their account and character), so a
 * poll needs no query to know who asks. Every change that could make an entry wrong is an
 * event on the bus (src/db/event-bus.ts) and only drops entries: a session ended or bound to
 * another character, an account's role or standing changed, a character moved. This instance's
 * own changes drop at commit, before their request answers; other instances' arrive through the
 * bus. While the bus may be missing events (PostgreSQL's LISTEN connection down) nothing is
 * served from memory, and everything is forgotten when it listens again. Entries also expire
 * after ENTRY_TTL_MS, which bounds changes made outside any server (the CLI).
 */
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { SessionRecord } from '../../db/repositories/session-repository.ts';

const ENTRY_TTL_MS = 30_000;
/** Past this many entries the oldest are forgotten first. */
const MAX_ENTRIES = 20_000;

interface Entry {
  record: SessionRecord;
  cachedAt: number;
}

/** What one invalidation concerned: sessions, an account, a character, or everything. */
interface Touched {
  sessionIds?: readonly number[];
  userId?: number;
  characterId?: number;
  all?: true;
}

/**
 * Invalidations remembered, so that a record read while others happened can still be kept when
 * none of them concerned it (in a busy world some always happen during a read). A record read
 * before older ones than these is not kept.
 */
const LOG_SIZE = 4096;

export class SessionCache {
  private readonly bus: EventBus;
  /** By token hash, oldest first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  private readonly bySession = new Map<number, string>();
  private readonly byUser = new Map<number, Set<string>>();
  private readonly byCharacter = new Map<number, Set<string>>();
  /** Counts invalidations: a record read before one that concerns it may be stale and is not remembered. */
  private generation = 0;
  /** The last LOG_SIZE invalidations, invalidation n at n % LOG_SIZE. */
  private readonly log: Touched[] = new Array<Touched>(LOG_SIZE);

  constructor(bus: EventBus) {
    this.bus = bus;
    const invalidate = (event: BusEvent): void => this.invalidate(event);
    bus.subscribe(invalidate);
    bus.onCommitted(invalidate);
  }

  /** The remembered session for this token hash, unless stale or the bus may be missing events. */
  get(tokenHash: string, nowMs: number): SessionRecord | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (!this.bus.connected() || nowMs - entry.cachedAt > ENTRY_TTL_MS) {
      this.drop(tokenHash);
      return undefined;
    }
    return entry.record;
  }

  /** Where invalidations stand: take it before reading a record from the database, for `set`. */
  get version(): number {
    return this.generation;
  }

  /** Remembers a record read from the database, unless an invalidation since `version` concerned it. */
  set(tokenHash: string, record: SessionRecord, nowMs: number, version: number): void {
    if (!this.bus.connected() || !this.untouchedSince(version, record)) return;
    this.drop(tokenHash);
    while (this.entries.size >= MAX_ENTRIES) this.drop(this.entries.keys().next().value!);
    this.entries.set(tokenHash, { record, cachedAt: nowMs });
    this.bySession.set(record.id, tokenHash);
    index(this.byUser, record.userId, tokenHash);
    if (record.characterId !== null) index(this.byCharacter, record.characterId, tokenHash);
  }

  private untouchedSince(version: number, record: SessionRecord): boolean {
    if (this.generation - version > LOG_SIZE) return false;
    for (let n = version; n < this.generation; n++) {
      const t = this.log[n % LOG_SIZE]!;
      if (t.all || t.userId === record.userId || t.sessionIds?.includes(record.id)) return false;
      if (t.characterId !== undefined && t.characterId === record.characterId) return false;
    }
    return true;
  }

  /** Replaces `previous`, if still the remembered record, by `next` (its activity was recorded), keeping its age. */
  update(tokenHash: string, previous: SessionRecord, next: SessionRecord): void {
    const entry = this.entries.get(tokenHash);
    if (entry?.record === previous) entry.record = next;
  }

  private invalidate(event: BusEvent): void {
    switch (event.type) {
      case 'session.ended':
      case 'session.changed':
        this.touched({ sessionIds: event.sessionIds });
        for (const id of event.sessionIds) {
          const key = this.bySession.get(id);
          if (key !== undefined) this.drop(key);
        }
        return;
      case 'account.changed':
        this.touched({ userId: event.userId });
        for (const key of [...(this.byUser.get(event.userId) ?? [])]) this.drop(key);
        return;
      case 'move':
        this.touched({ characterId: event.characterId });
        for (const key of [...(this.byCharacter.get(event.characterId) ?? [])]) this.drop(key);
        return;
      case 'reconnected':
        this.touched({ all: true });
        this.clear();
        return;
      default:
        return;
    }
  }

  private touched(what: Touched): void {
    this.log[this.generation % LOG_SIZE] = what;
    this.generation++;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    const { id, userId, characterId } = entry.record;
    if (this.bySession.get(id) === key) this.bySession.delete(id);
    unindex(this.byUser, userId, key);
    if (characterId !== null) unindex(this.byCharacter, characterId, key);
  }

  private clear(): void {
    this.entries.clear();
    this.bySession.clear();
    this.byUser.clear();
    this.byCharacter.clear();
  }
}

function index(map: Map<number, Set<string>>, id: number, key: string): void {
  let keys = map.get(id);
  if (!keys) map.set(id, (keys = new Set()));
  keys.add(key);
}

function unindex(map: Map<number, Set<string>>, id: number, key: string): void {
  const keys = map.get(id);
  if (!keys) return;
  keys.delete(key);
  if (keys.size === 0) map.delete(id);
}
