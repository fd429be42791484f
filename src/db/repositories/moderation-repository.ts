/**
 * SQL of moderation: the characters each account ignores, reports to staff, and the audit log
 * of staff actions (docs/decisions.md, "Moderation"). The audit log is only ever added to.
 */
import type { Knex } from 'knex';
import { lockKey, type Db } from '../database.ts';
import { insertedId } from '../inserted-id.ts';

/** A character an account ignores, with its name and world now. */
export interface IgnoredCharacter {
  characterId: number;
  name: string;
  worldId: string;
}

export interface NewAuditEntry {
  createdAt: string;
  actorUserId: number;
  actorUsername: string;
  actorRole: string;
  action: string;
  targetUserId: number | null;
  targetUsername: string | null;
  reason: string | null;
  detail: string | null;
  door: string;
}

/** An entry as stored: its actor's account may be gone since (`actorUserId` null); the names stay. */
export interface AuditRow extends Omit<NewAuditEntry, 'actorUserId'> {
  id: number;
  actorUserId: number | null;
}

export interface AuditQuery {
  limit: number;
  /** Only entries older than this id. */
  before: number | null;
  /** Only entries whose target (or actor) had this username. */
  target: string | null;
  actor: string | null;
}

export interface NewReport {
  createdAt: string;
  reporterUserId: number;
  reporterUsername: string;
  reporterCharacterId: number;
  reporterCharacter: string;
  reportedUserId: number | null;
  reportedUsername: string | null;
  reportedCharacterId: number;
  reportedCharacter: string;
  worldId: string;
  roomId: string | null;
  text: string;
  /** The chat lines the reporter could read, as JSON. */
  context: string;
}

export interface ReportRow extends Omit<NewReport, 'reporterUserId' | 'reporterCharacterId' | 'reportedCharacterId'> {
  id: number;
  reporterUserId: number | null;
  reporterCharacterId: number | null;
  reportedCharacterId: number | null;
  resolvedAt: string | null;
  resolvedByUsername: string | null;
  resolutionNote: string | null;
}

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
const str = (value: unknown): string | null => (value === null || value === undefined ? null : String(value));

