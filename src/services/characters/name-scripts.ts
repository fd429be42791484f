/**
 * Which writing systems a name is written in (UTS #39, section 5.1): a name whose letters share
 * no script, like "Thougrаbert" with a Cyrillic а among Latin letters, reads as another name.
 * Scripts come from the engine's own Unicode data (`\p{Script_Extensions=…}`), their names
 * from the ECMAScript list of property values; nothing here is a table of characters.
 */
import aliases from 'unicode-property-value-aliases-ecmascript';

/** Every script the RegExp engine knows, as a matcher of one character; compiled at first use (about 170 of them). */
let scripts: ReadonlyArray<readonly [string, RegExp]> | undefined;

function allScripts(): ReadonlyArray<readonly [string, RegExp]> {
  scripts ??= [...new Set(aliases.get('Script_Extensions')?.values() ?? [])]
    .filter((script) => script !== 'Common' && script !== 'Inherited' && script !== 'Unknown')
    .flatMap((script) => {
      try {
        return [[script, new RegExp(`^\\p{Script_Extensions=${script}}$`, 'u')] as const];
      } catch {
        // A script newer than this engine's Unicode data.
        return [];
      }
    });
  return scripts;
}

/**
 * UTS #39's augmented script set: Han counts as Japanese, Korean and Chinese with Bopomofo;
 * Hiragana and Katakana as Japanese, Hangul as Korean, Bopomofo as Chinese with Bopomofo.
 * So the writing of one language that mixes scripts (Japanese kanji and kana) stays one.
 */
const AUGMENT: Readonly<Record<string, readonly string[]>> = {
  Han: ['Jpan', 'Kore', 'Hanb'],
  Hiragana: ['Jpan'],
  Katakana: ['Jpan'],
  Hangul: ['Kore'],
  Bopomofo: ['Hanb'],
};

/** The augmented scripts of one character; null for a character of every script (Common, Inherited). */
function scriptsOf(char: string): Set<string> | null {
  const found = allScripts().filter(([, pattern]) => pattern.test(char)).map(([script]) => script);
  if (found.length === 0) return null;
  return new Set(found.flatMap((script) => [script, ...(AUGMENT[script] ?? [])]));
}

/** Scripts every character of `chars` belongs to (null: no character limits them). */
function resolved(chars: Iterable<Set<string>>): Set<string> | null {
  let common: Set<string> | undefined;
  for (const scripts of chars) common = common ? new Set([...common].filter((s) => scripts.has(s))) : scripts;
  return common ?? null;
}

/**
 * True unless `text` is single-script or one of the combinations UTS #39's Highly Restrictive
 * level allows: Latin with Japanese, Korean, or Chinese with Bopomofo.
 */
export function mixesScripts(text: string): boolean {
  const chars = [...text].map(scriptsOf).filter((s): s is Set<string> => s !== null);
  const all = resolved(chars);
  if (all === null || all.size > 0) return false;
  const others: Set<string> = resolved(chars.filter((s) => !s.has('Latin'))) ?? new Set();
  return !['Jpan', 'Kore', 'Hanb'].some((script) => others.has(script));
}
