/**
 * "STANDARD" password policy.
 *
 * All checks run (no fail-fast); errors are reported in a fixed order and with
 * exact message texts, because clients match on them. Callers join `errors`
 * with single spaces.
 */

import { BCRYPT_MAX_PASSWORD_BYTES } from './password-hasher.ts';

export interface PasswordCheck {
  ok: boolean;
  errors: string[];
}

const MIN_LENGTH = 12;
/** The specification's maximum (its rule 2); the 72-byte rule below is stricter for most passwords. */
const MAX_LENGTH = 128;
const MAX_REPEAT = 3;

/**
 * Our own list of well-known weak passwords. Entries are lower-case and
 * trimmed, because lookups use `password.toLowerCase().trim()`.
 * Several entries are 12+ characters so the list still matters once the
 * length minimum is met.
 */
export const BLOCKED_PASSWORD_LIST: readonly string[] = [
  // numeric
  '123456', '1234567', '12345678', '123456789', '1234567890', '12345',
  '123456789012', '111111', '11111111', '111111111111', '000000', '123123',
  '654321', '666666', '121212', '112233', '987654321', '123321', '159753',
  '147258369', '7777777', '696969',
  // password variants
  'password', 'password1', 'password12', 'password123', 'password1234',
  'passw0rd', 'p@ssw0rd', 'p@ssword', 'pa55word', 'pass', 'pass123',
  'passwordpassword', 'password1password1', 'p@ssw0rdp@ssw0rd', 'mypassword',
  'secretpassword',
  // keyboard walks
  'qwerty', 'qwerty123', 'qwertyuiop', 'qwertyuiop123', 'qwertyqwerty',
  'asdfgh', 'asdfghjkl', 'asdfghjkl123', 'zxcvbn', 'zxcvbnm', '1q2w3e',
  '1q2w3e4r', '1q2w3e4r5t', '1q2w3e4r5t6y', 'qazwsx', 'qazwsxedc',
  'qazwsxedcrfv', '1qaz2wsx', '1qaz2wsx3edc', 'zaq12wsx', '1qazxsw2',
  'qweasdzxc', 'qweasd', 'qwe123', 'asd123', 'asdasd', 'zxczxc', '1234qwer',
  'qwer1234', 'abc123', 'abcdef', 'abcd1234', 'abc12345', 'aaaaaa',
  // phrases and common words
  'letmein', 'letmein123', 'letmein12345', 'letmeinletmein', 'iloveyou',
  'iloveyou1', 'iloveyou123', 'iloveyou1234', 'iloveyouiloveyou', 'admin',
  'admin123', 'administrator', 'welcome', 'welcome1', 'welcome123',
  'welcomewelcome', 'changeme', 'changeme123', 'changemeplease', 'trustno1',
  'trustno1trustno1', 'correcthorse', 'correcthorsebatterystaple', 'secret',
  'login', 'hello', 'hello123', 'helloworld', 'test', 'test123', 'testing',
  'guest', 'root', 'toor', 'default', 'access', 'computer', 'internet',
  'whatever', 'freedom', 'sunshine', 'princess', 'shadow', 'master',
  'superman', 'superman1234', 'batman', 'starwars', 'pokemon', 'killer',
  'cheese', 'hottie', 'flower', 'lovely', 'loveme', 'cookie', 'chocolate',
  'butterfly', 'purple', 'orange', 'banana', 'apple', 'samsung', 'google',
  'monkey', 'monkeymonkey', 'dragon', 'dragon123', 'minecraft', 'fortnite',
  'dungeon', 'dungeonmaster', 'wizard', 'warrior', 'mustang', 'ferrari',
  'corvette', 'matrix', 'ninja', 'azerty', 'solo', 'zaq1zaq1', 'qwerty1',
  // sports
  'football', 'football1234', 'baseball', 'baseball1234', 'basketball',
  'soccer', 'hockey', 'yankees', 'cowboys', 'steelers', 'lakers', 'arsenal',
  'chelsea', 'liverpool', 'packers', 'eagles', 'redsox', 'jordan23',
  // names
  'michael', 'jennifer', 'jordan', 'jessica', 'ashley', 'daniel', 'andrew',
  'joshua', 'matthew', 'charlie', 'thomas', 'robert', 'hunter', 'buster',
  'ginger', 'maggie', 'harley', 'george', 'summer', 'pepper', 'tigger',
  'jasmine', 'nicole', 'amanda',
  // years
  '2015', '2016', '2017', '2018', '2019', '2020', '2021', '2022', '2023',
  '2024', '2025', '2026',
];

