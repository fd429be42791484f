/**
 * The script sandbox (src/integrations/script-sandbox.ts) against builders' scripts, friendly and
 * hostile: every attack ends its run with the right error kind, and the sandbox runs the next
 * script, or says it is broken (`healthy` false) and a new one runs.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { after, before, describe, it } from 'mocha';
import { HostRefusal, WorldSandbox } from '../../src/integrations/script-sandbox.ts';
import type { HostApi, RunOutcome, SandboxLimits, ScriptErrorKind } from '../../src/integrations/script-sandbox.ts';

const LIMITS: SandboxLimits = { cpuMs: 50, memoryBytes: 16 * 1024 * 1024, stateBytes: 16 * 1024, textCharacters: 2000 };
/** Memory bombs get the time to fill the memory: they must end for lack of memory, not time. */
const BOMB_LIMITS: SandboxLimits = { ...LIMITS, cpuMs: 5000 };
/** The configuration's default memory; the engine's own data and C stack take about 5.2 MiB of it. */
const MEMORY_LIMITS: SandboxLimits = { ...LIMITS, memoryBytes: 32 * 1024 * 1024 };
const MiB = 1024 * 1024;
/** Nested functions keep each one's source: 3,000 in 42 KB need more than 64 MiB to parse. */
const NESTED_FUNCTIONS = 'function a(){'.repeat(3000) + '}'.repeat(3000);
/** 3,000 Unicode property classes: a range table each, more than 32 MiB. */
const UNICODE_CLASSES = '/' + '[\\p{L}]'.repeat(3000) + '/u';

/** A host that records every call a script makes, as `name(args)`. */
function recordingHost(overrides: { say?: (text: string) => void; characters?: () => string[]; actor?: boolean } = {}): { api: HostApi; calls: string[] } {
  const calls: string[] = [];
  const record = (name: string) => (...args: unknown[]) => {
    calls.push(`${name}(${args.map((arg) => JSON.stringify(arg)).join(', ')})`);
  };
  const api: HostApi = {
    self: { id: 'npc-7', name: 'the ferryman', say: overrides.say ?? record('say'), emote: record('emote'), move: record('move') },
    room: {
      id: 'room-3',
      name: 'The Dock',
      echo: record('echo'),
      characters: overrides.characters ?? (() => ['Ann', 'Bob']),
      npcs: () => ['the ferryman'],
      items: () => ['a rope'],
      openExit: record('openExit'),
      closeExit: record('closeExit'),
    },
    actor: overrides.actor === false ? null : { name: 'Ann', tell: record('tell') },
    every: record('every'),
    after: record('after'),
    cancel: record('cancel'),
    random: () => 0.25,
  };
  return { api, calls };
}

function expectError(outcome: RunOutcome, kind: ScriptErrorKind): { message: string; line: number | null } {
  if (outcome.ok) expect.fail(`expected a ${kind} error, got ${JSON.stringify(outcome)}`);
  expect(outcome.error.kind, outcome.error.message).to.equal(kind);
  return outcome.error;
}

function expectReturned(outcome: RunOutcome): unknown {
  if (!outcome.ok) expect.fail(`expected success, got ${JSON.stringify(outcome.error)}`);
  return outcome.returned;
}

/** The sandbox runs a script after whatever came before. */
async function expectUsable(sandbox: WorldSandbox): Promise<void> {
  expect(sandbox.healthy).to.equal(true);
  expect(expectReturned(await sandbox.run('function onLoad() { return [1, 2, 3].length; }', 'onLoad', [], {}, recordingHost().api))).to.equal(3);
}

