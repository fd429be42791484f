/**
 * The reference server's ledger directory: its `<world_id>.jsonl` files, read line by line for
 * the import. Only regular files are read: each is opened without following a symbolic link and
 * without waiting for a writer (O_NOFOLLOW | O_NONBLOCK), then checked on the open descriptor,
 * so a link (to /etc/passwd, say), a FIFO that nobody writes (which would block the read for
 * ever) or a device named `*.jsonl` is refused, with no gap between the check and the read. A
 * line is held in memory only up to the limit the caller gives.
 */
import { constants, type Dirent, type Stats } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';

export class ReferenceLedgerError extends Error {}

/** One line of a ledger file: its text, or its length when that is beyond the limit. */
export type LedgerLine = { number: number; text: string } | { number: number; tooLong: number };

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** What a directory entry or an open file is, when it is not a regular file. */
function kindOf(entry: Dirent | Stats): string | undefined {
  if (entry.isFile()) return undefined;
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isFIFO()) return 'a FIFO (named pipe)';
  if (entry.isSocket()) return 'a socket';
  if (entry.isCharacterDevice() || entry.isBlockDevice()) return 'a device';
  if (entry.isDirectory()) return 'a directory';
  return 'not a regular file';
}

function notRegular(file: string, kind: string): ReferenceLedgerError {
  return new ReferenceLedgerError(`The ledger file '${file}' is ${kind}: the import reads regular files only (copy the real file there)`);
}

/** The `*.jsonl` files of `dir`, sorted; anything among them that is not a regular file is refused. */
export async function ledgerFiles(dir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new ReferenceLedgerError(`Cannot read the ledger directory '${dir}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const files = entries.filter((e) => e.name.endsWith('.jsonl')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of files) {
    const kind = kindOf(entry);
    if (kind !== undefined) throw notRegular(path.join(dir, entry.name), kind);
  }
  return files.map((e) => path.join(dir, e.name));
}

/**
 * The lines of one ledger file (UTF-8, `\n`-separated, empty lines left out), numbered from 1.
 * A line longer than `maxLineBytes` is not kept: its number and length come instead.
 */
export async function* ledgerLines(file: string, maxLineBytes: number): AsyncGenerator<LedgerLine> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // O_NOFOLLOW on a link fails with ELOOP (EMLINK on some BSDs).
    if (code === 'ELOOP' || code === 'EMLINK') throw notRegular(file, 'a symbolic link');
    throw new ReferenceLedgerError(`Cannot read the ledger file '${file}': ${code ?? (err as Error).message}`);
  }
  try {
    const kind = kindOf(await handle.stat());
    if (kind !== undefined) throw notRegular(file, kind);
    const buffer = Buffer.alloc(CHUNK_BYTES);
    let parts: Buffer[] = [];
    let length = 0;
    let number = 0;
    const finish = (): LedgerLine | undefined => {
      number++;
      const line: LedgerLine | undefined = length > maxLineBytes ? { number, tooLong: length } : length === 0 ? undefined : { number, text: Buffer.concat(parts).toString('utf8') };
      parts = [];
      length = 0;
      return line;
    };
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      let start = 0;
      while (start < bytesRead) {
        const end = buffer.indexOf(NEWLINE, start);
        const stop = end === -1 || end >= bytesRead ? bytesRead : end;
        length += stop - start;
        // Past the limit the line's bytes are counted, not kept.
        if (length <= maxLineBytes) parts.push(Buffer.from(buffer.subarray(start, stop)));
        start = stop;
        if (stop === end) {
          start++;
          const line = finish();
          if (line && !('text' in line && line.text.trim() === '')) yield line;
        }
      }
    }
    const last = finish();
    if (last && !('text' in last && last.text.trim() === '')) yield last;
  } finally {
    await handle.close();
  }
}
