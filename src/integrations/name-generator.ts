/**
 * Character name generation: the external namegen HTTP API the reference server calls (a first
 * and a last name, each `POST <base>/api/generate`), plus a deterministic built-in generator with
 * our own syllable tables for setups without one (the reference has none).
 */
import { upstreamRequestOptions } from './upstream-http.ts';
import axios from 'axios';
import type { AxiosResponse } from 'axios';
import type { Logger } from '../logging/logger.ts';
import { seededRandom } from './seeded-random.ts';

/** Message is the client-facing detail; the caller answers 502 with it. */
export class NameGenerationError extends Error {
  override name = 'NameGenerationError';
}

export interface NameGenerator {
  /** `<First> <Last>`; rejects with NameGenerationError. */
  fullName(seed: number): Promise<string>;
}

// ---------------------------------------------------------------------------------------------
// Built-in generator

/** Any number maps to a 32-bit PRNG seed (NaN/±Infinity → 0). */
function seedBits(seed: number): number {
  return Number.isFinite(seed) ? Math.trunc(seed) % 4294967296 : 0;
}

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}

// Given names: onset + nucleus, one to three times, then a coda. Soft, a little old-fashioned.
const ONSETS = [
  'b', 'br', 'c', 'ch', 'd', 'dr', 'f', 'fl', 'g', 'gr', 'h', 'j', 'k', 'l', 'm', 'n', 'p',
  'pr', 'r', 's', 'sh', 'st', 't', 'th', 'tr', 'v', 'w', 'wr', 'y', 'z', 'cl', 'bl',
] as const;
// Plain vowels repeated so that digraphs stay occasional.
const NUCLEI = [
  'a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'a', 'e', 'o', 'a', 'e', 'i', 'o', 'u', 'y',
  'ai', 'ea', 'ie', 'oa', 'ou', 'ei', 'au',
] as const;
const CODAS = [
  '', '', '', 'n', 'r', 'l', 's', 'th', 'nd', 'rn', 'll', 'ck', 'm', 'sh', 'st', 'rd', 'lt', 'ne',
  'ss', 'ra', 'na', 'wen', 'ric', 'lyn', 'mund', 'bert', 'ly', 'da', 'to',
] as const;

// Family names: a canal-town stem + a suffix (Lockwright, Reedby, Sluicewell …), or now and
// then a given-name-like syllable run + a suffix.
const STEMS = [
  'Lock', 'Wharf', 'Barge', 'Reed', 'Mill', 'Tow', 'Sluice', 'Brack', 'Marsh', 'Fen', 'Weir',
  'Bridge', 'Haw', 'Mere', 'Cob', 'Ash', 'Tarn', 'Flint', 'Rope', 'Pole', 'Salt', 'Eel', 'Heron',
  'Willow', 'Alder', 'Moor', 'Brook', 'Pike', 'Dock', 'Quay', 'Stone', 'Coal', 'Tallow',
  'Kettle', 'Pitch', 'Tide', 'Silt', 'Rush', 'Lantern', 'Culvert', 'Punt', 'Keel', 'Sedge',
] as const;
const SUFFIXES = [
  'wright', 'man', 'son', 'well', 'wick', 'ley', 'ford', 'by', 'ham', 'ton', 'er', 'ard', 'ing',
  'worth', 'side', 'water', 'hurst', 'dale', 'cote', 'stead', 'field', 'more', 'ridge', 'hall',
  'gate', 'holm', 'bury', 'lade', 'ey', 'ick',
] as const;

const MIN_LETTERS = 3;
const MAX_LETTERS = 12;

function titleCase(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase();
}

function syllableRun(rand: () => number, syllables: number): string {
  let word = '';
  for (let i = 0; i < syllables; i++) word += pick(rand, ONSETS) + pick(rand, NUCLEI);
  return word;
}

function givenName(rand: () => number): string {
  const roll = rand();
  const syllables = roll < 0.3 ? 1 : roll < 0.9 ? 2 : 3;
  return syllableRun(rand, syllables) + pick(rand, CODAS);
}

const VOWEL = /[aeiouy]/;

/** Joins a stem and a suffix, or returns null when the seam reads badly (Pike+ey, Willow+worth). */
function joined(stem: string, suffix: string): string | null {
  const end = stem.charAt(stem.length - 1).toLowerCase();
  const start = suffix.charAt(0);
  if (end === start) return null;
  if (VOWEL.test(end) && VOWEL.test(start)) return null;
  return stem + suffix;
}

function familyName(rand: () => number): string {
  const stem = rand() < 0.75 ? pick(rand, STEMS) : syllableRun(rand, 1 + Math.floor(rand() * 2));
  return joined(stem, pick(rand, SUFFIXES)) ?? ''; // '' is out of range: fitted() draws again
}

/** Draws until the length fits (deterministic: same PRNG stream); falls back to clamping. */
function fitted(rand: () => number, make: (rand: () => number) => string): string {
  for (let i = 0; i < 32; i++) {
    const word = make(rand);
    if (word.length >= MIN_LETTERS && word.length <= MAX_LETTERS) return titleCase(word);
  }
  return titleCase(make(rand).padEnd(MIN_LETTERS, 'a').slice(0, MAX_LETTERS));
}

