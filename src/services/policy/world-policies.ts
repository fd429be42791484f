/**
 * Policies shipped inside world packages: a world whose package holds a publish artifact
 * and whose scope has no activations yet gets it imported (and activated) at start-up, so a
 * fresh install has real policy data. Several instances doing this at once converge: the
 * later import finds every row unchanged.
 */
import { readFile } from 'node:fs/promises';
import type { Logger } from '../../logging/logger.ts';
import type { PolicyRepository } from '../../db/repositories/policy-repository.ts';
import { DomainError } from '../../shared/errors.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import { WorldLoadError } from '../worlds/world-loader.ts';
import { parseJson } from '../../shared/canonical-json.ts';
import type { ImportService } from './import-service.ts';

export const PACKAGE_IMPORTER = 'world-package';

/** Reads an artifact file, keeping `1.0` apart from `1` so its hashes verify. */
export async function readArtifact(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new WorldLoadError(`${file}: file is missing or unreadable`);
  }
  let artifact: unknown;
  try {
    artifact = parseJson(text);
  } catch (err) {
    throw new WorldLoadError(`${file}: invalid JSON (${(err as Error).message})`);
  }
  if (typeof artifact !== 'object' || artifact === null || Array.isArray(artifact)) throw new WorldLoadError(`${file}: a policy artifact must be a JSON object`);
  return artifact as Record<string, unknown>;
}

export async function importWorldPolicies(worlds: WorldCatalog, repo: PolicyRepository, importer: ImportService, logger: Logger): Promise<void> {
  for (const world of worlds.list()) {
    if (!world.policyArtifactPath || (await repo.hasActivations(world.id))) continue;
    const artifact = await readArtifact(world.policyArtifactPath);
    let result;
    try {
      result = await importer.importArtifact(artifact, true, PACKAGE_IMPORTER, world.id);
    } catch (err) {
      // A shipped artifact that fails its own integrity checks is a broken package.
      throw new WorldLoadError(`${world.policyArtifactPath}: ${err instanceof DomainError ? err.message : String(err)}`);
    }
    const summary = { world: world.id, imported: result.imported_count, activated: result.activated_count, errors: result.error_count };
    if (result.error_count > 0) {
      logger.warn('World policy artifact imported with errors', { ...summary, entries: result.entries.filter((e) => e.action === 'error') });
    } else {
      logger.info('Imported the world package policy artifact', summary);
    }
  }
}
