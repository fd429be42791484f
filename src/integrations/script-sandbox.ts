/**
 * The sandbox that runs builders' scripts (NPCs, rooms, items): QuickJS compiled to WebAssembly
 * (quickjs-emscripten), never node:vm, which is no security boundary. The choice and the facts
 * behind it are in docs/decisions.md ("Scripts").
 *
 * One WorldSandbox per world: a worker thread (script-sandbox-worker.ts) holding one QuickJS
 * WebAssembly instance with its own fixed memory. Every run gets a fresh QuickJS runtime and
 * context in it, so nothing a script does (globals, prototypes, pending promise jobs, the symbol
 * registry) survives into the next run; the only channel between runs is the `state` the host
 * passes in and saves.
 *
 * run() and compile() post the request and wait for its answer without blocking the main thread
 * (Atomics.waitAsync on a shared signal), answering the script's host calls (self.say,
 * room.characters(), ...) as they come, so a script that spins to its limit costs the instance's
 * other requests no more than a thread sharing the core; a world's requests take turns. The
 * thread is what makes the CPU limit hold: QuickJS's interrupt handler stops a script once its
 * thread's CPU time and its host calls reach cpuMs, but some built-ins run long without asking it
 * (`new Array(1e8).join('')` takes seconds in one call), and the parser never asks it. So the main
 * thread reads the engine thread's CPU time (worker.cpuUsage()) while it waits, and kills a thread
 * that has used KILL_SLACK_MS of CPU past cpuMs without answering, or has not answered within
 * WALL_CEILING_MS and the slack of wall time; the sandbox is then no longer healthy. Both limits
 * are CPU time first, so a starved machine (two test suites on two cores) slows runs without
 * failing them.
 */
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';

export interface SandboxLimits {
  /** CPU time of one run (its engine thread's, plus the time of its host calls); the script is interrupted past it. */
  cpuMs: number;
  /** Memory of one world's engine (its WebAssembly memory's maximum), at least 16 MiB (the build's initial memory). */
  memoryBytes: number;
  /** Most bytes of `state` as JSON (UTF-8) after a run. */
  stateBytes: number;
  /** Most characters (UTF-16 code units) of one string a script hands the host: say/emote/echo/tell text, directions, timer names. */
  textCharacters: number;
}

/** What a script may call, given per run by the host. Every function is synchronous and receives only copies of strings and numbers. */
export interface HostApi {
  self: { id: string; name: string; say(text: string): void; emote(text: string): void; move?(direction: string): void };
  room: {
    id: string;
    name: string;
    echo(text: string): void;
    characters(): string[];
    npcs(): string[];
    items(): string[];
    openExit(direction: string, roomId: string): void;
    closeExit(direction: string): void;
  };
  actor: { name: string; tell(text: string): void } | null;
  every(seconds: number, name: string): void;
  after(seconds: number, name: string): void;
  cancel(name: string): void;
  random(): number;
}

/** Thrown by a HostApi function to stop the run; the run fails with kind 'limit' and this message. */
export class HostRefusal extends Error {
  override name = 'HostRefusal';
}

export type ScriptErrorKind = 'syntax' | 'thrown' | 'timeout' | 'memory' | 'state_too_large' | 'limit';

export interface ScriptError {
  kind: ScriptErrorKind;
  /** For builders: the script's own error (`TypeError: x is not a function`) or which limit it broke. */
  message: string;
  /** 1-based line in the script, when the error has one. */
  line: number | null;
}

/** What a hook returned: a JSON primitive (strings within textCharacters); undefined, objects and functions come back as null. */
export type ScriptValue = string | number | boolean | null;

/** A plain object, as the script left it and JSON can carry it. */
export type ScriptState = { [key: string]: unknown };

export type RunOutcome = { ok: true; returned: ScriptValue; state: ScriptState } | { ok: false; error: ScriptError };

/** The build's declared initial memory: 256 pages of 64 KiB. */
export const MIN_MEMORY_BYTES = 16 * 1024 * 1024;
const PAGE_BYTES = 64 * 1024;

/** The file name scripts are compiled under; error lines are read from stack frames naming it. */
export const SCRIPT_FILE = 'script';

/**
 * A request's engine thread that has used KILL_SLACK_MS of its own CPU time past cpuMs without
 * answering is killed: a built-in or the parser that never asks the interrupt handler. CPU time,
 * not wall time, so a busy machine's scheduling does not kill ordinary runs (a 0.5 ms run took
 * up to 115 ms of wall time here at a load of 8 on 2 cores; a wall-time kill 300 ms past cpuMs
 * ended harmless runs when two test suites shared the 2 cores).
 */
