/**
 * A real MUD client for the telnet door's tests: Debian's TinTin++ (`tt++`, package
 * `tintin++`) running in a detached tmux session on a tmux server of its own, typed into with
 * `send-keys` and read with `capture-pane`. `.ci/run` installs both packages; without them the
 * tests are skipped with a message saying so, and fail when `CI` is set (as the Chromium tests do).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Context } from 'mocha';
import { needs } from '../helpers/needs.ts';

const TINTIN_CANDIDATES = [process.env.MUD_TINTIN, '/usr/games/tt++', '/usr/bin/tt++'].filter((p): p is string => Boolean(p));

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** TinTin++'s binary for a test (in its `before`): without it or tmux the test is skipped, saying so, and fails under CI (test/helpers/needs.ts). */
export function tintinFor(ctx: Context): string {
  const tintin = TINTIN_CANDIDATES.find((candidate) => existsSync(candidate));
  needs(ctx, 'TinTin++ (tt++)', tintin !== undefined, 'apt-get install tintin++, or set MUD_TINTIN');
  needs(ctx, 'tmux', onPath('tmux'), 'apt-get install tmux');
  return tintin!;
}

/** One TinTin++ connected to the telnet door, in a 120×50 tmux window. */
export class TintinSession {
  private readonly socket: string;
  private readonly dir: string;

  private constructor(socket: string, dir: string) {
    this.socket = socket;
    this.dir = dir;
  }

  /** `setup`: TinTin++ commands run before the session opens (events, such as those of GMCP or MSSP). */
  static start(tintin: string, port: number, setup: string[] = []): TintinSession {
    const dir = mkdtempSync(path.join(tmpdir(), 'mud-tintin-'));
    const socket = `mud-tintin-${process.pid}-${path.basename(dir)}`;
    writeFileSync(path.join(dir, 'connect.tin'), [...setup, `#session mud 127.0.0.1 ${port}`, ''].join('\n'));
    execFileSync('tmux', ['-L', socket, 'new-session', '-d', '-s', 'mud', '-x', '120', '-y', '50', `${tintin} -G ${path.join(dir, 'connect.tin')}`], {
      cwd: dir,
      env: { ...process.env, HOME: dir },
    });
    return new TintinSession(socket, dir);
  }

  /** Types a line, as a player does, and presses Enter. */
  type(line: string): void {
    execFileSync('tmux', ['-L', this.socket, 'send-keys', '-t', 'mud', '-l', line]);
    execFileSync('tmux', ['-L', this.socket, 'send-keys', '-t', 'mud', 'Enter']);
  }

  /** Everything the window has shown, its scrollback included, wrapped lines joined. */
  screen(): string {
    return execFileSync('tmux', ['-L', this.socket, 'capture-pane', '-p', '-J', '-S', '-', '-t', 'mud'], { encoding: 'utf8' });
  }

  /** Waits until the screen shows `text` (checking every 100 ms), or fails with what it shows. */
  async waitFor(text: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.screen().includes(text)) {
      if (Date.now() > deadline) throw new Error(`TinTin++ did not show '${text}'; its screen:\n${this.screen()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  stop(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    rmSync(this.dir, { recursive: true, force: true });
  }
}
