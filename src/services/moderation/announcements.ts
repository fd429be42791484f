/**
 * Staff announcements (`wall` in the game, POST /admin/wall; docs/decisions.md, "Moderation"):
 * one event on the bus that every event stream of every world and instance shows, marked as
 * the staff's, whoever its readers ignore. Audited with its text. Live only, like presence: a
 * client without a stream does not get it.
 */
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventBus } from '../../db/event-bus.ts';
import { InvalidInput } from '../../shared/errors.ts';
import { escapeHtml } from '../../shared/plain-text.ts';
import { staffText, type AuditLog, type Door, type StaffMember } from './audit.ts';

/** The longest announcement: escaped, it stays far below the bus's payload bound (src/db/event-bus.ts). */
export const MAX_ANNOUNCEMENT_CHARACTERS = 500;

export class Announcements {
  private readonly db: Db;
  private readonly bus: EventBus;
  private readonly audit: AuditLog;
  private readonly clock: Clock;

  constructor(d: { db: Db; bus: EventBus; audit: AuditLog; clock: Clock }) {
    this.db = d.db;
    this.bus = d.bus;
    this.audit = d.audit;
    this.clock = d.clock;
  }

  /** Sends an announcement from a staff member; 400 when it is empty or too long. Returns its text as sent (plain). */
  async announce(actor: StaffMember, door: Door, raw: string): Promise<string> {
    const text = staffText(raw, MAX_ANNOUNCEMENT_CHARACTERS, 'An announcement');
    if (text === null) throw new InvalidInput('Announce what?');
    // Delivered at commit, with its audit entry or not at all.
    await this.db.transaction(async (trx) => {
      await this.audit.record(actor, door, { action: 'wall', target: null, detail: text }, trx);
      await this.bus.publish({ type: 'announcement', from: actor.username, text: escapeHtml(text), sentAt: toDbTime(this.clock()) }, trx);
    });
    return text;
  }
}
