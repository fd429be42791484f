/**
 * The world-scope hash snapshot, as the reference server takes it: the effective variants as a
 * tree of `<type>/<namespace as folders>/<key>/<variant>.json` entries, hashed as a whole and
 * per folder with the reference's `policy_tree_hash_v1` payloads.
 */
import type { components } from '../../../generated/openapi.d.ts';
import { NotFound } from '../../shared/errors.ts';
import { payloadHash } from '../../shared/canonical-json.ts';
import type { PolicyService } from './policy-service.ts';

type Snapshot = components['schemas']['PolicyHashSnapshot'];

export interface TreeEntry {
  relative_path: string;
  content_hash: string;
}

const byPath = (a: TreeEntry, b: TreeEntry): number => (a.relative_path < b.relative_path ? -1 : a.relative_path > b.relative_path ? 1 : 0);

export function policyTreeHash(entries: TreeEntry[]): string {
  return payloadHash({ hash_version: 'policy_tree_hash_v1', entries: [...entries].sort(byPath) });
}

/** Every ancestor folder of every entry, with the tree hash of the entries below it. */
export function directoryHashes(entries: TreeEntry[]): Snapshot['directories'] {
  const below = new Map<string, TreeEntry[]>();
  for (const entry of entries) {
    const parts = entry.relative_path.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const dir = parts.slice(0, depth).join('/');
      const list = below.get(dir) ?? [];
      list.push(entry);
      below.set(dir, list);
    }
  }
  return [...below.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([dir, list]) => ({ path: dir, file_count: list.length, hash: policyTreeHash(list) }));
}

export async function hashSnapshot(policies: PolicyService, worldId: string): Promise<Snapshot> {
  try {
    await policies.assertWorld(worldId);
  } catch {
    throw new NotFound(`World '${worldId}' not found.`);
  }
  const variants = await policies.effectiveVariants(
    { worldId, clientProfile: '' },
    'POLICY_EFFECTIVE_REFERENCE_MISSING',
    (a) => `Effective activation points to missing policy variant: ${a.policyId}:${a.variant}`,
  );
  const entries = variants
    .map((v) => ({ relative_path: `${v.policyType}/${v.namespace.replaceAll('.', '/')}/${v.policyKey}/${v.variant}.json`, content_hash: v.contentHash }))
    .sort(byPath);
  return {
    hash_version: 'policy_db_snapshot_hash_v2',
    canonical_root: `canonical_db://${worldId}/effective-activations`,
    generated_at: policies.now(),
    file_count: entries.length,
    root_hash: policyTreeHash(entries),
    directories: directoryHashes(entries),
  };
}
