/**
 * The reference import's report as the CLI prints it: every mapped and skipped row with its
 * reason, the notes, a table of counts, and what happened to the database. A dry run prints
 * the same report as the real run.
 */
import { plainText } from '../../shared/plain-text.ts';
import type { ImportReport } from './reference-import.ts';

const COLUMNS = ['read', 'imported', 'mapped', 'existing', 'skipped'] as const;
/** A report line's length on the terminal: a reference row may hold a name of any length. */
const MAX_LINE_CHARACTERS = 500;

/** A line as the terminal gets it: one line, nothing in it that moves the cursor or recolours, cut to length. */
function shown(line: string): string {
  const characters = [...plainText(line)];
  return characters.length > MAX_LINE_CHARACTERS ? `${characters.slice(0, MAX_LINE_CHARACTERS).join('')}…` : characters.join('');
}

export function formatImportReport(report: ImportReport): string {
  const out: string[] = [`Reference import of ${report.file}${report.merge ? ' (--merge)' : ''}${report.dryRun ? ' (--dry-run)' : ''}`, ''];
  const tableWidth = Math.max(5, ...report.tables.map((t) => t.table.length));
  for (const line of report.lines) out.push(shown(`${line.outcome.padEnd(8)} ${line.row}: ${line.reason}`));
  if (report.lines.length > 0) out.push('');
  out.push(`${'table'.padEnd(tableWidth)}  ${COLUMNS.map((c) => c.padStart(8)).join('  ')}`);
  for (const t of report.tables) out.push(`${t.table.padEnd(tableWidth)}  ${COLUMNS.map((c) => String(t[c]).padStart(8)).join('  ')}`);
  out.push('');
  if (report.dryRun) out.push('Dry run: nothing was written.');
  else if (report.committed) out.push(`Imported${report.skipped > 0 ? `, without the ${report.skipped} skipped row(s) listed above` : ''}. Sessions are not carried over: every player logs in again.`);
  else {
    out.push(
      `Nothing was written: ${report.skipped} row(s) would be skipped (listed above). Settle them in the reference database, or run again with --allow-skips to import the rest.`,
    );
  }
  return `${out.join('\n')}\n`;
}
