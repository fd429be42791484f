/**
 * How a typed name finds what it names, on every door and in the play client's completion
 * (docs/decisions.md, "Names as players type them"): the whole name in any letter case, or
 * else the start of the name or of one of its words ("penny" and "can" for "Canal Penny",
 * "het" for "Hettie Webb"), when only one name starts so. Pure, without runtime imports, so the
 * browser bundle takes it as it is.
 */

/** What a typed name resolved to: the one thing it names, the names it could mean, or nothing. */
export type Resolved<T> = { found: T } | { ambiguous: string[] } | null;

/** Names listed when a typed name could mean several. */
const AMBIGUOUS_SHOWN = 5;

const fold = (text: string): string => text.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * Whether `typed` is the start of `name` or of one of its words (after a space, a hyphen or an
 * apostrophe), in any letter case: "pen" and "canal pen" for "Canal Penny".
 */
export function startsName(name: string, typed: string): boolean {
  const wanted = fold(typed);
  if (wanted === '') return false;
  const whole = fold(name);
  if (whole.startsWith(wanted)) return true;
  for (let i = 0; i < whole.length; i++) {
    if (/[\s'\u2019-]/.test(whole[i]!) && whole.startsWith(wanted, i + 1)) return true;
  }
  return false;
}

/**
 * The candidate `typed` names: one whose whole name it is (any letter case) first; else the
 * candidates whose name starts with it or has a word that does, when they all bear one name
 * (two Canal Pennies are one choice); else the names it could mean, or null for none.
 */
export function resolveName<T>(candidates: Iterable<T>, nameOf: (candidate: T) => string, typed: string): Resolved<T> {
  const wanted = fold(typed);
  if (wanted === '') return null;
  let first: T | undefined;
  const names = new Set<string>();
  for (const candidate of candidates) {
    const name = nameOf(candidate);
    if (fold(name) === wanted) return { found: candidate };
    if (!startsName(name, wanted)) continue;
    if (names.size === 0) first = candidate;
    names.add(name);
  }
  if (names.size === 0) return null;
  if (names.size === 1) return { found: first as T };
  return { ambiguous: [...names].sort().slice(0, AMBIGUOUS_SHOWN) };
}

/** The answer to a typed name that could mean several: `'pen' could be Canal Penny or Copper Pendant: type more of the name.` */
export function ambiguousAnswer(typed: string, names: readonly string[]): string {
  const listed = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)!}`;
  return `'${typed}' could be ${listed}: type more of the name.`;
}