export const KILL_SLACK_MS = 300;

/**
 * The wall time a request may take whatever its CPU time: the interrupt handler stops it there,
 * and the main thread kills its thread KILL_SLACK_MS later. Far above any cpuMs, so only a
 * machine starved for seconds reaches it; it exists so that a thread that gets no CPU (or whose
 * CPU clock cannot be read) does not hold its world's queue of runs for ever.
 */
export const WALL_CEILING_MS = 5000;

// The protocol between WorldSandbox and its engine thread.

/** The parts of Node's WebAssembly global used here: the project's TypeScript libs (es2023, node) do not declare it. */
export interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  Memory: new (descriptor: { initial: number; maximum: number }) => { grow(delta: number): number; readonly buffer: ArrayBuffer };
}
export const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Atomics.waitAsync (ES2024, in Node since 16), which the project's es2023 libs do not declare. */
const waitAsync = (Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number, timeout: number): { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<'ok' | 'timed-out'> };
}).waitAsync;

export interface EngineData {
  /** The compiled QuickJS build (a WebAssembly.Module). */
  wasmModule: object;
  limits: SandboxLimits;
  port: MessagePort;
  /** [0] counts messages to the main thread, [1] replies to the engine: each side waits on its own. */
  signal: Int32Array;
  /** [0]: the engine thread's CPU time (µs) when it began the request in hand; -1 until it has (the main thread resets it as it posts). */
  cpuStart: Float64Array;
}

/** `cpuMs`: the request's CPU budget (the engine's warm-up runs have none). */
export type EngineRequest =
  | { type: 'compile'; source: string; cpuMs: number }
  | {
      type: 'run';
      source: string;
      hook: string;
      cpuMs: number;
      /** JSON of everything the script's globals are built from, parsed inside the engine before the script runs. */
      globals: string;
    };

/** What the prelude reads from EngineRequest.globals. */
export interface RunGlobals {
  self: { id: string; name: string; moves: boolean };
  room: { id: string; name: string };
  actor: { name: string } | null;
  state: ScriptState;
  args: unknown[];
}

export type HostCall =
  | 'self.say'
  | 'self.emote'
  | 'self.move'
  | 'room.echo'
  | 'room.characters'
  | 'room.npcs'
  | 'room.items'
  | 'room.openExit'
  | 'room.closeExit'
  | 'actor.tell'
  | 'every'
  | 'after'
  | 'cancel'
  | 'random';

/** A host call, or the answer to a request (for a compile: ok, or its syntax error), or the engine failed before the request. */
export type EngineMessage =
  | { type: 'call'; call: HostCall; args: Array<string | number> }
  | { type: 'done'; outcome: RunOutcome; broken: boolean }
  | { type: 'failed'; message: string };

/** `cpuMs`: the main thread's CPU time in the host function, which counts as the run's. */
export type CallReply = { cpuMs: number } & (
  | { type: 'value'; value: string[] | number | null }
  | { type: 'refused'; message: string }
  /** The host function failed (not a refusal): the run stops and run() throws the host's error. */
  | { type: 'failed' }
);

let wasmModule: Promise<object> | undefined;

/** The QuickJS build compiled once per process; each engine thread instantiates it with its own memory. */
function compiledEngine(): Promise<object> {
  wasmModule ??= readFile(fileURLToPath(import.meta.resolve('@jitl/quickjs-wasmfile-release-sync/wasm'))).then((bytes) => wasm.compile(bytes));
  return wasmModule;
}

function checkLimits(limits: SandboxLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new RangeError(`Script sandbox limit ${name} must be a positive integer, not ${String(value)}`);
  }
  if (limits.memoryBytes < MIN_MEMORY_BYTES) throw new RangeError(`Script sandbox memoryBytes must be at least ${MIN_MEMORY_BYTES} (16 MiB)`);
}

/** One world's scripts: one engine thread and its fixed memory, reused request after request. */
export class WorldSandbox {
  readonly limits: SandboxLimits;
  #worker: Worker;
  #port: MessagePort;
  #signal: Int32Array;
  #cpuStart: Float64Array;
  #healthy = true;
  /** The requests waiting their turn: the engine answers one at a time. */
  #turns: Promise<unknown> = Promise.resolve();

