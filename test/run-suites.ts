/**
 * `npm test`: the suite on SQLite and, when MUD_TEST_DATABASE_URL is set, on PostgreSQL at the
 * same time (each run's servers have their own database, and most of a run is spent waiting on
 * sockets and timers, so two runs share the machine well). The unit tests and the browser tests
 * (Chromium, TinTin++) do not depend on the database and run once, in the SQLite run, but for
 * the reference's web clients, which read each database's own schema and tables. Output
 * lines carry their run's name; the log ends with one `<database>: N passing, N failing, N
 * pending` line per run, the pending tests of each run counted by the reason they gave
 * (test/reporter.ts), and the totals in TAP's summary form (`# tests`, `# pass`, `# fail`,
 * `# skip`), which CI logs are read by; exits non-zero when any run fails.
 *
 * Under CI (`CI` set) green must mean every test ran: without MUD_TEST_DATABASE_URL it refuses
 * to start, and a test pending for any reason but running in the other database's run
 * (test/helpers/needs.ts) fails the suite, with a line saying how many and why.
 *
 * Arguments are passed to mocha; files among them replace the default specs in every run.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ELSEWHERE } from './helpers/needs.ts';

interface Run {
  name: string;
  env: NodeJS.ProcessEnv;
  specs: string[];
}

const args = process.argv.slice(2);
const files = args.filter((arg) => arg.endsWith('.ts'));
const options = args.filter((arg) => !arg.endsWith('.ts'));
const integration = ['test/integration/**/*.test.ts'];
const everything = ['test/unit/**/*.test.ts', ...integration, 'test/browser/**/*.test.ts'];
const onEveryDatabase = [...integration, 'test/browser/reference-clients.test.ts'];

if (process.env.CI && !process.env.MUD_TEST_DATABASE_URL) {
  console.error('CI runs the suite on PostgreSQL too, but MUD_TEST_DATABASE_URL is not set (the tests of several instances, workers and nginx need it): start PostgreSQL and set it, e.g. postgres://postgres@127.0.0.1:5432/test');
  process.exit(1);
}

const runs: Run[] = [{ name: 'sqlite', env: { MUD_TEST_DB: 'sqlite' }, specs: files.length > 0 ? files : everything }];
if (process.env.MUD_TEST_DATABASE_URL) runs.push({ name: 'postgresql', env: { MUD_TEST_DB: 'postgres' }, specs: files.length > 0 ? files : onEveryDatabase });

interface Outcome {
  code: number;
  passed: number;
  failed: number;
  pending: number;
  /** Pending tests by the reason they gave. */
  reasons: Array<{ count: number; reason: string }>;
}

/**
 * Node's cache of compiled modules, shared by both runs and every server process the tests
 * start: each `mud-server` child otherwise compiles the whole server again, about a second of CPU.
 */
const compileCache = process.env.NODE_COMPILE_CACHE ?? path.join(tmpdir(), 'mud-server-test-compile-cache');

// Colours only for a terminal: a log file keeps plain text.
const colour = process.stdout.isTTY ? [] : ['--no-color'];

/** Writes a run's output line by line, each line tagged with the run, so two runs' lines interleave readably. */
function tagged(run: Run, sink: NodeJS.WriteStream): { write(chunk: Buffer): void; flush(): void } {
  let partial = '';
  const prefix = runs.length > 1 ? `[${run.name}] ` : '';
  return {
    write(chunk) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop()!;
      if (lines.length > 0) sink.write(lines.map((line) => prefix + line + '\n').join(''));
    },
    flush() {
      if (partial) sink.write(prefix + partial + '\n');
      partial = '';
    },
  };
}

function runMocha(run: Run): Promise<Outcome> {
  return new Promise((resolve) => {
    // The options of .mocharc.json, given here so that each run names its own specs.
    const mocha = ['--no-config', '--extension', 'ts', '--timeout', '30000', '--reporter', 'test/reporter.ts', ...colour, ...options, ...run.specs];
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...mocha], {
      stdio: ['inherit', 'pipe', 'pipe'],
      env: { ...process.env, NODE_COMPILE_CACHE: compileCache, ...run.env },
    });
    const out = tagged(run, process.stdout);
    const err = tagged(run, process.stderr);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out.write(chunk);
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => err.write(chunk));
    child.on('close', (code) => {
      out.flush();
      err.flush();
      const count = (word: string): number => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
      const reasons = [...output.matchAll(/^ {2}pending: (\d+) (.+)$/gm)].map((m) => ({ count: Number(m[1]), reason: m[2]! }));
      resolve({ code: code ?? 1, passed: count('passing'), failed: count('failing'), pending: count('pending'), reasons });
    });
  });
}

console.log(`=== Test suite on ${runs.map((run) => run.name).join(' and ')} ===`);
const results = await Promise.all(runs.map(runMocha));
let failed = false;
const summary: string[] = [];
const total = { passed: 0, failed: 0, pending: 0 };
results.forEach((result, i) => {
  if (result.code !== 0 || result.passed === 0) failed = true;
  summary.push(`${runs[i]!.name}: ${result.passed} passing, ${result.failed} failing, ${result.pending} pending`);
  for (const { count, reason } of result.reasons) {
    const refused = process.env.CI && !ELSEWHERE.includes(reason);
    if (refused) failed = true;
    summary.push(`  pending: ${count} ${reason}${refused ? ' (CI must run these: this fails the run)' : ''}`);
  }
  total.passed += result.passed;
  total.failed += result.failed;
  total.pending += result.pending;
});
const tests = total.passed + total.failed + total.pending;
console.log(`\n${summary.join('\n')}\n# tests ${tests}\n# pass ${total.passed}\n# fail ${total.failed}\n# skip ${total.pending}`);
process.exit(failed ? 1 : 0);
