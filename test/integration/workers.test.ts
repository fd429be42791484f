/**
 * `mud-server serve --workers N`: N processes behind one port on PostgreSQL (a database of the
 * test's own), a dead worker replaced (after a pause that doubles while replacements keep dying
 * at start), SIGHUP replacing the workers one at a time while every request is answered,
 * SIGTERM stopping them all with exit 0; on SQLite a clear refusal.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { startCliServer, throwAwayDatabase, type CliServer, type LogLine } from '../helpers/cli-server.ts';
import { usePostgres } from '../helpers/test-server.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

/** GET on a connection of its own (no keep-alive), so each request is a new connection to whichever worker the primary picks. */
function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const listening = (line: LogLine): boolean => line.message === 'Worker listening';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe('serve --workers', () => {
  it('refuses more than one worker on SQLite, naming what to do', async () => {
    const server = startCliServer(['serve', '--workers', '2'], { MUD_DB_PATH: ':memory:' });
    try {
      expect(await server.exited).to.equal(1);
      expect(server.stderr()).to.contain('2 workers need PostgreSQL ([database] url, DATABASE_URL)');
    } finally {
      server.kill();
    }
  });

  describe('on PostgreSQL', function () {
    // Starting a worker takes seconds on a busy two-core machine, and SIGHUP starts two.
    this.timeout(90_000);
    let db: { url: string; drop: () => Promise<void> };
    let server: CliServer;
    let url = '';
    const workerPids = (): number[] => [...new Set(server.lines.filter(listening).map((l) => Number(l.worker_pid)))].filter(alive);

    before(async function () {
      if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
      db = await throwAwayDatabase();
      server = startCliServer(['serve', '--workers', '2'], { DATABASE_URL: db.url, MUD_LOG_LEVEL: 'info' });
      url = String((await server.waitFor((l) => l.message === 'Serving with workers', 60_000)).url);
    });
    after(async () => {
      server?.kill();
      for (const pid of server ? server.lines.filter(listening).map((l) => Number(l.worker_pid)) : []) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await db?.drop();
    });

    it('serves one port from two worker processes, and replaces a worker that dies', async () => {
      const [first, second] = workerPids();
      expect(workerPids()).to.have.length(2);
      expect(await getStatus(`${url}/health`)).to.equal(200);
      const from = server.lines.length;
      process.kill(first!, 'SIGKILL');
      const replacement = await server.waitFor(listening, 30_000, from);
      expect(Number(replacement.worker_pid)).to.not.be.oneOf([first, second]);
      expect(workerPids()).to.have.members([second!, Number(replacement.worker_pid)]);
      for (let i = 0; i < 4; i++) expect(await getStatus(`${url}/health`)).to.equal(200);
    });

    it('SIGHUP replaces every worker one at a time, answering every request meanwhile', async () => {
      const before = workerPids();
      const from = server.lines.length;
      process.kill(server.child.pid!, 'SIGHUP');
      const statuses: number[] = [];
      const done = server.waitFor((l) => l.message === 'Every worker replaced', 60_000, from);
      let finished = false;
      void done.then(() => (finished = true), () => (finished = true));
      while (!finished) statuses.push(await getStatus(`${url}/health`));
      await done;
      expect(statuses.length).to.be.greaterThan(5);
      expect(statuses.filter((s) => s !== 200), `statuses: ${statuses.join(',')}`).to.deep.equal([]);
      const after = workerPids();
      expect(after).to.have.length(2);
      for (const pid of before) expect(after).to.not.include(pid);
    });

    it('replaces a worker that dies at start after a pause that doubles each time, and one that had served at once', async () => {
      const primary = server.child.pid!;
      const children = (): number[] => readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number);
      /** The next worker the primary forks (not one of `known`), as soon as it exists. */
      const nextChild = async (known: number[]): Promise<{ pid: number; at: number }> => {
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(5)) {
          const pid = children().find((child) => !known.includes(child));
          if (pid !== undefined) return { pid, at: Date.now() };
        }
        throw new Error('no worker forked within 30 s');
      };
      const died = (from: number) => server.waitFor((l) => l.message === 'Worker died; starting a replacement', 10_000, from);
      // The older worker, once it is past the start-up grace (5 s from its fork, which came before it listened).
      const oldest = server.lines.filter(listening).find((l) => workerPids().includes(Number(l.worker_pid)))!;
      const survivor = workerPids().find((pid) => pid !== Number(oldest.worker_pid))!;
      await sleep(Date.parse(String(oldest.timestamp)) + 5500 - Date.now());
      let from = server.lines.length;
      process.kill(Number(oldest.worker_pid), 'SIGKILL');
      const delays = [Number((await died(from)).restart_in_ms)];
      // Its replacement dies at once, and so does the next; the one after is left to serve.
      let child = await nextChild([survivor, Number(oldest.worker_pid)]);
      for (let i = 0; i < 2; i++) {
        from = server.lines.length;
        const killedAt = Date.now();
        process.kill(child.pid, 'SIGKILL');
        const delay = Number((await died(from)).restart_in_ms);
        delays.push(delay);
        const next = await nextChild([survivor, child.pid]);
        expect(next.at - killedAt, 'the replacement waited out its pause').to.be.at.least(delay);
        child = next;
      }
      expect(delays).to.deep.equal([0, 500, 1000]);
      await server.waitFor((l) => listening(l) && Number(l.worker_pid) === child.pid, 60_000, from);
      expect(workerPids()).to.have.members([survivor, child.pid]);
    });

    it('SIGTERM stops every worker gracefully and exits 0', async () => {
      const pids = workerPids();
      const from = server.lines.length;
      process.kill(server.child.pid!, 'SIGTERM');
      expect(await server.exited).to.equal(0);
      for (const pid of pids) expect(alive(pid), `worker ${pid}`).to.equal(false);
      expect(server.lines.slice(from).filter((l) => l.message === 'Shutdown complete')).to.have.length(2);
    });
  });
});
