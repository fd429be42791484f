import type { Knex } from 'knex';
import type { Db } from '../database.ts';
import { insertedId } from '../inserted-id.ts';
import { canonicalJson, parseJson } from '../../shared/canonical-json.ts';

export interface AxisScore {
  axisId: number;
  axisName: string;
  score: number;
}

export interface AxisDelta {
  axisId: number;
  oldScore: number;
  newScore: number;
}

export interface AxisEventRecord {
  eventId: number;
  worldId: string;
  eventType: string;
  description: string | null;
  createdAt: string;
  metadata: Record<string, string>;
  deltas: Array<{ axisName: string; oldScore: number; newScore: number; delta: number }>;
}

/** SQL for the axis registry, character scores and the append-only axis event log. */
export class AxisStateRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  /** Ids of the world's axes, registering the names not seen before. */
  async ensureAxes(worldId: string, names: readonly string[], trx: Knex): Promise<Map<string, number>> {
    if (names.length > 0) {
      await trx('axes')
        .insert(names.map((name) => ({ world_id: worldId, name })))
        .onConflict(['world_id', 'name'])
        .ignore();
    }
    const rows = await trx('axes').where({ world_id: worldId }).whereIn('name', [...names]).select('id', 'name');
    return new Map(rows.map((r) => [String(r.name), Number(r.id)]));
  }

  async scores(characterId: number, trx: Knex = this.db): Promise<AxisScore[]> {
    const rows = await trx('character_axis_scores as s')
      .join('axes as a', 'a.id', 's.axis_id')
      .where('s.character_id', characterId)
      .orderBy('a.name')
      .select({ axisId: 's.axis_id', axisName: 'a.name', score: 's.score' });
    return rows.map((r) => ({ axisId: Number(r.axisId), axisName: String(r.axisName), score: Number(r.score) }));
  }

  async setScores(characterId: number, scores: ReadonlyArray<{ axisId: number; score: number }>, now: string, trx: Knex): Promise<void> {
    if (scores.length === 0) return;
    await trx('character_axis_scores')
      .insert(scores.map((s) => ({ character_id: characterId, axis_id: s.axisId, score: s.score, updated_at: now })))
      .onConflict(['character_id', 'axis_id'])
      .merge(['score', 'updated_at']);
  }

  async insertEvent(
    event: { characterId: number; worldId: string; eventType: string; description: string; metadata: Record<string, string>; createdAt: string; deltas: AxisDelta[] },
    trx: Knex,
  ): Promise<number> {
    const [row] = await trx('axis_events')
      .insert({
        character_id: event.characterId,
        world_id: event.worldId,
        event_type: event.eventType,
        description: event.description,
        metadata_json: canonicalJson(event.metadata),
        created_at: event.createdAt,
      })
      .returning('id');
    const eventId = insertedId(row);
    await trx('axis_event_deltas').insert(
      event.deltas.map((d) => ({ event_id: eventId, axis_id: d.axisId, old_score: d.oldScore, new_score: d.newScore, delta: d.newScore - d.oldScore })),
    );
    return eventId;
  }

  /** A character's events, newest first, each with its deltas ordered by axis name. */
  async events(characterId: number, limit: number): Promise<AxisEventRecord[]> {
    const events = await this.db('axis_events').where({ character_id: characterId }).orderBy('id', 'desc').limit(limit);
    if (events.length === 0) return [];
    const deltas = await this.db('axis_event_deltas as d')
      .join('axes as a', 'a.id', 'd.axis_id')
      .whereIn('d.event_id', events.map((e) => e.id))
      .orderBy('a.name')
      .select('d.event_id', { axis_name: 'a.name' }, 'd.old_score', 'd.new_score', 'd.delta');
    return events.map((e) => ({
      eventId: Number(e.id),
      worldId: String(e.world_id),
      eventType: String(e.event_type),
      description: (e.description as string | null) ?? null,
      createdAt: String(e.created_at),
      metadata: parseJson(String(e.metadata_json)) as Record<string, string>,
      deltas: deltas
        .filter((d) => Number(d.event_id) === Number(e.id))
        .map((d) => ({ axisName: String(d.axis_name), oldScore: Number(d.old_score), newScore: Number(d.new_score), delta: Number(d.delta) })),
    }));
  }
}
