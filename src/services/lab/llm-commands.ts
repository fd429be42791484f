/**
 * Admin language-model console (`/admin/llm/command`, `/admin/llm/clear-context`): the verbs the
 * specification's settled choices name (`list`/`ls`, `ps`, `show`, `pull`, `run`) with the
 * reference server's output texts. The server URL must be
 * one of the configured ones (no request forgery), and model names may only name configured
 * registries (a pull from any host would let the runtime fetch from anywhere); only superusers
 * pull. Chat history is kept in process memory per session (keyed by its row id, never its
 * token), bounded in messages and bytes, and only committed when a run succeeds (the
 * reference left an orphan user turn behind on transport errors).
 */
import { normalizeBaseUrl } from '../../integrations/ollama.ts';
import type { OllamaClient, OllamaResult } from '../../integrations/ollama.ts';
import type { Config } from '../../config/config.ts';
import type { Role } from '../../shared/roles.ts';
import { FeatureUnavailable, Forbidden, InvalidInput } from '../../shared/errors.ts';

export type LlmCommandConfig = Config['llm'];

export interface CommandResult {
  success: boolean;
  output: string;
}

interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

interface History {
  messages: ChatMessage[];
  bytes: number;
}

export const SUPPORTED_COMMANDS = 'list, ps, pull, run, show';
/** Where Ollama looks for a model whose name has no registry host. */
export const DEFAULT_REGISTRY = 'registry.ollama.ai';
/** Sessions with history kept at once; the least recently used one goes first. */
const MAX_SESSIONS = 1000;

export class LlmCommandService {
  private readonly ollama: OllamaClient;
  private readonly allowed: string[];
  private readonly requestTimeoutMs: number;
  private readonly pullTimeoutMs: number;
  private readonly historyLimit: number;
  private readonly registries: string[];
  private readonly maxPromptBytes: number;
  private readonly maxSessionBytes: number;
  private readonly maxTotalBytes: number;
  /** Least recently used first. */
  private readonly histories = new Map<number, History>();
  private totalBytes = 0;

  constructor(ollama: OllamaClient, config: LlmCommandConfig) {
    this.ollama = ollama;
    this.allowed = [...new Set(config.allowedServerUrls.map(normalizeBaseUrl).filter((u) => u !== ''))];
    this.requestTimeoutMs = Math.max(1, Math.round(config.requestTimeoutSeconds * 1000));
    this.pullTimeoutMs = Math.max(1, Math.round(config.pullTimeoutSeconds * 1000));
    this.historyLimit = Math.max(2, Math.trunc(config.historyLimit)); // room for one exchange
    this.registries = [...new Set(config.allowedRegistries.map((r) => r.trim().toLowerCase()).filter((r) => r !== ''))];
    this.maxPromptBytes = config.maxPromptBytes;
    this.maxTotalBytes = config.maxHistoryBytesTotal;
    // One session never needs more than the whole budget: evicting the others then suffices.
    this.maxSessionBytes = Math.min(config.maxHistoryBytesPerSession, config.maxHistoryBytesTotal);
  }

  /**
   * Throws InvalidInput for a server URL that is not configured (FeatureUnavailable when none
   * is), a model from a registry that is not allowed, or a prompt over the size limit, and
   * Forbidden for a pull by anyone but a superuser; every other problem is `{success: false, output}`.
   */
  async run(session: number, role: Role, command: string, serverUrl?: string): Promise<CommandResult> {
    const url = this.resolveServer(serverUrl);
    const parts = command.trim().split(/\s+/).filter((p) => p !== '');
    if (parts.length === 0) return fail('Command is required');
    const verb = parts[0]!.toLowerCase();
    const args = parts.slice(1);
    switch (verb) {
      case 'list':
      case 'ls':
        return this.list(url);
      case 'ps':
        return this.ps(url);
      case 'show':
        return args[0] === undefined ? fail('Usage: show <model_name>') : this.show(url, this.allowedModel(args[0]));
      case 'pull':
        // A pull downloads gigabytes onto the runtime's disk: more than viewing logs allows.
        if (role !== 'superuser') throw new Forbidden('Only superusers may pull models.');
        return args[0] === undefined ? fail('Usage: pull <model_name>') : this.pull(url, this.allowedModel(args[0]));
      case 'run': {
        if (args[0] === undefined) return fail('Usage: run <model_name> [prompt]');
        const model = this.allowedModel(args[0]);
        const prompt = args.slice(1).join(' ') || 'Hello';
        const bytes = Buffer.byteLength(prompt);
        if (bytes > this.maxPromptBytes) throw new InvalidInput(`The prompt is ${bytes} bytes; the limit is ${this.maxPromptBytes} bytes.`);
        return this.chat(session, url, model, prompt);
      }
      default:
        return fail(`Unknown command: ${verb}\nSupported commands: ${SUPPORTED_COMMANDS}`);
    }
  }

