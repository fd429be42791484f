/**
 * The pure parts of the game: `/command` parsing (interface spec, ref-game-db.md §4) and the
 * HTML escaping of chat text (Python's html.escape with quote=True, ref-game-db.md §9.1).
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { escapeHtml, parseCommand } from '../../src/services/game/game-service.ts';

describe('game: parseCommand', () => {
  const cases: Array<[input: string, expected: { verb: string; args: string } | null, why: string]> = [
    ['look', { verb: 'look', args: '' }, 'a bare verb'],
    ['  look  ', { verb: 'look', args: '' }, 'surrounding whitespace is trimmed'],
    ['\t\nlook\r\n', { verb: 'look', args: '' }, 'tabs and newlines count as whitespace'],
    ['/look', { verb: 'look', args: '' }, 'one leading slash is removed'],
    ['  /look', { verb: 'look', args: '' }, 'the slash is removed after trimming'],
    ['//look', { verb: '/look', args: '' }, 'only one slash is removed'],
    ['LOOK', { verb: 'look', args: '' }, 'the verb is lower-cased'],
    ['/Say Hello There', { verb: 'say', args: 'Hello There' }, 'args keep their case'],
    ['say   Hello   There  ', { verb: 'say', args: 'Hello   There' }, 'inner spacing is kept, trailing whitespace trimmed'],
    ['say\tHello', { verb: 'say', args: 'Hello' }, 'a tab separates verb and args'],
    ['GET Tallow Candle', { verb: 'get', args: 'Tallow Candle' }, 'item names keep their case'],
    ['whisper Mara Vell  psst  there', { verb: 'whisper', args: 'Mara Vell  psst  there' }, 'whisper args are split later'],
    ['?', { verb: '?', args: '' }, 'the help alias'],
    ['/?', { verb: '?', args: '' }, 'the help alias with a slash'],
    ['w', { verb: 'w', args: '' }, 'short direction'],
    ['', null, 'empty'],
    ['    ', null, 'only whitespace'],
    ['/', null, 'a slash alone'],
    ['/   ', null, 'a slash and spaces'],
    ['  /  ', null, 'a slash surrounded by spaces'],
  ];
  for (const [input, expected, why] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)} (${why})`, () => {
      expect(parseCommand(input)).to.deep.equal(expected);
    });
  }
});

describe('game: escapeHtml', () => {
  const cases: Array<[input: string, expected: string]> = [
    ['plain text', 'plain text'],
    ['', ''],
    ['<b>&\'"', '&lt;b&gt;&amp;&#x27;&quot;'],
    ['&amp;', '&amp;amp;'],
    ['&lt;', '&amp;lt;'],
    ["it's", 'it&#x27;s'],
    ['"quoted"', '&quot;quoted&quot;'],
    ['<script>alert("x")</script>', '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'],
    ['a > b && c < d', 'a &gt; b &amp;&amp; c &lt; d'],
    ['→ ünïcödé stays', '→ ünïcödé stays'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      expect(escapeHtml(input)).to.equal(expected);
    });
  }
});