export class ModerationRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** The ids of the characters the account ignores. */
  async ignoredBy(userId: number): Promise<number[]> {
    const rows: Array<{ character_id: number | string }> = await this.db('character_ignores').where({ user_id: userId }).select('character_id');
    return rows.map((r) => Number(r.character_id));
  }

  /** The characters the account ignores, by name. */
  async ignoreList(userId: number): Promise<IgnoredCharacter[]> {
    const rows = await this.db('character_ignores as i')
      .join('characters as c', 'c.id', 'i.character_id')
      .where('i.user_id', userId)
      .orderBy('c.name')
      .select('c.id', 'c.name', 'c.world_id');
    return rows.map((r: { id: number | string; name: string; world_id: string }) => ({ characterId: Number(r.id), name: r.name, worldId: r.world_id }));
  }

  /**
   * Adds a character to the account's list unless it is there already or the list holds `max`:
   * the count and the insert in one transaction, the account's lists taking turns on
   * PostgreSQL, so two ignores at once never pass the bound.
   */
  async addIgnore(userId: number, characterId: number, max: number, now: string): Promise<'added' | 'already' | 'full'> {
    return this.db.transaction(async (trx) => {
      await lockKey(trx, `ignores:${userId}`);
      const listed: Array<{ character_id: number | string }> = await trx('character_ignores').where({ user_id: userId }).select('character_id');
      if (listed.some((r) => Number(r.character_id) === characterId)) return 'already';
      if (listed.length >= max) return 'full';
      await trx('character_ignores').insert({ user_id: userId, character_id: characterId, created_at: now });
      return 'added';
    });
  }

  /** False when the account did not ignore the character. */
  async removeIgnore(userId: number, characterId: number): Promise<boolean> {
    return (await this.db('character_ignores').where({ user_id: userId, character_id: characterId }).del()) > 0;
  }

  /** Whether the account that plays `characterId` ignores `senderId`. */
  async ownerIgnores(characterId: number, senderId: number): Promise<boolean> {
    const row = await this.db('character_ignores as i')
      .join('characters as c', 'c.user_id', 'i.user_id')
      .where({ 'c.id': characterId, 'i.character_id': senderId })
      .first('i.user_id');
    return row !== undefined;
  }

  /** The account that plays a character (none once the account is deleted). */
  async owner(characterId: number): Promise<{ userId: number; username: string } | undefined> {
    const row = await this.db('characters as c').join('users as u', 'u.id', 'c.user_id').where('c.id', characterId).first('u.id', 'u.username');
    return row && { userId: Number(row.id), username: String(row.username) };
  }

  async addAuditEntry(entry: NewAuditEntry, trx: Knex = this.db): Promise<void> {
    await trx('audit_log').insert({
      created_at: entry.createdAt,
      actor_user_id: entry.actorUserId,
      actor_username: entry.actorUsername,
      actor_role: entry.actorRole,
      action: entry.action,
      target_user_id: entry.targetUserId,
      target_username: entry.targetUsername,
      reason: entry.reason,
      detail: entry.detail,
      door: entry.door,
    });
  }

  /** Newest first. */
  async auditEntries(query: AuditQuery): Promise<AuditRow[]> {
    const q = this.db('audit_log').orderBy('id', 'desc').limit(query.limit).select('*');
    if (query.before !== null) q.where('id', '<', query.before);
    if (query.target !== null) q.where('target_username', query.target);
    if (query.actor !== null) q.where('actor_username', query.actor);
    return (await q).map((r: Record<string, unknown>) => ({
      id: Number(r.id),
      createdAt: String(r.created_at),
      actorUserId: num(r.actor_user_id),
      actorUsername: String(r.actor_username),
      actorRole: String(r.actor_role),
      action: String(r.action),
      targetUserId: num(r.target_user_id),
      targetUsername: str(r.target_username),
      reason: str(r.reason),
      detail: str(r.detail),
      door: String(r.door),
    }));
  }

  async addReport(report: NewReport): Promise<number> {
    const [row] = await this.db('reports')
      .insert({
        created_at: report.createdAt,
        reporter_user_id: report.reporterUserId,
        reporter_username: report.reporterUsername,
        reporter_character_id: report.reporterCharacterId,
        reporter_character: report.reporterCharacter,
        reported_user_id: report.reportedUserId,
        reported_username: report.reportedUsername,
        reported_character_id: report.reportedCharacterId,
        reported_character: report.reportedCharacter,
        world_id: report.worldId,
        room_id: report.roomId,
        text: report.text,
        context: report.context,
      })
      .returning('id');
    return insertedId(row);
  }

  /** Open reports first, newest first within each. */
  async reports(limit: number, offset: number): Promise<ReportRow[]> {
    const rows = await this.db('reports')
      .orderByRaw('case when resolved_at is null then 0 else 1 end')
      .orderBy('id', 'desc')
      .limit(limit)
      .offset(offset)
      .select('*');
    return rows.map(reportRow);
  }

  async report(id: number, trx: Knex = this.db): Promise<ReportRow | undefined> {
    const row = await trx('reports').where({ id }).first();
    return row && reportRow(row);
  }

  /** Marks an open report resolved; false when it was resolved already (by someone else meanwhile). */
  async resolveReport(id: number, by: { userId: number; username: string }, note: string, now: string, trx: Knex): Promise<boolean> {
    const changed = await trx('reports')
      .where({ id })
      .whereNull('resolved_at')
      .update({ resolved_at: now, resolved_by_user_id: by.userId, resolved_by_username: by.username, resolution_note: note });
    return changed > 0;
  }
}

function reportRow(r: Record<string, unknown>): ReportRow {
  return {
    id: Number(r.id),
    createdAt: String(r.created_at),
    reporterUserId: num(r.reporter_user_id),
    reporterUsername: String(r.reporter_username),
    reporterCharacterId: num(r.reporter_character_id),
    reporterCharacter: String(r.reporter_character),
    reportedUserId: num(r.reported_user_id),
    reportedUsername: str(r.reported_username),
    reportedCharacterId: num(r.reported_character_id),
    reportedCharacter: String(r.reported_character),
    worldId: String(r.world_id),
    roomId: str(r.room_id),
    text: String(r.text),
    context: String(r.context),
    resolvedAt: str(r.resolved_at),
    resolvedByUsername: str(r.resolved_by_username),
    resolutionNote: str(r.resolution_note),
  };
}