  clear(session: number): { success: true; message: string } {
    const history = this.histories.get(session);
    if (history === undefined) return { success: true, message: 'No conversation context to clear.' };
    this.totalBytes -= history.bytes;
    this.histories.set(session, { messages: [], bytes: 0 });
    return { success: true, message: `Conversation context cleared (${history.messages.length} messages removed).` };
  }

  /** Messages currently kept for a session (a copy). */
  history(session: number): Array<{ role: string; content: string }> {
    return (this.histories.get(session)?.messages ?? []).map((m) => ({ ...m }));
  }

  /** Bytes of message contents kept over all sessions. */
  historyBytes(): number {
    return this.totalBytes;
  }

  /** The name itself, when the registry it names (or the default one) is allowed; else 400. */
  private allowedModel(name: string): string {
    const registry = registryOf(name);
    if (!this.registries.includes(registry)) {
      const allowed = this.registries.length === 0 ? '(none)' : this.registries.join(', ');
      throw new InvalidInput(`Model '${name}' comes from registry '${registry}', which is not allowed (allowed registries: ${allowed}).`);
    }
    return name;
  }

  private resolveServer(serverUrl: string | undefined): string {
    if (serverUrl === undefined || serverUrl.trim() === '') {
      const first = this.allowed[0];
      if (first === undefined) throw new FeatureUnavailable('No language-model server is configured');
      return first;
    }
    const wanted = normalizeBaseUrl(serverUrl);
    if (!this.allowed.includes(wanted)) {
      throw new InvalidInput(`server_url must be one of the configured language-model servers: ${this.allowed.join(', ')}`);
    }
    return wanted;
  }

  private async list(url: string): Promise<CommandResult> {
    const result = await this.ollama.tags(url, this.requestTimeoutMs);
    if (!result.ok) return failure(result, url, 'Failed to list models');
    const models = objects(result.data.models);
    if (models.length === 0) return ok('No models found.');
    let output = 'Available models:\n';
    for (const m of models) output += `  - ${text(m.name)} (size: ${text(m.size)}, modified: ${text(m.modified_at)})\n`;
    return ok(output);
  }

  private async ps(url: string): Promise<CommandResult> {
    const result = await this.ollama.ps(url, this.requestTimeoutMs);
    if (!result.ok) return failure(result, url, 'Failed to show running models');
    const models = objects(result.data.models);
    if (models.length === 0) return ok('No models currently running.');
    let output = 'Running models:\n';
    for (const m of models) output += `  - ${text(m.name)}\n`;
    return ok(output);
  }

  private async show(url: string, model: string): Promise<CommandResult> {
    const result = await this.ollama.show(url, model, this.requestTimeoutMs);
    if (!result.ok) return failure(result, url, 'Failed to show model info');
    const modelfile = result.data.modelfile || 'N/A';
    const parameters = result.data.parameters || 'N/A';
    return ok(`Model: ${model}\nModelfile:\n${text(modelfile)}\nParameters:\n${text(parameters)}\n`);
  }

  private async pull(url: string, model: string): Promise<CommandResult> {
    const result = await this.ollama.pull(url, model, this.pullTimeoutMs);
    if (!result.ok) {
      // A 2xx with kind 'http' is an error streamed inside a successful response.
      if (result.kind === 'http' && result.status !== undefined && result.status >= 200 && result.status < 300) {
        return fail(`Error: ${result.body ?? ''}`);
      }
      return failure(result, url, 'Failed to pull model');
    }
    let output = `Pulling model '${model}'...\n`;
    for (const line of result.data) output += `${line}\n`;
    return ok(output);
  }

