/**
 * Character axis state: scores per axis of the world's active axis bundle, snapshots
 * `{world_id, seed, policy_hash, axes: {name: {score, label}}}` (base at creation, current
 * after every change), and an event with per-axis deltas for every change.
 */
import type { Knex } from 'knex';
import type { Clock } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import type { AxisStateRepository } from '../../db/repositories/axis-state-repository.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import { canonicalJson, parseJson, PyFloat } from '../../shared/canonical-json.ts';
import { DEFAULT_AXIS_SCORE, labelFor, type AxisBundle } from '../policy/axis-bundle.ts';

export interface AxisSnapshot {
  world_id: string;
  seed: number;
  policy_hash: string | null;
  axes: Record<string, { score: number; label: string | null }>;
}

export interface AxisEventInput {
  type: string;
  description: string;
  metadata: Record<string, string>;
}

/** Changes smaller than this are rounding noise, not events. */
const EPSILON = 1e-9;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScore = (v: unknown): boolean => (typeof v === 'number' && Number.isFinite(v)) || v instanceof PyFloat;

/** Whether a parsed value has the shape of the snapshots this server writes (openapi.yaml, EntityState). */
export function isAxisSnapshot(value: unknown): value is AxisSnapshot {
  if (!isObject(value) || typeof value.world_id !== 'string' || !Number.isSafeInteger(value.seed)) return false;
  if (value.policy_hash !== null && typeof value.policy_hash !== 'string') return false;
  if (!isObject(value.axes)) return false;
  return Object.values(value.axes).every((a) => isObject(a) && isScore(a.score) && (a.label === null || typeof a.label === 'string'));
}

export function parseSnapshot(json: string | null): AxisSnapshot | null {
  if (json === null) return null;
  try {
    return parseJson(json) as AxisSnapshot;
  } catch {
    return null;
  }
}

export class CharacterStateService {
  private readonly db: Db;
  private readonly axes: AxisStateRepository;
  private readonly characters: CharacterRepository;
  private readonly clock: Clock;

  constructor(db: Db, axes: AxisStateRepository, characters: CharacterRepository, clock: Clock) {
    this.db = db;
    this.axes = axes;
    this.characters = characters;
    this.clock = clock;
  }

  private snapshot(bundle: AxisBundle, seed: number, scores: ReadonlyArray<{ axisName: string; score: number }>): AxisSnapshot {
    const axes: AxisSnapshot['axes'] = {};
    for (const s of scores) axes[s.axisName] = { score: s.score, label: labelFor(bundle, s.axisName, s.score) };
    return { world_id: bundle.worldId, seed, policy_hash: bundle.policyHash, axes };
  }

  /**
   * Inside the creation transaction: every axis of the bundle at the default score, and the
   * base (= current) snapshot. Without a bundle the character has no axis state.
   */
  async seedInitial(trx: Knex, character: { id: number; worldId: string; seed: number }, bundle: AxisBundle | null): Promise<void> {
    if (!bundle) return;
    const now = this.clock().toISOString();
    const ids = await this.axes.ensureAxes(character.worldId, bundle.axisNames, trx);
    const scores = bundle.axisNames.map((name) => ({ axisId: ids.get(name)!, axisName: name, score: DEFAULT_AXIS_SCORE }));
    await this.axes.setScores(character.id, scores, now, trx);
    const json = canonicalJson(this.snapshot(bundle, character.seed, scores));
    await this.characters.saveState(character.id, { version: bundle.policyHash, currentJson: json, baseJson: json, updatedAt: now }, trx);
  }

  /**
   * Moves scores to the given targets (axes of the bundle only, clamped to [0, 1]) as one
   * event, and refreshes the current snapshot, in a transaction of its own. Returns the
   * current snapshot.
   */
  async moveTo(
    character: { id: number; worldId: string; seed: number },
    bundle: AxisBundle,
    targets: Record<string, number>,
    event: AxisEventInput,
  ): Promise<AxisSnapshot> {
    return this.db.transaction((trx) => this.moveToIn(trx, character, bundle, targets, event));
  }

  /**
   * moveTo's writes inside the caller's transaction, so that one transaction can move several
   * characters (a chat interaction moves both sides). Changes of at most `minChange` are
   * dropped (default 1e-9).
   */
  async moveToIn(
    trx: Knex,
    character: { id: number; worldId: string; seed: number },
    bundle: AxisBundle,
    targets: Record<string, number>,
    event: AxisEventInput,
    minChange = EPSILON,
  ): Promise<AxisSnapshot> {
    const now = this.clock().toISOString();
    const ids = await this.axes.ensureAxes(character.worldId, bundle.axisNames, trx);
    const current = new Map((await this.axes.scores(character.id, trx)).map((s) => [s.axisName, s.score]));
    const deltas = bundle.axisNames
      .filter((name) => targets[name] !== undefined)
      .map((name) => ({ axisId: ids.get(name)!, axisName: name, oldScore: current.get(name) ?? DEFAULT_AXIS_SCORE, newScore: Math.min(1, Math.max(0, targets[name]!)) }))
      .filter((d) => Math.abs(d.newScore - d.oldScore) > minChange);
    if (deltas.length > 0) {
      await this.axes.insertEvent(
        { characterId: character.id, worldId: character.worldId, eventType: event.type, description: event.description, metadata: event.metadata, createdAt: now, deltas },
        trx,
      );
      await this.axes.setScores(character.id, deltas.map((d) => ({ axisId: d.axisId, score: d.newScore })), now, trx);
    }
    const scores = bundle.axisNames.map((name) => ({ axisName: name, score: deltas.find((d) => d.axisName === name)?.newScore ?? current.get(name) ?? DEFAULT_AXIS_SCORE }));
    const snapshot = this.snapshot(bundle, character.seed, scores);
    await this.characters.saveState(character.id, { version: bundle.policyHash, currentJson: canonicalJson(snapshot), updatedAt: now }, trx);
    return snapshot;
  }
}
