/**
 * The axis engine's pure part: grammar parsing, the three
 * resolvers, channel multipliers, clamping, the ipc_hash of the reference's worked example
 * and determinism.
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import {
  GrammarError,
  channelMultiplier,
  chatIpcHash,
  parseGrammar,
  resolveChat,
  seedFromIpcHash,
  type ChatGrammar,
} from '../../src/services/axis/axis-engine.ts';
import { PyFloat, parseJson } from '../../src/shared/canonical-json.ts';

/** The documented grammar, as stored (floats parsed as the reference would keep them). */
const RESOLUTION_TEXT = `{
  "version": "1.0",
  "interactions": {"chat": {
    "channel_multipliers": {"say": 1.0, "yell": 1.5, "whisper": 0.5},
    "min_gap_threshold": 0.05,
    "axes": {
      "demeanor": {"resolver": "dominance_shift", "base_magnitude": 0.03},
      "health": {"resolver": "shared_drain", "base_magnitude": 0.01},
      "physique": {"resolver": "no_effect"},
      "wealth": {"resolver": "no_effect"}
    }
  }}
}`;
const grammar = (): ChatGrammar => parseGrammar(parseJson(RESOLUTION_TEXT));
const WORKED_HASH = '009c6503c07dd1975420485f7e39067208a662bf687fe21068e46bd33a59eff8';

const speaker = { id: 7, scores: { demeanor: 0.87, health: 0.72, physique: 0.3, wealth: 0.9 } };
const listener = { id: 12, scores: { demeanor: 0.51, health: 0.44, physique: 0.6, wealth: 0.1 } };

