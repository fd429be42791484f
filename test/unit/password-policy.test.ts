import { expect } from 'chai';
import { describe, it } from 'mocha';
import {
  BLOCKED_PASSWORDS,
  BLOCKED_PASSWORD_LIST,
  checkStandardPassword,
} from '../../src/services/accounts/password-policy.ts';

// Exact client-facing texts, written out literally on purpose.
const tooShort = (n: number): string => `Password must be at least 12 characters long (currently ${n})`;
const tooLong = (bytes: number): string => `Password must be at most 72 bytes long in UTF-8 (currently ${bytes}); bcrypt ignores anything beyond`;
const COMMON = 'This password is too common and easily guessed. Please choose a more unique password.';
const SUBSTITUTED =
  'This password is a common password with simple substitutions. Please choose a more unique password.';
const sequential = (seq: string): string =>
  `Password contains sequential characters (${seq}). Avoid sequences like 'abc', '123', or 'xyz'.`;
const repeated = (run: string): string =>
  `Password contains too many repeated characters (${run}). Avoid repeating the same character more than 3 times.`;

// 8 characters, no sequence, no repeat, not blocked.
const PREFIX = 'Tq#8mZw!';

interface Case {
  name: string;
  password: string;
  errors: string[];
}

const cases: Case[] = [
  // passing
  { name: 'mixed 14-char password', password: 'SecureTest#9x7', errors: [] },
  { name: 'passphrase with spaces', password: 'correct horse battery staple', errors: [] },
  { name: 'exactly 12 chars', password: 'Tq#8mZw!Lp9k', errors: [] },

  // rule 1: minimum length
  { name: 'empty string', password: '', errors: [tooShort(0)] },
  { name: '11 chars', password: 'Tq#8mZw!Lp9', errors: [tooShort(11)] },
  { name: 'password (example)', password: 'password', errors: [tooShort(8), COMMON] },

  // rule 3: common password (case-insensitive, trimmed)
  { name: 'blocked 12+ entry', password: 'passwordpassword', errors: [COMMON] },
  { name: 'blocked entry, mixed case', password: 'LetMeInLetMeIn', errors: [COMMON] },
  { name: 'blocked entry, surrounding whitespace', password: '  CorrectHorse  ', errors: [COMMON] },
  { name: 'blocked keyboard walk (also has descending edc)', password: '1qaz2wsx3edc', errors: [COMMON, sequential('edc')] },

  // rule 4: substitutions
  { name: 'substitution-only hit', password: 'l3tm31nl3tm31n', errors: [SUBSTITUTED] },
  { name: 'substitution-only hit with @, 4, 3 and $', password: 'Ch4ng3M3Pl3@$3', errors: [SUBSTITUTED] },
  { name: 'rules 3 and 4 together (12+)', password: 'P@ssw0rdP@ssw0rd', errors: [COMMON, SUBSTITUTED] },
  { name: 'rules 1, 3 and 4 together', password: 'p@ssw0rd', errors: [tooShort(8), COMMON, SUBSTITUTED] },

  // rule 5: sequences
  { name: 'ascending letters', password: `${PREFIX}xyzL`, errors: [sequential('xyz')] },
  { name: 'ascending upper-case reported lower-case', password: `${PREFIX}LABC`, errors: [sequential('abc')] },
  { name: 'descending letters', password: `${PREFIX}Lcba`, errors: [sequential('cba')] },
  { name: 'descending digits', password: `${PREFIX}L321`, errors: [sequential('321')] },
  { name: 'ascending digits', password: `${PREFIX}L789`, errors: [sequential('789')] },
  { name: 'punctuation run', password: `${PREFIX}L-./`, errors: [sequential('-./')] },
  { name: 'only the first window', password: 'Kq#abcWm!xyz', errors: [sequential('abc')] },
  { name: 'overlapping windows reported once', password: `${PREFIX}abcd`, errors: [sequential('abc')] },
  { name: 'mixed direction is not a sequence', password: `${PREFIX}abab`, errors: [] },

  // rule 6: repeats
  { name: 'three repeats allowed', password: `${PREFIX}aaa9`, errors: [] },
  { name: 'four repeats rejected', password: `${PREFIX}aaaa`, errors: [repeated('aaaa')] },
  { name: 'long run reported as 4', password: `${PREFIX}zzzzzzz`, errors: [repeated('zzzz')] },
  { name: 'only the first run', password: `${PREFIX}bbbb9cccc`, errors: [repeated('bbbb')] },
  { name: 'repeat check is case-sensitive', password: `${PREFIX}aaAA`, errors: [] },
  { name: 'upper-case run keeps its case', password: `${PREFIX}QQQQ`, errors: [repeated('QQQQ')] },

  // everything at once, in order
  { name: 'short with sequence and repeat', password: 'abc1111', errors: [tooShort(7), sequential('abc'), repeated('1111')] },
];

