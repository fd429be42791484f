/**
 * The OOC → IC translation layer, as the reference server has it: world config with defaults,
 * the profile dict and its summary, placeholder rendering, the Ollama `/api/chat` call and the
 * output validator. Pure helpers are exported for the lab endpoints and tests; `Translator` does one
 * lab translation (a fresh renderer per call: nothing is remembered between calls).
 */
import type { OllamaClient } from '../../integrations/ollama.ts';
import type { World } from '../worlds/world-loader.ts';
import type { PolicyService } from '../policy/policy-service.ts';
import { PyFloat, formatFloat } from '../../shared/canonical-json.ts';

export interface TranslationLayer {
  enabled: boolean;
  model: string;
  ollamaBaseUrl: string;
  timeoutSeconds: number;
  keepAlive: string;
  strictMode: boolean;
  maxOutputChars: number;
  promptPolicyId: string;
  activeAxes: string[];
  deterministic: boolean;
}

export const DEFAULT_PROMPT_POLICY_ID = 'prompt:translation.prompts.ic:default';

const DEFAULTS: TranslationLayer = {
  enabled: false,
  model: 'gemma2:2b',
  ollamaBaseUrl: 'http://localhost:11434',
  timeoutSeconds: 10.0,
  keepAlive: '5m',
  strictMode: true,
  maxOutputChars: 280,
  promptPolicyId: DEFAULT_PROMPT_POLICY_ID,
  activeAxes: [],
  deterministic: false,
};

/** Built-in template used when the prompt policy cannot be resolved (the reference's text). */
export const FALLBACK_TEMPLATE = [
  'You are a character in a text-based RPG.',
  'Translate the following OOC message into a single line of IC dialogue consistent with a character whose demeanor is {{demeanor_label}}.',
  '',
  'Rules:',
  '1. Output exactly one line of spoken dialogue. No stage directions.',
  '2. If the OOC message cannot be rendered as IC dialogue, output only the word: PASSTHROUGH',
  '',
  'OOC MESSAGE:',
  '{{ooc_message}}',
].join('\n');

/** Completion length cap sent as `options.num_predict`. */
export const NUM_PREDICT = 128;

/**
 * The world's `translation_layer` block with the reference's defaults (wrongly typed values fall
 * back to the default; `prompt_template_path` is ignored). A non-empty `ollamaUrlOverride`
 * (server configuration) replaces the world's `ollama_base_url`.
 */
export function translationLayer(world: World, ollamaUrlOverride: string): TranslationLayer {
  const raw = world.translationLayer ?? {};
  const str = (key: string, fallback: string): string => (typeof raw[key] === 'string' ? (raw[key] as string) : fallback);
  const bool = (key: string, fallback: boolean): boolean => (typeof raw[key] === 'boolean' ? (raw[key] as boolean) : fallback);
  const num = (key: string, fallback: number): number =>
    typeof raw[key] === 'number' && Number.isFinite(raw[key]) ? (raw[key] as number) : fallback;
  const policyId = raw.prompt_policy_id;
  const axes = raw.active_axes;
  const override = ollamaUrlOverride.trim();
  return {
    enabled: bool('enabled', DEFAULTS.enabled),
    model: str('model', DEFAULTS.model),
    ollamaBaseUrl: override !== '' ? override : str('ollama_base_url', DEFAULTS.ollamaBaseUrl),
    timeoutSeconds: num('timeout_seconds', DEFAULTS.timeoutSeconds),
    keepAlive: str('keep_alive', DEFAULTS.keepAlive),
    strictMode: bool('strict_mode', DEFAULTS.strictMode),
    maxOutputChars: Math.trunc(num('max_output_chars', DEFAULTS.maxOutputChars)),
    promptPolicyId: typeof policyId === 'string' && policyId.trim() !== '' ? policyId : DEFAULT_PROMPT_POLICY_ID,
    activeAxes: Array.isArray(axes) ? axes.filter((a): a is string => typeof a === 'string') : [],
    deterministic: bool('deterministic', DEFAULTS.deterministic),
  };
}

// ---------------------------------------------------------------------------------------------
// Profile

type Profile = Array<[string, string | number]>;

/** Python `str()` of a profile value: floats as Python prints them (`1.0`, `0.07`, `1e-05`). */
function pyStr(value: string | number): string {
  if (typeof value === 'string') return value;
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  return formatFloat(value);
}