  private constructor(limits: SandboxLimits, worker: Worker, port: MessagePort, signal: Int32Array, cpuStart: Float64Array) {
    this.limits = limits;
    this.#worker = worker;
    this.#port = port;
    this.#signal = signal;
    this.#cpuStart = cpuStart;
    // Ends the sandbox when its thread dies in any way (e.g. out of its own heap); without a listener a worker's error would crash the process.
    worker.on('error', () => this.#break());
    worker.on('exit', () => this.#break());
  }

  static async create(limits: SandboxLimits): Promise<WorldSandbox> {
    checkLimits(limits);
    const pages = { ...limits, memoryBytes: limits.memoryBytes - (limits.memoryBytes % PAGE_BYTES) };
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const cpuStart = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));
    const data: EngineData = { wasmModule: await compiledEngine(), limits: pages, port: port2, signal, cpuStart };
    // 16 MB of native stack: deep recursion meets QuickJS's own stack limit (256 KiB of its stack) before V8's.
    const worker = new Worker(new URL('./script-sandbox-worker.ts', import.meta.url), {
      workerData: data,
      transferList: [port2],
      resourceLimits: { stackSizeMb: 16, maxOldGenerationSizeMb: 64 },
    });
    try {
      await Promise.race([
        once(worker, 'message'),
        once(worker, 'exit').then(([code]) => {
          throw new Error(`The script engine thread exited with code ${String(code)} while starting`);
        }),
      ]);
    } catch (error) {
      void worker.terminate();
      throw error;
    }
    worker.unref();
    return new WorldSandbox(pages, worker, port1, signal, cpuStart);
  }

  /** False once the engine cannot be trusted (its memory ran out, its thread was killed or died): dispose it and create another. */
  get healthy(): boolean {
    return this.#healthy;
  }

  /**
   * Compiles without running: null when it compiles, else the message and line (1-based) of the
   * first error. It takes its turn with the sandbox's runs. A source the engine cannot parse
   * within its memory or time leaves the sandbox unhealthy (see the worker's compile).
   */
  async compile(source: string): Promise<{ message: string; line: number | null } | null> {
    const outcome = await this.#inTurn({ type: 'compile', source, cpuMs: this.limits.cpuMs }, null);
    return outcome.ok ? null : { message: outcome.error.message, line: outcome.error.line };
  }

  /**
   * Runs the script's top level, then its `hook` (e.g. 'onSay', or a timer's name) if it defines
   * one, called with `(actor, ...args)` when the api has an actor and `(...args)` otherwise.
   * `state` is the script's global `state` (a plain object it changes in place). The outcome has
   * what the hook returned and the state as the run left it, or the error that ended the run.
   * A HostRefusal from an api function ends the run with kind 'limit'; any other error from one
   * ends it and rejects the run once the engine has stopped. Runs of one sandbox take turns: one
   * started while another runs (by a host function, say) starts when it ends.
   */
  run(source: string, hook: string, args: unknown[], state: ScriptState, api: HostApi): Promise<RunOutcome> {
    const globals: RunGlobals = {
      self: { id: api.self.id, name: api.self.name, moves: api.self.move !== undefined },
      room: { id: api.room.id, name: api.room.name },
      actor: api.actor && { name: api.actor.name },
      state,
      args,
    };
    return this.#inTurn({ type: 'run', source, hook, cpuMs: this.limits.cpuMs, globals: JSON.stringify(globals) }, api);
  }

  /** Ends the engine thread. */
  dispose(): void {
    this.#break();
  }

  #break(): void {
    if (!this.#healthy) return;
    this.#healthy = false;
    this.#port.close();
    void this.#worker.terminate();
  }

