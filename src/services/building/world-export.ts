/**
 * A world as it now is (package + builders' changes + where its items are), written back in
 * the package format (`world.json` + `zones/<zone>.json`, scripts as files under `scripts/`),
 * so that a server started on the export serves the same rooms, exits, items, NPCs and scripts;
 * and the check of a package without a server (`mud-server world-check`), which also compiles
 * every script. See docs/decisions.md, "Building worlds" and "Scripts".
 */
import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ItemRow } from '../../db/repositories/build-repository.ts';
import { loadWorld, POLICY_ARTIFACT_FILE, WorldLoadError, type Script, type World } from '../worlds/world-loader.ts';
import { itemDescription, itemName, itemScript, unreachableRooms } from '../worlds/world-overlay.ts';
import type { ScriptCheck } from './build-service.ts';

type Json = Record<string, unknown>;

async function readJson(file: string): Promise<Json> {
  return JSON.parse(await readFile(file, 'utf8')) as Json;
}

/**
 * Writes `world` into `outDir` (which must be empty or missing). `packageDir` is the world's
 * package, whose other keys (policies, translation, axis engine) are kept as they are. Each
 * item row becomes an item of the package placed where it lies (an item held by a character
 * is defined, in world.json, but placed nowhere): rows of one package item keep its id while
 * they share its name and description, others get an id of their own.
 */
export async function exportWorld(world: World, packageDir: string, items: readonly ItemRow[], outDir: string): Promise<{ rooms: number; items: number }> {
  await mkdir(outDir, { recursive: true });
  if ((await readdir(outDir)).length > 0) throw new WorldLoadError(`${outDir}: the export folder must be empty`);
  const rawWorld = await readJson(path.join(packageDir, 'world.json'));
  /** Writes a script as a package file and names it as a `script` key does. */
  const scriptFile = async (script: Script | null, kind: string, id: string): Promise<{ script?: string }> => {
    if (!script) return {};
    const file = path.join('scripts', kind, `${id}.js`);
    await mkdir(path.join(outDir, 'scripts', kind), { recursive: true });
    await writeFile(path.join(outDir, file), script.source);
    return { script: file.split(path.sep).join('/') };
  };

  const definitions = new Map<string, { name: string; description: string; script: string | null }>();
  const placed = new Map<string, string[]>();
  const zoneItems = new Map<string, Json>();
  const globalItems: Json = {};
  for (const row of items) {
    const script = itemScript(world, row);
    const definition = { name: itemName(world, row), description: itemDescription(world, row), script: script?.source ?? null };
    let id = row.itemId;
    const known = definitions.get(id);
    if (known && (known.name !== definition.name || known.description !== definition.description || known.script !== definition.script)) id = `${row.itemId}_${row.id}`;
    const entry = { id, name: definition.name, description: definition.description, ...(definitions.has(id) ? {} : await scriptFile(script, 'items', id)) };
    if (!definitions.has(id)) {
      definitions.set(id, definition);
      const zoneId = row.roomId === null ? undefined : world.rooms.get(row.roomId)?.zoneId;
      if (zoneId === undefined) globalItems[id] = entry;
      else zoneItems.set(zoneId, { ...(zoneItems.get(zoneId) ?? {}), [id]: entry });
    }
    if (row.roomId !== null && world.rooms.has(row.roomId)) placed.set(row.roomId, [...(placed.get(row.roomId) ?? []), id]);
  }

  await mkdir(path.join(outDir, 'zones'));
  for (const zone of world.zones.values()) {
    const rawZone = await readJson(path.join(packageDir, 'zones', `${zone.id}.json`));
    const rooms: Json = {};
    for (const roomId of zone.roomIds) {
      const room = world.rooms.get(roomId)!;
      // Exits name `zone:room` across zones, as package authors write them.
      const exits = Object.fromEntries(Object.entries(room.exits).map(([direction, target]) => {
        const targetZone = world.rooms.get(target)!.zoneId;
        return [direction, targetZone === zone.id ? target : `${targetZone}:${target}`];
      }));
      rooms[roomId] = { id: roomId, name: room.name, description: room.description, exits, items: placed.get(roomId) ?? [], ...(await scriptFile(room.script, 'rooms', roomId)) };
    }
    // An NPC is written in the zone of its home room.
    const npcs: Json = {};
    for (const npc of world.npcs.values()) {
      if (world.rooms.get(npc.roomId)?.zoneId !== zone.id) continue;
      npcs[npc.id] = { id: npc.id, name: npc.name, description: npc.description, room: npc.roomId, ...(await scriptFile(npc.script, 'npcs', npc.id)) };
    }
    const out = { ...rawZone, id: zone.id, name: zone.name, description: zone.description, spawn_room: zone.spawnRoom, rooms, items: zoneItems.get(zone.id) ?? {}, npcs };
    await writeFile(path.join(outDir, 'zones', `${zone.id}.json`), `${JSON.stringify(out, null, 2)}\n`);
  }
  // Package items no row uses any more (all deleted) are left out with them.
  const out = { ...rawWorld, zones: [...world.zones.keys()], global_items: globalItems };
  await writeFile(path.join(outDir, 'world.json'), `${JSON.stringify(out, null, 2)}\n`);
  if (world.policyArtifactPath) await copyFile(world.policyArtifactPath, path.join(outDir, POLICY_ARTIFACT_FILE));
  return { rooms: world.rooms.size, items: items.filter((i) => i.roomId !== null).length };
}

/** Every script of a package, with the key that names it (for messages that name file, key and line). */
function packageScripts(world: World): Array<{ key: string; script: Script }> {
  return [
    ...[...world.rooms.values()].map((room) => ({ key: `rooms.${room.id}.script`, script: room.script })),
    ...[...world.items.values()].map((item) => ({ key: `items.${item.id}.script`, script: item.script })),
    ...[...world.npcs.values()].map((npc) => ({ key: `npcs.${npc.id}.script`, script: npc.script })),
  ].filter((entry): entry is { key: string; script: Script } => entry.script !== null);
}

/**
 * Keys the check found wrong, one message each naming file and key (and line, for a script that
 * does not compile with `compile`); empty: the package is sound. Rooms no walk from the default
 * spawn reaches are `warnings`: the server loads such a package, and builders may leave rooms so
 * (an `@unexit`), so the check tells of them without failing it.
 */
export async function checkWorldPackage(dir: string, compile: ScriptCheck): Promise<{ world: World | null; problems: string[]; warnings: string[] }> {
  let world: World;
  try {
    world = await loadWorld(path.resolve(dir));
  } catch (err) {
    if (err instanceof WorldLoadError) return { world: null, problems: [err.message], warnings: [] };
    throw err;
  }
  const problems: string[] = [];
  const warnings = unreachableRooms(world).map((id) => {
    const room = world.rooms.get(id)!;
    return `${path.join(path.resolve(dir), 'zones', `${room.zoneId}.json`)}: rooms.${id}: unreachable from the default spawn room '${world.defaultSpawn.room}'`;
  });
  for (const { key, script } of packageScripts(world)) {
    const error = await compile(script.source);
    if (error) problems.push(`${path.join(path.resolve(dir), script.file ?? '')}${error.line === null ? '' : `:${error.line}`}: ${key}: ${error.message}`);
  }
  return { world, problems, warnings };
}
