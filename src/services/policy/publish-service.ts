/**
 * Publish, as the reference server does it: a deterministic manifest of a scope's effective
 * variants, recorded as a publish run, and an exchange artifact written under the exports root.
 * Timestamps of the run are not hashed, so publishing unchanged state gives equal hashes.
 *
 * An artifact holds every effective variant, so it can be tens of megabytes: it is hashed and
 * written piece by piece with other requests served in between, never built as one string,
 * and refused past `maxArtifactBytes`. Each publish then applies the retention: the newest
 * `maxArtifactsPerScope` artifacts per scope folder, and the `maxClientProfilesPerWorld` most
 * recently published client folders per world. Instances sharing one exports root take turns
 * (a lock per world in the database) from recording the run to the end of the retention, so
 * none prunes what another has just written and latest.json names the last run recorded.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { PolicyRepository, VariantRecord } from '../../db/repositories/policy-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { Failure, NotFound, Unprocessable, type DomainError } from '../../shared/errors.ts';
import { canonicalPieces, payloadHash, payloadHashAsync } from '../../shared/canonical-json.ts';
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

export function variantsHash(variants: unknown[]): Promise<string> {
  return payloadHashAsync({ variants });
}

/** The hash of an artifact: over every key it has except `artifact_hash` itself. */
export function artifactHash(artifact: Record<string, unknown>): Promise<string> {
  const { artifact_hash: _ignored, ...rest } = artifact;
  return payloadHashAsync(rest);
}

/** `world`, or `client_<profile>` with unsafe characters folded to `_`. */
export function scopeSegment(clientProfile: string): string {
  if (clientProfile === '') return 'world';
  const safe = clientProfile.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._]+|[._]+$/g, '');
  return safe === '' ? 'client' : `client_${safe}`;
}

const ARTIFACT_FILE = /^publish_[0-9a-f]{64}\.json$/;
const CLIENT_FOLDER = /^client(_|$)/;

/** A staged file would have been larger than allowed. */
class TooLarge extends Error {}

/**
 * Where files are written before they are renamed into place: beside the world folders, so that
 * no retention (another instance's included) removes a file while it is being written.
 */
const STAGING = '.staging';

/**
 * Writes `value` as indented canonical JSON plus a newline, piece by piece, into a new temporary
 * file under `root`'s staging folder and returns its path (renaming it over its destination
 * then never shows a reader half a file). Throws TooLarge, leaving no file, past `maxBytes`.
 */
