/**
 * `npm test`: the suite on SQLite and, when MUD_TEST_DATABASE_URL is set, on PostgreSQL at the
 * same time (each run's servers have their own database, and most of a run is spent waiting on
 * sockets and timers, so two runs share the machine well). The unit tests and the browser tests
 * (Chromium, TinTin++) do not depend on the database and run once, in the SQLite run. Output
 * lines carry their run's name; the log ends with one `<database>: N passing, N failing, N
 * pending` line per run and the totals in TAP's summary form (`# tests`, `# pass`, `# fail`,
 * `# skip`), which CI logs are read by; exits non-zero when any run fails.
 *
 * Arguments are passed to mocha; files among them replace the default specs in every run.
 */
import { spawn } from 'node:child_process';

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

const runs: Run[] = [{ name: 'sqlite', env: { MUD_TEST_DB: 'sqlite' }, specs: files.length > 0 ? files : everything }];
if (process.env.MUD_TEST_DATABASE_URL) runs.push({ name: 'postgresql', env: { MUD_TEST_DB: 'postgres' }, specs: files.length > 0 ? files : integration });

interface Outcome {
  code: number;
  passed: number;
  failed: number;
  pending: number;
}

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
    const mocha = ['--no-config', '--extension', 'ts', '--timeout', '30000', '--reporter', 'spec', ...colour, ...options, ...run.specs];
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...mocha], {
      stdio: ['inherit', 'pipe', 'pipe'],
      env: { ...process.env, ...run.env },
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
      resolve({ code: code ?? 1, passed: count('passing'), failed: count('failing'), pending: count('pending') });
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
  total.passed += result.passed;
  total.failed += result.failed;
  total.pending += result.pending;
});
const tests = total.passed + total.failed + total.pending;
console.log(`\n${summary.join('\n')}\n# tests ${tests}\n# pass ${total.passed}\n# fail ${total.failed}\n# skip ${total.pending}`);
process.exit(failed ? 1 : 0);