  /** The request once the requests before it are answered; refused when the sandbox broke meanwhile. */
  #inTurn(request: EngineRequest, api: HostApi | null): Promise<RunOutcome> {
    const turn = this.#turns.then(async () => {
      if (!this.#healthy) throw new Error('This script sandbox is broken or disposed; create a new one');
      // Atomics.waitAsync does not keep the process alive: a command that only compiles (world-check) would exit mid-request.
      this.#worker.ref();
      try {
        return await this.#exchange(request, api);
      } finally {
        this.#worker.unref();
      }
    });
    this.#turns = turn.catch(() => undefined);
    return turn;
  }

  /**
   * One request to the engine: posts it, then serves its host calls until its answer, waiting on
   * the signal without blocking the thread. Past cpuMs and KILL_SLACK_MS of wall time (a thread's
   * CPU time grows no faster than the wall clock) it reads the engine thread's CPU time, and
   * kills the thread once that is KILL_SLACK_MS past cpuMs, or the wall ceiling is passed.
   */
  async #exchange(request: EngineRequest, api: HostApi | null): Promise<RunOutcome> {
    const started = performance.now();
    const killAtWall = started + WALL_CEILING_MS + KILL_SLACK_MS;
    const cpuBudgetMs = request.cpuMs + KILL_SLACK_MS;
    let checkCpuAt = started + cpuBudgetMs;
    let hostError: { error: unknown } | null = null;
    this.#cpuStart[0] = -1;
    this.#port.postMessage(request);
    for (;;) {
      const seen = Atomics.load(this.#signal, 0);
      const received = receiveMessageOnPort(this.#port);
      if (received === undefined) {
        const now = performance.now();
        if (now >= checkCpuAt && now < killAtWall) {
          const leftMs = await this.#cpuLeftMs(cpuBudgetMs);
          if (leftMs > 0) {
            checkCpuAt = performance.now() + leftMs;
            continue;
          }
          // It may have answered while its CPU time was read.
          if (Atomics.load(this.#signal, 0) !== seen) continue;
        }
        if (now >= killAtWall || now >= checkCpuAt) {
          this.#break();
          if (hostError) throw hostError.error;
          const ran = now >= killAtWall ? `${WALL_CEILING_MS} ms of wall time` : `${request.cpuMs} ms of CPU time`;
          return { ok: false, error: { kind: 'timeout', message: `The script did not stop at ${ran} and was killed`, line: null } };
        }
        const waited = waitAsync(this.#signal, 0, seen, Math.min(checkCpuAt, killAtWall) - now);
        if (waited.async) await waited.value;
        continue;
      }
      const message = received.message as EngineMessage;
      if (message.type === 'call') {
        const started = process.threadCpuUsage();
        let reply: CallReply;
        try {
          if (api === null) throw new Error('A compile made a host call');
          reply = { type: 'value', value: callHost(api, message.call, message.args), cpuMs: 0 };
        } catch (error) {
          if (error instanceof HostRefusal) reply = { type: 'refused', message: error.message, cpuMs: 0 };
          else {
            hostError = { error };
            reply = { type: 'failed', cpuMs: 0 };
          }
        }
        const used = process.threadCpuUsage(started);
        reply.cpuMs = (used.user + used.system) / 1000;
        if (!this.#healthy) throw new Error('The script sandbox was disposed by a host function during the run');
        this.#port.postMessage(reply);
        Atomics.add(this.#signal, 1, 1);
        Atomics.notify(this.#signal, 1);
        continue;
      }
      if (message.type === 'failed') {
        this.#break();
        throw new Error(message.message);
      }
      if (message.broken) this.#break();
      if (hostError) throw hostError.error;
      return message.outcome;
    }
  }

  /**
   * The CPU time (ms) the engine thread may still use on the request in hand, out of `budgetMs`:
   * the whole budget while it has not begun it (busy readying itself, or starved; the wall
   * ceiling ends that), 0 once its thread has ended.
   */
  async #cpuLeftMs(budgetMs: number): Promise<number> {
    const usage = await this.#worker.cpuUsage().catch(() => null);
    const begun = this.#cpuStart[0]!;
    if (usage === null) return 0;
    if (begun < 0) return budgetMs;
    return budgetMs - (usage.user + usage.system - begun) / 1000;
  }
}

/** One host call from the engine, whose arguments it has checked (texts within textCharacters, finite seconds). */
function callHost(api: HostApi, call: HostCall, args: Array<string | number>): string[] | number | null {
  const text = String(args[0]);
  switch (call) {
    case 'self.say':
      api.self.say(text);
      return null;
    case 'self.emote':
      api.self.emote(text);
      return null;
    case 'self.move':
      api.self.move?.(text);
      return null;
    case 'room.echo':
      api.room.echo(text);
      return null;
    case 'room.characters':
      return [...api.room.characters()];
    case 'room.npcs':
      return [...api.room.npcs()];
    case 'room.items':
      return [...api.room.items()];
    case 'room.openExit':
      api.room.openExit(text, String(args[1]));
      return null;
    case 'room.closeExit':
      api.room.closeExit(text);
      return null;
    case 'actor.tell':
      api.actor?.tell(text);
      return null;
    case 'every':
      api.every(Number(args[0]), String(args[1]));
      return null;
    case 'after':
      api.after(Number(args[0]), String(args[1]));
      return null;
    case 'cancel':
      api.cancel(text);
      return null;
    case 'random':
      return api.random();
  }
}
