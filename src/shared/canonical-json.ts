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
import { setImmediate as nextTurn } from 'node:timers/promises';

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

/** An open array or object: its values in output order and, for an object, their keys. */
interface Frame {
  values: unknown[];
  keys: string[] | null;
  next: number;
}

/**
 * Canonical JSON text, compact (", " and ": ") or indented (2 spaces, "," and ": "), in pieces
 * of at least `pieceChars` characters (the last one may be shorter). Iterative rather than
 * recursive, so no nesting depth overflows the stack, and large documents can be hashed or
 * written piece by piece, with other work running in between.
 */
export function* canonicalPieces(value: unknown, indented: boolean, pieceChars = 64 * 1024): Generator<string> {
  let out = '';
  const stack: Frame[] = [];
  let pending: unknown = value;
  let hasPending = true;
  for (;;) {
    if (hasPending) {
      hasPending = false;
      const text = scalar(pending);
      if (text !== undefined) out += text;
      else if (Array.isArray(pending)) {
        if (pending.length === 0) out += '[]';
        else {
          out += '[';
          stack.push({ values: pending, keys: null, next: 0 });
        }
      } else if (typeof pending === 'object') {
        const obj = pending as Record<string, unknown>;
        const keys = sortedKeys(obj);
        if (keys.length === 0) out += '{}';
        else {
          out += '{';
          stack.push({ values: keys.map((k) => obj[k]), keys, next: 0 });
        }
      } else {
        throw new TypeError(`Cannot serialize ${typeof pending} as canonical JSON`);
      }
    }
    const top = stack[stack.length - 1];
    if (top === undefined) break;
    if (top.next < top.values.length) {
      const i = top.next++;
      if (indented) out += `${i === 0 ? '\n' : ',\n'}${'  '.repeat(stack.length)}`;
      else if (i > 0) out += ', ';
      if (top.keys !== null) out += `${JSON.stringify(top.keys[i])}: `;
      pending = top.values[i];
      hasPending = true;
    } else {
      stack.pop();
      if (indented) out += `\n${'  '.repeat(stack.length)}`;
      out += top.keys === null ? ']' : '}';
    }
    if (out.length >= pieceChars) {
      yield out;
      out = '';
    }
  }
  if (out !== '') yield out;
}

/** `json.dumps(value, sort_keys=True, ensure_ascii=False)`. */
export function canonicalJson(value: unknown): string {
  return [...canonicalPieces(value, false, Infinity)].join('');
}

/** `json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)`: the artifact file format. */
export function canonicalJsonIndented(value: unknown): string {
  return [...canonicalPieces(value, true, Infinity)].join('');
}

/** sha256 of the canonical JSON, lower-case hex: the reference's `compute_payload_hash`. */
export function payloadHash(value: unknown): string {
  const hash = createHash('sha256');
  for (const piece of canonicalPieces(value, false)) hash.update(piece, 'utf8');
  return hash.digest('hex');
}

/** payloadHash for documents of any size: lets other work run between pieces. */
export async function payloadHashAsync(value: unknown): Promise<string> {
  const hash = createHash('sha256');
  for (const piece of canonicalPieces(value, false)) {
    hash.update(piece, 'utf8');
    await nextTurn();
  }
  return hash.digest('hex');
}

/** JSON.parse reviver that keeps integral floats (`1.0`) as PyFloat (uses the parser's source text). */
export function keepFloats(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && Number.isInteger(value) && context?.source !== undefined && /[.eE]/.test(context.source)
    ? new PyFloat(value)
    : value;
}

/** JSON.parse that keeps integral floats, so documents hash as Python would hash them. */
export function parseJson(text: string): unknown {
  // A fraction or an exponent always follows a digit; without one every number is an integer,
  // and the plain parse is exact and many times faster than one calling a reviver per value.
  if (!/\d[.eE]/.test(text)) return JSON.parse(text);
  return JSON.parse(text, keepFloats as (key: string, value: unknown) => unknown);
}