async function stage(root: string, name: string, value: unknown, maxBytes = Infinity): Promise<string> {
  await mkdir(path.join(root, STAGING), { recursive: true });
  // Unique across processes and hosts sharing the exports root.
  const temp = path.join(root, STAGING, `${name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let bytes = 1; // the final newline
  try {
    const handle = await open(temp, 'w');
    try {
      for (const piece of canonicalPieces(value, true, 1024 * 1024)) {
        bytes += Buffer.byteLength(piece);
        if (bytes > maxBytes) throw new TooLarge();
        await handle.write(piece);
      }
      await handle.write('\n');
    } finally {
      await handle.close();
    }
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  return temp;
}

/** The path and the system error go to the log, not to the client. */
function writeError(cause: unknown): DomainError {
  return policyError(Failure, 'POLICY_PUBLISH_ARTIFACT_WRITE_ERROR', 'Failed to write the publish artifact.', cause);
}

/** `names` in `dir`, newest first by the modification time of the file `stamp` names (missing: oldest). */
async function newestFirst(dir: string, names: string[], stamp: (name: string) => string): Promise<string[]> {
  const dated = await Promise.all(
    names.map(async (name) => ({ name, time: (await stat(path.join(dir, stamp(name))).catch(() => null))?.mtimeMs ?? 0 })),
  );
  return dated.sort((a, b) => b.time - a.time || compareText(a.name, b.name)).map((d) => d.name);
}

export interface PublishOptions {
  exportsRoot: string;
  maxArtifactBytes: number;
  maxArtifactsPerScope: number;
  maxClientProfilesPerWorld: number;
}

export class PublishService {
  private readonly repo: PolicyRepository;
  private readonly policies: PolicyService;
  private readonly exportsRoot: string;
  private readonly maxArtifactBytes: number;
  private readonly maxArtifactsPerScope: number;
  private readonly maxClientProfilesPerWorld: number;
  /** This process's publishes write one at a time (other instances wait on the database lock). */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(repo: PolicyRepository, policies: PolicyService, options: PublishOptions) {
    this.repo = repo;
    this.policies = policies;
    this.exportsRoot = path.resolve(options.exportsRoot);
    this.maxArtifactBytes = options.maxArtifactBytes;
    this.maxArtifactsPerScope = options.maxArtifactsPerScope;
    this.maxClientProfilesPerWorld = options.maxClientProfilesPerWorld;
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
    const artifact = await this.buildArtifact(scope, manifest, variants);
    const done = this.writes.then(() => this.record(scope, manifest, artifact, actor));
    this.writes = done.catch(() => undefined);
    return done;
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

  /**
   * The exchange file: the manifest plus every variant row it names (`rows`, when the caller
   * has read them already), and their hashes.
   */
  async buildArtifact(scope: Scope, manifest: Manifest, rows?: VariantRecord[]): Promise<Record<string, unknown>> {
    rows ??= await this.repo.findVariants(manifest.items.map((i) => ({ policyId: i.policy_id, variant: i.variant })));
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
      variants_hash: await variantsHash(variants),
    };
    artifact.artifact_hash = await artifactHash(artifact);
    return artifact;
  }

  private variantEntry(v: VariantRecord): ArtifactVariant {
    return { ...toManifestItem(v), content: v.content, updated_by: v.updatedBy };
  }

  /** Paths relative to the exports root (`/`-separated): the server's own layout is not shown. */
  private paths(scope: Scope, manifest: Manifest): { dir: string; artifactPath: string; latestPath: string } {
    const dir = path.posix.join('worlds', scope.worldId, scopeSegment(scope.clientProfile));
    return { dir, artifactPath: path.posix.join(dir, `publish_${manifest.manifest_hash}.json`), latestPath: path.posix.join(dir, 'latest.json') };
  }

  private artifactInfo(scope: Scope, manifest: Manifest, artifact: Record<string, unknown>): ArtifactInfo {
    const { artifactPath, latestPath } = this.paths(scope, manifest);
    return { artifact_hash: String(artifact.artifact_hash), artifact_path: artifactPath, latest_path: latestPath };
  }

  private absolute(relative: string): string {
    return path.join(this.exportsRoot, relative);
  }

  /**
   * Stages the artifact file within the size limit (nothing is recorded for one over it), then
   * records the run before the files appear, as the reference does, moves them into place and
   * applies the retention, holding the world's publish lock from the run to the retention.
   */
  private async record(scope: Scope, manifest: Manifest, artifact: Record<string, unknown>, actor: string): Promise<Schemas['PublishResponse']> {
    const { artifactPath } = this.paths(scope, manifest);
    let staged: string;
    try {
      staged = await stage(this.exportsRoot, path.posix.basename(artifactPath), artifact, this.maxArtifactBytes);
    } catch (err) {
      if (!(err instanceof TooLarge)) throw writeError(err);
      throw policyError(
        Unprocessable,
        'POLICY_PUBLISH_ARTIFACT_TOO_LARGE',
        `The publish artifact would be larger than this server's limit of ${this.maxArtifactBytes} bytes.`,
      );
    }
    try {
      const runId = await this.repo.exclusive(`policy-publish:${scope.worldId}`, () => this.place(scope, manifest, artifact, actor, staged));
      return { publish_run_id: runId, manifest, artifact: this.artifactInfo(scope, manifest, artifact) };
    } finally {
      await rm(staged, { force: true });
    }
  }

  /** Records the run, moves the staged artifact into place, points latest.json at it and applies the retention; returns the run id. */
  private async place(scope: Scope, manifest: Manifest, artifact: Record<string, unknown>, actor: string, staged: string): Promise<number> {
    const { dir, artifactPath, latestPath } = this.paths(scope, manifest);
    const runId = await this.repo.insertPublishRun({ worldId: scope.worldId, clientProfile: scope.clientProfile, actor, manifest, createdAt: manifest.generated_at });
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
      artifact_file: path.posix.basename(artifactPath),
      artifact_path: artifactPath,
    };
    try {
      await mkdir(this.absolute(dir), { recursive: true });
      await rename(staged, this.absolute(artifactPath));
      await rename(await stage(this.exportsRoot, 'latest.json', latest), this.absolute(latestPath));
      await this.pruneArtifacts(this.absolute(dir), path.posix.basename(artifactPath));
      await this.pruneClientFolders(path.dirname(this.absolute(dir)), path.posix.basename(dir));
    } catch (err) {
      throw writeError(err);
    }
    return runId;
  }

  /** Keeps the newest artifacts of a scope folder, `written` (the one latest.json names) always. */
  private async pruneArtifacts(dir: string, written: string): Promise<void> {
    const others = (await readdir(dir)).filter((name) => ARTIFACT_FILE.test(name) && name !== written);
    const ordered = await newestFirst(dir, others, (name) => name);
    for (const name of ordered.slice(this.maxArtifactsPerScope - 1)) await rm(path.join(dir, name), { force: true });
  }

  /** Keeps the client-profile folders published most recently (by their latest.json), `current` always. */
  private async pruneClientFolders(worldDir: string, current: string): Promise<void> {
    const entries = await readdir(worldDir, { withFileTypes: true });
    const clients = entries.filter((e) => e.isDirectory() && CLIENT_FOLDER.test(e.name)).map((e) => e.name);
    const others = clients.filter((name) => name !== current);
    const room = this.maxClientProfilesPerWorld - (clients.length - others.length);
    const ordered = await newestFirst(worldDir, others, (name) => path.join(name, 'latest.json'));
    for (const name of ordered.slice(Math.max(0, room))) await rm(path.join(worldDir, name), { recursive: true, force: true });
  }
}