/**
 * Deterministic local names: the first name comes from `seed`, the last name from `seed + 1`
 * (mirroring the two HTTP calls). Each part is 3–12 ASCII letters, title-cased.
 */
export class BuiltinNameGenerator implements NameGenerator {
  fullName(seed: number): Promise<string> {
    const first = fitted(seededRandom(seedBits(seed)), givenName);
    // Salted so the last name of seed s is not simply a family-name version of seed s+1's first.
    const last = fitted(seededRandom(seedBits(seed + 1) ^ 0x5bd1e995), familyName);
    return Promise.resolve(`${first} ${last}`);
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP generator

const MAX_ATTEMPTS = 3;
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

export const NAMEGEN_ERRORS = {
  noBaseUrl: 'Name generation integration is enabled but no base URL is configured.',
  unavailable: 'Name generation API unavailable.',
  httpStatus: (code: number): string => `Name generation API returned HTTP ${code}.`,
  invalidJson: 'Name generation API returned invalid JSON.',
  nonObject: 'Name generation API returned a non-object payload.',
  invalidName: 'Name generation API did not return a valid name.',
  emptyName: 'Name generation API returned an empty name.',
  invalidFullName: 'Name generation API returned an invalid full name.',
} as const;

type ClassKey = 'first_name' | 'last_name';

export interface HttpNameGeneratorOptions {
  baseUrl: string;
  /** Per attempt. */
  timeoutMs: number;
  logger: Logger;
}

export class HttpNameGenerator implements NameGenerator {
  private readonly endpoint: string | null;
  private readonly timeoutMs: number;
  private readonly logger: Logger;

  constructor(options: HttpNameGeneratorOptions) {
    const base = options.baseUrl.trim().replace(/\/+$/, '');
    this.endpoint = base ? `${base}/api/generate` : null;
    this.timeoutMs = options.timeoutMs;
    this.logger = options.logger;
  }

  async fullName(seed: number): Promise<string> {
    if (!this.endpoint) throw new NameGenerationError(NAMEGEN_ERRORS.noBaseUrl);
    const first = await this.fetchName(this.endpoint, 'first_name', seed);
    const last = await this.fetchName(this.endpoint, 'last_name', seed + 1);
    const full = `${first} ${last}`.trim();
    // Both parts are trimmed and non-empty, so this cannot fail today; kept as the contract.
    if (!full.includes(' ')) throw new NameGenerationError(NAMEGEN_ERRORS.invalidFullName);
    return full;
  }

  private async fetchName(endpoint: string, classKey: ClassKey, seed: number): Promise<string> {
    const body = {
      class_key: classKey,
      package_id: 2,
      syllable_key: 'all',
      generation_count: 1,
      unique_only: true,
      output_format: 'json',
      render_style: 'title',
      seed,
    };

    let response: AxiosResponse<string> | null = null;
    let attempts = 0;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      attempts = attempt;
      try {
        response = await axios.post<string>(endpoint, body, upstreamRequestOptions(this.timeoutMs));
      } catch (err) {
        const reason = transportReason(err);
        const errorCode = errorCodeOf(err);
        if (attempt < MAX_ATTEMPTS) {
          this.logger.warn('Name generation request failed; retrying', {
            event: 'namegen_retry', class_key: classKey, attempt, reason, error_code: errorCode,
          });
          continue;
        }
        this.logger.warn('Name generation API unavailable', {
          event: 'namegen_failure', class_key: classKey, attempt, reason, error_code: errorCode,
        });
        throw new NameGenerationError(NAMEGEN_ERRORS.unavailable);
      }
      if (RETRYABLE_STATUSES.has(response.status) && attempt < MAX_ATTEMPTS) {
        this.logger.warn('Name generation request failed; retrying', {
          event: 'namegen_retry', class_key: classKey, attempt, status: response.status,
        });
        response = null;
        continue;
      }
      break;
    }
    if (!response) throw new NameGenerationError(NAMEGEN_ERRORS.unavailable); // unreachable
    const status = response.status;

    const fail = (message: string, reason: string): NameGenerationError => {
      this.logger.warn('Name generation failed', {
        event: 'namegen_failure', class_key: classKey, attempt: attempts, status, reason,
      });
      return new NameGenerationError(message);
    };
    if (status !== 200) throw fail(NAMEGEN_ERRORS.httpStatus(status), 'http_status');

    let payload: unknown;
    try {
      payload = JSON.parse(typeof response.data === 'string' ? response.data : String(response.data));
    } catch {
      throw fail(NAMEGEN_ERRORS.invalidJson, 'invalid_json');
    }
    if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
      throw fail(NAMEGEN_ERRORS.nonObject, 'non_object');
    }
    const names = (payload as Record<string, unknown>).names;
    if (!Array.isArray(names) || names.length === 0 || typeof names[0] !== 'string') {
      throw fail(NAMEGEN_ERRORS.invalidName, 'invalid_name');
    }
    const name = names[0].trim();
    if (!name) throw fail(NAMEGEN_ERRORS.emptyName, 'empty_name');
    return name;
  }
}

function errorCodeOf(err: unknown): string | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return undefined;
}

function transportReason(err: unknown): 'timeout' | 'request_exception' {
  const code = errorCodeOf(err);
  return code === 'ETIMEDOUT' || code === 'ECONNABORTED' ? 'timeout' : 'request_exception';
}