describe('WorldSandbox', () => {
  let sandbox: WorldSandbox;
  const made: WorldSandbox[] = [];

  async function fresh(limits: SandboxLimits = LIMITS): Promise<WorldSandbox> {
    const created = await WorldSandbox.create(limits);
    made.push(created);
    return created;
  }

  before(async () => {
    sandbox = await fresh();
  });

  after(() => {
    for (const each of made) each.dispose();
  });

  describe('scripts that behave', () => {
    it('runs onSay with its actor and text: it says, returns true, and its state comes back for the next run', async () => {
      const { api, calls } = recordingHost();
      const source = `
        function onSay(actor, text) {
          if (!text.includes("fare")) return false;
          state.asked = (state.asked || 0) + 1;
          self.say(actor.name + ", the fare is two coins (asked " + state.asked + " times).");
          return true;
        }`;
      const first = await sandbox.run(source, 'onSay', ['what is the fare?'], { since: 'dawn' }, api);
      expect(first).to.deep.equal({ ok: true, returned: true, state: { since: 'dawn', asked: 1 } });
      const second = await sandbox.run(source, 'onSay', ['the fare?'], first.ok ? first.state : {}, api);
      expect(second).to.deep.equal({ ok: true, returned: true, state: { since: 'dawn', asked: 2 } });
      expect(await sandbox.run(source, 'onSay', ['hello'], { asked: 2 }, api)).to.deep.equal({ ok: true, returned: false, state: { asked: 2 } });
      expect(calls).to.deep.equal(['say("Ann, the fare is two coins (asked 1 times).")', 'say("Ann, the fare is two coins (asked 2 times).")']);
    });

    it('hands every host function copies of the strings and numbers the script passed, and the script gets the answers', async () => {
      const { api, calls } = recordingHost();
      const source = `
        function onCommand(actor, verb, args) {
          self.emote("nods at " + actor.name);
          self.move("north");
          room.echo(room.name + " (" + room.id + ") of " + self.name + " (" + self.id + ")");
          actor.tell(room.characters().join("+") + "/" + room.npcs().join("+") + "/" + room.items().join("+"));
          every(60, "bell");
          after(1.5, "close");
          cancel("bell");
          room.openExit("down", "cellar");
          room.closeExit("up");
          self.say(random());
          self.say(verb + " " + args);
          return true;
        }`;
      expect(expectReturned(await sandbox.run(source, 'onCommand', ['pull', 'lever'], {}, api))).to.equal(true);
      expect(calls).to.deep.equal([
        'emote("nods at Ann")',
        'move("north")',
        'echo("The Dock (room-3) of the ferryman (npc-7)")',
        'tell("Ann+Bob/the ferryman/a rope")',
        'every(60, "bell")',
        'after(1.5, "close")',
        'cancel("bell")',
        'openExit("down", "cellar")',
        'closeExit("up")',
        'say("0.25")',
        'say("pull lever")',
      ]);
    });

    it('without an actor the hook gets only its arguments, `actor` is null, and an NPC-less self has no move', async () => {
      const { api } = recordingHost({ actor: false });
      delete api.self.move;
      const source = 'function bell(first) { return [String(actor), typeof self.move, first].join(","); }';
      expect(expectReturned(await sandbox.run(source, 'bell', ['dusk'], {}, api))).to.equal('null,undefined,dusk');
    });

    it('a script without the hook runs its top level only: returned is null, state as the top level left it', async () => {
      const { api, calls } = recordingHost();
      expect(await sandbox.run('state.loaded = true;', 'onEnter', [], { n: 1 }, api)).to.deep.equal({ ok: true, returned: null, state: { n: 1, loaded: true } });
      expect(calls).to.deep.equal([]);
    });

    it('an async hook: what it awaited runs in the same run, and its promise\'s value is returned', async () => {
      const { api, calls } = recordingHost();
      const source = 'async function onSay(actor, text) { await null; self.say("later: " + text); return 7; }';
      expect(expectReturned(await sandbox.run(source, 'onSay', ['hi'], {}, api))).to.equal(7);
      expect(calls).to.deep.equal(['say("later: hi")']);
    });

    it('returns JSON primitives; objects and functions come back as null', async () => {
      const { api } = recordingHost();
      expect(expectReturned(await sandbox.run('function f() { return { a: 1 }; }', 'f', [], {}, api))).to.equal(null);
      expect(expectReturned(await sandbox.run('function f() { return () => 1; }', 'f', [], {}, api))).to.equal(null);
      expect(expectReturned(await sandbox.run('function f() { return "text"; }', 'f', [], {}, api))).to.equal('text');
      expect(expectReturned(await sandbox.run('function f() { return 0 / 0; }', 'f', [], {}, api))).to.equal(null);
    });
  });

  describe('errors with their lines', () => {
    it('compile: null for a script that compiles, without running any of it; else the first syntax error and its line', async () => {
      expect(await sandbox.compile('self.say("compiled, not run"); while (true) {}')).to.equal(null);
      const error = await sandbox.compile('function onSay() {\n  let x = ;\n}');
      expect(error?.line).to.equal(2);
      expect(error?.message).to.match(/^SyntaxError: /);
    });

    it('a run of a script that does not compile is a syntax error with its line, and runs nothing', async () => {
      const { api, calls } = recordingHost();
      const error = expectError(await sandbox.run('self.say("top");\nfunction onSay() {\n  return (;\n}', 'onSay', [], {}, api), 'syntax');
      expect(error.line).to.equal(3);
      expect(calls).to.deep.equal([]);
    });

    it('a throw is kind thrown with its message and line; a TypeError of a host function is the script\'s own', async () => {
      const { api } = recordingHost();
      const thrown = expectError(await sandbox.run('\nfunction onSay() {\n\n  throw new Error("the ferry sank");\n}', 'onSay', [], {}, api), 'thrown');
      expect(thrown).to.deep.equal({ kind: 'thrown', message: 'Error: the ferry sank', line: 4 });
      expect(expectError(await sandbox.run('function f() {\n  throw "plain";\n}', 'f', [], {}, api), 'thrown')).to.deep.include({ message: 'plain' });
      const deep = 'function down(n) {\n  if (n === 0) throw new RangeError("at the bottom");\n  return down(n - 1);\n}\nfunction f() { return down(500); }';
      expect(expectError(await sandbox.run(deep, 'f', [], {}, api), 'thrown')).to.deep.equal({ kind: 'thrown', message: 'RangeError: at the bottom', line: 2 });
      const typeError = expectError(await sandbox.run('function f() {\n  every("soon", "bell");\n}', 'f', [], {}, api), 'thrown');
      expect(typeError.message).to.equal("TypeError: every's first argument must be a finite number of seconds");
      expect(typeError.line).to.equal(2);
      expect(expectReturned(await sandbox.run('function f() { try { self.say({}); } catch (e) { return e.name; } }', 'f', [], {}, api))).to.equal('TypeError');
    });
  });

  describe('hostile scripts', () => {
    it('a busy loop is interrupted at cpuMs, and the sandbox runs the next script', async () => {
      expectError(await sandbox.run('function onSay() { while (true) {} }', 'onSay', [], {}, recordingHost().api), 'timeout');
      expectError(await sandbox.run('function onSay() { for (;;) { try { while (true) {} } catch (e) {} } }', 'onSay', [], {}, recordingHost().api), 'timeout');
      await expectUsable(sandbox);
    });

    it('a busy loop ends for its CPU time, not the wall ceiling: the message names cpuMs of CPU time', async () => {
      const error = expectError(await sandbox.run('function onSay() { for (;;) {} }', 'onSay', [], {}, recordingHost().api), 'timeout');
      expect(error.message).to.equal(`The script used more than ${LIMITS.cpuMs} ms of CPU time`);
      expect(sandbox.healthy).to.equal(true);
    });

    it('memory: an allocation within the world\'s memory succeeds, one of all of it or twice it fails as memory', async () => {
      // 8 MiB under: the engine's 5.2 MiB and a margin; all of it, or twice: never, nor if the engine had twice the memory.
      const limits = { ...MEMORY_LIMITS, cpuMs: BOMB_LIMITS.cpuMs };
      const under = limits.memoryBytes - 8 * MiB;
      const roomy = await fresh(limits);
      expect(expectReturned(await roomy.run(`function f() { return new ArrayBuffer(${under}).byteLength; }`, 'f', [], {}, recordingHost().api))).to.equal(under);
      await expectUsable(roomy);
      for (const bytes of [limits.memoryBytes, 2 * limits.memoryBytes]) {
        const tight = await fresh(limits);
        expectError(await tight.run(`function f() { return new ArrayBuffer(${bytes}).byteLength; }`, 'f', [], {}, recordingHost().api), 'memory');
        expect(tight.healthy).to.equal(false);
      }
    });

    it('an endless chain of promise jobs ends at cpuMs', async () => {
      expectError(await sandbox.run('function again() { Promise.resolve().then(again); } function onSay() { again(); }', 'onSay', [], {}, recordingHost().api), 'timeout');
      await expectUsable(sandbox);
    });

    it('a built-in that never checks the interrupt (join of a huge sparse array) is killed with its thread; a new sandbox runs', async () => {
      const victim = await fresh();
      expectError(await victim.run('function onSay() { return new Array(1e9).join("").length; }', 'onSay', [], {}, recordingHost().api), 'timeout');
      expect(victim.healthy).to.equal(false);
      await victim.run('1', 'f', [], {}, recordingHost().api).then(() => expect.fail('ran'), (error: Error) => expect(error.message).to.match(/broken or disposed/));
      await expectUsable(await fresh());
    });

    it('a host function called in a tight loop ends the run at cpuMs, the host\'s CPU time counted', async () => {
      let calls = 0;
      const { api } = recordingHost({
        characters: () => {
          calls += 1;
          // 10 ms of the main thread's CPU per call.
          const start = process.threadCpuUsage();
          for (let used = process.threadCpuUsage(start); used.user + used.system < 10_000; used = process.threadCpuUsage(start));
          return [];
        },
      });
      expectError(await sandbox.run('function onSay() { for (;;) { try { room.characters(); } catch (e) {} } }', 'onSay', [], {}, api), 'timeout');
      expect(calls).to.be.within(1, LIMITS.cpuMs / 10 + 1);
      await expectUsable(sandbox);
    });

    it('a say flood in a tight loop, catching everything, still ends at cpuMs', async () => {
      let says = 0;
      const { api } = recordingHost({ say: () => void (says += 1) });
      expectError(await sandbox.run('function onSay() { for (;;) { try { self.say("spam"); } catch (e) {} } }', 'onSay', [], {}, api), 'timeout');
      expect(says).to.be.greaterThan(0);
      await expectUsable(sandbox);
    });

    for (const [bomb, source] of [
      ['string doubling', 'function onSay() { let s = "x"; for (;;) { s += s; s = s.split("").join(""); } }'],
      ['an array of objects', 'function onSay() { const all = []; for (;;) all.push({ n: all.length, of: [all.length] }); }'],
      ['an array of objects, out of memory caught', 'function onSay() { const all = []; try { for (;;) all.push({ n: all.length }); } catch (e) { all.length = 0; return "survived"; } }'],
      ['a big ArrayBuffer', 'function onSay() { return new ArrayBuffer(64 * 1024 * 1024).byteLength; }'],
      ['typed arrays', 'function onSay() { const all = []; for (;;) all.push(new Uint8Array(1024 * 1024)); }'],
    ] as const) {
      it(`a memory bomb (${bomb}) ends for lack of memory, within the world's memory, and the broken sandbox is replaced`, async () => {
        const bombed = await fresh(BOMB_LIMITS);
        expectError(await bombed.run(source, 'onSay', [], {}, recordingHost().api), 'memory');
        expect(bombed.healthy).to.equal(false);
      });
    }

    it('after the memory bombs a new sandbox runs', async () => {
      await expectUsable(await fresh(BOMB_LIMITS));
    });

    it('deep recursion ends as a limit (stack overflow), through functions, getters, toString and the parser alike', async () => {
      const { api } = recordingHost();
      for (const source of [
        'function down(n) { return down(n + 1) + 1; } function onSay() { return down(0); }',
        'const o = { get deep() { return o.deep; } }; function onSay() { return o.deep; }',
        'const o = {}; o.toString = function () { return String(this); }; function onSay() { return String(o); }',
        'function onSay() { return eval("(".repeat(5000) + "1" + ")".repeat(5000)); }',
        'function onSay() { return [1].map(onSay); }',
      ]) {
        const error = expectError(await sandbox.run(source, 'onSay', [], {}, api), 'limit');
        expect(error.message).to.match(/stack overflow/);
        await expectUsable(sandbox);
      }
    });

    it('no host object is reachable: the globals are the standard built-ins and the script API, and Function reaches only them', async () => {
      const { api } = recordingHost();
      const standard = [
        'AggregateError', 'Array', 'ArrayBuffer', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean', 'DataView', 'Date', 'Error',
        'EvalError', 'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Infinity', 'Int16Array', 'Int32Array',
        'Int8Array', 'InternalError', 'Iterator', 'JSON', 'Map', 'Math', 'NaN', 'Number', 'Object', 'Promise', 'Proxy', 'RangeError',
        'ReferenceError', 'Reflect', 'RegExp', 'Set', 'SharedArrayBuffer', 'String', 'Symbol', 'SyntaxError', 'TypeError', 'URIError',
        'Uint16Array', 'Uint32Array', 'Uint8Array', 'Uint8ClampedArray', 'WeakMap', 'WeakRef', 'WeakSet', 'decodeURI', 'decodeURIComponent',
        'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt', 'undefined', 'unescape',
      ];
      const globals = expectReturned(await sandbox.run('function f() { return Reflect.ownKeys(globalThis).map(String).sort().join(","); }', 'f', [], {}, api));
      expect(String(globals).split(',')).to.have.members([...standard, 'self', 'room', 'actor', 'state', 'every', 'after', 'cancel', 'random', 'f', 'Symbol(Symbol.toStringTag)']);
      const escapes = `
        function f() {
          const viaSay = self.say.constructor.constructor("return typeof process + typeof require + typeof globalThis.process")();
          const viaObject = ({}).constructor.constructor("return this")() === globalThis;
          const viaFunction = Function("return this")() === globalThis;
          const hosts = [typeof process, typeof require, typeof module, typeof fetch, typeof setTimeout, typeof console, typeof WebAssembly, typeof Atomics, typeof host];
          return [viaSay, viaObject, viaFunction, hosts.join(" ")].join("|");
        }`;
      expect(expectReturned(await sandbox.run(escapes, 'f', [], {}, api))).to.equal(
        'undefinedundefinedundefined|true|true|undefined undefined undefined undefined undefined undefined undefined undefined undefined',
      );
    });

    it('what a run changes (prototypes, built-ins, globals, the objects passed in, pending jobs) reaches neither the next run nor the host', async () => {
      const { api, calls } = recordingHost();
      const polluter = `
        Object.prototype.polluted = "yes";
        self.__proto__.fromSelf = "yes";
        actor.__proto__.fromActor = "yes";
        Array.prototype.push = null;
        JSON.parse = () => ({ hijacked: true });
        globalThis.leftBehind = "yes";
        Promise.resolve().then(() => new Promise(() => {}));
        function onSay(actor) { actor.tell = null; self.say = null; new Promise(() => {}); return ({}).polluted; }`;
      expect(expectReturned(await sandbox.run(polluter, 'onSay', [], {}, api))).to.equal('yes');
      const inspector = `
        function onSay(actor) {
          actor.tell("still mine");
          return [typeof ({}).polluted, typeof self.fromSelf, typeof actor.fromActor, typeof [].push, JSON.parse("{}").hijacked, typeof leftBehind].join(",");
        }`;
      expect(expectReturned(await sandbox.run(inspector, 'onSay', [], {}, api))).to.equal('undefined,undefined,undefined,function,,undefined');
      expect(calls).to.deep.equal(['tell("still mine")']);
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
      expect(Object.keys(api.self)).to.deep.equal(['id', 'name', 'say', 'emote', 'move']);
    });

    it('state is read by the realm\'s own JSON.stringify, whatever the script replaced, and cannot be replaced itself', async () => {
      const { api } = recordingHost();
      const source = `
        JSON.stringify = () => '{"forged":true}';
        Object.prototype.toJSON = undefined;
        function onSay() { state.kept = 1; state = { replaced: true }; }`;
      expect(await sandbox.run(source, 'onSay', [], { was: 0 }, api)).to.deep.equal({ ok: true, returned: null, state: { was: 0, kept: 1 } });
    });

    it('a say of a 10 MB string is refused at textCharacters, even when the script catches it and tries again', async () => {
      const { api, calls } = recordingHost();
      const source = `
        function onSay() {
          let text = "0123456789";
          for (let i = 0; i < 20; i++) text += text;
          try { self.say(text); } catch (e) {}
          self.say("after the refusal");
        }`;
      const error = expectError(await sandbox.run(source, 'onSay', [], {}, api), 'limit');
      expect(error.message).to.equal("self.say's text was 10485760 characters long; at most 2000 are taken");
      expect(calls).to.deep.equal([]);
      await expectUsable(sandbox);
    });

    it('a HostRefusal ends the run as a limit, even when the script catches it; any other host error is thrown by run()', async () => {
      let says = 0;
      const refusing = recordingHost({
        say: () => {
          says += 1;
          if (says > 3) throw new HostRefusal('Too many actions in one run (3 at most)');
        },
      });
      const flood = 'function onSay() { for (let i = 0; i < 100; i++) { try { self.say("again"); } catch (e) {} } return true; }';
      expect(expectError(await sandbox.run(flood, 'onSay', [], {}, refusing.api), 'limit').message).to.equal('Too many actions in one run (3 at most)');
      expect(says).to.equal(4);
      const failing = recordingHost({
        say: () => {
          throw new Error('the database is gone');
        },
      });
      await sandbox.run('function onSay() { try { self.say("x"); } catch (e) {} return true; }', 'onSay', [], {}, failing.api).then(() => expect.fail('ran'), (error: Error) => expect(error.message).to.equal('the database is gone'));
      await expectUsable(sandbox);
    });

    it('state past its cap is refused by its size as UTF-8 JSON', async () => {
      const { api } = recordingHost();
      expectError(await sandbox.run('function onSay() { state.big = "x".repeat(20000); }', 'onSay', [], {}, api), 'state_too_large');
      // 9,000 characters but 18,000 bytes.
      expectError(await sandbox.run('function onSay() { state.big = "é".repeat(9000); }', 'onSay', [], {}, api), 'state_too_large');
      expect(expectReturned(await sandbox.run('function onSay() { state.big = "x".repeat(16000); return true; }', 'onSay', [], {}, api))).to.equal(true);
    });

    it('state that is not a plain object as JSON is an error, and its toJSON cannot act', async () => {
      const { api, calls } = recordingHost();
      expect(expectError(await sandbox.run('function onSay() { state.toJSON = () => [1, 2]; }', 'onSay', [], {}, api), 'thrown').message).to.equal('state must stay a plain object');
      expect(expectError(await sandbox.run('function onSay() { state.self = state; }', 'onSay', [], {}, api), 'thrown').message).to.match(/^state cannot be saved as JSON: TypeError/);
      expectError(await sandbox.run('function onSay() { state.toJSON = () => { self.say("from toJSON"); return {}; }; }', 'onSay', [], {}, api), 'thrown');
      expectError(await sandbox.run('function onSay() { state.toJSON = () => { for (;;) {} }; }', 'onSay', [], {}, api), 'thrown');
      expect(calls).to.deep.equal([]);
      await expectUsable(sandbox);
    });

    it('a thrown value whose message never returns still ends the run, as thrown', async () => {
      const { api } = recordingHost();
      expectError(await sandbox.run('function onSay() { throw { get message() { for (;;) {} } }; }', 'onSay', [], {}, api), 'thrown');
      expectError(await sandbox.run('function onSay() { throw new Proxy({}, { get() { self.say("from a trap"); return "x"; } }); }', 'onSay', [], {}, api), 'thrown');
      await expectUsable(sandbox);
    });
  });

  describe('compiling', () => {
    it('3,000 nested functions are refused before the engine reads them (they would exhaust its memory), and the sandbox stays', async () => {
      const compiler = await fresh(MEMORY_LIMITS);
      expect(await compiler.compile(NESTED_FUNCTIONS)).to.deep.equal({ message: 'The script nests brackets more than 256 levels deep', line: 1 });
      expect(expectError(await compiler.run(`\n${NESTED_FUNCTIONS}`, 'a', [], {}, recordingHost().api), 'syntax').line).to.equal(2);
      expect(compiler.healthy).to.equal(true);
      // Brackets in strings and comments do not count; 256 levels of code do not break the engine.
      const deepest = 'function f() { return ' + '('.repeat(250) + '1' + ')'.repeat(250) + '; }';
      expect(await compiler.compile(`// ${'{'.repeat(300)}\nconst s = "${'['.repeat(300)}";\n/* ${'('.repeat(300)} */\n${deepest}`)).to.equal(null);
      expect(compiler.healthy).to.equal(true);
    });

    it('3,000 Unicode property classes in a regular expression exhaust the memory alike; without the u flag they compile and the sandbox stays', async () => {
      const compiler = await fresh(MEMORY_LIMITS);
      expect(await compiler.compile(UNICODE_CLASSES.slice(0, -1))).to.equal(null);
      expect(compiler.healthy).to.equal(true);
      expect((await compiler.compile(UNICODE_CLASSES))?.message).to.match(/needs more than this world's 32 MiB of memory to compile/);
      expect(compiler.healthy).to.equal(false);
      expect(await (await fresh(MEMORY_LIMITS)).compile('const letters = /[\\p{L}]+/u;')).to.equal(null);
    });

    it('compiling a 30 KB script 200 times leaves the sandbox healthy and its memory whole', async () => {
      const compiler = await fresh(MEMORY_LIMITS);
      let source = '';
      for (let i = 0; source.length < 30_000; i++) source += `function hook${i}(actor, text) {\n  if (text.includes("w${i}")) self.say(text + [1, 2].map((x) => x * ${i}).join(","));\n  return /ab+c${i}/i.test(text);\n}\n`;
      for (let round = 0; round < 200; round++) expect(await compiler.compile(source)).to.equal(null);
      const under = MEMORY_LIMITS.memoryBytes - 8 * MiB;
      expect(expectReturned(await compiler.run(`function f() { return new ArrayBuffer(${under}).byteLength; }`, 'f', [], {}, recordingHost().api))).to.equal(under);
      expect(compiler.healthy).to.equal(true);
    });

    it('does not block the main thread: host timers fire while a slow compile runs', async () => {
      const compiler = await fresh(MEMORY_LIMITS);
      const ticks: number[] = [];
      const ticking = setInterval(() => ticks.push(performance.now()), 5);
      try {
        // About 100 ms of parsing; the parser never asks the interrupt handler, and the kill comes only at cpuMs and KILL_SLACK_MS of CPU time.
        expect(await compiler.compile('/' + '[\\p{L}]'.repeat(2000) + '/u')).to.equal(null);
      } finally {
        clearInterval(ticking);
      }
      expect(ticks.length, 'host timers fired during the compile').to.be.at.least(2);
    });
  });

  describe('on a starved machine (busy processes on every core)', function () {
    this.timeout(60_000);
    /** A second of CPU per run: a harmless run of a fifth of it takes well over a second of wall time here (the old wall-time stop). */
    const SLOW_LIMITS: SandboxLimits = { ...MEMORY_LIMITS, cpuMs: 1000 };
    const busy: ChildProcess[] = [];
    let slow: WorldSandbox;
    /** Loop iterations the engine makes in a fifth of SLOW_LIMITS.cpuMs, measured before the machine is starved. */
    let fifth = 0;

    before(async () => {
      slow = await fresh(SLOW_LIMITS);
      // The count the script reached when its CPU time ran out, told in steps of 100,000.
      let reached = 0;
      const { api } = recordingHost({ say: (text) => void (reached = Number(text)) });
      expectError(await slow.run('function f() { for (let n = 1; ; n++) if (n % 100000 === 0) self.say(n); }', 'f', [], {}, api), 'timeout');
      fifth = Math.floor(reached / 5);
      expect(fifth).to.be.greaterThan(0);
      for (let i = 0; i < 4; i++) busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
    });

    after(() => {
      for (const child of busy) child.kill('SIGKILL');
    });

    it('a harmless run of a fifth of its CPU time ends well however long it waits for a core', async () => {
      for (let round = 0; round < 3; round++) {
        const outcome = await slow.run(`function f() { let n = 0; while (n < ${fifth}) n++; return n; }`, 'f', [], {}, recordingHost().api);
        expect(expectReturned(outcome)).to.equal(fifth);
      }
      await expectUsable(slow);
    });

    it('harmless one-line runs end well, and the memory bomb ends for lack of memory, not time', async () => {
      const world = await fresh(MEMORY_LIMITS);
      for (let round = 0; round < 20; round++) await expectUsable(world);
      const bomb = 'function onSay() {\n  const hoard = [];\n  for (let i = 0; ; i++) hoard.push(new Array(1000000).fill(i));\n}';
      expectError(await world.run(bomb, 'onSay', [], {}, recordingHost().api), 'memory');
    });
  });

  describe('the sandbox itself', () => {
    it('refuses limits it cannot keep', async () => {
      for (const limits of [{ ...LIMITS, memoryBytes: 8 * 1024 * 1024 }, { ...LIMITS, cpuMs: 0 }, { ...LIMITS, textCharacters: 1.5 }]) {
        let refused: unknown = null;
        await WorldSandbox.create(limits).then((created) => created.dispose(), (error: unknown) => (refused = error));
        expect(refused).to.be.instanceOf(RangeError);
      }
    });

    it('runs one script at a time: a run a host function starts waits for the run that started it', async () => {
      const order: string[] = [];
      let inner: Promise<unknown> | null = null;
      const { api } = recordingHost({
        say: (text) => {
          order.push(`outer says ${text}`);
          inner = sandbox.run('function onSay() { self.say("inner"); }', 'onSay', [], {}, recordingHost({ say: (t) => order.push(`inner says ${t}`) }).api);
        },
      });
      expectReturned(await sandbox.run('function onSay() { self.say("wake the others"); return 1; }', 'onSay', [], {}, api));
      order.push('outer ended');
      await inner;
      expect(order).to.deep.equal(['outer says wake the others', 'outer ended', 'inner says inner']);
      await expectUsable(sandbox);
    });

    it('does not block the main thread while a script runs: a busy loop to its limit lets timers of the host fire', async () => {
      const busy = await fresh();
      const ticks: number[] = [];
      const ticking = setInterval(() => ticks.push(performance.now()), 5);
      try {
        expectError(await busy.run('function onSay() { for (;;) {} }', 'onSay', [], {}, recordingHost().api), 'timeout');
      } finally {
        clearInterval(ticking);
      }
      expect(ticks.length, 'host timers fired during the run').to.be.at.least(2);
    });

    it('a compile takes its turn: one asked for during a run is answered after the run', async () => {
      const order: string[] = [];
      let compiled: Promise<unknown> | null = null;
      const { api } = recordingHost({
        say: () => {
          compiled = sandbox.compile('let x = ;').then((error) => order.push(`compiled: ${JSON.stringify(error)}`));
        },
      });
      await sandbox.run('function onSay() { self.say("compile now"); }', 'onSay', [], {}, api);
      order.push('run ended');
      await compiled;
      expect(order).to.have.length(2);
      expect(order[0]).to.equal('run ended');
      expect(order[1]).to.match(/^compiled: \{"message":"SyntaxError: /);
      await expectUsable(sandbox);
    });

    it('a sandbox disposed by a host function during a run ends the run at once', async () => {
      const doomed = await fresh();
      const { api } = recordingHost({ say: () => doomed.dispose() });
      await doomed.run('function onSay() { self.say("bye"); }', 'onSay', [], {}, api).then(() => expect.fail('ran'), (error: Error) => expect(error.message).to.match(/disposed by a host function/));
      expect(doomed.healthy).to.equal(false);
    });

    it('a disposed sandbox refuses to run', async () => {
      const disposed = await fresh();
      disposed.dispose();
      expect(disposed.healthy).to.equal(false);
      await disposed.compile('1').then(() => expect.fail('compiled'), (error: Error) => expect(error.message).to.match(/broken or disposed/));
    });
  });
});
