/**
 * The pure parts of the game: `/command` parsing (the specification's rules), the plain-text
 * cleaning of commands, and the HTML escaping of chat text (as Python's html.escape with
 * quote=True escapes it, docs/decisions.md).
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { escapeHtml, parseCommand, plainText } from '../../src/shared/plain-text.ts';

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

describe('game: plainText', () => {
  const cases: Array<[input: string, expected: string, why: string]> = [
    ['plain text → ünïcödé, emoji 🙂', 'plain text → ünïcödé, emoji 🙂', 'printable text stays'],
    ['a\tb\nc\r\nd\u2028e\u0085f', 'a b c  d e f', 'tabs and line breaks become spaces'],
    ['\x1b[31mred\x1b[0m', 'red', 'a CSI colour sequence goes whole'],
    ['\x1b[2J\x1b[1;1Hcleared', 'cleared', 'screen clear and cursor moves'],
    ['\x1b]0;title\x07after', 'after', 'an OSC sequence ended by BEL'],
    ['\x1b]8;;http://evil\x1b\\link', 'link', 'an OSC sequence ended by ST'],
    ['\x1b]unterminated', 'unterminated', 'an unterminated OSC loses only its introducer'],
    ['\x1bc reset', 'reset', 'a two-byte escape'],
    ['\x1b(0charset\x1b7', 'charset', 'a character-set switch and a cursor save'],
    ['\x9b31mc1 csi', 'c1 csi', 'the one-byte C1 CSI'],
    ['nul\u0000bell\x07del\x7fc1\x80\x9f', 'nulbelldelc1', 'C0, DEL and C1 controls'],
    ['\u202egnp.exe', 'gnp.exe', 'right-to-left override'],
    ['a\u202ab\u202bc\u202cd\u202de', 'abcde', 'embeddings and the pop'],
    ['\u2066x\u2067y\u2068z\u2069', 'xyz', 'isolates'],
    ['\u200eleft\u200fright\u061c', 'leftright', 'directional marks'],
    ['  \u202e\x1b[0m  ', '', 'nothing left but whitespace'],
    ['<b>', '<b>', 'HTML is escaped later, not here'],
  ];
  for (const [input, expected, why] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)} (${why})`, () => {
      expect(plainText(input)).to.equal(expected);
    });
  }
});
