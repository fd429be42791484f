/**
 * SQL of NPCs and scripts at play (docs/decisions.md, "Scripts"): where each NPC stands
 * (`npc_positions`), what each script keeps between runs (`script_state`, written only when the
 * version read is still there), its timers (`script_timers`: fired by advancing their due time
 * only while it is the one read, so a timer fires once however many instances try), which
 * instance holds a world's clock (`world_clocks`, a lease), and the errors builders read
 * (`script_errors`).
 */
import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { toDbTime } from '../clock.ts';
import { chunks } from '../row-chunks.ts';

export type Runner = Db | Knex.Transaction;

export interface ScriptState {
  /** The JSON of the script's `state`. */
  state: string;
  version: number;
  faults: number;
  suspendedAt: string | null;
}

export interface Timer {
  owner: string;
  name: string;
  /** Epoch milliseconds. */
  dueAt: number;
  /** Null for a timer that fires once. */
  periodMs: number | null;
}

export interface ScriptError {
  id: number;
  owner: string;
  hook: string;
  kind: string;
  message: string;
  line: number | null;
  createdAt: string;
}

/** Errors kept per world: the newest, enough for a builder to read what went wrong lately. */
const ERRORS_KEPT = 200;

export class NpcRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  // --- where NPCs stand ---

  /** Where each NPC of the world stands. */
  async positions(worldId: string): Promise<Map<string, string>> {
    const rows = await this.db('npc_positions').where({ world_id: worldId }).select('npc_id', 'room_id');
    return new Map(rows.map((r: { npc_id: string; room_id: string }) => [r.npc_id, r.room_id]));
  }

  /** Places NPCs that stand nowhere yet (new ones, at their home), leaving the others where they are. */
  async placeNew(worldId: string, homes: ReadonlyArray<{ npcId: string; roomId: string }>, now: Date): Promise<void> {
    for (const some of chunks(homes)) {
      await this.db('npc_positions')
        .insert(some.map((h) => ({ world_id: worldId, npc_id: h.npcId, room_id: h.roomId, updated_at: toDbTime(now) })))
        .onConflict(['world_id', 'npc_id'])
        .ignore();
    }
  }

  async move(worldId: string, npcId: string, roomId: string, now: Date, runner: Runner = this.db): Promise<void> {
    await runner('npc_positions')
      .insert({ world_id: worldId, npc_id: npcId, room_id: roomId, updated_at: toDbTime(now) })
      .onConflict(['world_id', 'npc_id'])
      .merge();
  }

  /** Where one NPC stands (undefined: nowhere yet). */
  async standingAt(worldId: string, npcId: string, runner: Runner = this.db): Promise<string | undefined> {
    const row = await runner('npc_positions').where({ world_id: worldId, npc_id: npcId }).first('room_id');
    return row ? String(row.room_id) : undefined;
  }

  /** The NPCs standing in a room. */
  async standingIn(worldId: string, roomId: string, runner: Runner = this.db): Promise<string[]> {
    return runner('npc_positions').where({ world_id: worldId, room_id: roomId }).orderBy('npc_id').pluck('npc_id');
  }

  async forget(worldId: string, npcId: string, runner: Runner = this.db): Promise<void> {
    await runner('npc_positions').where({ world_id: worldId, npc_id: npcId }).del();
  }

  // --- script state ---

  /** A script's state: `{}` at version 1 for a script that never ran. */
  async state(worldId: string, owner: string, now: Date): Promise<ScriptState> {
    const read = () => this.db('script_state').where({ world_id: worldId, owner }).first('state', 'version', 'faults', 'suspended_at');
    let row = await read();
    if (!row) {
      await this.db('script_state').insert({ world_id: worldId, owner, state: '{}', version: 1, faults: 0, suspended_at: null, updated_at: toDbTime(now) }).onConflict(['world_id', 'owner']).ignore();
      row = await read();
    }
    return { state: String(row.state), version: Number(row.version), faults: Number(row.faults), suspendedAt: (row.suspended_at as string | null) ?? null };
  }

  /** Writes a run's state when the script's row is still at the version read: false when another run wrote first, whose result then stands. */
  async writeState(trx: Knex.Transaction, worldId: string, owner: string, read: number, state: string, now: Date): Promise<boolean> {
    return (await trx('script_state').where({ world_id: worldId, owner, version: read }).update({ state, version: read + 1, faults: 0, updated_at: toDbTime(now) })) === 1;
  }

  /**
   * Counts a fault; at `suspendAt` faults in a row the script is suspended, and its timers go
   * with it: a suspended script's timers would stay due, be read at every tick and count against
   * `timers_per_world` (saving the script again runs its onLoad, which sets them again). Returns
   * whether it is now suspended.
   */
  async fault(worldId: string, owner: string, suspendAt: number, now: Date): Promise<boolean> {
    return this.db.transaction(async (trx) => {
      const script = () => trx('script_state').where({ world_id: worldId, owner });
      await script().increment('faults', 1);
      await script().andWhere('faults', '>=', suspendAt).whereNull('suspended_at').update({ suspended_at: toDbTime(now) });
      const suspended = (await script().first('suspended_at'))?.suspended_at != null;
      if (suspended) await trx('script_timers').where({ world_id: worldId, owner }).del();
      return suspended;
    });
  }

  /** A script saved again runs again: no faults, not suspended. */
  async clearFaults(worldId: string, owner: string, runner: Runner = this.db): Promise<void> {
    await runner('script_state').where({ world_id: worldId, owner }).update({ faults: 0, suspended_at: null });
  }

  // --- timers ---

  /**
   * Sets a timer. `keep`: an existing timer of the same name and period keeps its due time (a
   * script that sets its timers again at every start does not push them back).
   */
  async setTimer(trx: Knex.Transaction, worldId: string, timer: Timer, keep: boolean): Promise<void> {
    const row = { world_id: worldId, owner: timer.owner, name: timer.name, due_at: timer.dueAt, period_ms: timer.periodMs };
    const existing = await trx('script_timers').where({ world_id: worldId, owner: timer.owner, name: timer.name }).first('period_ms');
    if (existing && keep && (existing.period_ms === null ? null : Number(existing.period_ms)) === timer.periodMs) return;
    await trx('script_timers').insert(row).onConflict(['world_id', 'owner', 'name']).merge();
  }

  async cancelTimer(trx: Knex.Transaction, worldId: string, owner: string, name: string): Promise<void> {
    await trx('script_timers').where({ world_id: worldId, owner, name }).del();
  }

  async timerCount(worldId: string, runner: Runner = this.db): Promise<number> {
    const row = await runner('script_timers').where({ world_id: worldId }).count({ n: '*' }).first();
    return Number(row?.n ?? 0);
  }

  /** The world's timers due by `now`, soonest first. */
  async dueTimers(worldId: string, now: number, limit: number): Promise<Timer[]> {
    const rows = await this.db('script_timers').where({ world_id: worldId }).andWhere('due_at', '<=', now).orderBy('due_at').limit(limit).select('owner', 'name', 'due_at', 'period_ms');
    return rows.map((r: Record<string, unknown>) => ({ owner: String(r.owner), name: String(r.name), dueAt: Number(r.due_at), periodMs: r.period_ms === null ? null : Number(r.period_ms) }));
  }

  /**
   * Fires a timer: when it is still due at `timer.dueAt`, moves it to its next due time after
   * `now` (one firing for all the periods missed), or deletes a one-off. False when another
   * instance fired it (or it was changed) meanwhile.
   */
  async fireTimer(trx: Runner, worldId: string, timer: Timer, now: number): Promise<boolean> {
    const where = { world_id: worldId, owner: timer.owner, name: timer.name, due_at: timer.dueAt };
    if (timer.periodMs === null) return (await trx('script_timers').where(where).del()) === 1;
    const missed = Math.floor((now - timer.dueAt) / timer.periodMs) + 1;
    return (await trx('script_timers').where(where).update({ due_at: timer.dueAt + missed * timer.periodMs })) === 1;
  }

  /** A timer that counts as fired without its run (the run or the firing failed, or its script is suspended): moved on as `fireTimer` moves it. */
  async passTimer(worldId: string, timer: Timer, now: number): Promise<boolean> {
    return this.fireTimer(this.db, worldId, timer, now);
  }

  /** Removes an owner's timers and state (its script or itself is gone). */
  async forgetOwner(trx: Runner, worldId: string, owner: string): Promise<void> {
    await trx('script_timers').where({ world_id: worldId, owner }).del();
    await trx('script_state').where({ world_id: worldId, owner }).del();
  }

  // --- world clocks ---

  /**
   * Takes or keeps a world's clock for `holder` until `until`: granted when the world has no
   * holder, its lease has run out, or the holder is `holder` already. Whether it holds it now.
   */
  async holdClock(worldId: string, holder: string, now: number, until: number): Promise<boolean> {
    await this.db('world_clocks').insert({ world_id: worldId, holder, lease_until: until }).onConflict('world_id').ignore();
    const taken = await this.db('world_clocks')
      .where({ world_id: worldId })
      .andWhere((w) => w.where({ holder }).orWhere('lease_until', '<', now))
      .update({ holder, lease_until: until });
    return taken === 1;
  }

  /** Lets go of the clocks an instance holds (at shutdown), so another takes them at once. */
  async releaseClocks(holder: string): Promise<void> {
    await this.db('world_clocks').where({ holder }).update({ lease_until: 0 });
  }

  // --- errors ---

  async recordError(worldId: string, error: Omit<ScriptError, 'id' | 'createdAt'>, now: Date): Promise<void> {
    await this.db('script_errors').insert({ world_id: worldId, owner: error.owner, hook: error.hook, kind: error.kind, message: error.message, line: error.line, created_at: toDbTime(now) });
    const cut = await this.db('script_errors').where({ world_id: worldId }).orderBy('id', 'desc').offset(ERRORS_KEPT).first('id');
    if (cut) await this.db('script_errors').where({ world_id: worldId }).andWhere('id', '<=', cut.id).del();
  }

  /** The world's errors, newest first; with `beforeId`, only older ones. */
  async errors(worldId: string, limit: number, beforeId: number | null, owner: string | null): Promise<ScriptError[]> {
    const q = this.db('script_errors').where({ world_id: worldId }).orderBy('id', 'desc').limit(limit);
    if (beforeId !== null) q.andWhere('id', '<', beforeId);
    if (owner !== null) q.andWhere({ owner });
    return (await q.select('*')).map((r: Record<string, unknown>) => ({
      id: Number(r.id),
      owner: String(r.owner),
      hook: String(r.hook),
      kind: String(r.kind),
      message: String(r.message),
      line: r.line === null ? null : Number(r.line),
      createdAt: String(r.created_at),
    }));
  }
}
