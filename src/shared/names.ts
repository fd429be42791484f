/**
 * The keys names are compared by, for every layer: usernames and character names are unique
 * case-insensitively (`users.username_key`, `characters.name_key`), and character names that
 * look alike are refused (`characters.name_skeleton`). The limits count a requested username by
 * the same key, so letter case buys no extra tries.
 */
import { createRequire } from 'node:module';

/**
 * The form usernames are unique and counted in: trimmed and lower-cased, so `Root` cannot sit
 * beside `root`. Lookups at login stay exact (the specification's "case-sensitive for lookup").
 */
export function usernameKey(username: string): string {
  return username.trim().toLowerCase();
}

/** Character names are unique across the service, case-insensitively: this is the key that enforces it. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * Unicode's confusables data (UTS #39: each confusable code point to its prototype), as the
 * `unhomoglyph` package ships it. Read as a map, one lookup per code point: the package's own
 * function compiles a 6,311-way regular expression when it is loaded.
 */
let prototypes: ReadonlyMap<string, string> | undefined;

/**
 * Names that look alike share this key (unique per world): the UTS #39 skeleton (NFD, each
 * character mapped to its prototype, NFD again), lower-cased, and skeletoned once more, so
 * that case does not hide a look-alike ("Thougrаbert" with a Cyrillic а, "thougrabert") and a
 * capital I still reads as an l.
 */
export function nameSkeleton(name: string): string {
  prototypes ??= new Map(Object.entries(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>));
  const map = prototypes;
  const skeleton = (text: string): string => [...text.normalize('NFD')].map((c) => map.get(c) ?? c).join('').normalize('NFD');
  return skeleton(skeleton(name).toLowerCase());
}
