/**
 * Player text as the game reads and stores it: one line of plain text, the verb split from its
 * arguments, and chat escaped as the reference server stores it.
 */

/**
 * The longest command a player sends: POST /command's limit (openapi.yaml, CommandRequest.command),
 * which the telnet door applies to a line too. So it bounds the text of any chat message.
 */
export const MAX_COMMAND_CHARACTERS = 2000;

/** Python's html.escape(text, quote=True): chat is stored and echoed escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

/** Terminal escape sequences: CSI (`ESC [ … m`, or the one-byte C1 CSI), terminated OSC, other escapes. */
const ESCAPE_SEQUENCE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])|\x9b[0-?]*[ -/]*[@-~]/g;
const LINE_BREAK = /[\t\n\v\f\r\x85\u2028\u2029]/g;
/**
 * C0 and C1 controls, DEL, and Unicode's default-ignorable code points: the bidirectional marks,
 * embeddings, overrides and isolates, zero-width characters (U+200B, U+2060–U+2064), fillers
 * (U+3164), variation selectors and tag characters (U+E0000–U+E007F), which show nothing.
 * Kept: a zero-width joiner or variation selector right after an emoji, which joins or styles it.
 */
const INVISIBLE = /[\x00-\x1f\x7f-\x9f]|(?<!\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}]?\uFE0F?)[\u200D\uFE0E\uFE0F]|(?![\u200D\uFE0E\uFE0F])\p{Default_Ignorable_Code_Point}/gu;

/**
 * One line of plain text, trimmed: escape sequences, control characters and invisible code
 * points removed (they can clear, recolour or reorder what other players' clients show, e.g.
 * U+202E makes a message read backwards, or make a message that shows nothing), tabs and line
 * breaks turned into spaces.
 */
export function plainText(text: string): string {
  return withoutControls(text).trim();
}

/**
 * Text the server sends to a terminal, line by line: each line cleaned as plainText cleans
 * (so nothing in a world file or a name can move the cursor or recolour the screen), keeping
 * its indentation.
 */
export function terminalLines(text: string): string[] {
  return text.split(/\r\n|\n|\r/).map((line) => withoutControls(line).trimEnd());
}

function withoutControls(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(LINE_BREAK, ' ').replace(INVISIBLE, '');
}

/** Trimmed text → lower-cased verb and the rest (case kept); one leading `/` is dropped. */
export function parseCommand(text: string): { verb: string; args: string } | null {
  let trimmed = text.trim();
  if (trimmed.startsWith('/')) trimmed = trimmed.slice(1).trimStart();
  if (trimmed === '') return null;
  const match = /^(\S+)\s*(.*)$/s.exec(trimmed)!;
  return { verb: match[1]!.toLowerCase(), args: match[2]! };
}
