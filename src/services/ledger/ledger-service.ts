/**
 * The event ledger, kept in the database instead of the reference server's per-world JSONL
 * files. Every row is the reference envelope: event_id (UUID4, 32 hex), timestamp (Python
 * isoformat, `+00:00`), world_id, event_type, schema_version "1.0", ipc_hash, meta, data, and
 * `_checksum` = "sha256:" + sha256 of the canonical JSON of the envelope without `_checksum`.
 * meta and data are stored as canonical JSON and read back keeping floats (`1.0`), so the
 * checksum can be recomputed from the stored columns and exported lines match the reference.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { components } from '../../../generated/openapi.d.ts';
import type { LedgerRepository, LedgerRow } from '../../db/repositories/ledger-repository.ts';
import { canonicalJson, parseJson } from '../../shared/canonical-json.ts';

/** The events this server writes (openapi.yaml, LedgerEvent.event_type). */
export const LEDGER_EVENT_TYPES = ['chat.mechanical_resolution', 'chat.translation'] as const;
export type LedgerEventType = (typeof LEDGER_EVENT_TYPES)[number];

export interface LedgerEventInput {
  worldId: string;
  eventType: LedgerEventType;
  ipcHash: string | null;
  meta?: Record<string, unknown>;
  data: Record<string, unknown>;
}

export type LedgerEvent = components['schemas']['LedgerEvent'];

export const LEDGER_SCHEMA_VERSION = '1.0';

/** A ledger line's fields, as the reference's JSONL files hold them without `_checksum`. */
export interface Envelope {
  event_id: string;
  timestamp: string;
  world_id: string;
  event_type: string;
  schema_version: string;
  ipc_hash: string | null;
  meta: Record<string, unknown>;
  data: Record<string, unknown>;
}

/** Python's `datetime.now(UTC).isoformat()`: microseconds (ours end in 000) and `+00:00`. */
export function pythonIsoTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}

/** "sha256:" + sha256 hex of the canonical JSON of the envelope (without `_checksum`). */
export function envelopeChecksum(envelope: Envelope): string {
  return `sha256:${createHash('sha256').update(canonicalJson(envelope), 'utf8').digest('hex')}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The envelope a row stores, or null when its JSON columns no longer parse as objects. */
function envelopeOf(row: LedgerRow): Envelope | null {
  let meta: unknown;
  let data: unknown;
  try {
    meta = parseJson(row.meta_json);
    data = parseJson(row.data_json);
  } catch {
    return null;
  }
  if (!isObject(meta) || !isObject(data)) return null;
  return withPayload(row, meta, data);
}

/** The envelope fields of a stored row around the given meta and data. */
function withPayload<M, D>(row: LedgerRow, meta: M, data: D) {
  return {
    event_id: row.event_id,
    timestamp: row.timestamp,
    world_id: row.world_id,
    event_type: row.event_type,
    schema_version: row.schema_version,
    ipc_hash: row.ipc_hash,
    meta,
    data,
  };
}

export class LedgerService {
  private readonly repo: LedgerRepository;
  private readonly clock: () => Date;

  constructor(repo: LedgerRepository, clock: () => Date) {
    this.repo = repo;
    this.clock = clock;
  }

  /** Appends one event; pass `trx` to make it part of the caller's transaction. */
  async append(event: LedgerEventInput, trx?: Knex): Promise<void> {
    if (!event.worldId.trim()) throw new Error('Ledger event needs a world_id');
    if (!event.eventType.trim()) throw new Error('Ledger event needs an event_type');
    const envelope: Envelope = {
      event_id: randomUUID().replaceAll('-', ''),
      timestamp: pythonIsoTimestamp(this.clock()),
      world_id: event.worldId,
      event_type: event.eventType,
      schema_version: LEDGER_SCHEMA_VERSION,
      ipc_hash: event.ipcHash,
      meta: event.meta ?? {},
      data: event.data,
    };
    await this.repo.insert(
      {
        event_id: envelope.event_id,
        world_id: envelope.world_id,
        event_type: envelope.event_type,
        schema_version: envelope.schema_version,
        ipc_hash: envelope.ipc_hash,
        meta_json: canonicalJson(envelope.meta),
        data_json: canonicalJson(envelope.data),
        timestamp: envelope.timestamp,
        checksum: envelopeChecksum(envelope),
      },
      trx,
    );
  }

  /** Newest first; each row's checksum is recomputed from what is stored. */
  async list(worldId: string | undefined, limit: number): Promise<LedgerEvent[]> {
    const rows = await this.repo.newest(worldId, limit);
    return rows.map((row) => {
      const envelope = envelopeOf(row);
      return {
        id: row.id,
        event_id: row.event_id,
        timestamp: row.timestamp,
        world_id: row.world_id,
        event_type: row.event_type as LedgerEventType,
        schema_version: row.schema_version,
        ipc_hash: row.ipc_hash,
        meta: envelope?.meta ?? {},
        data: envelope?.data ?? {},
        checksum: row.checksum,
        checksum_verified: envelope !== null && envelopeChecksum(envelope) === row.checksum,
      };
    });
  }

  /**
   * The world's events oldest first, one reference JSONL line each (no trailing newline):
   * canonical JSON of the envelope with its stored `_checksum`.
   */
  async exportLines(worldId: string): Promise<string[]> {
    const rows = await this.repo.allForWorld(worldId);
    return rows.map((row) => {
      const envelope = envelopeOf(row);
      // A row whose JSON no longer parses is exported as text so the loss stays visible.
      const body = envelope ?? withPayload(row, row.meta_json, row.data_json);
      return canonicalJson({ _checksum: row.checksum, ...body });
    });
  }
}
