/**
 * Words that would make a player's name pass for the server or its staff. They are refused in
 * names players choose (usernames at registration, character names at guest registration and
 * direct login) as whole words in any letter case: "Admin", "Admin Smith" and "root_2" are
 * refused, "Rootbeer" and "Modesty" are not. Staff-made accounts (admin create, the superuser
 * commands) may use them: naming the moderator's account "moderator" is what they are for.
 */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'admin',
  'administrator',
  'gamemaster',
  'gm',
  'mod',
  'moderator',
  'official',
  'root',
  'server',
  'staff',
  'superuser',
  'support',
  'sysop',
  'system',
  'worldbuilder',
]);

/** The first reserved word in `name` (words are runs of letters), or undefined. */
export function reservedWordIn(name: string): string | undefined {
  return name
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .find((word) => RESERVED_WORDS.has(word));
}