/** Python `str.title()`: upper-case after any uncased character, lower-case after a cased one. */
export function pyTitle(text: string): string {
  let out = '';
  let previousCased = false;
  for (const ch of text) {
    const cased = ch.toLowerCase() !== ch.toUpperCase();
    if (cased) {
      out += previousCased ? ch.toLowerCase() : ch.toUpperCase();
      previousCased = true;
    } else {
      out += ch;
      previousCased = false;
    }
  }
  return out;
}

/**
 * Python `f"{x:.2f}"`: the exact binary value rounded, ties (only possible at multiples of
 * 1/8) to even. JavaScript's toFixed breaks such ties upwards, so they are handled here.
 */
export function formatFixed2(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  const negative = value < 0 || Object.is(value, -0);
  const abs = Math.abs(value);
  let text: string;
  const eighths = abs * 8; // exact: a power-of-two scale
  if (abs < 1e15 && Number.isInteger(eighths) && eighths % 2 === 1) {
    // abs = k + 0.5 hundredths exactly: pick the even neighbour.
    const hundredths = abs * 100; // exact for these values
    const down = Math.floor(hundredths);
    const n = down % 2 === 0 ? down : down + 1;
    const digits = String(n).padStart(3, '0');
    text = `${digits.slice(0, -2)}.${digits.slice(-2)}`;
  } else {
    text = abs.toFixed(2);
  }
  return negative ? `-${text}` : text;
}

/** The profile summary: `  Character: <name>` then `  <Display>: <label> (<score .2f>)` per axis, joined by `\n`. */
export function profileSummary(profile: Profile): string {
  const lookup = new Map(profile);
  const name = lookup.get('character_name');
  const lines = [`  Character: ${name === undefined ? 'unknown' : pyStr(name)}`];
  const seen = new Set<string>();
  for (const [key] of profile) {
    if (!key.endsWith('_label')) continue;
    const axis = key.slice(0, -'_label'.length);
    if (seen.has(axis)) continue;
    seen.add(axis);
    const label = lookup.get(key) ?? 'unknown';
    const rawScore = lookup.get(`${axis}_score`);
    const score = typeof rawScore === 'number' ? rawScore : Number(rawScore ?? 0);
    lines.push(`  ${pyTitle(axis.replaceAll('_', ' '))}: ${pyStr(label)} (${formatFixed2(score)})`);
  }
  return lines.join('\n');
}

/**
 * The lab's profile, in insertion order: character_name; `<axis>_label`/`<axis>_score` for each
 * active axis present in `axes` (others ignored, missing ones skipped); channel; profile_summary.
 */
export function buildProfile(
  characterName: string,
  channel: string,
  axes: Record<string, { label: string; score: number }>,
  activeAxes: string[],
): Profile {
  const profile: Profile = [];
  const set = (key: string, value: string | number): void => {
    const existing = profile.find((entry) => entry[0] === key);
    if (existing) existing[1] = value; // a Python dict keeps the first position
    else profile.push([key, value]);
  };
  set('character_name', characterName);
  for (const axis of activeAxes) {
    if (!Object.hasOwn(axes, axis)) continue;
    const entry = axes[axis]!;
    set(`${axis}_label`, String(entry.label));
    set(`${axis}_score`, Number(entry.score));
  }
  set('channel', channel);
  set('profile_summary', profileSummary(profile));
  return profile;
}

/** Replaces every `{{key}}` in profile order, then `{{ooc_message}}`; unknown placeholders stay. */
export function renderPrompt(template: string, profile: Profile, oocMessage: string): string {
  let text = template;
  for (const [key, value] of profile) text = text.split(`{{${key}}}`).join(pyStr(value));
  return text.split('{{ooc_message}}').join(oocMessage);
}

// ---------------------------------------------------------------------------------------------
// Validator

/** One character of Python `str.strip()` whitespace (str.isspace; all of it is in the BMP). */
const PY_SPACE = /[\s\x1c-\x1f\x85]/;

/**
 * Loops, not `/\s+$/`: an unanchored trailing-space regex rescans a long inner run of spaces
 * from every start position, which is quadratic in the length of model output.
 */