export const BLOCKED_PASSWORDS: ReadonlySet<string> = new Set(BLOCKED_PASSWORD_LIST);

/** Applied sequentially, each as replace-all, in exactly this order. */
const SUBSTITUTIONS: ReadonlyArray<readonly [string, string]> = [
  ['@', 'a'], ['4', 'a'], ['8', 'b'], ['(', 'c'], ['3', 'e'], ['6', 'g'],
  ['1', 'i'], ['!', 'i'], ['|', 'l'], ['0', 'o'], ['5', 's'], ['$', 's'],
  ['7', 't'], ['+', 't'], ['2', 'z'],
];

function undoSubstitutions(value: string): string {
  let result = value;
  for (const [from, to] of SUBSTITUTIONS) {
    result = result.split(from).join(to);
  }
  return result;
}

/** First window of 3 code points that each step +1 or each step -1. */
function findSequence(value: string): string | undefined {
  const chars = [...value];
  for (let i = 0; i + 2 < chars.length; i++) {
    const a = chars[i]!.codePointAt(0)!;
    const b = chars[i + 1]!.codePointAt(0)!;
    const c = chars[i + 2]!.codePointAt(0)!;
    const d1 = b - a;
    const d2 = c - b;
    if ((d1 === 1 && d2 === 1) || (d1 === -1 && d2 === -1)) {
      return chars[i]! + chars[i + 1]! + chars[i + 2]!;
    }
  }
  return undefined;
}

/** First run of more than MAX_REPEAT identical code points (case-sensitive). */
function findRepeat(value: string): string | undefined {
  const chars = [...value];
  let runLength = 0;
  for (let i = 0; i < chars.length; i++) {
    runLength = i > 0 && chars[i] === chars[i - 1] ? runLength + 1 : 1;
    if (runLength > MAX_REPEAT) {
      return chars[i]!.repeat(MAX_REPEAT + 1);
    }
  }
  return undefined;
}

export function checkStandardPassword(password: string): PasswordCheck {
  const errors: string[] = [];
  const length = [...password].length;

  if (length < MIN_LENGTH) {
    errors.push(`Password must be at least ${MIN_LENGTH} characters long (currently ${length})`);
  }
  const bytes = Buffer.byteLength(password, 'utf8');
  // Over 128 characters the specification's own message answers, in its place; the byte rule
  // (which it implies) speaks for the shorter passwords bcrypt would still truncate.
  if (length > MAX_LENGTH) {
    errors.push(`Password must be at most ${MAX_LENGTH} characters long (currently ${length})`);
  } else if (bytes > BCRYPT_MAX_PASSWORD_BYTES) {
    errors.push(`Password must be at most ${BCRYPT_MAX_PASSWORD_BYTES} bytes long in UTF-8 (currently ${bytes}); bcrypt ignores anything beyond`);
  }

  const normalized = password.toLowerCase().trim();
  if (BLOCKED_PASSWORDS.has(normalized)) {
    errors.push('This password is too common and easily guessed. Please choose a more unique password.');
  }

  const desubstituted = undoSubstitutions(normalized);
  if (desubstituted !== normalized && BLOCKED_PASSWORDS.has(desubstituted)) {
    errors.push(
      'This password is a common password with simple substitutions. Please choose a more unique password.',
    );
  }

  const sequence = findSequence(password.toLowerCase());
  if (sequence !== undefined) {
    errors.push(
      `Password contains sequential characters (${sequence}). Avoid sequences like 'abc', '123', or 'xyz'.`,
    );
  }

  const repeat = findRepeat(password);
  if (repeat !== undefined) {
    errors.push(
      `Password contains too many repeated characters (${repeat}). Avoid repeating the same character more than ${MAX_REPEAT} times.`,
    );
  }

  return { ok: errors.length === 0, errors };
}
