/**
 * The label ↔ score mappings every axis feature shares, as the reference server maps them:
 * labelFor, scoreForLabel and normalizeEntityAxes, on an axis bundle built by hand.
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { labelFor, normalizeEntityAxes, scoreForLabel, type AxisBundle, type AxisThreshold } from '../../src/services/policy/axis-bundle.ts';
import { PyFloat } from '../../src/shared/canonical-json.ts';

type Row = [label: string, min: number | null, max: number | null];

/** Orderings (low → high) and threshold rows per axis; ordinals follow the orderings. */
const ORDERINGS: Record<string, string[]> = {
  mood: ['low', 'mid', 'high'],
  mixed: ['one', 'two'],
  rank: ['Pawn', 'Knight', 'King', 'Queen'],
  solo: ['only'],
  bounds: ['x', 'nobounds'],
};
const ROWS: Record<string, Row[]> = {
  // Listed out of order on purpose: the ordering, not the list, decides.
  mood: [['high', 0.7, 1], ['low', 0, 0.4], ['mid', 0.4, 0.7]],
  // No ordering: overlapping ranges are decided by the lowest min.
  grade: [['b', 0.3, 0.8], ['a', 0.1, 0.6], ['open_low', null, 0.05]],
  // `extra` is not in the ordering, so an ordered label beats it.
  mixed: [['extra', 0, 1], ['two', 0, 1], ['one', 0.5, 1]],
  rank: [],
  solo: [],
  bounds: [['floor', 0.8, null], ['ceiling', null, 0.2], ['beyond', 1.5, null], ['nobounds', null, null]],
  // Unordered, each open on one side.
  edges: [['floor', 0.8, null], ['ceiling', null, 0.2]],
};

function buildBundle(): AxisBundle {
  const axisNames = Object.keys(ROWS).sort();
  const thresholds = new Map<string, AxisThreshold[]>();
  for (const name of axisNames) {
    const ordering = ORDERINGS[name] ?? [];
    thresholds.set(
      name,
      ROWS[name]!.map(([label, min, max]) => ({ label, min, max, ordinal: ordering.includes(label) ? ordering.indexOf(label) : null })),
    );
  }
  const axes: Record<string, unknown> = {};
  for (const name of axisNames) axes[name] = ORDERINGS[name] ? { description: name, ordering: { values: ORDERINGS[name] } } : { description: name };
  const thresholdAxes: Record<string, unknown> = {};
  for (const name of axisNames) {
    thresholdAxes[name] = { values: Object.fromEntries(ROWS[name]!.map(([label, min, max]) => [label, { min, max }])) };
  }
  return {
    worldId: 'testland',
    bundleId: 'testland_axes',
    bundleVersion: '1',
    policyHash: 'f'.repeat(64),
    manifest: {},
    content: { axes: { axes }, thresholds: { axes: thresholdAxes }, resolution: {} },
    axisNames,
    thresholds,
    requiredRuntimeInputs: [],
  };
}

const bundle = buildBundle();

