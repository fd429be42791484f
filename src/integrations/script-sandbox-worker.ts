/**
 * The engine thread of one world's script sandbox (script-sandbox.ts): one QuickJS WebAssembly
 * instance on a fixed WebAssembly.Memory, a fresh QuickJS runtime and context for every compile
 * and run. Everything read out of the engine is checked here (types, lengths) before it is
 * copied; the main thread gets plain strings and numbers.
 *
 * The memory is the only memory limit that holds: in this build QuickJS's own limit
 * (setMemoryLimit) counts about 8 bytes per allocation whatever its size, so it is not set.
 * Once the memory could not grow when asked, the engine is treated as broken: allocations that
 * failed inside quickjs-emscripten's glue write through a null pointer, so the main thread
 * replaces the thread after that run.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, newVariant, Scope } from 'quickjs-emscripten-core';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSSyncVariant } from 'quickjs-emscripten-core';
import { MIN_MEMORY_BYTES, SCRIPT_FILE, WALL_CEILING_MS, wasm } from './script-sandbox.ts';
import type { CallReply, EngineData, EngineMessage, EngineRequest, HostCall, RunGlobals, RunOutcome, ScriptError, ScriptState, ScriptValue } from './script-sandbox.ts';

const PAGE_BYTES = 64 * 1024;
/** QuickJS's stack limit: deep recursion ends as a script error well before the thread's 16 MB native stack. */
const STACK_BYTES = 256 * 1024;
/** Longest name or message read from a thrown value. */
const MESSAGE_CHARACTERS = 1000;
/** Longest stack read from a thrown value, for its line: deep traces run to tens of thousands. */
const STACK_CHARACTERS = 200_000;

const { limits, wasmModule, port, signal, cpuStart } = workerData as EngineData;
const memory = new wasm.Memory({ initial: MIN_MEMORY_BYTES / PAGE_BYTES, maximum: limits.memoryBytes / PAGE_BYTES });
let exhausted = false;
const grow = memory.grow.bind(memory);
// Emscripten grows the memory through this object; a refusal is how an exhausted memory shows.
memory.grow = (delta: number): number => {
  try {
    return grow(delta);
  } catch (error) {
    exhausted = true;
    throw error;
  }
};
// The package's types describe its CommonJS entry; imported as ESM its default export is the variant itself.
const variant = RELEASE_SYNC as unknown as QuickJSSyncVariant;
const engine = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule, wasmMemory: memory }));

/**
 * Builds the script's globals from the host's data before the script runs, so it uses the
 * realm's own JSON and Object untouched. `host` is reachable only through these closures, which
 * pass at most two arguments (no spread: the script may replace the array iterator). The
 * globals are read-only: `state` stays the object the host reads back.
 *
 * When the run must end (a refusal, the time, the memory), `host` answers `stop`, and the
 * closure loops until QuickJS's interrupt handler, which answers true by then, throws: QuickJS
 * makes that error uncatchable, so the run ends at once. An error thrown from `host` itself would
 * be catchable, and a script catching it could go on calling until QuickJS next asks the
 * handler, 10,000 operations later.
 */
const PRELUDE = `(function (host, text) {
  "use strict";
  const data = JSON.parse(text);
  const stop = {};
  const call = (name, first, second) => {
    const answer = host(name, first, second);
    if (answer === stop) for (;;) {}
    return answer;
  };
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, enumerable: true });
  const sender = (name) => (text) => { call(name, text); };
  const self = { id: data.self.id, name: data.self.name, say: sender("self.say"), emote: sender("self.emote") };
  if (data.self.moves) self.move = sender("self.move");
  define("self", self);
  define("room", {
    id: data.room.id,
    name: data.room.name,
    echo: sender("room.echo"),
    characters: () => call("room.characters"),
    npcs: () => call("room.npcs"),
    items: () => call("room.items"),
    openExit: (direction, roomId) => { call("room.openExit", direction, roomId); },
    closeExit: sender("room.closeExit"),
  });
  const actor = data.actor && { name: data.actor.name, tell: sender("actor.tell") };
  define("actor", actor);
  define("state", data.state);
  define("every", (seconds, name) => { call("every", seconds, name); });
  define("after", (seconds, name) => { call("after", seconds, name); });
  define("cancel", (name) => { call("cancel", name); });
  define("random", () => call("random"));
  return { stop, args: actor ? [actor].concat(data.args) : data.args };
})`;

