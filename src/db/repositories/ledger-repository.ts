/**
 * SQL of the event ledger. Append-only: there is an insert and reads, nothing else.
 */
import type { Knex } from 'knex';
import type { Db } from '../database.ts';

export interface LedgerRow {
  id: number;
  event_id: string;
  world_id: string;
  event_type: string;
  schema_version: string;
  ipc_hash: string | null;
  meta_json: string;
  data_json: string;
  timestamp: string;
  checksum: string;
}

export type NewLedgerRow = Omit<LedgerRow, 'id'>;

export class LedgerRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async insert(row: NewLedgerRow, trx?: Knex): Promise<void> {
    await (trx ?? this.db)('ledger_events').insert(row);
  }

  /** Newest first, optionally for one world. */
  async newest(worldId: string | undefined, limit: number): Promise<LedgerRow[]> {
    const query = this.db<LedgerRow>('ledger_events').select('*').orderBy('id', 'desc').limit(limit);
    if (worldId !== undefined) query.where({ world_id: worldId });
    return (await query).map(normalize);
  }

  /** Oldest first: the order the events were appended. */
  async allForWorld(worldId: string): Promise<LedgerRow[]> {
    return (await this.db<LedgerRow>('ledger_events').select('*').where({ world_id: worldId }).orderBy('id', 'asc')).map(normalize);
  }
}

function normalize(row: LedgerRow): LedgerRow {
  return { ...row, id: Number(row.id) };
}