describe('axis bundle: labelFor', () => {
  it('returns the label whose range holds the score, bounds included', () => {
    expect(labelFor(bundle, 'mood', 0)).to.equal('low');
    expect(labelFor(bundle, 'mood', 0.2)).to.equal('low');
    expect(labelFor(bundle, 'mood', 0.55)).to.equal('mid');
    expect(labelFor(bundle, 'mood', 0.9)).to.equal('high');
    expect(labelFor(bundle, 'mood', 1)).to.equal('high');
  });

  it('prefers the lowest ordinal on a shared boundary, whatever the listing order', () => {
    expect(labelFor(bundle, 'mood', 0.4)).to.equal('low');
    expect(labelFor(bundle, 'mood', 0.7)).to.equal('mid');
  });

  it('prefers ordered labels over unordered ones, then the lowest min', () => {
    expect(labelFor(bundle, 'mixed', 0.2)).to.equal('two');
    expect(labelFor(bundle, 'mixed', 0.6)).to.equal('one');
    expect(labelFor(bundle, 'grade', 0.5)).to.equal('a');
    expect(labelFor(bundle, 'grade', 0.7)).to.equal('b');
  });

  it('treats a missing bound as open', () => {
    expect(labelFor(bundle, 'grade', 0.02)).to.equal('open_low');
    expect(labelFor(bundle, 'grade', -5)).to.equal('open_low');
    expect(labelFor(bundle, 'edges', 0.9)).to.equal('floor');
    expect(labelFor(bundle, 'edges', 7)).to.equal('floor');
    expect(labelFor(bundle, 'edges', 0.1)).to.equal('ceiling');
    expect(labelFor(bundle, 'edges', 0.5)).to.equal(null);
    // A row open on both sides holds every score, and being ordered it beats the others.
    expect(labelFor(bundle, 'bounds', 0.9)).to.equal('nobounds');
    expect(labelFor(bundle, 'bounds', -3)).to.equal('nobounds');
  });

  it('returns null outside every range, for an axis without labels and for an unknown axis', () => {
    expect(labelFor(bundle, 'mood', 1.2)).to.equal(null);
    expect(labelFor(bundle, 'mood', -0.1)).to.equal(null);
    expect(labelFor(bundle, 'grade', 0.07)).to.equal(null);
    expect(labelFor(bundle, 'rank', 0.5)).to.equal(null);
    expect(labelFor(bundle, 'nope', 0.5)).to.equal(null);
  });
});

describe('axis bundle: scoreForLabel', () => {
  it('maps a label with a range to its midpoint', () => {
    expect(scoreForLabel(bundle, 'mood', 'low')).to.equal(0.2);
    expect(scoreForLabel(bundle, 'mood', 'mid')).to.be.closeTo(0.55, 1e-12);
    expect(scoreForLabel(bundle, 'mood', 'high')).to.be.closeTo(0.85, 1e-12);
    expect(scoreForLabel(bundle, 'grade', 'a')).to.be.closeTo(0.35, 1e-12);
  });

  it('matches labels trimmed and case-insensitively', () => {
    expect(scoreForLabel(bundle, 'mood', ' HIGH ')).to.be.closeTo(0.85, 1e-12);
    expect(scoreForLabel(bundle, 'rank', 'queen')).to.equal(1);
  });

  it('uses the single bound when only one exists, clamped to [0, 1]', () => {
    expect(scoreForLabel(bundle, 'bounds', 'floor')).to.equal(0.8);
    expect(scoreForLabel(bundle, 'bounds', 'ceiling')).to.equal(0.2);
    expect(scoreForLabel(bundle, 'grade', 'open_low')).to.equal(0.05);
    expect(scoreForLabel(bundle, 'bounds', 'beyond')).to.equal(1);
  });

  it('falls back to the position in the ordering: index/(n−1), one label 0.5', () => {
    expect(scoreForLabel(bundle, 'rank', 'Pawn')).to.equal(0);
    expect(scoreForLabel(bundle, 'rank', 'Knight')).to.be.closeTo(1 / 3, 1e-12);
    expect(scoreForLabel(bundle, 'rank', 'King')).to.be.closeTo(2 / 3, 1e-12);
    expect(scoreForLabel(bundle, 'rank', 'Queen')).to.equal(1);
    expect(scoreForLabel(bundle, 'solo', 'only')).to.equal(0.5);
    // A threshold row without bounds gives no number of its own.
    expect(scoreForLabel(bundle, 'bounds', 'nobounds')).to.equal(1);
  });

  it('returns null for an unknown label or axis', () => {
    expect(scoreForLabel(bundle, 'mood', 'medium')).to.equal(null);
    expect(scoreForLabel(bundle, 'rank', 'Bishop')).to.equal(null);
    expect(scoreForLabel(bundle, 'nope', 'low')).to.equal(null);
  });
});