describe('checkStandardPassword', () => {
  describe('table', () => {
    for (const c of cases) {
      it(`${c.name}: ${JSON.stringify(c.password)}`, () => {
        const result = checkStandardPassword(c.password);
        expect(result.errors).to.deep.equal(c.errors);
        expect(result.ok).to.equal(c.errors.length === 0);
      });
    }
  });

  it('gives exactly the documented errors for "password"', () => {
    expect(checkStandardPassword('password')).to.deep.equal({
      ok: false,
      errors: [
        'Password must be at least 12 characters long (currently 8)',
        'This password is too common and easily guessed. Please choose a more unique password.',
      ],
    });
  });

  describe('length counts Unicode code points', () => {
    // Distinct, non-adjacent emoji: no sequences, no repeats.
    const emoji = ['🍎', '🚀', '🐱', '🎉', '🌍', '💡', '🔥', '🎸', '🍕', '🌈', '🦊', '🎲'];

    it('6 emoji (12 UTF-16 units) are 6 characters', () => {
      const pw = emoji.slice(0, 6).join('');
      expect(pw.length).to.equal(12);
      expect(checkStandardPassword(pw).errors).to.deep.equal([tooShort(6)]);
    });

    it('12 emoji pass the minimum', () => {
      expect(checkStandardPassword(emoji.join(''))).to.deep.equal({ ok: true, errors: [] });
    });

    it('18 emoji (72 UTF-8 bytes) are within the maximum', () => {
      const pw = Array.from({ length: 18 }, (_, i) => emoji[i % 5]).join('');
      expect(Buffer.byteLength(pw)).to.equal(72);
      expect(checkStandardPassword(pw).errors).to.deep.equal([]);
    });

    it('19 emoji (76 UTF-8 bytes) are over the maximum', () => {
      const pw = Array.from({ length: 19 }, (_, i) => emoji[i % 5]).join('');
      expect(checkStandardPassword(pw).errors).to.deep.equal([tooLong(76)]);
    });
  });

  // bcrypt reads only the first 72 bytes: a longer password would log in by its prefix.
  describe('maximum length boundary (72 UTF-8 bytes)', () => {
    const base = 'Ab1#'.repeat(18);

    it('72 ASCII characters pass', () => {
      expect(base).to.have.length(72);
      expect(checkStandardPassword(base)).to.deep.equal({ ok: true, errors: [] });
    });

    it('73 ASCII characters fail', () => {
      expect(checkStandardPassword(`${base}x`)).to.deep.equal({ ok: false, errors: [tooLong(73)] });
    });

    it('counts bytes, not characters: 72 characters with one two-byte letter fail', () => {
      const pw = `${base.slice(0, 71)}é`;
      expect([...pw]).to.have.length(72);
      expect(checkStandardPassword(pw)).to.deep.equal({ ok: false, errors: [tooLong(73)] });
    });

    it("over 128 characters gets the specification's message (its second rule), not the byte rule", () => {
      expect(checkStandardPassword(`${base}${base.slice(0, 57)}`)).to.deep.equal({ ok: false, errors: ['Password must be at most 128 characters long (currently 129)'] });
      expect(checkStandardPassword(`${base}${base.slice(0, 56)}`)).to.deep.equal({ ok: false, errors: [tooLong(128)] });
    });
  });

  it('joins to a single message with spaces', () => {
    expect(checkStandardPassword('password').errors.join(' ')).to.equal(`${tooShort(8)} ${COMMON}`);
  });
});

describe('BLOCKED_PASSWORDS', () => {
  it('has at least 150 entries', () => {
    expect(BLOCKED_PASSWORDS.size).to.be.at.least(150);
  });

  it('has unique entries', () => {
    expect(new Set(BLOCKED_PASSWORD_LIST).size).to.equal(BLOCKED_PASSWORD_LIST.length);
    expect(BLOCKED_PASSWORDS.size).to.equal(BLOCKED_PASSWORD_LIST.length);
  });

  it('has only lower-case, trimmed, non-empty entries', () => {
    for (const entry of BLOCKED_PASSWORDS) {
      expect(entry, entry).to.equal(entry.toLowerCase());
      expect(entry, entry).to.equal(entry.trim());
      expect(entry.length, entry).to.be.greaterThan(0);
    }
  });

  it('includes entries of 12+ characters', () => {
    const long = [...BLOCKED_PASSWORDS].filter((p) => [...p].length >= 12);
    expect(long.length).to.be.at.least(5);
    for (const p of ['passwordpassword', 'qwertyuiop123', 'iloveyou1234', 'letmeinletmein', '1qaz2wsx3edc', 'correcthorse']) {
      expect(BLOCKED_PASSWORDS.has(p), p).to.equal(true);
    }
  });

  it('does not contain the substitution-only test case itself', () => {
    expect(BLOCKED_PASSWORDS.has('l3tm31nl3tm31n')).to.equal(false);
    expect(BLOCKED_PASSWORDS.has('ch4ng3m3pl3@$3')).to.equal(false);
  });
});
