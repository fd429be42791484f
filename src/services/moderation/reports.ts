/**
 * Reports to staff (docs/decisions.md, "Moderation"): a player's `report <name> <text>` keeps
 * who reported whom (character and account, as named then), where, what they wrote, the last
 * lines of chat they could read and when; staff list them (open first) and resolve them with a
 * note, which the audit log records. Each account may report a limited number of times an hour
 * (`[rate_limit] report_per_account`), counted on every instance.
 */
import type { Db } from '../../db/database.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { ModerationRepository, ReportRow } from '../../db/repositories/moderation-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Conflict, InvalidInput, NotFound } from '../../shared/errors.ts';
import type { Limit } from '../limits/limits.ts';
import { staffText, type AuditLog, type Door, type StaffMember } from './audit.ts';

type Schemas = components['schemas'];

/** Lines of chat a report keeps: what was said just before. */
export const REPORT_CONTEXT_LINES = 10;
/** The longest resolution note. */
export const MAX_NOTE_CHARACTERS = 1000;

/** A report as a player files it (the text is the game's plain text already). */
export interface Filing {
  reporter: { userId: number; characterId: number; character: string; worldId: string; roomId: string | null };
  reported: { characterId: number; character: string };
  text: string;
  /** The last lines of chat the reporter could read, oldest first. */
  context: Schemas['ChatMessage'][];
}

function report(r: ReportRow): Schemas['Report'] {
  return {
    id: r.id,
    created_at: r.createdAt,
    status: r.resolvedAt === null ? 'open' : 'resolved',
    reporter_username: r.reporterUsername,
    reporter_character: r.reporterCharacter,
    reported_username: r.reportedUsername,
    reported_character: r.reportedCharacter,
    world_id: r.worldId,
    room_id: r.roomId,
    text: r.text,
    context: JSON.parse(r.context) as Schemas['ChatMessage'][],
    resolved_at: r.resolvedAt,
    resolved_by: r.resolvedByUsername,
    resolution_note: r.resolutionNote,
  };
}

export class ReportService {
  private readonly db: Db;
  private readonly repo: ModerationRepository;
  private readonly audit: AuditLog;
  private readonly limit: Limit | null;
  private readonly clock: Clock;

  constructor(d: { db: Db; repo: ModerationRepository; audit: AuditLog; limit: Limit | null; clock: Clock }) {
    this.db = d.db;
    this.repo = d.repo;
    this.audit = d.audit;
    this.limit = d.limit;
    this.clock = d.clock;
  }

  /** Stores a report; past the account's limit a 429 (TooManyRequests) instead. */
  async file(filing: Filing): Promise<void> {
    const refused = await this.limit?.hit(String(filing.reporter.userId));
    if (refused) throw refused;
    const [reporter, reported] = await Promise.all([this.repo.owner(filing.reporter.characterId), this.repo.owner(filing.reported.characterId)]);
    // The reporter's own session is why it plays this character; only a deletion this instant could part them.
    if (!reporter) throw new NotFound('Your account was not found');
    await this.repo.addReport({
      createdAt: toDbTime(this.clock()),
      reporterUserId: reporter.userId,
      reporterUsername: reporter.username,
      reporterCharacterId: filing.reporter.characterId,
      reporterCharacter: filing.reporter.character,
      reportedUserId: reported?.userId ?? null,
      reportedUsername: reported?.username ?? null,
      reportedCharacterId: filing.reported.characterId,
      reportedCharacter: filing.reported.character,
      worldId: filing.reporter.worldId,
      roomId: filing.reporter.roomId,
      text: filing.text,
      context: JSON.stringify(filing.context.slice(-REPORT_CONTEXT_LINES)),
    });
  }

  /** Open reports first, newest first within each. */
  async list(limit: number, offset: number): Promise<Schemas['ReportList']> {
    return { reports: (await this.repo.reports(limit, offset)).map(report) };
  }

  /** Resolves an open report with a note, audited in the same transaction: 404 unknown, 409 resolved already. */
  async resolve(actor: StaffMember, door: Door, id: number, rawNote: string): Promise<Schemas['SuccessMessage']> {
    const note = staffText(rawNote, MAX_NOTE_CHARACTERS, 'note');
    if (note === null) throw new InvalidInput('A note is required to resolve a report');
    await this.db.transaction(async (trx) => {
      const found = await this.repo.report(id, trx);
      if (!found) throw new NotFound(`Report ${id} not found`);
      if (!(await this.repo.resolveReport(id, { userId: actor.userId, username: actor.username }, note, toDbTime(this.clock()), trx))) {
        throw new Conflict(`Report ${id} is resolved already`);
      }
      const target = found.reportedUsername === null ? null : { id: found.reportedUserId, username: found.reportedUsername };
      await this.audit.record(actor, door, { action: 'resolve_report', target, reason: note, detail: `report ${id} about ${found.reportedCharacter}` }, trx);
    });
    return { success: true, message: `Report ${id} resolved` };
  }
}
