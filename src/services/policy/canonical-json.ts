/**
 * The reference server's canonical JSON and payload hash, byte for byte: sha256 over Python's
 * `json.dumps(payload, sort_keys=True, ensure_ascii=False)` (", " and ": " separators, keys
 * sorted by code point at every level, non-ASCII written raw), lower-case hex.
 *
 * Python keeps floats apart from ints (`1.0` vs `1`) and formats floats with its own repr
 * rules (`1e-05`, `1e+16`). JavaScript has one number type, so an integral float read from
 * JSON text is kept as a PyFloat (see parseJson), and every other non-integer number is
 * written in Python's float repr. Artifacts exchanged with the reference therefore hash alike.
 */
import { createHash } from 'node:crypto';

// Node 22+ (V8) has JSON.rawJSON; TypeScript's lib does not declare it yet.
declare global {
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

/** An integral number that was a float in its JSON source (`1.0`, `2e3`), or must be one. */
export class PyFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }

  /** In API responses too, `1.0` stays `1.0`. */
  toJSON(): unknown {
    return JSON.rawJSON(formatFloat(this.value));
  }
}

/** Python's float repr: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exp);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  let text: string;
  if (exponent < -4 || exponent >= 16) {
    const head = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    text = `${head}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  } else if (exponent < 0) {
    text = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  } else if (digits.length > exponent + 1) {
    text = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  } else {
    text = `${digits}${'0'.repeat(exponent + 1 - digits.length)}.0`;
  }
  return negative ? `-${text}` : text;
}

/** Key order of Python's sort: by code point (JavaScript's default compares UTF-16 units). */
function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function sortedKeys(obj: object): string[] {
  const keys = Object.keys(obj).filter((k) => (obj as Record<string, unknown>)[k] !== undefined);
  // Plain `<` is exact unless a key holds characters outside the Basic Multilingual Plane.
  return /[\uD800-\uDFFF]/.test(keys.join('')) ? keys.sort(compareCodePoints) : keys.sort();
}

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (value instanceof PyFloat) return formatFloat(value.value);
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // An integral number that is not a PyFloat was an int in its source: Python prints all its digits.
      return Number.isInteger(value) ? BigInt(value).toString() : formatFloat(value);
    case 'string':
      // JSON.stringify escapes exactly what Python's ensure_ascii=False escapes.
      return JSON.stringify(value);
    default:
      return undefined;
  }
}

/** `json.dumps(value, sort_keys=True, ensure_ascii=False)`. */
export function canonicalJson(value: unknown): string {
  const text = scalar(value);
  if (text !== undefined) return text;
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(', ')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${sortedKeys(obj).map((k) => `${JSON.stringify(k)}: ${canonicalJson(obj[k])}`).join(', ')}}`;
  }
  throw new TypeError(`Cannot serialize ${typeof value} as canonical JSON`);
}

/** `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`: the artifact file format. */
export function canonicalJsonIndented(value: unknown, depth = 0): string {
  const text = scalar(value);
  if (text !== undefined) return text;
  const pad = '  '.repeat(depth + 1);
  const end = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + canonicalJsonIndented(v, depth + 1)).join(',\n')}\n${end}]`;
  }
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = sortedKeys(obj);
    if (keys.length === 0) return '{}';
    return `{\n${keys.map((k) => `${pad}${JSON.stringify(k)}: ${canonicalJsonIndented(obj[k], depth + 1)}`).join(',\n')}\n${end}}`;
  }
  throw new TypeError(`Cannot serialize ${typeof value} as canonical JSON`);
}

/** sha256 of the canonical JSON, lower-case hex: the reference's `compute_payload_hash`. */
export function payloadHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/** JSON.parse reviver that keeps integral floats (`1.0`) as PyFloat (uses the parser's source text). */
export function keepFloats(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && Number.isInteger(value) && context?.source !== undefined && /[.eE]/.test(context.source)
    ? new PyFloat(value)
    : value;
}

/** JSON.parse that keeps integral floats, so documents hash as Python would hash them. */
export function parseJson(text: string): unknown {
  return JSON.parse(text, keepFloats as (key: string, value: unknown) => unknown);
}
