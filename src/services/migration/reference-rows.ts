/**
 * Checks of single reference values against what this server stores, for the rules no service
 * owns: text within its column (the migrations' lengths, counted in characters as PostgreSQL
 * counts them) and JSON columns as JSON of the shape this server writes. Each says why a value
 * fails, naming the column, or gives undefined (or the parsed value).
 */
import { parseJson } from '../../shared/canonical-json.ts';

export interface TextOptions {
  /** An empty (or blank) string is allowed. */
  blank?: boolean;
  /** null is allowed. */
  nullable?: boolean;
}

/** Why `value` cannot be stored in a text column of at most `max` characters, or undefined. */
export function textRule(column: string, value: unknown, max: number, options: TextOptions = {}): string | undefined {
  if (value === null || value === undefined) return options.nullable ? undefined : `${column} is missing`;
  if (typeof value !== 'string') return `${column} is not text`;
  if (!options.blank && value.trim() === '') return `${column} is empty`;
  const length = [...value].length;
  if (length > max) return `${column} is ${length} characters long, over the ${max} this server stores`;
  return undefined;
}

export type JsonShape = 'object' | 'list of strings';

/** The parsed JSON text of a column (numbers as the float-keeping parser keeps them), or why it is not JSON of `shape`. */
export function jsonRule(column: string, value: unknown, shape: JsonShape): { value: unknown } | string {
  if (typeof value !== 'string') return `${column} is not text`;
  let parsed: unknown;
  try {
    parsed = parseJson(value);
  } catch {
    return `${column} is not JSON`;
  }
  const fits = shape === 'object' ? typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) : Array.isArray(parsed) && parsed.every((e) => typeof e === 'string');
  return fits ? { value: parsed } : `${column} is JSON but not a ${shape === 'object' ? 'JSON object' : 'list of strings'}`;
}
