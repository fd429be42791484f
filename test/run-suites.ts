/**
 * `npm test`: the whole suite on SQLite, then the same suite on PostgreSQL when
 * MUD_TEST_DATABASE_URL is set. Ends with one `<database>: N passing, N failing, N pending`
 * line per run and the totals in TAP's summary form (`# tests`, `# pass`, `# fail`, `# skip`),
 * which CI logs are read by; exits non-zero when any run fails.
 */
import { spawn } from 'node:child_process';

interface Run {
  name: string;
  env: NodeJS.ProcessEnv;
}

const runs: Run[] = [{ name: 'sqlite', env: { MUD_TEST_DB: 'sqlite' } }];
if (process.env.MUD_TEST_DATABASE_URL) runs.push({ name: 'postgresql', env: { MUD_TEST_DB: 'postgres' } });

interface Outcome {
  code: number;
  passed: number;
  failed: number;
  pending: number;
}

// Colours only for a terminal: a log file keeps plain text.
const colour = process.stdout.isTTY ? [] : ['--no-color'];

function runMocha(run: Run): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...colour, ...process.argv.slice(2)], {
      stdio: ['inherit', 'pipe', 'inherit'],
      env: { ...process.env, ...run.env },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
    });
    child.on('close', (code) => {
      const count = (word: string): number => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
      resolve({ code: code ?? 1, passed: count('passing'), failed: count('failing'), pending: count('pending') });
    });
  });
}

let failed = false;
const summary: string[] = [];
const total = { passed: 0, failed: 0, pending: 0 };
for (const run of runs) {
  console.log(`\n=== Test suite on ${run.name} ===`);
  const result = await runMocha(run);
  if (result.code !== 0 || result.passed === 0) failed = true;
  summary.push(`${run.name}: ${result.passed} passing, ${result.failed} failing, ${result.pending} pending`);
  total.passed += result.passed;
  total.failed += result.failed;
  total.pending += result.pending;
}
const tests = total.passed + total.failed + total.pending;
console.log(`\n${summary.join('\n')}\n# tests ${tests}\n# pass ${total.passed}\n# fail ${total.failed}\n# skip ${total.pending}`);
process.exit(failed ? 1 : 0);