describe('axis engine (pure)', () => {
  describe('grammar', () => {
    it('parses the documented grammar (PyFloat numbers included)', () => {
      const g = grammar();
      expect(g.version).to.equal('1.0');
      expect(g.channelMultipliers).to.deep.equal({ say: 1, yell: 1.5, whisper: 0.5 });
      expect(g.minGapThreshold).to.equal(0.05);
      expect(g.axes).to.deep.equal({
        demeanor: { resolver: 'dominance_shift', baseMagnitude: 0.03 },
        health: { resolver: 'shared_drain', baseMagnitude: 0.01 },
        physique: { resolver: 'no_effect', baseMagnitude: 0 },
        wealth: { resolver: 'no_effect', baseMagnitude: 0 },
      });
    });

    it('stringifies a numeric version the way Python does', () => {
      const raw = parseJson(RESOLUTION_TEXT) as Record<string, unknown>;
      expect(parseGrammar({ ...raw, version: new PyFloat(2) }).version).to.equal('2.0');
      expect(parseGrammar({ ...raw, version: 3 }).version).to.equal('3');
    });

    const broken: Array<[string, (r: any) => void]> = [
      ['not an object', (r) => Object.keys(r).forEach((k) => delete r[k])],
      ['empty version', (r) => (r.version = ' ')],
      ['no chat interaction', (r) => delete r.interactions.chat],
      ['missing yell multiplier', (r) => delete r.interactions.chat.channel_multipliers.yell],
      ['non-numeric multiplier', (r) => (r.interactions.chat.channel_multipliers.say = 'loud')],
      ['no min_gap_threshold', (r) => delete r.interactions.chat.min_gap_threshold],
      ['axes not an object', (r) => (r.interactions.chat.axes = [])],
      ['unknown resolver', (r) => (r.interactions.chat.axes.health.resolver = 'explode')],
      ['non-numeric base_magnitude', (r) => (r.interactions.chat.axes.health.base_magnitude = 'x')],
    ];
    for (const [name, mutate] of broken) {
      it(`rejects a grammar with ${name}`, () => {
        const raw = JSON.parse(RESOLUTION_TEXT);
        mutate(raw);
        expect(() => parseGrammar(raw)).to.throw(GrammarError);
      });
    }
    it('rejects a non-object resolution', () => {
      expect(() => parseGrammar(null)).to.throw(GrammarError);
      expect(() => parseGrammar([])).to.throw(GrammarError);
    });
  });

  describe("the reference's worked example", () => {
    it('hashes the documented interaction to the documented ipc_hash', () => {
      const hash = chatIpcHash({
        worldId: 'w',
        speakerId: 7,
        listenerId: 12,
        channel: 'say',
        axisSnapshotBefore: { '7': { demeanor: 0.87, health: 0.72 }, '12': { demeanor: 0.51, health: 0.44 } },
        grammarVersion: '1.0',
      });
      expect(hash).to.equal(WORKED_HASH);
    });

    it('resolves say: demeanor ±0.0108 (speaker gains), health −0.01 each, no_effect axes untouched', () => {
      const r = resolveChat({ worldId: 'w', speaker, listener, channel: 'say', grammar: grammar() });
      expect(r.ipcHash).to.equal(WORKED_HASH);
      expect(r.grammarVersion).to.equal('1.0');
      expect(r.axisSnapshotBefore).to.deep.equal({ '7': { demeanor: 0.87, health: 0.72 }, '12': { demeanor: 0.51, health: 0.44 } });
      expect(Object.keys(r.speaker)).to.deep.equal(['demeanor', 'health']);
      expect(Object.keys(r.listener)).to.deep.equal(['demeanor', 'health']);
      expect(r.speaker.demeanor!.delta).to.be.closeTo(0.0108, 1e-12);
      expect(r.listener.demeanor!.delta).to.be.closeTo(-0.0108, 1e-12);
      expect(r.speaker.health!.delta).to.be.closeTo(-0.01, 1e-12);
      expect(r.listener.health!.delta).to.be.closeTo(-0.01, 1e-12);
      expect(r.speaker.demeanor!.oldScore).to.equal(0.87);
      expect(r.speaker.demeanor!.newScore).to.be.closeTo(0.8808, 1e-12);
      expect(r.listener.health!.newScore).to.be.closeTo(0.43, 1e-12);
    });

    it('lets the higher score gain whichever side speaks', () => {
      const r = resolveChat({ worldId: 'w', speaker: listener, listener: speaker, channel: 'say', grammar: grammar() });
      expect(r.speaker.demeanor!.delta).to.be.closeTo(-0.0108, 1e-12);
      expect(r.listener.demeanor!.delta).to.be.closeTo(0.0108, 1e-12);
      expect(r.ipcHash).to.not.equal(WORKED_HASH);
    });
  });

  describe('resolution rules', () => {
    it('ignores a demeanor gap below min_gap_threshold', () => {
      const r = resolveChat({ worldId: 'w', speaker: { id: 1, scores: { demeanor: 0.5, health: 0.5 } }, listener: { id: 2, scores: { demeanor: 0.54, health: 0.5 } }, channel: 'say', grammar: grammar() });
      expect(r.speaker.demeanor).to.equal(undefined);
      expect(r.listener.demeanor).to.equal(undefined);
      expect(r.speaker.health!.delta).to.be.closeTo(-0.01, 1e-12);
    });

    it('applies a gap exactly at the threshold', () => {
      const g = { ...grammar(), minGapThreshold: 0.25 };
      const r = resolveChat({ worldId: 'w', speaker: { id: 1, scores: { demeanor: 0.75 } }, listener: { id: 2, scores: { demeanor: 0.5 } }, channel: 'say', grammar: g });
      expect(r.speaker.demeanor!.delta).to.be.closeTo(0.03 * 0.25, 1e-12);
    });

    for (const [channel, multiplier] of [['say', 1.0], ['yell', 1.5], ['whisper', 0.5], ['shout', 1.0]] as const) {
      it(`scales by the ${channel} multiplier (${multiplier})`, () => {
        const g = grammar();
        expect(channelMultiplier(g, channel)).to.equal(multiplier);
        const r = resolveChat({ worldId: 'w', speaker, listener, channel, grammar: g });
        expect(r.speaker.demeanor!.delta).to.be.closeTo(0.03 * multiplier * 0.36, 1e-12);
        expect(r.listener.demeanor!.delta).to.be.closeTo(-0.03 * multiplier * 0.36, 1e-12);
        expect(r.speaker.health!.delta).to.be.closeTo(-0.01 * multiplier, 1e-12);
        expect(r.listener.health!.delta).to.be.closeTo(-0.01 * multiplier, 1e-12);
      });
    }

    it('clamps to [0, 1] and records the actual (clamped) change only', () => {
      const g = { ...grammar(), axes: { ...grammar().axes, demeanor: { resolver: 'dominance_shift' as const, baseMagnitude: 1 } } };
      const r = resolveChat({ worldId: 'w', speaker: { id: 1, scores: { demeanor: 0.9, health: 0.005 } }, listener: { id: 2, scores: { demeanor: 0.1, health: 0 } }, channel: 'say', grammar: g });
      expect(r.speaker.demeanor).to.deep.equal({ oldScore: 0.9, newScore: 1, delta: 1 - 0.9 });
      expect(r.listener.demeanor).to.deep.equal({ oldScore: 0.1, newScore: 0, delta: -0.1 });
      expect(r.speaker.health).to.deep.equal({ oldScore: 0.005, newScore: 0, delta: -0.005 });
      expect(r.listener.health).to.equal(undefined, 'already at 0: no change recorded');
    });

    it('no_effect axes never change and stay out of the snapshot', () => {
      const r = resolveChat({ worldId: 'w', speaker, listener, channel: 'yell', grammar: grammar() });
      expect(r.speaker.physique).to.equal(undefined);
      expect(r.listener.wealth).to.equal(undefined);
      expect(r.axisSnapshotBefore['7']).to.have.keys('demeanor', 'health');
    });

    it('counts a missing score as 0.5 and hashes integral scores as Python floats', () => {
      const r = resolveChat({ worldId: 'w', speaker: { id: 3, scores: { demeanor: 1 } }, listener: { id: 4, scores: {} }, channel: 'say', grammar: grammar() });
      expect(r.axisSnapshotBefore).to.deep.equal({ '3': { demeanor: 1, health: 0.5 }, '4': { demeanor: 0.5, health: 0.5 } });
      expect(r.speaker.demeanor).to.equal(undefined, 'clamped at 1: no change');
      expect(r.listener.demeanor!.delta).to.be.closeTo(-0.015, 1e-12);
      const asPy = chatIpcHash({ worldId: 'w', speakerId: 3, listenerId: 4, channel: 'say', axisSnapshotBefore: r.axisSnapshotBefore, grammarVersion: '1.0' });
      expect(r.ipcHash).to.equal(asPy);
    });

    it('is deterministic for the same inputs', () => {
      const a = resolveChat({ worldId: 'w', speaker, listener, channel: 'whisper', grammar: grammar() });
      const b = resolveChat({ worldId: 'w', speaker: { ...speaker, scores: { ...speaker.scores } }, listener, channel: 'whisper', grammar: grammar() });
      expect(b).to.deep.equal(a);
      expect(resolveChat({ worldId: 'x', speaker, listener, channel: 'whisper', grammar: grammar() }).ipcHash).to.not.equal(a.ipcHash);
    });

    it('derives the translation seed from the first 16 hex digits of the ipc_hash', () => {
      expect(seedFromIpcHash(WORKED_HASH)).to.equal(0x009c6503c07dd197n);
      expect(seedFromIpcHash('f'.repeat(64))).to.equal(2n ** 64n - 1n);
    });
  });
});
