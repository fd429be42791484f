/**
 * The audit log of staff actions (docs/decisions.md, "Moderation"): who (username and role),
 * whom, what, why, when and through which door. Each entry is written in the transaction of the
 * action it records, so an action and its entry exist together or not at all. Entries are only
 * ever added: nothing in the API changes or deletes them.
 */
import type { Knex } from 'knex';
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { AuditQuery, ModerationRepository } from '../../db/repositories/moderation-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { InvalidInput } from '../../shared/errors.ts';
import { plainText } from '../../shared/plain-text.ts';
import type { Role } from '../../shared/roles.ts';

type Schemas = components['schemas'];

/** The door an action came through: the HTTP API (the play client's included) or the telnet door. */
export type Door = 'http' | 'telnet';

/** What an entry records (AuditEntry.action in openapi.yaml). */
export type AuditAction = Schemas['AuditEntry']['action'];

/** A staff member acting: what every entry names of them (a session carries it). */
export interface StaffMember {
  userId: number;
  username: string;
  role: Role;
}

/** The longest reason a staff action takes (users.mute_reason holds it). */
export const MAX_REASON_CHARACTERS = 200;

/**
 * A reason or note as stored: NFC plain text on one line, trimmed (src/shared/plain-text.ts);
 * null when none was given or nothing is left. 400 past `max` characters.
 */
export function staffText(raw: string | null | undefined, max: number, what: string): string | null {
  if (raw === undefined || raw === null) return null;
  const text = plainText(raw.normalize('NFC'));
  if ([...text].length > max) throw new InvalidInput(`${what} must be at most ${max} characters`);
  return text === '' ? null : text;
}

export interface AuditRecord {
  action: AuditAction;
  /** The account acted on, as it was named then (its id null once deleted); null for actions on no account (wall). */
  target: { id: number | null; username: string } | null;
  reason?: string | null;
  /** What else the entry needs to say: the new role, the mute's end, the world, the announcement. */
  detail?: string | null;
}

export class AuditLog {
  private readonly repo: ModerationRepository;
  private readonly clock: Clock;

  constructor(repo: ModerationRepository, clock: Clock) {
    this.repo = repo;
    this.clock = clock;
  }

  /** Writes the entry inside `trx`, the action's own transaction. */
  async record(actor: StaffMember, door: Door, record: AuditRecord, trx: Knex.Transaction): Promise<void> {
    await this.repo.addAuditEntry(
      {
        createdAt: toDbTime(this.clock()),
        actorUserId: actor.userId,
        actorUsername: actor.username,
        actorRole: actor.role,
        action: record.action,
        targetUserId: record.target?.id ?? null,
        targetUsername: record.target?.username ?? null,
        reason: record.reason ?? null,
        detail: record.detail ?? null,
        door,
      },
      trx,
    );
  }

  /** Newest first; `before` pages on (the last id of the previous page). */
  async list(query: AuditQuery): Promise<Schemas['AuditLog']> {
    const rows = await this.repo.auditEntries(query);
    return {
      entries: rows.map((r) => ({
        id: r.id,
        created_at: r.createdAt,
        actor_username: r.actorUsername,
        actor_role: r.actorRole as Role,
        action: r.action as AuditAction,
        target_username: r.targetUsername,
        reason: r.reason,
        detail: r.detail,
        door: r.door as Door,
      })),
      next_before: rows.length === query.limit ? rows[rows.length - 1]!.id : null,
    };
  }
}
