/**
 * The axis engine's pure part, computing what the reference server computes: the chat
 * resolution grammar of an axis bundle (`content.resolution`), the three resolvers, channel
 * multipliers, clamping to [0, 1] and the interaction's `ipc_hash`. No I/O: the same inputs give
 * the same result.
 */
import { PyFloat, formatFloat, payloadHash } from '../../shared/canonical-json.ts';

export type ResolverName = 'dominance_shift' | 'shared_drain' | 'no_effect';
export const RESOLVERS: readonly ResolverName[] = ['dominance_shift', 'shared_drain', 'no_effect'];
export const CHAT_CHANNELS = ['say', 'yell', 'whisper'] as const;
export type ChatChannel = (typeof CHAT_CHANNELS)[number];

/** Score of an axis a character has no value for. */
export const DEFAULT_SCORE = 0.5;
/** Changes at or below this are float noise, not deltas. */
export const DELTA_EPSILON = 1e-12;

export interface AxisRule {
  resolver: ResolverName;
  baseMagnitude: number;
}

export interface ChatGrammar {
  version: string;
  channelMultipliers: Record<string, number>;
  minGapThreshold: number;
  /** Axis name → rule, in sorted axis order. */
  axes: Record<string, AxisRule>;
}

export class GrammarError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (v instanceof PyFloat ? v.value : typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Parses `axis_bundle.content.resolution`; throws GrammarError naming the first problem. */
export function parseGrammar(resolution: unknown): ChatGrammar {
  if (!isObject(resolution)) throw new GrammarError('resolution must be an object');
  const rawVersion = resolution.version;
  // Python's str(): `1.0` stays "1.0".
  const version =
    rawVersion instanceof PyFloat
      ? formatFloat(rawVersion.value)
      : typeof rawVersion === 'number' && !Number.isInteger(rawVersion)
        ? formatFloat(rawVersion)
        : rawVersion === undefined || rawVersion === null || typeof rawVersion === 'object'
          ? ''
          : String(rawVersion);
  if (version.trim() === '') throw new GrammarError('resolution.version must be non-empty');
  const interactions = resolution.interactions;
  if (!isObject(interactions) || !isObject(interactions.chat)) throw new GrammarError('resolution.interactions.chat must be an object');
  const chat = interactions.chat;
  const multipliers = chat.channel_multipliers;
  if (!isObject(multipliers)) throw new GrammarError('chat.channel_multipliers must be an object');
  const channelMultipliers: Record<string, number> = {};
  for (const [channel, value] of Object.entries(multipliers)) {
    const n = num(value);
    if (n === null) throw new GrammarError(`chat.channel_multipliers.${channel} must be a number`);
    channelMultipliers[channel] = n;
  }
  for (const channel of CHAT_CHANNELS) {
    if (!(channel in channelMultipliers)) throw new GrammarError(`chat.channel_multipliers must contain '${channel}'`);
  }
  const minGapThreshold = num(chat.min_gap_threshold);
  if (minGapThreshold === null) throw new GrammarError('chat.min_gap_threshold must be a number');
  if (!isObject(chat.axes)) throw new GrammarError('chat.axes must be an object');
  const axes: Record<string, AxisRule> = {};
  for (const name of Object.keys(chat.axes).sort()) {
    const rule = chat.axes[name];
    if (!isObject(rule)) throw new GrammarError(`chat.axes.${name} must be an object`);
    if (typeof rule.resolver !== 'string' || !(RESOLVERS as readonly string[]).includes(rule.resolver)) {
      throw new GrammarError(`chat.axes.${name}.resolver must be one of ${RESOLVERS.join(', ')}`);
    }
    const base = rule.base_magnitude === undefined || rule.base_magnitude === null ? 0 : num(rule.base_magnitude);
    if (base === null) throw new GrammarError(`chat.axes.${name}.base_magnitude must be a number`);
    axes[name] = { resolver: rule.resolver as ResolverName, baseMagnitude: base };
  }
  return { version, channelMultipliers, minGapThreshold, axes };
}

/** The channel's multiplier; 1.0 for a channel the grammar does not name. */
export function channelMultiplier(grammar: ChatGrammar, channel: string): number {
  return Object.hasOwn(grammar.channelMultipliers, channel) ? grammar.channelMultipliers[channel]! : 1.0;
}

/** Raw (pre-clamp) deltas `[speaker, listener]` of one axis. */
export function resolveAxis(rule: AxisRule, speaker: number, listener: number, multiplier: number, minGap: number): [number, number] {
  switch (rule.resolver) {
    case 'dominance_shift': {
      const gap = Math.abs(speaker - listener);
      if (gap < minGap) return [0, 0];
      const magnitude = rule.baseMagnitude * multiplier * gap;
      // The higher score gains; a tie counts as the listener's.
      return speaker > listener ? [magnitude, -magnitude] : [-magnitude, magnitude];
    }
    case 'shared_drain': {
      const drain = -(rule.baseMagnitude * multiplier);
      return [drain, drain];
    }
    default:
      return [0, 0];
  }
}

export interface ChatParty {
  id: number;
  /** Current scores by axis name; a missing axis counts as 0.5. */
  scores: Readonly<Record<string, number>>;
}

export interface AxisChange {
  oldScore: number;
  newScore: number;
  delta: number;
}

export interface ChatResolution {
  ipcHash: string;
  /** `{"<id>": {axis: score}}` for the axes whose resolver is not no_effect. */
  axisSnapshotBefore: Record<string, Record<string, number>>;
  grammarVersion: string;
  /** Only the axes that actually changed, per character. */
  speaker: Record<string, AxisChange>;
  listener: Record<string, AxisChange>;
}

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const scoreOf = (party: ChatParty, axis: string): number => (Object.hasOwn(party.scores, axis) ? party.scores[axis]! : DEFAULT_SCORE);

/** Scores as Python floats (`1.0`, not `1`), as the reference hashes them. */
export function pyFloats(scores: Record<string, number>): Record<string, PyFloat> {
  return Object.fromEntries(Object.entries(scores).map(([axis, score]) => [axis, new PyFloat(score)]));
}

export function chatIpcHash(input: {
  worldId: string;
  speakerId: number;
  listenerId: number;
  channel: string;
  axisSnapshotBefore: Record<string, Record<string, number>>;
  grammarVersion: string;
}): string {
  return payloadHash({
    world_id: input.worldId,
    speaker_id: input.speakerId,
    listener_id: input.listenerId,
    channel: input.channel,
    axis_snapshot_before: Object.fromEntries(Object.entries(input.axisSnapshotBefore).map(([id, scores]) => [id, pyFloats(scores)])),
    grammar_version: input.grammarVersion,
  });
}

/**
 * One chat interaction, from the scores read to the deltas: the snapshot before (axes whose
 * resolver has an effect), its `ipc_hash`, and each axis's new score clamped to [0, 1], keeping
 * only changes above 1e-12. Locking, the ledger and the writes are the caller's.
 */
export function resolveChat(input: { worldId: string; speaker: ChatParty; listener: ChatParty; channel: string; grammar: ChatGrammar }): ChatResolution {
  const { worldId, speaker, listener, channel, grammar } = input;
  const active = Object.keys(grammar.axes).filter((axis) => grammar.axes[axis]!.resolver !== 'no_effect');
  const snapshotOf = (party: ChatParty): Record<string, number> => Object.fromEntries(active.map((axis) => [axis, scoreOf(party, axis)]));
  // With speaker === listener the second key wins; the game never resolves a character with itself.
  const axisSnapshotBefore = { [String(speaker.id)]: snapshotOf(speaker), [String(listener.id)]: snapshotOf(listener) };
  const ipcHash = chatIpcHash({ worldId, speakerId: speaker.id, listenerId: listener.id, channel, axisSnapshotBefore, grammarVersion: grammar.version });

  const multiplier = channelMultiplier(grammar, channel);
  const speakerChanges: Record<string, AxisChange> = {};
  const listenerChanges: Record<string, AxisChange> = {};
  for (const [axis, rule] of Object.entries(grammar.axes)) {
    const before: [number, number] = [scoreOf(speaker, axis), scoreOf(listener, axis)];
    const raw = resolveAxis(rule, before[0], before[1], multiplier, grammar.minGapThreshold);
    [speakerChanges, listenerChanges].forEach((changes, i) => {
      const oldScore = before[i]!;
      const newScore = clamp01(oldScore + raw[i]!);
      const delta = newScore - oldScore;
      if (Math.abs(delta) > DELTA_EPSILON) changes[axis] = { oldScore, newScore, delta };
    });
  }
  return { ipcHash, axisSnapshotBefore, grammarVersion: grammar.version, speaker: speakerChanges, listener: listenerChanges };
}

/** The translation seed of an interaction: the first 16 hex digits of its ipc_hash (as the reference seeds its model). */
export function seedFromIpcHash(ipcHash: string): bigint {
  return BigInt(`0x${ipcHash.slice(0, 16)}`);
}
