/**
 * One-shot `mud-server` commands as an operator runs them (a child process that exits), with
 * only the MUD_* variables and DATABASE_URL the test gives; and PostgreSQL URLs that put a
 * command into one schema of the test database.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(ROOT, 'src', 'cli.ts');

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(args: string[], env: Record<string, string>): Promise<CommandRun> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('MUD_') && name !== 'DATABASE_URL') clean[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { ...clean, MUD_WORLDS_ROOT: path.join(ROOT, 'worlds'), MUD_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `url` with its connections' search_path set to `schema` (libpq's `options`, which pg reads too). */
export function schemaUrl(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.href;
}
