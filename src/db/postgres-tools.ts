/**
 * What the commands print about a PostgreSQL database: its URL without the password (a URL is
 * printed, so a secret in it must not be), and the `pg_dump` command that backs it up
 * (docs/decisions.md, "Backups and moving databases").
 */

/** `postgres://user:secret@host/db` as `postgres://user@host/db`; whether a password was taken out. */
export function withoutPassword(url: string): { url: string; hadPassword: boolean } {
  try {
    const parsed = new URL(url);
    const hadPassword = parsed.password !== '';
    parsed.password = '';
    return { url: parsed.href, hadPassword };
  } catch {
    return { url: '(a DATABASE_URL that is not a URL)', hadPassword: false };
  }
}

/** Quotes a word for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command that dumps the database at `url` into `file`: pg_dump's custom format (compressed,
 * restored with pg_restore, table by table), without owners and grants, so it restores into
 * a database of any role.
 */
export function pgDumpCommand(url: string, file: string): string {
  return ['pg_dump', '--format=custom', '--no-owner', '--no-privileges', `--file=${file}`, withoutPassword(url).url].map(shellQuote).join(' ');
}