describe('axis bundle: normalizeEntityAxes', () => {
  it('takes numbers under axes, character and occupation', () => {
    expect(normalizeEntityAxes({ axes: { mood: 0.1 }, character: { rank: 0.3 }, occupation: { grade: 0.6 } }, bundle)).to.deep.equal({ grade: 0.6, mood: 0.1, rank: 0.3 });
    expect(normalizeEntityAxes({ axes: { mood: { score: 0.42, label: 'high' } } }, bundle)).to.deep.equal({ mood: 0.42 });
    expect(normalizeEntityAxes({ axes: { mood: new PyFloat(1) } }, bundle)).to.deep.equal({ mood: 1 });
  });

  it('lets a number beat a label wherever each is, and earlier groups beat later ones', () => {
    expect(normalizeEntityAxes({ axes: { mood: 0.1 }, character: { mood: 'high' } }, bundle)).to.deep.equal({ mood: 0.1 });
    expect(normalizeEntityAxes({ axes: { mood: 'high' }, character: { mood: 0.3 } }, bundle)).to.deep.equal({ mood: 0.3 });
    expect(normalizeEntityAxes({ axes: { mood: 'low' }, occupation: { mood: 0.9 } }, bundle)).to.deep.equal({ mood: 0.9 });
    expect(normalizeEntityAxes({ axes: { mood: 0.1 }, character: { mood: 0.3 } }, bundle)).to.deep.equal({ mood: 0.1 });
    expect(normalizeEntityAxes({ character: { mood: 0.3 }, occupation: { mood: 0.9 } }, bundle)).to.deep.equal({ mood: 0.3 });
    expect(normalizeEntityAxes({ axes: { mood: 'low' }, character: { mood: 'high' } }, bundle)).to.deep.equal({ mood: 0.2 });
    expect(normalizeEntityAxes({ character: { mood: 'low' }, occupation: { mood: 'high' } }, bundle)).to.deep.equal({ mood: 0.2 });
  });

  it('maps labels through the thresholds and orderings, also inside {label|value|name} objects', () => {
    const result = normalizeEntityAxes({ axes: { mood: { label: 'high' } }, character: { rank: { value: 'King' } }, occupation: { solo: { name: 'only' } } }, bundle);
    expect(Object.keys(result)).to.deep.equal(['mood', 'rank', 'solo']);
    expect(result.mood).to.be.closeTo(0.85, 1e-12);
    expect(result.rank).to.be.closeTo(2 / 3, 1e-12);
    expect(result.solo).to.equal(0.5);
    // `label` is read before `value` and `name`.
    expect(normalizeEntityAxes({ character: { mood: { label: 'low', value: 'high', name: 'mid' } } }, bundle)).to.deep.equal({ mood: 0.2 });
    expect(normalizeEntityAxes({ character: { mood: { value: 'low', name: 'high' } } }, bundle)).to.deep.equal({ mood: 0.2 });
  });

  it('matches axis keys and labels case-insensitively, keeping the upstream key spelling', () => {
    const result = normalizeEntityAxes({ character: { MOOD: 'HIGH' }, occupation: { Rank: ' queen ' } }, bundle);
    expect(Object.keys(result)).to.deep.equal(['MOOD', 'Rank']);
    expect(result.MOOD).to.be.closeTo(0.85, 1e-12);
    expect(result.Rank).to.equal(1);
  });

  it('reads booleans as 1 and 0', () => {
    expect(normalizeEntityAxes({ axes: { mood: true, rank: false } }, bundle)).to.deep.equal({ mood: 1, rank: 0 });
    expect(normalizeEntityAxes({ character: { solo: true } }, bundle)).to.deep.equal({ solo: 1 });
  });

  it('drops unknown labels, labels of unknown axes and groups that are not objects', () => {
    expect(normalizeEntityAxes({ character: { mood: 'medium', species: 'heron' }, occupation: { rank: 'Bishop' } }, bundle)).to.deep.equal({});
    expect(normalizeEntityAxes({ axes: [0.5], character: 'bold', occupation: null }, bundle)).to.deep.equal({});
    expect(normalizeEntityAxes({}, bundle)).to.deep.equal({});
  });

  it('returns the axes sorted by key', () => {
    const result = normalizeEntityAxes({ occupation: { solo: 'only' }, axes: { rank: 0.2, mood: 0.1 }, character: { grade: 'b', bounds: 'floor' } }, bundle);
    expect(Object.keys(result)).to.deep.equal(['bounds', 'grade', 'mood', 'rank', 'solo']);
    expect(result.bounds).to.equal(0.8);
  });
});
