/**
 * `npm run clients`: what a client team does with openapi.yaml, automated for CI.
 *
 * In a throw-away directory it generates a Python SDK (openapi-python-client, pinned, in its own
 * virtual environment) and a TypeScript SDK (@hey-api/openapi-ts from node_modules), fails when
 * either generator prints a warning, type-checks the TypeScript flow against the generated SDK,
 * starts a fresh server and runs the same player flow through each SDK (test/clients/flow.py,
 * test/clients/flow-hey-api.ts). Prints one line per step and a summary; exits 1 on any failure.
 *
 * Needs Python >= 3.11 as `python3` (or $PYTHON) and PyPI (or a pip mirror) for the pins below.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { repoRoot, startFreshServer, type FreshServer } from './serve-fresh.ts';

// Pinned so that a generator release cannot turn CI red (or green) on its own; bump on purpose.
const PYTHON_PINS = ['openapi-python-client==0.29.1', 'ruff==0.17.6'];
// openapi-python-client names the package after the output folder when --meta none.
const PYTHON_PACKAGE = 'mud_server_client';

const work = mkdtempSync(path.join(tmpdir(), 'mud-clients-'));
const venv = path.join(work, 'venv');
const venvBin = path.join(venv, 'bin');
const pythonOut = path.join(work, 'python');
const tsOut = path.join(work, 'ts-client');
const spec = path.join(repoRoot, 'openapi.yaml');
const bin = (file: string): string => path.join(repoRoot, 'node_modules', file);

interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
}

class StepFailure extends Error {}

/** Runs a command asynchronously, so the server child's log lines keep being read meanwhile. */
function run(command: string, args: string[], options: SpawnOptions & { capture?: boolean } = {}): Promise<Output> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      ...options,
      stdio: options.capture === false ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function indent(text: string): string {
  return stripVTControlCharacters(text).trimEnd().replace(/^/gm, '    ');
}

/** Fails the step with the command's output when it exited non-zero. */
function expectSuccess(what: string, out: Output): void {
  if (out.code !== 0) throw new StepFailure(`${what} exited with ${out.code}\n${indent(out.stdout + out.stderr)}`);
}

/** Fails the step when a generator printed anything that looks like a warning. */
function expectNoWarnings(what: string, out: Output, pattern: RegExp): void {
  // The output folder is named on the success lines; a temp path must not match by chance.
  const lines = `${out.stdout}\n${out.stderr}`.split('\n').filter((line) => pattern.test(line.replaceAll(work, '<tmp>')));
  if (lines.length > 0) {
    throw new StepFailure(`${what} printed warnings:\n${indent(out.stdout + out.stderr)}`);
  }
}

let server: FreshServer | undefined;
function serverUrl(): string {
  if (!server) throw new StepFailure('the server is not running');
  return server.url;
}

