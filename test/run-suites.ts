/**
 * `npm test`: the whole suite on SQLite, then the same suite on PostgreSQL when
 * MUD_TEST_DATABASE_URL is set. Prints one `<database>: N passed, N failed` line per run
 * and exits non-zero when any run fails.
 */
import { spawn } from 'node:child_process';

interface Run {
  name: string;
  env: NodeJS.ProcessEnv;
}

const runs: Run[] = [{ name: 'sqlite', env: { MUD_TEST_DB: 'sqlite' } }];
if (process.env.MUD_TEST_DATABASE_URL) runs.push({ name: 'postgresql', env: { MUD_TEST_DB: 'postgres' } });

function runMocha(run: Run): Promise<{ code: number; passed: number; failed: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...process.argv.slice(2)], {
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
      resolve({ code: code ?? 1, passed: count('passing'), failed: count('failing') });
    });
  });
}

let failed = false;
const summary: string[] = [];
for (const run of runs) {
  console.log(`\n=== Test suite on ${run.name} ===`);
  const result = await runMocha(run);
  if (result.code !== 0 || result.passed === 0) failed = true;
  summary.push(`${run.name}: ${result.passed} passed, ${result.failed} failed`);
}
console.log(`\n${summary.join('\n')}`);
process.exit(failed ? 1 : 0);
