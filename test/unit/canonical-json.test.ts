import { describe, it } from 'mocha';
import { expect } from 'chai';
import {
  canonicalJson,
  canonicalJsonIndented,
  canonicalPieces,
  formatFloat,
  parseJson,
  payloadHash,
  payloadHashAsync,
  PyFloat,
} from '../../src/shared/canonical-json.ts';

describe("canonical JSON and payload hash (the reference server's test vectors)", () => {
  it('serializes like Python json.dumps(sort_keys=True) and hashes a variant content_hash', () => {
    const payload = { policy_id: 'species_block:image.blocks.species:goblin', variant: 'v1', content: { text: 'goblin text' } };
    expect(canonicalJson(payload)).to.equal(
      '{"content": {"text": "goblin text"}, "policy_id": "species_block:image.blocks.species:goblin", "variant": "v1"}',
    );
    expect(payloadHash(payload)).to.equal('ef17ce13866baa56333f6887078807dc05f06e670f61901ad08a6a08deb6feb2');
  });

  it('hashes axis values', () => {
    expect(payloadHash({ demeanor: { label: 'timid', score: 0.07 }, wealth: { label: 'modest', score: 0.33 } })).to.equal(
      '319c128f2a15edcdbb3eba18babe9fe4a8f03586d17465c814bfa6a99e802c67',
    );
  });

  it('keeps an integral float as 1.0 (parsed from JSON or made explicit)', () => {
    const expected = 'ab52c9a7ce078b4ee7daa9032544e119447c54ae5bc06daf988db8c2d0ee6da1';
    expect(payloadHash(parseJson('{"demeanor":{"label":"proud","score":1.0}}'))).to.equal(expected);
    expect(payloadHash({ demeanor: { label: 'proud', score: new PyFloat(1) } })).to.equal(expected);
    expect(payloadHash({ demeanor: { label: 'proud', score: 1 } })).to.not.equal(expected);
  });

  it('hashes an empty item list and a policy tree entry', () => {
    expect(payloadHash({ items: [] })).to.equal('eeb85c2675888473ec64b7580aa0c76c6fd6b2bd51828870286ef202ad89dae2');
    expect(
      payloadHash({
        entries: [{ content_hash: 'h1', relative_path: 'species_block/image/blocks/species/goblin/v1.json' }],
        hash_version: 'policy_tree_hash_v1',
      }),
    ).to.equal('cf701c0cc23b1d0c58a9dab245aac0d67b8f0eecdeeb06c4cbb2fc667ad7feea');
  });

  it('reproduces the manifest hash of an empty world-scope publish', () => {
    const itemsHash = payloadHash({ items: [] });
    expect(payloadHash({ world_id: 'pipeworks_web', client_profile: null, items_hash: itemsHash, item_count: 0 })).to.equal(
      'ce554b976de1d4ec0b0bf146ba1fcab1a82cea976127c2a61e48ce2594a3af34',
    );
  });

  it("formats floats with Python's repr rules", () => {
    const cases: Array<[number, string]> = [
      [0.07, '0.07'],
      [1e-5, '1e-05'],
      [0.0001, '0.0001'],
      [1.5e-7, '1.5e-07'],
      [1e16, '1e+16'],
      [1.2345e16, '1.2345e+16'],
      [123456789012345.6, '123456789012345.6'],
      [2.5, '2.5'],
      [-0.5, '-0.5'],
      [0, '0.0'],
      [-0, '-0.0'],
      [3, '3.0'],
      [1e15, '1000000000000000.0'],
    ];
    for (const [value, text] of cases) expect(formatFloat(value), String(value)).to.equal(text);
    expect(canonicalJson([1e-5, 0.5, 7, new PyFloat(7)])).to.equal('[1e-05, 0.5, 7, 7.0]');
  });

  it('writes non-ASCII raw, escapes control characters, sorts keys by code point', () => {
    expect(canonicalJson({ b: 'ü\n"\u0001', a: '😀' })).to.equal('{"a": "😀", "b": "ü\\n\\"\\u0001"}');
    // U+1F600 sorts after U+FFFF in Python (code points), before it in UTF-16.
    expect(canonicalJson({ '\uffff': 1, '😀': 2 })).to.equal('{"\uffff": 1, "😀": 2}');
  });

  it('writes the indented artifact format of json.dumps(indent=2, sort_keys=True)', () => {
    expect(canonicalJsonIndented({ b: [1, { c: new PyFloat(2) }], a: {}, e: [] })).to.equal(
      '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": 2.0\n    }\n  ],\n  "e": []\n}',
    );
  });

  it('serializes in pieces, iteratively: any depth, same text, same hash (issue 13)', async () => {
    const value = { b: [1, { c: new PyFloat(2), d: 'ü' }], a: {}, e: [], f: 'x'.repeat(300) };
    for (const indented of [false, true]) {
      const whole = indented ? canonicalJsonIndented(value) : canonicalJson(value);
      const pieces = [...canonicalPieces(value, indented, 16)];
      expect(pieces.length).to.be.above(3);
      expect(pieces.slice(0, -1).every((p) => p.length >= 16)).to.equal(true);
      expect(pieces.join('')).to.equal(whole);
    }
    expect(await payloadHashAsync(value)).to.equal(payloadHash(value));
    // Far deeper than the call stack allows for a recursive serializer.
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(canonicalJson(deep)).to.equal(`${'['.repeat(99_999)}[]${']'.repeat(99_999)}`);
    expect(payloadHash(deep)).to.match(/^[0-9a-f]{64}$/);
    expect(() => canonicalJson([undefined])).to.throw(TypeError, 'Cannot serialize undefined as canonical JSON');
  });

  it('keeps 1.0 in API responses through JSON.stringify', () => {
    expect(JSON.stringify(parseJson('{"x": 1.0, "y": 2, "z": 0.5}'))).to.equal('{"x":1.0,"y":2,"z":0.5}');
  });
});
