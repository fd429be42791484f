/**
 * Publish retention on two instances sharing one database and one exports folder: publishes
 * take turns through a lock in the database, so neither prunes what the other has just written
 * and latest.json names the last run recorded. PostgreSQL only: SQLite serves one instance.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { twoInstances } from '../helpers/suite-servers.ts';
import { sessionFor } from '../helpers/accounts.ts';

const WORLD = 'emberwick';

describe('publish retention on two instances sharing an exports folder (PostgreSQL)', () => {
  const exportsRoot = mkdtempSync(path.join(tmpdir(), 'mud-exports-'));
  const servers = twoInstances({
    env: { MUD_POLICY_EXPORTS_ROOT: exportsRoot, MUD_POLICY_MAX_CLIENT_PROFILES_PER_WORLD: '1', MUD_POLICY_MAX_ARTIFACTS_PER_SCOPE: '1' },
    postgresOnly: true,
  });
  let sid = '';
  before(async () => {
    const [one] = servers();
    sid = await sessionFor(one, 'publisher', 'admin');
  });
  after(() => {
    rmSync(exportsRoot, { recursive: true, force: true });
  });

  it('concurrent publishes on both instances leave one client folder, whose latest.json names the last run and a file that exists', async () => {
    const [one, two] = servers();
    const worldDir = path.join(exportsRoot, 'worlds', WORLD);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          [one, two][i % 2]!.post('/api/policy-publish?session_id=' + sid, { world_id: WORLD, client_profile: `r${round}p${i}` }),
        ),
      );
      for (const res of answers) expect(res.status, res.text).to.equal(200);
      const last = answers.reduce((a, b) => (a.body.publish_run_id > b.body.publish_run_id ? a : b));
      const clients = readdirSync(worldDir).filter((name) => name.startsWith('client_'));
      expect(clients, `round ${round}`).to.deep.equal([`client_${last.body.manifest.client_profile}`]);
      const latest = JSON.parse(readFileSync(path.join(exportsRoot, last.body.artifact.latest_path), 'utf8'));
      expect(latest.artifact_path).to.equal(last.body.artifact.artifact_path);
      expect(existsSync(path.join(exportsRoot, latest.artifact_path))).to.equal(true);
      const files = readdirSync(path.join(worldDir, clients[0]!));
      expect(files.sort()).to.deep.equal([path.posix.basename(latest.artifact_path), 'latest.json'].sort());
    }
  });
});
