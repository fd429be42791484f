/**
 * Who is online, as the event streams tell it: a character is online while an unexpired session
 * that is not away plays it (docs/decisions.md, "Presence means connected"). Binding a session to
 * a character, unbinding it, ending sessions, a link-dead session going away and coming back go
 * through here, so every path (login, select, deselect, logout, kick, ban, deletion, password
 * change, expiry, link-dead sweep, return) announces arrive / leave and presence once, and only
 * when the character's state really changes.
 */
import type { Knex } from 'knex';
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import { idChunks, type EventBus, type StreamEndReason } from '../../db/event-bus.ts';
import type { CharacterRecord, CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { EndedSession, SessionRepository } from '../../db/repositories/session-repository.ts';

export interface PresenceDeps {
  db: Db;
  bus: EventBus;
  sessions: SessionRepository;
  characters: CharacterRepository;
  clock: Clock;
}

type Announced = Pick<CharacterRecord, 'id' | 'name' | 'worldId' | 'roomId'>;

export class Presence {
  private readonly d: PresenceDeps;

  constructor(deps: PresenceDeps) {
    this.d = deps;
  }

  /**
   * Binds the session to the character. The character arrives and comes online unless another
   * session (or this one, re-selecting) already plays it; the character the session played
   * before leaves when no other session plays it. False when the session is gone.
   */
  async bind(session: { id: number; characterId: number | null }, character: Announced, trx: Knex.Transaction): Promise<boolean> {
    const now = toDbTime(this.d.clock());
    const alreadyOnline = await this.d.sessions.characterBound(character.id, now, trx);
    if ((await this.d.sessions.bindCharacter(session.id, character.id, character.worldId, trx)) === 0) return false;
    await this.d.bus.publish({ type: 'session.changed', sessionIds: [session.id] }, trx);
    if (!alreadyOnline) await this.announce(character, true, trx);
    if (session.characterId !== null && session.characterId !== character.id) await this.leaveIfUnplayed([session.characterId], trx);
    return true;
  }

  /** Unbinds the session from its character, which leaves unless another session plays it. False when the session is gone. */
  async unbind(session: { id: number; characterId: number }, trx: Knex.Transaction): Promise<boolean> {
    if ((await this.d.sessions.unbindCharacter(session.id, trx)) === 0) return false;
    await this.d.bus.publish({ type: 'session.changed', sessionIds: [session.id] }, trx);
    await this.leaveIfUnplayed([session.characterId], trx);
    return true;
  }

  /**
   * An away session made a request or opened a stream: it is back, and its character arrives
   * again unless another session kept it in the lists. Once per return, whichever instance sees it.
   */
  async comeBack(session: { id: number; characterId: number | null }): Promise<void> {
    const now = toDbTime(this.d.clock());
    await this.d.db.transaction(async (trx) => {
      const alreadyOnline = session.characterId !== null && (await this.d.sessions.characterBound(session.characterId, now, trx));
      if (!(await this.d.sessions.comeBack(session.id, now, trx))) return;
      await this.d.bus.publish({ type: 'session.changed', sessionIds: [session.id] }, trx);
      if (session.characterId === null || alreadyOnline) return;
      const [character] = await this.d.characters.findByIds([session.characterId], trx);
      if (character) await this.announce(character, true, trx);
    });
  }

  /** A link-dead session's request was written: its character is connected again on every instance's lists. */
  async connected(worldId: string): Promise<void> {
    await this.d.bus.publish({ type: 'connection', worldId });
  }

  /**
   * Marks away the sessions link-dead for longer than `linkdeadMs` (SWEEP_BATCH per transaction);
   * their characters that no other session keeps in the lists leave. Returns how many went away.
   */
  async sweepLinkdead(linkdeadMs: number, batch: number): Promise<number> {
    const now = this.d.clock();
    const cutoff = toDbTime(new Date(now.getTime() - linkdeadMs));
    let total = 0;
    for (;;) {
      const away = await this.d.db.transaction(async (trx) => {
        const sessions = await this.d.sessions.markAway(cutoff, toDbTime(now), batch, trx);
        for (const sessionIds of idChunks(sessions.map((s) => s.id))) await this.d.bus.publish({ type: 'session.changed', sessionIds }, trx);
        await this.leaveIfUnplayed(sessions.flatMap((s) => (s.characterId === null ? [] : [s.characterId])), trx);
        return sessions.length;
      });
      total += away;
      if (away < batch) return total;
    }
  }

  /**
   * Called once the sessions are deleted (inside the deleting transaction when there is one):
   * their streams end on every instance with `reason`, and each character no other session
   * plays leaves its room and goes offline. Characters must still exist here.
   */
  async ended(sessions: readonly EndedSession[], reason: StreamEndReason, trx?: Knex.Transaction): Promise<void> {
    // An account may hold thousands of sessions: the ids go out in bounded events.
    for (const sessionIds of idChunks(sessions.map((s) => s.id))) await this.d.bus.publish({ type: 'session.ended', sessionIds, reason }, trx);
    await this.leaveIfUnplayed(sessions.flatMap((s) => (s.characterId === null ? [] : [s.characterId])), trx);
  }

  /** Two queries per MAX_IDS_PER_EVENT characters, however many sessions ended. */
  private async leaveIfUnplayed(characterIds: readonly number[], trx?: Knex.Transaction): Promise<void> {
    const now = toDbTime(this.d.clock());
    for (const ids of idChunks([...new Set(characterIds)])) {
      const bound = await this.d.sessions.boundCharacters(ids, now, trx);
      const left = ids.filter((id) => !bound.has(id));
      for (const character of await this.d.characters.findByIds(left, trx)) await this.announce(character, false, trx);
    }
  }

  /** The others in its room see it arrive or leave; the world sees it come online or go offline. */
  private async announce(character: Announced, online: boolean, trx?: Knex.Transaction): Promise<void> {
    const who = { worldId: character.worldId, characterId: character.id, name: character.name };
    if (character.roomId !== null) {
      await this.d.bus.publish(
        { type: 'move', ...who, from: online ? null : character.roomId, to: online ? character.roomId : null, direction: null, cause: online ? 'login' : 'logout' },
        trx,
      );
    }
    await this.d.bus.publish({ type: 'presence', ...who, online }, trx);
  }
}
