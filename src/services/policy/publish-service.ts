/**
 * Publish (ref-policy-lab.md §7): a deterministic manifest of a scope's effective variants,
 * recorded as a publish run, and an exchange artifact written under the exports root.
 * Timestamps of the run are not hashed, so publishing unchanged state gives equal hashes.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PolicyRepository, VariantRecord } from '../../db/repositories/policy-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Failure, NotFound } from '../errors.ts';
import { canonicalJsonIndented, payloadHash } from './canonical-json.ts';
import { policyError, scopeFrom, type Scope } from './policy-model.ts';
import { toManifestItem, type PolicyService } from './policy-service.ts';

type Schemas = components['schemas'];
type ManifestItem = Schemas['PublishManifestItem'];
type Manifest = Schemas['PublishManifest'];
type ArtifactInfo = Schemas['PublishArtifactInfo'];

/** A full variant row inside an artifact. */
interface ArtifactVariant extends ManifestItem {
  content: Record<string, unknown>;
  updated_by: string;
  materialized?: boolean;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sortItems<T extends { policy_type: string; namespace: string; policy_key: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => compareText(a.policy_type, b.policy_type) || compareText(a.namespace, b.namespace) || compareText(a.policy_key, b.policy_key));
}

export function itemsHash(items: unknown[]): string {
  return payloadHash({ items });
}

export function manifestHash(worldId: string, clientProfile: string, items: unknown[]): string {
  return payloadHash({ world_id: worldId, client_profile: clientProfile || null, items_hash: itemsHash(items), item_count: items.length });
}

export function variantsHash(variants: unknown[]): string {
  return payloadHash({ variants });
}

/** The hash of an artifact: over every key it has except `artifact_hash` itself. */
export function artifactHash(artifact: Record<string, unknown>): string {
  const { artifact_hash: _ignored, ...rest } = artifact;
  return payloadHash(rest);
}

/** `world`, or `client_<profile>` with unsafe characters folded to `_`. */
export function scopeSegment(clientProfile: string): string {
  if (clientProfile === '') return 'world';
  const safe = clientProfile.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._]+|[._]+$/g, '');
  return safe === '' ? 'client' : `client_${safe}`;
}

/** Writes a file so readers never see half of it: a temporary sibling, then a rename. */
async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, text, 'utf8');
  await rename(temp, file);
}

export class PublishService {
  private readonly repo: PolicyRepository;
  private readonly policies: PolicyService;
  private readonly exportsRoot: string;

  constructor(repo: PolicyRepository, policies: PolicyService, exportsRoot: string) {
    this.repo = repo;
    this.policies = policies;
    this.exportsRoot = path.resolve(exportsRoot);
  }

  async publish(worldId: string, clientProfile: string | null | undefined, actor: string): Promise<Schemas['PublishResponse']> {
    const scope = scopeFrom(worldId, clientProfile);
    await this.policies.assertWorld(scope.worldId);
    const variants = await this.policies.effectiveVariants(
      scope,
      'POLICY_PUBLISH_REFERENCE_MISSING',
      (a) => `Activation references a missing policy variant: ${a.policyId}:${a.variant}`,
    );
    const items = sortItems(variants.map(toManifestItem));
    const generatedAt = this.policies.now();
    const manifest: Manifest = {
      world_id: scope.worldId,
      client_profile: scope.clientProfile || null,
      generated_at: generatedAt,
      item_count: items.length,
      items_hash: itemsHash(items),
      manifest_hash: manifestHash(scope.worldId, scope.clientProfile, items),
      items,
    };
    // The run is recorded before the files are written, as the reference does.
    const runId = await this.repo.insertPublishRun({ worldId: scope.worldId, clientProfile: scope.clientProfile, actor, manifest, createdAt: generatedAt });
    const artifact = await this.writeArtifact(scope, manifest);
    return { publish_run_id: runId, manifest, artifact };
  }

  async getRun(runId: number): Promise<Schemas['PublishRun']> {
    const run = await this.repo.publishRun(runId);
    if (!run) throw policyError(NotFound, 'POLICY_PUBLISH_RUN_NOT_FOUND', `Publish run not found: ${runId}`);
    const stored = run.manifest as Manifest;
    const items = sortItems(stored.items);
    const manifest: Manifest = {
      ...stored,
      world_id: run.worldId,
      client_profile: run.clientProfile || null,
      items,
      items_hash: stored.items_hash || itemsHash(items),
      manifest_hash: stored.manifest_hash || manifestHash(run.worldId, run.clientProfile, items),
    };
    const artifact = await this.buildArtifact({ worldId: run.worldId, clientProfile: run.clientProfile }, manifest);
    return {
      publish_run_id: run.id,
      world_id: run.worldId,
      client_profile: run.clientProfile || null,
      actor: run.actor,
      created_at: run.createdAt,
      manifest,
      artifact: this.artifactInfo({ worldId: run.worldId, clientProfile: run.clientProfile }, manifest, artifact),
    };
  }

