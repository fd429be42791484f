import { describe, it } from 'mocha';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseJson } from '../../src/shared/canonical-json.ts';
import { artifactHash, variantsHash } from '../../src/services/policy/publish-service.ts';
import { startTestServer } from '../helpers/test-server.ts';
import { sessionFor } from '../helpers/accounts.ts';

const SHIPPED = 'worlds/emberwick/policy-artifact.json';

describe('world package policies', () => {
  it('ships an Emberwick artifact whose hashes verify', async () => {
    const artifact = parseJson(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
    expect(artifact.world_id).to.equal('emberwick');
    expect(await artifactHash(artifact)).to.equal(artifact.artifact_hash);
    expect(await variantsHash(artifact.variants as unknown[])).to.equal(artifact.variants_hash);
    const types = new Set((artifact.variants as Array<{ policy_type: string }>).map((v) => v.policy_type));
    for (const type of ['manifest_bundle', 'axis_bundle', 'descriptor_layer', 'tone_profile', 'registry', 'species_block', 'clothing_block', 'prompt']) {
      expect(types, type).to.include(type);
    }
  });

  it('imports and activates it at first start, and publishing reproduces the shipped manifest', async () => {
    const server = await startTestServer();
    try {
      const imported = server.logs.entries.find((e) => e.message === 'Imported the world package policy artifact');
      expect(imported).to.include({ world: 'emberwick', errors: 0 });
      const shipped = parseJson(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
      expect(imported?.activated).to.equal(shipped.item_count);

      const sid = await sessionFor(server, 'keeper', 'admin');
      const published = await server.post(`/api/policy-publish?session_id=${sid}`, { world_id: 'emberwick' });
      expect(published.status).to.equal(200);
      expect(published.body.manifest.manifest_hash).to.equal(shipped.manifest_hash);
      expect(published.body.artifact.artifact_hash).to.equal(shipped.artifact_hash);
      // The published file is the shipped file, byte for byte.
      const file = path.join(server.config.policy.exportsRoot, published.body.artifact.artifact_path);
      expect(readFileSync(file, 'utf8')).to.equal(readFileSync(SHIPPED, 'utf8'));
      // Worlds without an artifact get no policies.
      const row = await server.db('policy_activations').where({ world_id: 'hollow_spire' }).count({ n: '*' }).first();
      expect(Number(row?.n)).to.equal(0);
    } finally {
      await server.close();
    }
  });
});