function limit(message: string): ScriptError {
  return { kind: 'limit', message, line: null };
}

function outOfMemory(): ScriptError {
  return { kind: 'memory', message: `The script ran out of memory (this world's scripts have ${limits.memoryBytes / (1024 * 1024)} MiB)`, line: null };
}

/**
 * Why the current run must end (the first reason wins), read by QuickJS's interrupt handler and
 * every host call. Its time is this thread's CPU time plus the main thread's CPU time in its host
 * calls: CPU time, which a busy machine's scheduling does not inflate as it does wall time. Wall
 * time ends it only at WALL_CEILING_MS, seconds later, before the main thread would kill the thread.
 */
class Watch {
  readonly cpuMs: number;
  readonly #startCpu = process.threadCpuUsage();
  readonly #startWall = performance.now();
  hostCpuMs = 0;
  stop: ScriptError | null = null;
  /** Set once the script's own code is done: from then on it may not act, and any code it still runs is interrupted at once. */
  finishing = false;

  constructor(cpuMs: number) {
    this.cpuMs = cpuMs;
  }

  interrupted(): boolean {
    if (this.stop === null) {
      const cpu = process.threadCpuUsage(this.#startCpu);
      if (exhausted) this.stop = outOfMemory();
      else if ((cpu.user + cpu.system) / 1000 + this.hostCpuMs > this.cpuMs) this.stop = { kind: 'timeout', message: `The script used more than ${this.cpuMs} ms of CPU time`, line: null };
      else if (performance.now() - this.#startWall > WALL_CEILING_MS) this.stop = { kind: 'timeout', message: `The script ran for more than ${WALL_CEILING_MS} ms of wall time`, line: null };
    }
    return this.stop !== null || this.finishing;
  }
}

/** A script error for the builder; the script can catch it. */
class GuestTypeError extends Error {}

/** The run must stop with this error. */
class Stop extends Error {
  readonly error: ScriptError;

  constructor(error: ScriptError) {
    super(error.message);
    this.error = error;
  }
}

/** The length of a string of the engine, read without copying it (ctx.getLength takes only objects). */
function stringLength(ctx: QuickJSContext, handle: QuickJSHandle): number {
  return ctx.getProp(handle, 'length').consume((length) => ctx.getNumber(length));
}

/** A string of the engine, copied only when within `most` characters; null for anything else. */
function shortString(ctx: QuickJSContext, handle: QuickJSHandle, most: number): string | null {
  return ctx.typeof(handle) === 'string' && stringLength(ctx, handle) <= most ? ctx.getString(handle) : null;
}

/** `handle[key]` when it is a string within `most` characters. A getter may run script code: callers are finishing, so it cannot act. */
function stringProp(ctx: QuickJSContext, handle: QuickJSHandle, key: string, most = MESSAGE_CHARACTERS): string | null {
  return ctx.getProp(handle, key).consume((value) => shortString(ctx, value, most));
}

/** The message and line of a thrown value: `Name: message` for errors, the line from its stack's first frame in the script. */
function describe(ctx: QuickJSContext, thrown: QuickJSHandle): { message: string; line: number | null } {
  const type = ctx.typeof(thrown);
  if (type === 'string') return { message: shortString(ctx, thrown, MESSAGE_CHARACTERS) ?? '(a long string was thrown)', line: null };
  if (type === 'number' || type === 'boolean') return { message: String(ctx.dump(thrown)), line: null };
  if (type !== 'object' || ctx.sameValue(thrown, ctx.null)) return { message: `(${type === 'object' ? 'null' : type} was thrown)`, line: null };
  const name = stringProp(ctx, thrown, 'name');
  const message = stringProp(ctx, thrown, 'message');
  const stack = stringProp(ctx, thrown, 'stack', STACK_CHARACTERS);
  const frame = stack && new RegExp(`\\b${SCRIPT_FILE}:(\\d+)`).exec(stack);
  return {
    message: name && message !== null ? `${name}: ${message}` : (message ?? name ?? '(an object was thrown)'),
    line: frame ? Number(frame[1]) : null,
  };
}

/** The error that ended the run: a limit it broke first, else what it threw. */
function thrownError(ctx: QuickJSContext, watch: Watch, thrown: QuickJSHandle): ScriptError {
  watch.finishing = true;
  if (watch.stop) return watch.stop;
  if (exhausted) return outOfMemory();
  const { message, line } = describe(ctx, thrown);
  if (message === 'InternalError: out of memory') return { ...outOfMemory(), line };
  // InternalError from calls, SyntaxError from a parse (eval, Function) nested too deep.
  if (/^(InternalError|SyntaxError): stack overflow$/.test(message)) return { kind: 'limit', message: 'The script recursed too deeply (stack overflow)', line };
  return { kind: 'thrown', message, line };
}

/** Copies a text argument out of the engine: a string within textCharacters, or a number as text. */
function readText(ctx: QuickJSContext, handle: QuickJSHandle | undefined, what: string): string {
  const type = handle === undefined ? 'undefined' : ctx.typeof(handle);
  if (handle !== undefined && type === 'number') return String(ctx.getNumber(handle));
  if (handle === undefined || type !== 'string') throw new GuestTypeError(`${what} must be text, not ${type}`);
  const length = stringLength(ctx, handle);
  if (length > limits.textCharacters) throw new Stop(limit(`${what} was ${length} characters long; at most ${limits.textCharacters} are taken`));
  return ctx.getString(handle);
}

function readSeconds(ctx: QuickJSContext, handle: QuickJSHandle | undefined, what: string): number {
  const seconds = handle !== undefined && ctx.typeof(handle) === 'number' ? ctx.getNumber(handle) : NaN;
  if (!Number.isFinite(seconds)) throw new GuestTypeError(`${what} must be a finite number of seconds`);
  return seconds;
}

/** The arguments of a host call (named by the prelude), checked and copied. */
function readCall(ctx: QuickJSContext, call: string, args: QuickJSHandle[]): Array<string | number> | null {
  switch (call) {
    case 'self.say':
    case 'self.emote':
    case 'room.echo':
    case 'actor.tell':
      return [readText(ctx, args[0], `${call}'s text`)];
    case 'self.move':
      return [readText(ctx, args[0], 'the direction given to self.move')];
    case 'room.openExit':
      return [readText(ctx, args[0], 'the direction given to room.openExit'), readText(ctx, args[1], 'the room id given to room.openExit')];
    case 'room.closeExit':
      return [readText(ctx, args[0], 'the direction given to room.closeExit')];
    case 'every':
    case 'after':
      return [readSeconds(ctx, args[0], `${call}'s first argument`), readText(ctx, args[1], `the timer's name given to ${call}`)];
    case 'cancel':
      return [readText(ctx, args[0], "the timer's name given to cancel")];
    case 'room.characters':
    case 'room.npcs':
    case 'room.items':
    case 'random':
      return [];
    default:
      return null;
  }
}

/** Asks the main thread to make a host call and blocks until it answers. */
function ask(watch: Watch, call: HostCall, args: Array<string | number>): CallReply {
  port.postMessage({ type: 'call', call, args } satisfies EngineMessage);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
  for (;;) {
    const seen = Atomics.load(signal, 1);
    const received = receiveMessageOnPort(port);
    if (received !== undefined) {
      const reply = received.message as CallReply;
      watch.hostCpuMs += reply.cpuMs;
      return reply;
    }
    Atomics.wait(signal, 1, seen);
  }
}

/**
 * The one function the prelude's closures call: checks the call, has the host make it, and
 * hands back its answer, or the prelude's `stop` once the run must end.
 */
function hostFunction(ctx: QuickJSContext, watch: Watch, stop: { handle: QuickJSHandle | null }): QuickJSHandle {
  return ctx.newFunction('host', (callHandle, ...argHandles) => {
    try {
      if (watch.interrupted()) throw new Stop(watch.stop ?? limit('The run is over'));
      const call = shortString(ctx, callHandle, 32);
      const args = call === null ? null : readCall(ctx, call, argHandles);
      if (args === null) throw new GuestTypeError('No such host function');
      const reply = ask(watch, call as HostCall, args);
      if (reply.type === 'refused') throw new Stop(limit(reply.message));
      if (reply.type === 'failed') throw new Stop(limit('A host function failed'));
      if (reply.value === null) return undefined;
      if (typeof reply.value === 'number') return ctx.newNumber(reply.value);
      const list = ctx.newArray();
      reply.value.forEach((text, index) => ctx.newString(text).consume((handle) => ctx.setProp(list, index, handle)));
      return list;
    } catch (error) {
      if (error instanceof GuestTypeError) return { error: ctx.newError({ name: 'TypeError', message: error.message }) };
      watch.stop ??= error instanceof Stop ? error.error : limit(`The script's engine failed in a host call (${String(error)})`);
      return stop.handle?.dup();
    }
  });
}

/** Runs the promise jobs the script queued; the error that ended them, if any (only an interrupt or a lack of memory ends them). */
function drain(ctx: QuickJSContext, runtime: QuickJSRuntime, watch: Watch): ScriptError | null {
  while (runtime.hasPendingJob()) {
    const result = runtime.executePendingJobs();
    if (result.error) return result.error.consume((thrown) => thrownError(ctx, watch, thrown));
  }
  return null;
}

/** What the hook returned, as the host takes it. */
function readReturned(ctx: QuickJSContext, value: QuickJSHandle): ScriptValue | ScriptError {
  switch (ctx.typeof(value)) {
    case 'boolean':
      return ctx.sameValue(value, ctx.true);
    case 'number': {
      const number = ctx.getNumber(value);
      return Number.isFinite(number) ? number : null;
    }
    case 'string':
      return shortString(ctx, value, limits.textCharacters) ?? limit(`The hook returned more than ${limits.textCharacters} characters`);
    default:
      return null;
  }
}

/** The global `state` as JSON through the realm's JSON.stringify taken before the script ran, checked against stateBytes. */
function readState(ctx: QuickJSContext, scope: Scope, stringify: QuickJSHandle): { state: ScriptState } | { error: ScriptError } {
  const notObject = { error: { kind: 'thrown', message: 'state must stay a plain object', line: null } } as const;
  const tooLarge = { error: { kind: 'state_too_large', message: `state is more than ${limits.stateBytes} bytes as JSON`, line: null } } as const;
  const state = scope.manage(ctx.getProp(ctx.global, 'state'));
  const result = ctx.callFunction(stringify, ctx.undefined, state);
  if (result.error) {
    const { message } = result.error.consume((thrown) => describe(ctx, thrown));
    return { error: { kind: 'thrown', message: `state cannot be saved as JSON: ${message}`, line: null } };
  }
  const json = scope.manage(result.value);
  if (ctx.typeof(json) !== 'string') return notObject;
  const length = stringLength(ctx, json);
  if (length > limits.stateBytes) return tooLarge;
  const text = ctx.getString(json);
  if (Buffer.byteLength(text) > limits.stateBytes) return tooLarge;
  const saved: unknown = JSON.parse(text);
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return notObject;
  return { state: saved as ScriptState };
}

/** Refuses a source the engine's memory could not even copy in (a failed allocation there would write through a null pointer). */
function sourceTooLarge(source: string): ScriptError | null {
  const most = limits.memoryBytes / 8;
  return Buffer.byteLength(source) > most ? { kind: 'memory', message: `The script is larger than ${most} bytes, the most this world's memory takes`, line: null } : null;
}

/**
 * Deepest nesting of brackets a script may have. Hand-written code stays far below it; the
 * parser's memory grows with depth times length (see compile), and a source refused here
 * leaves the engine as it was, where one refused for lack of memory costs a new engine thread.
 */
const MAX_NESTING = 256;

/**
 * The line where a source's brackets ((), [], {}) first nest past MAX_NESTING, outside strings
 * and comments; null when they never do. Templates are read as strings and regular expressions
 * as code, so it can miscount: it is a cheap first refusal, and the memory limit still holds.
 */
function nestsTooDeep(source: string): number | null {
  let depth = 0;
  let line = 1;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\n') line++;
    else if (c === '(' || c === '[' || c === '{') {
      if (++depth > MAX_NESTING) return line;
    } else if (c === ')' || c === ']' || c === '}') depth = Math.max(0, depth - 1);
    else if (c === '"' || c === "'" || c === '`') {
      for (i++; i < source.length && source[i] !== c && !(c !== '`' && source[i] === '\n'); i++) {
        if (source[i] === '\n') line++;
        if (source[i] === '\\') i++;
      }
    } else if (c === '/' && source[i + 1] === '/') {
      while (i < source.length && source[i] !== '\n') i++;
      line++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 1;
      for (; i < stop; i++) if (source[i] === '\n') line++;
    }
  }
  return null;
}

/** Why a source is refused before the engine reads it, if it is. */
function unfit(source: string): ScriptError | null {
  const tooLarge = sourceTooLarge(source);
  if (tooLarge) return tooLarge;
  const deep = nestsTooDeep(source);
  return deep === null ? null : { kind: 'syntax', message: `The script nests brackets more than ${MAX_NESTING} levels deep`, line: deep };
}

interface Fresh {
  runtime: QuickJSRuntime;
  ctx: QuickJSContext;
}

/**
 * The runtime and context for the next request, made (and the last one freed) after answering,
 * while the main thread is not waiting: about half of a run's cost. An error here (a failed
 * engine) is the answer to the next request.
 */
function renewed(used: Fresh | null): Fresh | Error {
  try {
    used?.ctx.dispose();
    used?.runtime.dispose();
    const runtime = engine.newRuntime();
    runtime.setMaxStackSize(STACK_BYTES);
    return { runtime, ctx: runtime.newContext() };
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
let fresh = renewed(null);

/**
 * Runs `work` in `fresh`'s context. An exception out of the engine itself (V8's stack overflow
 * inside WebAssembly, an abort) leaves it inconsistent, as does a memory that could not grow:
 * `work`'s outcome is replaced by that failure and the thread reported broken.
 */
function inFreshContext(cpuMs: number, work: (ctx: QuickJSContext, runtime: QuickJSRuntime, watch: Watch, scope: Scope) => RunOutcome): { outcome: RunOutcome; broken: boolean } {
  const { runtime, ctx } = fresh as Fresh;
  const watch = new Watch(cpuMs);
  try {
    runtime.setInterruptHandler(() => watch.interrupted());
    const outcome = Scope.withScope((scope) => work(ctx, runtime, watch, scope));
    if (!exhausted) return { outcome, broken: false };
    return { outcome: outcome.ok ? { ok: false, error: outOfMemory() } : outcome, broken: true };
  } catch (error) {
    watch.interrupted();
    const broke = watch.stop ?? (error instanceof RangeError ? limit('The script recursed too deeply (stack overflow)') : limit(`The script's engine failed (${String(error)}); it is replaced`));
    return { outcome: { ok: false, error: broke }, broken: true };
  }
}

/**
 * Compiles without running: ok, or the syntax error. The parser never asks the interrupt
 * handler, and what it keeps grows faster than the source: every function keeps its own source
 * text (for toString), so 3,000 nested functions in 42 KB need 64 to 128 MiB, and each `\p{L}`
 * class of a `u` regular expression is a table of its ranges (3,000 of them need 32 to 64 MiB).
 * QuickJS refuses such a source cleanly, but only once the memory refused to grow, which leaves
 * the engine untrusted (see inFreshContext): the compile fails for lack of memory and the sandbox
 * is replaced. No cheaper refusal fits: QuickJS's stack limit does not catch nested functions,
 * and a more lenient compile (one dropping the sources) would save scripts whose every run fails.
 */
function compile(request: Extract<EngineRequest, { type: 'compile' }>): EngineMessage {
  const refused = unfit(request.source);
  if (refused) return { type: 'done', outcome: { ok: false, error: refused }, broken: false };
  const { outcome, broken } = inFreshContext(request.cpuMs, (ctx): RunOutcome => {
    const compiled = ctx.evalCode(request.source, SCRIPT_FILE, { type: 'global', compileOnly: true });
    if (compiled.error && exhausted) {
      compiled.error.dispose();
      return { ok: false, error: { kind: 'memory', message: `The script needs more than this world's ${limits.memoryBytes / (1024 * 1024)} MiB of memory to compile (too deeply nested, or too large)`, line: null } };
    }
    if (compiled.error) return { ok: false, error: { kind: 'syntax', ...compiled.error.consume((thrown) => describe(ctx, thrown)) } };
    compiled.value.dispose();
    return { ok: true, returned: null, state: {} };
  });
  return { type: 'done', outcome, broken };
}

function run(request: Extract<EngineRequest, { type: 'run' }>): EngineMessage {
  const refused = unfit(request.source);
  if (refused) return { type: 'done', outcome: { ok: false, error: refused }, broken: false };
  const { outcome, broken } = inFreshContext(request.cpuMs, (ctx, runtime, watch, scope): RunOutcome => {
    const fail = (error: ScriptError): RunOutcome => ({ ok: false, error });
    const json = scope.manage(ctx.getProp(ctx.global, 'JSON'));
    const stringify = scope.manage(ctx.getProp(json, 'stringify'));

    const compiled = ctx.evalCode(request.source, SCRIPT_FILE, { type: 'global', compileOnly: true });
    if (compiled.error) return fail({ kind: 'syntax', ...compiled.error.consume((thrown) => describe(ctx, thrown)) });
    compiled.value.dispose();

    const prelude = scope.manage(ctx.unwrapResult(ctx.evalCode(PRELUDE, 'prelude', { type: 'global' })));
    const stop: { handle: QuickJSHandle | null } = { handle: null };
    const host = scope.manage(hostFunction(ctx, watch, stop));
    const text = scope.manage(ctx.newString(request.globals));
    const built = scope.manage(ctx.unwrapResult(ctx.callFunction(prelude, ctx.undefined, host, text)));
    stop.handle = scope.manage(ctx.getProp(built, 'stop'));
    const argList = scope.manage(ctx.getProp(built, 'args'));

    const evaluated = ctx.evalCode(request.source, SCRIPT_FILE, { type: 'global' });
    if (evaluated.error) return fail(evaluated.error.consume((thrown) => thrownError(ctx, watch, thrown)));
    evaluated.value.dispose();
    const afterTopLevel = drain(ctx, runtime, watch);
    if (afterTopLevel) return fail(afterTopLevel);

    let returned: ScriptValue = null;
    const hook = scope.manage(ctx.getProp(ctx.global, request.hook));
    if (ctx.typeof(hook) === 'function') {
      const args = Array.from({ length: ctx.getLength(argList) ?? 0 }, (_, index) => scope.manage(ctx.getProp(argList, index)));
      const called = ctx.callFunction(hook, ctx.undefined, args);
      if (called.error) return fail(called.error.consume((thrown) => thrownError(ctx, watch, thrown)));
      const value = scope.manage(called.value);
      const afterHook = drain(ctx, runtime, watch);
      if (afterHook) return fail(afterHook);
      // An async hook: what its promise settled on once the jobs ran (still pending: nothing).
      const settled = ctx.getPromiseState(value);
      if (settled.type === 'rejected') return fail(settled.error.consume((thrown) => thrownError(ctx, watch, thrown)));
      if (settled.type === 'fulfilled') {
        const read = readReturned(ctx, settled.notAPromise ? value : scope.manage(settled.value));
        if (typeof read === 'object' && read !== null) return fail(read);
        returned = read;
      }
    }

    // The script's code is done: the run ends here if it went past its time, and state is read without letting it act.
    watch.finishing = true;
    watch.interrupted();
    if (watch.stop) return fail(watch.stop);
    const read = readState(ctx, scope, stringify);
    return 'error' in read ? fail(read.error) : { ok: true, returned, state: read.state };
  });
  return { type: 'done', outcome, broken };
}

/** The answer to a request, in the context `fresh` holds for it. */
function answer(request: EngineRequest): EngineMessage {
  if (fresh instanceof Error) return { type: 'failed', message: `The script engine failed between runs (${String(fresh)})` };
  return request.type === 'compile' ? compile(request) : run(request);
}

/** Answers a request, then readies the engine for the next one (unless it broke and is to be replaced). */
function serve(request: EngineRequest): void {
  const begun = process.threadCpuUsage();
  cpuStart[0] = begun.user + begun.system;
  const used = fresh;
  const message = answer(request);
  port.postMessage(message);
  Atomics.add(signal, 0, 1);
  Atomics.notify(signal, 0);
  if (message.type === 'done' && !message.broken) fresh = renewed(used as Fresh);
}

// A new thread's first runs are slow while V8 compiles the engine (tens of milliseconds): they
// happen here, before the thread reports ready, not in a script's first run against its cpuMs.
const warmUp: RunGlobals = { self: { id: '', name: '', moves: false }, room: { id: '', name: '' }, actor: null, state: {}, args: [] };
for (let round = 0; round < 3; round += 1) {
  const used = fresh;
  answer({
    type: 'run',
    source: 'function onLoad() { state.seen = [1, 2, 3].map((n) => n * 2).join(","); try { null.x; } catch (error) { return JSON.stringify(state) + error; } }',
    hook: 'onLoad',
    cpuMs: Infinity,
    globals: JSON.stringify(warmUp),
  });
  fresh = renewed(used as Fresh);
}

port.on('message', serve);
parentPort!.postMessage('ready');