function pyStripEnd(text: string): string {
  let end = text.length;
  while (end > 0 && PY_SPACE.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

function pyStrip(text: string): string {
  let start = 0;
  while (start < text.length && PY_SPACE.test(text[start]!)) start++;
  return pyStripEnd(text.slice(start));
}

function stripChar(text: string, ch: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text[start] === ch) start++;
  while (end > start && text[end - 1] === ch) end--;
  return text.slice(start, end);
}

/** The output check: the cleaned single line, or null when the output must be rejected (status `fallback.validation_failed`). */
export function validateOutput(text: string, strict: boolean, maxChars: number): string | null {
  let out = pyStrip(text);
  if (out === '') return null;
  if (out.toUpperCase().startsWith('PASSTHROUGH')) return null;
  if (out.includes('\n')) {
    if (strict) return null;
    const line = out.split('\n').find((l) => pyStrip(l) !== '');
    if (line === undefined) return null;
    out = pyStrip(line);
  }
  out = pyStrip(stripChar(stripChar(out, '"'), "'"));
  if (strict) {
    if (out.startsWith('*') && out.endsWith('*')) return null;
    // A `[` with a `]` after it; indexOf, since /\[[^]*\]/ backtracks quadratically over many `[`.
    const open = out.indexOf('[');
    if (open !== -1 && out.indexOf(']', open + 1) !== -1) return null;
    if (out.startsWith('(') && out.endsWith(')')) return null;
  }
  const codePoints = [...out];
  if (codePoints.length > maxChars) {
    if (strict) return null;
    out = pyStripEnd(codePoints.slice(0, Math.max(0, maxChars)).join(''));
  }
  return out === '' ? null : out;
}

// ---------------------------------------------------------------------------------------------
// Translator

export type TranslationStatus = 'success' | 'fallback.api_error' | 'fallback.validation_failed';

export interface TranslateInput {
  layer: TranslationLayer;
  template: string;
  characterName: string;
  channel: string;
  axes: Record<string, { label: string; score: number }>;
  oocMessage: string;
  /** -1 = unseeded; any other integer seeds the model and forces temperature 0.0. */
  seed: number;
  temperature: number;
}

export interface TranslateResult {
  icText: string | null;
  status: TranslationStatus;
  profileSummary: string;
  renderedPrompt: string;
}

/** The `/api/chat` body, as the reference sends it. Temperatures are sent as Python floats (`0.0`, `1.0`). */
export function chatBody(layer: TranslationLayer, renderedPrompt: string, oocMessage: string, seed: number, temperature: number): Record<string, unknown> {
  const seeded = seed !== -1;
  return {
    model: layer.model,
    stream: false,
    keep_alive: layer.keepAlive,
    messages: [
      { role: 'system', content: renderedPrompt },
      { role: 'user', content: oocMessage },
    ],
    options: {
      temperature: new PyFloat(seeded ? 0 : temperature),
      num_predict: NUM_PREDICT,
      ...(seeded ? { seed } : {}),
    },
  };
}

export class Translator {
  private readonly ollama: OllamaClient;

  constructor(ollama: OllamaClient) {
    this.ollama = ollama;
  }

  async translate(input: TranslateInput): Promise<TranslateResult> {
    const profile = buildProfile(input.characterName, input.channel, input.axes, input.layer.activeAxes);
    const summary = String(profile.find(([key]) => key === 'profile_summary')?.[1] ?? '');
    const rendered = renderPrompt(input.template, profile, input.oocMessage);
    const base = { profileSummary: summary, renderedPrompt: rendered };

    const body = chatBody(input.layer, rendered, input.oocMessage, input.seed, input.temperature);
    const result = await this.ollama.chat(input.layer.ollamaBaseUrl, body, Math.max(1, Math.round(input.layer.timeoutSeconds * 1000)));
    if (!result.ok) return { ...base, icText: null, status: 'fallback.api_error' };
    const message = result.data.message;
    const content =
      message !== null && typeof message === 'object' && typeof (message as Record<string, unknown>).content === 'string'
        ? pyStrip((message as Record<string, unknown>).content as string)
        : '';
    if (content === '') return { ...base, icText: null, status: 'fallback.api_error' };

    const cleaned = validateOutput(content, input.layer.strictMode, input.layer.maxOutputChars);
    if (cleaned === null) return { ...base, icText: null, status: 'fallback.validation_failed' };
    return { ...base, icText: cleaned, status: 'success' };
  }
}

/**
 * The world's prompt template: the text of its effective prompt policy, else the
 * built-in FALLBACK_TEMPLATE. Shared by the lab and the game's chat translation.
 */
export async function effectivePromptTemplate(policies: Pick<PolicyService, 'effectiveVariant'>, worldId: string, layer: TranslationLayer): Promise<string> {
  if (!layer.promptPolicyId.startsWith('prompt:')) return FALLBACK_TEMPLATE;
  const row = await policies.effectiveVariant({ worldId, clientProfile: '' }, layer.promptPolicyId).catch(() => null);
  const text = row?.content.text;
  return typeof text === 'string' && text.trim() !== '' ? text : FALLBACK_TEMPLATE;
}
