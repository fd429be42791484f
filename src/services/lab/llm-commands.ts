/**
 * Admin language-model console (`/admin/llm/command`, `/admin/llm/clear-context`; ref-api §10,
 * decisions §6): a few Ollama verbs with the reference's output texts. The server URL must be
 * one of the configured ones (no request forgery). Chat history is kept in process memory per
 * session id, bounded, and only committed when a run succeeds (the reference left an orphan
 * user turn behind on transport errors).
 */
import { normalizeBaseUrl } from '../../integrations/ollama.ts';
import type { OllamaClient, OllamaResult } from '../../integrations/ollama.ts';
import { FeatureUnavailable, InvalidInput } from '../errors.ts';

export interface LlmCommandConfig {
  allowedServerUrls: string[];
  requestTimeoutSeconds: number;
  pullTimeoutSeconds: number;
  /** Most messages (user + assistant) kept per session. */
  historyLimit: number;
}

export interface CommandResult {
  success: boolean;
  output: string;
}

interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export const SUPPORTED_COMMANDS = 'list, ps, pull, run, show';
/** Sessions with history kept at once; the least recently used one goes first. */
const MAX_SESSIONS = 1000;

export class LlmCommandService {
  private readonly ollama: OllamaClient;
  private readonly allowed: string[];
  private readonly requestTimeoutMs: number;
  private readonly pullTimeoutMs: number;
  private readonly historyLimit: number;
  private readonly histories = new Map<string, ChatMessage[]>();

  constructor(ollama: OllamaClient, config: LlmCommandConfig) {
    this.ollama = ollama;
    this.allowed = [...new Set(config.allowedServerUrls.map(normalizeBaseUrl).filter((u) => u !== ''))];
    this.requestTimeoutMs = Math.max(1, Math.round(config.requestTimeoutSeconds * 1000));
    this.pullTimeoutMs = Math.max(1, Math.round(config.pullTimeoutSeconds * 1000));
    this.historyLimit = Math.max(2, Math.trunc(config.historyLimit)); // room for one exchange
  }

  /**
   * Throws InvalidInput for a server URL that is not configured (FeatureUnavailable when none
   * is); every other problem is `{success: false, output}`.
   */
  async run(sessionId: string, command: string, serverUrl?: string): Promise<CommandResult> {
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
        return args[0] === undefined ? fail('Usage: show <model_name>') : this.show(url, args[0]);
      case 'pull':
        return args[0] === undefined ? fail('Usage: pull <model_name>') : this.pull(url, args[0]);
      case 'run':
        return args[0] === undefined
          ? fail('Usage: run <model_name> [prompt]')
          : this.chat(sessionId, url, args[0], args.slice(1).join(' ') || 'Hello');
      default:
        return fail(`Unknown command: ${verb}\nSupported commands: ${SUPPORTED_COMMANDS}`);
    }
  }

  clear(sessionId: string): { success: true; message: string } {
    const history = this.histories.get(sessionId);
    if (history === undefined) return { success: true, message: 'No conversation context to clear.' };
    this.histories.set(sessionId, []);
    return { success: true, message: `Conversation context cleared (${history.length} messages removed).` };
  }

  /** Messages currently kept for a session (a copy). */
  history(sessionId: string): Array<{ role: string; content: string }> {
    return (this.histories.get(sessionId) ?? []).map((m) => ({ ...m }));
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

  private async chat(sessionId: string, url: string, model: string, prompt: string): Promise<CommandResult> {
    const previous = this.histories.get(sessionId) ?? [];
    const sent = this.bound([...previous, { role: 'user', content: prompt }]);
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
    const current = this.histories.get(sessionId) ?? [];
    const updated = this.bound([...current, { role: 'user', content: prompt }, { role: 'assistant', content }]);
    this.histories.delete(sessionId); // re-insert: most recently used last
    this.histories.set(sessionId, updated);
    while (this.histories.size > MAX_SESSIONS) {
      const oldest = this.histories.keys().next().value;
      if (oldest === undefined) break;
      this.histories.delete(oldest);
    }
    return ok(`Model: ${model} (Context: ${updated.length} messages)\nYou: ${prompt}\n\nResponse:\n${content}`);
  }

  private bound(messages: ChatMessage[]): ChatMessage[] {
    return messages.length > this.historyLimit ? messages.slice(messages.length - this.historyLimit) : messages;
  }
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