  private async chat(session: number, url: string, model: string, prompt: string): Promise<CommandResult> {
    const previous = this.histories.get(session)?.messages ?? [];
    const sent = [...previous, { role: 'user', content: prompt }].slice(-this.historyLimit);
    const result = await this.ollama.chat(url, { model, messages: sent, stream: false }, this.requestTimeoutMs);
    if (!result.ok) {
      if (result.kind === 'http') return fail(`Failed to run model: HTTP ${result.status ?? 0}\n${result.body ?? ''}`);
      return failure(result, url, 'Failed to run model');
    }
    const message = result.data.message;
    const content =
      message !== null && typeof message === 'object' && typeof (message as Record<string, unknown>).content === 'string'
        ? ((message as Record<string, unknown>).content as string)
        : '';
    // Re-read: another run for the same session may have finished meanwhile.
    const current = this.histories.get(session)?.messages ?? [];
    this.forget(session); // re-inserted below: most recently used last
    const updated = this.bound([...current, { role: 'user', content: prompt }, { role: 'assistant', content }]);
    this.histories.set(session, updated);
    this.totalBytes += updated.bytes;
    // Then whole sessions, least recently used first (never this one: it fits the total alone).
    while (this.histories.size > MAX_SESSIONS || this.totalBytes > this.maxTotalBytes) {
      const oldest = this.histories.keys().next().value;
      if (oldest === undefined || oldest === session) break;
      this.forget(oldest);
    }
    return ok(`Model: ${model} (Context: ${updated.messages.length} messages)\nYou: ${prompt}\n\nResponse:\n${content}`);
  }

  private forget(session: number): void {
    this.totalBytes -= this.histories.get(session)?.bytes ?? 0;
    this.histories.delete(session);
  }

  /** The newest messages within the per-session message and byte limits (oldest dropped first). */
  private bound(messages: ChatMessage[]): History {
    const sizes = messages.map((m) => Buffer.byteLength(m.content));
    let bytes = sizes.reduce((sum, n) => sum + n, 0);
    let first = 0;
    while (first < messages.length && (messages.length - first > this.historyLimit || bytes > this.maxSessionBytes)) {
      bytes -= sizes[first]!;
      first++;
    }
    return { messages: messages.slice(first), bytes };
  }
}

/**
 * The registry a model name pulls from, lower-cased, read the way Ollama parses names
 * (`[host/][namespace/]model[:tag]`, cut from the right): the tag goes first, then the model
 * and the namespace, and whatever is left is the host, whatever it looks like (`intranet` in
 * `intranet/ns/model`), less a `scheme://`. Without a host, the default registry.
 */
export function registryOf(name: string): string {
  const colon = name.lastIndexOf(':');
  const untagged = colon > name.lastIndexOf('/') ? name.slice(0, colon) : name;
  const segments = untagged.split('/');
  if (segments.length < 3) return DEFAULT_REGISTRY;
  const host = segments.slice(0, -2).join('/');
  const scheme = host.indexOf('://');
  return (scheme === -1 ? host : host.slice(scheme + 3)).toLowerCase();
}

function ok(output: string): CommandResult {
  return { success: true, output };
}

function fail(output: string): CommandResult {
  return { success: false, output };
}

/** The reference's texts for transport failures; `prefix: HTTP <code>` for HTTP ones. */
function failure(result: Extract<OllamaResult<unknown>, { ok: false }>, url: string, prefix: string): CommandResult {
  switch (result.kind) {
    case 'unreachable':
      return fail(`Cannot connect to Ollama server at ${url}`);
    case 'timeout':
      return fail('Request timed out. The operation may still be in progress.');
    case 'http':
      return fail(`${prefix}: HTTP ${result.status ?? 0}`);
    case 'invalid_json':
      return fail('Error: Ollama server returned invalid JSON');
    case 'too_large':
      return fail('Error: Ollama server returned an answer larger than this server reads');
  }
}

function objects(value: unknown): Array<Record<string, unknown>> {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v));
}

/** Python-ish str() for display: strings as-is, missing as N/A, the rest as JSON. */
function text(value: unknown): string {
  if (value === undefined || value === null) return 'N/A';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