  /** The exchange file: the manifest plus every variant row it names, and their hashes. */
  async buildArtifact(scope: Scope, manifest: Manifest): Promise<Record<string, unknown>> {
    const rows = await this.repo.findVariants(manifest.items.map((i) => ({ policyId: i.policy_id, variant: i.variant })));
    const byKey = new Map(rows.map((r) => [`${r.policyId}\u0000${r.variant}`, r]));
    const variants = manifest.items
      .map((item): ArtifactVariant => {
        const row = byKey.get(`${item.policy_id}\u0000${item.variant}`);
        // A historical run may name a variant that has since gone: keep its place, say so.
        return row
          ? { ...this.variantEntry(row), materialized: true }
          : {
              policy_id: item.policy_id,
              policy_type: item.policy_type,
              namespace: item.namespace,
              policy_key: item.policy_key,
              variant: item.variant,
              schema_version: '1.0',
              policy_version: 1,
              status: 'candidate',
              content: {},
              content_hash: item.content_hash,
              updated_at: item.updated_at,
              updated_by: 'unknown',
              materialized: false,
            };
      })
      .sort(
        (a, b) =>
          compareText(a.policy_type, b.policy_type) || compareText(a.namespace, b.namespace) || compareText(a.policy_key, b.policy_key) || compareText(a.variant, b.variant),
      );
    const artifact: Record<string, unknown> = {
      export_schema_version: '1.0',
      policy_authority: 'mud_server',
      mirror_mode: 'non_authoritative',
      world_id: scope.worldId,
      client_profile: scope.clientProfile || null,
      manifest_hash: manifest.manifest_hash,
      items_hash: manifest.items_hash,
      item_count: manifest.item_count,
      items: manifest.items,
      variants,
      variants_hash: variantsHash(variants),
    };
    artifact.artifact_hash = artifactHash(artifact);
    return artifact;
  }

  private variantEntry(v: VariantRecord): ArtifactVariant {
    return { ...toManifestItem(v), content: v.content, updated_by: v.updatedBy };
  }

  private paths(scope: Scope, manifest: Manifest): { dir: string; artifactPath: string; latestPath: string } {
    const dir = path.join(this.exportsRoot, 'worlds', scope.worldId, scopeSegment(scope.clientProfile));
    return { dir, artifactPath: path.join(dir, `publish_${manifest.manifest_hash}.json`), latestPath: path.join(dir, 'latest.json') };
  }

  private artifactInfo(scope: Scope, manifest: Manifest, artifact: Record<string, unknown>): ArtifactInfo {
    const { artifactPath, latestPath } = this.paths(scope, manifest);
    return { artifact_hash: String(artifact.artifact_hash), artifact_path: artifactPath, latest_path: latestPath };
  }

  private async writeArtifact(scope: Scope, manifest: Manifest): Promise<ArtifactInfo> {
    const artifact = await this.buildArtifact(scope, manifest);
    const { artifactPath, latestPath } = this.paths(scope, manifest);
    const latest = {
      policy_authority: 'mud_server',
      mirror_mode: 'non_authoritative',
      world_id: scope.worldId,
      scope: scopeSegment(scope.clientProfile),
      client_profile: scope.clientProfile || null,
      manifest_hash: manifest.manifest_hash,
      items_hash: manifest.items_hash,
      variants_hash: artifact.variants_hash,
      item_count: manifest.item_count,
      artifact_hash: artifact.artifact_hash,
      artifact_file: path.basename(artifactPath),
      artifact_path: path.relative(this.exportsRoot, artifactPath),
    };
    try {
      await writeAtomically(artifactPath, `${canonicalJsonIndented(artifact)}\n`);
      await writeAtomically(latestPath, `${canonicalJsonIndented(latest)}\n`);
    } catch (err) {
      // The path and the system error go to the log, not to the client.
      throw policyError(Failure, 'POLICY_PUBLISH_ARTIFACT_WRITE_ERROR', 'Failed to write the publish artifact.', err);
    }
    return this.artifactInfo(scope, manifest, artifact);
  }
}
