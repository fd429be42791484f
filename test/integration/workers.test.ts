/**
 * `mud-server serve --workers N`: N processes behind one port on PostgreSQL (a database of the
 * test's own), a dead worker replaced, SIGHUP replacing the workers one at a time while every
 * request is answered, SIGTERM stopping them all with exit 0; on SQLite a clear refusal.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import http from 'node:http';
import { startCliServer, throwAwayDatabase, type CliServer, type LogLine } from '../helpers/cli-server.ts';
import { usePostgres } from '../helpers/test-server.ts';

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

  (usePostgres ? describe : describe.skip)('on PostgreSQL', function () {
    // Starting a worker takes seconds on a busy two-core machine, and SIGHUP starts two.
    this.timeout(90_000);
    let db: { url: string; drop: () => Promise<void> };
    let server: CliServer;
    let url = '';
    const workerPids = (): number[] => [...new Set(server.lines.filter(listening).map((l) => Number(l.worker_pid)))].filter(alive);

    before(async () => {
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
