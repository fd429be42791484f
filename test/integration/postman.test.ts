/**
 * The Postman collection QA imports (postman/mud-server.postman_collection.json): it is what
 * `npm run postman` generates from openapi.yaml today, and its "play" folder, run by newman as
 * a QA person would with nothing but `baseUrl` set, plays a whole game without a failure.
 */
import { readFileSync } from 'node:fs';
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import newman, { type NewmanRunSummary } from 'newman';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { COLLECTION_FILE, PLAY_FOLDER, renderCollection } from '../../scripts/postman.ts';

interface CollectionFile {
  item: Array<{ name: string; item: unknown[] }>;
}

function runNewman(options: newman.NewmanRunOptions): Promise<NewmanRunSummary> {
  return new Promise((resolve, reject) => {
    newman.run(options, (err, summary) => (err ? reject(err) : resolve(summary)));
  });
}

describe('Postman collection', () => {
  it('is fresh: openapi.yaml generates exactly the committed file', async () => {
    const committed = readFileSync(COLLECTION_FILE, 'utf8');
    // A plain equal keeps chai from printing a 750 kB diff; `npm run postman:check` names the line.
    expect(committed === (await renderCollection()), 'committed collection is stale: run `npm run postman`').to.equal(true);
  });

  describe('the play folder, run by newman', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(async () => {
      await server.close();
    });

    it('plays a whole game with every request run and no failure', async () => {
      const collection = JSON.parse(readFileSync(COLLECTION_FILE, 'utf8')) as CollectionFile;
      const play = collection.item[0];
      expect(play?.name, 'first folder').to.equal(PLAY_FOLDER);

      const summary = await runNewman({
        collection: collection as never,
        folder: PLAY_FOLDER,
        // Only baseUrl, as a QA person passes it (`--env-var baseUrl=...`).
        envVar: [{ key: 'baseUrl', value: server.url }],
        reporters: [],
      });

      const failures = summary.run.failures.map((f) => `${f.source?.name ?? '?'}: ${f.error.name}: ${f.error.message}`);
      expect(failures, 'newman failures').to.deep.equal([]);
      const { requests, assertions, testScripts, prerequestScripts } = summary.run.stats;
      expect(requests.total, 'requests run').to.equal(play?.item.length);
      expect(requests.failed, 'requests failed').to.equal(0);
      expect(assertions.failed, 'assertions failed').to.equal(0);
      // Every request has at least one test, so a run that skipped the tests would show here.
      expect(assertions.total, 'assertions run').to.be.at.least(requests.total ?? Infinity);
      expect(testScripts.failed, 'test scripts failed').to.equal(0);
      expect(prerequestScripts.failed, 'pre-request scripts failed').to.equal(0);
      const codes = summary.run.executions.map((e) => `${e.item.name}: ${e.response?.code}`);
      expect(codes.filter((c) => !c.endsWith(': 200')), 'non-200 answers').to.deep.equal([]);
    });
  });
});