const steps: Array<{ name: string; action: () => Promise<void> }> = [
  {
    name: `Python venv with ${PYTHON_PINS.join(', ')}`,
    action: async () => {
      expectSuccess('python3 -m venv', await run(process.env.PYTHON ?? 'python3', ['-m', 'venv', venv]));
      expectSuccess(
        'pip install',
        await run(path.join(venvBin, 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...PYTHON_PINS]),
      );
    },
  },
  {
    name: 'Generate the Python SDK (openapi-python-client)',
    action: async () => {
      const out = await run(
        path.join(venvBin, 'openapi-python-client'),
        ['generate', '--path', spec, '--output-path', path.join(pythonOut, PYTHON_PACKAGE), '--meta', 'none'],
        // ruff must be on PATH: the generator runs it as a post-hook and warns without it.
        { env: { ...process.env, PATH: `${venvBin}${path.delimiter}${process.env.PATH ?? ''}`, NO_COLOR: '1' } },
      );
      expectSuccess('openapi-python-client', out);
      // Its only quiet-run line is "Generating <path>"; problems come as "Warning(s) encountered",
      // "Error(s) encountered" and per-endpoint "... skipped" lines.
      expectNoWarnings('openapi-python-client', out, /warning|error|skipp/i);
    },
  },
  {
    name: 'Generate the TypeScript SDK (@hey-api/openapi-ts)',
    action: async () => {
      // A config file, because the import extension has no CLI flag: `.ts` lets Node's type
      // stripping load the generated modules as they are, with no build step or bundler.
      const config = path.join(work, 'openapi-ts.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          input: spec,
          output: { path: tsOut, module: { extension: '.ts' } },
          plugins: ['@hey-api/typescript', '@hey-api/sdk', '@hey-api/client-fetch'],
        }),
      );
      const out = await run(process.execPath, [bin('@hey-api/openapi-ts/bin/run.js'), '-f', config, '--no-log-file'], {
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      });
      expectSuccess('openapi-ts', out);
      // Its warnings go to stderr (console.warn) and carry "warning", ❗️ or 🚨.
      expectNoWarnings('openapi-ts', out, /warn|deprecat|❗|🚨|error/i);
      if (out.stderr.trim() !== '') throw new StepFailure(`openapi-ts wrote to stderr:\n${indent(out.stderr)}`);
    },
  },
  {
    name: 'Type-check test/clients/flow-hey-api.ts against the generated SDK (tsc)',
    action: async () => {
      copyFileSync(path.join(repoRoot, 'test/clients/flow-hey-api.ts'), path.join(work, 'flow-hey-api.ts'));
      writeFileSync(path.join(work, 'package.json'), JSON.stringify({ type: 'module', private: true }));
      writeFileSync(
        path.join(work, 'tsconfig.json'),
        JSON.stringify({
          // The project's strict settings; the DOM lib for the fetch client's BodyInit & co.
          extends: path.join(repoRoot, 'tsconfig.json'),
          compilerOptions: { lib: ['es2023', 'dom', 'dom.iterable'], typeRoots: [bin('@types')], types: ['node'] },
          include: ['flow-hey-api.ts', 'ts-client'],
        }),
      );
      expectSuccess('tsc', await run(process.execPath, [bin('typescript/bin/tsc'), '-p', path.join(work, 'tsconfig.json')]));
    },
  },
  {
    name: 'Start a fresh server (src/cli.ts serve, temporary SQLite)',
    action: async () => {
      server = await startFreshServer({ workDir: path.join(work, 'server') });
      console.log(`    listening on ${server.url}`);
    },
  },
  {
    name: 'Python flow (test/clients/flow.py)',
    action: async () => {
      const out = await run(path.join(venvBin, 'python'), [path.join(repoRoot, 'test/clients/flow.py'), serverUrl()], {
        capture: false,
        env: { ...process.env, PYTHONPATH: pythonOut, PYTHONDONTWRITEBYTECODE: '1' },
      });
      expectSuccess('flow.py', out);
    },
  },
  {
    name: 'TypeScript flow (test/clients/flow-hey-api.ts)',
    action: async () => {
      const out = await run(process.execPath, [path.join(work, 'flow-hey-api.ts'), serverUrl()], { capture: false, cwd: work });
      expectSuccess('flow-hey-api.ts', out);
    },
  },
];

async function cleanUp(): Promise<void> {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}

process.once('SIGINT', () => {
  void cleanUp().finally(() => process.exit(130));
});

const started = Date.now();
const results: string[] = [];
let failed = false;
for (const [index, step] of steps.entries()) {
  const label = `[${index + 1}/${steps.length}] ${step.name}`;
  if (failed) {
    results.push(`  skip  ${step.name}`);
    continue;
  }
  console.log(`${label} …`);
  const t0 = Date.now();
  try {
    await step.action();
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    console.log(`${label}: ok (${seconds}s)`);
    results.push(`  ok    ${step.name} (${seconds}s)`);
  } catch (err) {
    failed = true;
    const message = err instanceof Error ? err.message : String(err);
    console.error(`${label}: FAILED\n${message}`);
    results.push(`  FAIL  ${step.name}`);
  }
}
await cleanUp();

const total = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\nClient SDK checks (${total}s):\n${results.join('\n')}`);
console.log(failed ? 'Client SDK checks FAILED' : `Client SDK checks passed: all ${steps.length} steps`);
process.exit(failed ? 1 : 0);
