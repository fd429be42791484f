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
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFreshServer, type FreshServer, repoRoot as root } from '../../scripts/serve-fresh.ts';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const ADMIN = { username: 'fuzz_root', password: 'Quiet-Lantern-42' };
// Nothing listens there: the language-model routes answer their documented fallbacks.
const LLM_URL = 'http://127.0.0.1:9';
const work = mkdtempSync(path.join(tmpdir(), 'mud-fuzz-'));

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

let server: FreshServer | undefined;
let status = 1;
try {
  console.log(`Installing ${SCHEMATHESIS} into a throw-away virtual environment…`);
  const venv = path.join(work, 'venv');
  run('python3', ['-m', 'venv', venv]);
  run(path.join(venv, 'bin/pip'), ['install', '--quiet', '--disable-pip-version-check', SCHEMATHESIS]);

  server = await startFreshServer({
    workDir: work,
    env: {
      MUD_ADMIN_USER: ADMIN.username,
      MUD_ADMIN_PASSWORD: ADMIN.password,
      MUD_TRANSLATION_OLLAMA_URL: LLM_URL,
      MUD_LLM_ALLOWED_SERVER_URLS: LLM_URL,
      // A throw-away server: bcrypt's lowest cost, since thousands of generated registrations,
      // logins and password changes each hash a password.
      MUD_BCRYPT_ROUNDS: '4',
    },
  });
  const login = await fetch(`${server.url}/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  if (!login.ok) throw new Error(`login of the fuzzing superuser failed: ${login.status} ${await login.text()}`);
  const { session_id: token } = (await login.json()) as { session_id: string };

  console.log(`Fuzzing ${server.url} …`);
  const fuzz = spawnSync(
    path.join(venv, 'bin/st'),
    [
      '--config-file', path.join(root, 'test/fuzz/schemathesis.toml'),
      'run', path.join(root, 'openapi.yaml'),
      '--url', server.url,
      '--checks', 'all',
      '--phases', 'examples,coverage,fuzzing',
      '--max-examples', process.env.FUZZ_MAX_EXAMPLES ?? '25',
      '--seed', process.env.FUZZ_SEED ?? '1',
      '--workers', '1',
      // Stopping the server or ending the fuzzer's own session would end the run early.
      '--exclude-operation-id', 'adminStopServer',
      '--exclude-operation-id', 'logout',
    ],
    { stdio: 'inherit', env: { ...process.env, MUD_FUZZ_TOKEN: token, MUD_FUZZ_LLM_URL: LLM_URL, SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: path.join(root, 'test/fuzz') } },
  );
  status = fuzz.status ?? 1;
} catch (err) {
  console.error((err as Error).message);
} finally {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
