/**
 * `npm run fuzz`: schemathesis against a fresh server, as QA would run it.
 *
 * Installs the pinned schemathesis into a throw-away virtual environment (Python 3 is the only
 * requirement), starts `mud-server serve` on a temporary database with a superuser, logs it in
 * and runs every check with a fixed seed and a bounded number of examples (test/fuzz/schemathesis.toml
 * and hooks.py say what the schema cannot). Exits with schemathesis's status.
 *
 * FUZZ_MAX_EXAMPLES (default 25) and FUZZ_SEED (default 1) tune the run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const ADMIN = { username: 'fuzz_root', password: 'Quiet-Lantern-42' };
const root = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'mud-fuzz-'));

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

/** Starts the server and resolves with its URL once it listens. */
function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(root, 'src/cli.ts'), 'serve'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      MUD_PORT: '0',
      MUD_DB_PATH: path.join(work, 'mud.db'),
      DATABASE_URL: '',
      MUD_POLICY_EXPORTS_ROOT: path.join(work, 'policy-exports'),
      MUD_ADMIN_USER: ADMIN.username,
      MUD_ADMIN_PASSWORD: ADMIN.password,
      MUD_RATE_LIMIT_ENABLED: 'false',
      MUD_LOG_LEVEL: 'info',
      // Nothing listens there: the language-model routes answer their documented fallbacks.
      MUD_TRANSLATION_OLLAMA_URL: 'http://127.0.0.1:9',
      MUD_LLM_ALLOWED_SERVER_URLS: 'http://127.0.0.1:9',
    },
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { level?: string; message?: string; url?: string };
      if (entry.message === 'Server listening' && entry.url) resolve({ child, url: entry.url });
      // Access lines would drown the report; what went wrong on the server still shows.
      else if (entry.level === 'error' || entry.level === 'warn') process.stderr.write(`${line}\n`);
    });
  });
}

let server: ChildProcess | undefined;
let status = 1;
try {
  console.log(`Installing ${SCHEMATHESIS} into a throw-away virtual environment…`);
  const venv = path.join(work, 'venv');
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin/pip'), ['install', '--quiet', '--disable-pip-version-check', SCHEMATHESIS]);

  const started = await startServer();
  server = started.child;
  const login = await fetch(`${started.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  if (!login.ok) throw new Error(`login of the fuzzing superuser failed: ${login.status} ${await login.text()}`);
  const { session_id: token } = (await login.json()) as { session_id: string };

  console.log(`Fuzzing ${started.url} …`);
  const fuzz = spawnSync(
    path.join(venv, 'bin/st'),
    [
      '--config-file', path.join(root, 'test/fuzz/schemathesis.toml'),
      'run', path.join(root, 'openapi.yaml'),
      '--url', started.url,
      '--checks', 'all',
      '--phases', 'examples,coverage,fuzzing',
      '--max-examples', process.env.FUZZ_MAX_EXAMPLES ?? '25',
      '--seed', process.env.FUZZ_SEED ?? '1',
      '--workers', '1',
      // Stopping the server or ending the fuzzer's own session would end the run early.
      '--exclude-operation-id', 'adminStopServer',
      '--exclude-operation-id', 'logout',
    ],
    { stdio: 'inherit', env: { ...process.env, MUD_FUZZ_TOKEN: token, SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: path.join(root, 'test/fuzz') } },
  );
  status = fuzz.status ?? 1;
} catch (err) {
  console.error((err as Error).message);
} finally {
  server?.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
