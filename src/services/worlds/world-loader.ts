/**
 * Reads world packages (`<root>/<world_id>/world.json` + `zones/<zone_id>.json`) into
 * immutable World objects. A broken package is refused with a WorldLoadError whose message
 * names the file and the key, so an operator can fix it without reading code.
 */
import { access, lstat, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';

export const DIRECTIONS = ['north', 'south', 'east', 'west', 'up', 'down'] as const;
export type Direction = (typeof DIRECTIONS)[number];
/** The one-letter short form of each direction, as commands accept it. */
export const SHORT_DIRECTIONS: Readonly<Record<string, Direction>> = { n: 'north', s: 'south', e: 'east', w: 'west', u: 'up', d: 'down' };

export function isDirection(value: string): value is Direction {
  return (DIRECTIONS as readonly string[]).includes(value);
}

/** A direction by its name or short form, in any letter case. */
export function directionNamed(word: string): Direction | undefined {
  const lower = word.toLowerCase();
  return isDirection(lower) ? lower : SHORT_DIRECTIONS[lower];
}

/** A builder's script (docs/decisions.md, "Scripts"): its source and, from a package, its file. */
export interface Script {
  source: string;
  /** The package file it was read from (relative to the package), for errors that name a file and line; null when stored online. */
  file: string | null;
}

export interface Item {
  id: string;
  name: string;
  description: string;
  script: Script | null;
}

/** A non-player character: where it lives (its home room, where it is placed when its world first starts), and its script. */
export interface Npc {
  id: string;
  name: string;
  description: string;
  roomId: string;
  script: Script | null;
  /** Counts builders' changes, as a room's version does. */
  version: number;
}

export interface Room {
  id: string;
  zoneId: string;
  name: string;
  description: string;
  /** Direction → id of the destination room (cross-zone refs already resolved). */
  exits: Partial<Record<Direction, string>>;
  /** Ids of the items placed here when the world is first seeded. */
  items: string[];
  script: Script | null;
  /** Counts builders' changes: 1 as the package has it (docs/decisions.md, "Building worlds"). */
  version: number;
}

export interface Zone {
  id: string;
  name: string;
  description: string;
  spawnRoom: string;
  roomIds: string[];
}

export interface CharacterPolicy {
  accessMode?: 'open' | 'invite';
  namingMode?: 'generated' | 'manual';
  slotLimitPerAccount?: number;
}

export interface World {
  id: string;
  name: string;
  description: string;
  version: string;
  active: boolean;
  defaultSpawn: { zone: string; room: string };
  zones: ReadonlyMap<string, Zone>;
  rooms: ReadonlyMap<string, Room>;
  items: ReadonlyMap<string, Item>;
  npcs: ReadonlyMap<string, Npc>;
  /** Only the keys the package sets; server config fills the rest. */
  characterPolicy: CharacterPolicy;
  /** Raw feature blocks, interpreted by the features that use them. */
  translationLayer: Record<string, unknown> | null;
  axisEngine: Record<string, unknown> | null;
  /** `policy-artifact.json` in the package, imported when the world has no activations yet. */
  policyArtifactPath: string | null;
}

export class WorldLoadError extends Error {}

export const POLICY_ARTIFACT_FILE = 'policy-artifact.json';

async function existingFile(file: string): Promise<string | null> {
  try {
    await access(file);
    return file;
  } catch {
    return null;
  }
}

/** World, zone and builder-made room ids. */
export const WORLD_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/**
 * The bounds of world data, for packages and builders alike. Room and item ids and item names
 * travel in event bus payloads (moves, items taken and dropped), which must stay bounded
 * whatever the data (src/db/event-bus.ts).
 */
export const WORLD_LIMITS = { id: 64, name: 100, description: 1000, scriptBytes: 65536 } as const;
const MAX_ID_LENGTH = WORLD_LIMITS.id;

type Json = Record<string, unknown>;

/** Reads and type-checks values of one JSON file; every failure names the file and key path. */
class Reader {
  readonly file: string;
  constructor(file: string) {
    this.file = file;
  }

  fail(key: string, problem: string): never {
    throw new WorldLoadError(`${this.file}: ${key ? `${key}: ` : ''}${problem}`);
  }

  object(value: unknown, key: string): Json {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.fail(key, 'must be an object');
    return value as Json;
  }

  string(obj: Json, key: string, prefix: string, fallback?: string): string {
    const value = obj[key];
    const where = prefix ? `${prefix}.${key}` : key;
    if (value === undefined && fallback !== undefined) return fallback;
    if (value === undefined) this.fail(where, 'is required');
    if (typeof value !== 'string' || value.trim() === '') this.fail(where, 'must be a non-empty string');
    return value;
  }

  /** A string of at most `max` characters. */
  bounded(obj: Json, key: string, prefix: string, max: number, fallback?: string): string {
    const value = this.string(obj, key, prefix, fallback);
    if ([...value].length > max) this.fail(prefix ? `${prefix}.${key}` : key, `must be at most ${max} characters`);
    return value;
  }

  /** Accepts both shapes the format allows: an object keyed by id, or an array of objects. */
  entries(obj: Json, key: string): Array<[string, Json]> {
    const value = obj[key];
    if (value === undefined) return [];
    if (Array.isArray(value)) {
      return value.map((entry, i) => {
        const o = this.object(entry, `${key}[${i}]`);
        return [this.string(o, 'id', `${key}[${i}]`), o];
      });
    }
    return Object.entries(this.object(value, key)).map(([k, entry]) => [k, this.object(entry, `${key}.${k}`)]);
  }
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new WorldLoadError(`${file}: file is missing or unreadable`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new WorldLoadError(`${file}: invalid JSON (${(err as Error).message})`);
  }
}

/**
 * A `script` key: the path of a JavaScript file in the package (`scripts/ferryman.js`), read
 * here, so a package is whole on disk; it must stay inside the package and be a regular file of
 * at most WORLD_LIMITS.scriptBytes. Null when the key is absent.
 */
async function readScript(r: Reader, raw: Json, where: string, worldDir: string): Promise<Script | null> {
  if (raw.script === undefined) return null;
  const file = r.string(raw, 'script', where);
  const key = `${where ? `${where}.` : ''}script`;
  const resolved = path.resolve(worldDir, file);
  if (!file.endsWith('.js') || path.isAbsolute(file) || !resolved.startsWith(`${path.resolve(worldDir)}${path.sep}`)) r.fail(key, `'${file}' must be the path of a .js file inside the package`);
  const stat = await lstat(resolved).catch(() => null);
  if (!stat?.isFile()) r.fail(key, `'${file}' is missing or not a regular file`);
  if (stat.size > WORLD_LIMITS.scriptBytes) r.fail(key, `'${file}' is larger than ${WORLD_LIMITS.scriptBytes} bytes`);
  return { source: await readFile(resolved, 'utf8'), file: path.relative(worldDir, resolved) };
}

async function readItem(r: Reader, key: string, raw: Json, where: string, worldDir: string): Promise<Item> {
  const id = r.bounded(raw, 'id', where, MAX_ID_LENGTH);
  if (id !== key) r.fail(`${where}.id`, `'${id}' differs from its key '${key}'`);
  return { id, name: r.bounded(raw, 'name', where, WORLD_LIMITS.name), description: r.bounded(raw, 'description', where, WORLD_LIMITS.description), script: await readScript(r, raw, where, worldDir) };
}

function readPolicy(r: Reader, raw: unknown): CharacterPolicy {
  if (raw === undefined) return {};
  const obj = r.object(raw, 'character_policy');
  const policy: CharacterPolicy = {};
  if (obj.access_mode !== undefined) {
    if (obj.access_mode !== 'open' && obj.access_mode !== 'invite') r.fail('character_policy.access_mode', "must be 'open' or 'invite'");
    policy.accessMode = obj.access_mode;
  }
  if (obj.naming_mode !== undefined) {
    if (obj.naming_mode !== 'generated' && obj.naming_mode !== 'manual') r.fail('character_policy.naming_mode', "must be 'generated' or 'manual'");
    policy.namingMode = obj.naming_mode;
  }
  if (obj.slot_limit_per_account !== undefined) {
    const n = obj.slot_limit_per_account;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) r.fail('character_policy.slot_limit_per_account', 'must be a whole number ≥ 0');
    policy.slotLimitPerAccount = n;
  }
  return policy;
}

function optionalBlock(r: Reader, raw: Json, key: string): Record<string, unknown> | null {
  return raw[key] === undefined ? null : r.object(raw[key], key);
}

interface PendingExit {
  reader: Reader;
  where: string;
  room: Room;
  direction: Direction;
  target: string;
}

export async function loadWorld(worldDir: string): Promise<World> {
  const id = path.basename(worldDir);
  const worldFile = path.join(worldDir, 'world.json');
  // Explicit types let TypeScript narrow after the `never`-returning fail() calls.
  const wr: Reader = new Reader(worldFile);
  if (!WORLD_ID.test(id)) wr.fail('', `world folder name '${id}' is not a valid world id (lower-case letters, digits, _ and -)`);
  const raw = wr.object(await readJson(worldFile), '');

  const name = wr.string(raw, 'name', '');
  const description = typeof raw.description === 'string' ? raw.description : '';
  const version = typeof raw.version === 'string' ? raw.version : '0.0.0';
  if (raw.active !== undefined && typeof raw.active !== 'boolean') wr.fail('active', 'must be true or false');
  const active = raw.active !== false;

  const zoneList = raw.zones;
  if (!Array.isArray(zoneList) || zoneList.length === 0) wr.fail('zones', 'must be a non-empty list of zone ids');
  const spawnRaw = wr.object(raw.default_spawn, 'default_spawn');
  const defaultSpawn = { zone: wr.string(spawnRaw, 'zone', 'default_spawn'), room: wr.string(spawnRaw, 'room', 'default_spawn') };

  const items = new Map<string, Item>();
  const itemOrigin = new Map<string, string>();
  for (const [key, itemRaw] of wr.entries(raw, 'global_items')) {
    if (itemOrigin.has(key)) wr.fail(`global_items.${key}`, `duplicate item id '${key}' (already defined in ${worldFile})`);
    items.set(key, await readItem(wr, key, itemRaw, `global_items.${key}`, worldDir));
    itemOrigin.set(key, worldFile);
  }

  const zones = new Map<string, Zone>();
  const rooms = new Map<string, Room>();
  const npcs = new Map<string, Npc>();
  const npcOrigin = new Map<string, string>();
  const homes: Array<{ reader: Reader; where: string; npc: Npc }> = [];
  const roomOrigin = new Map<string, string>();
  const exits: PendingExit[] = [];
  const placements: Array<{ reader: Reader; where: string; itemId: string }> = [];

  for (const [i, zoneId] of zoneList.entries()) {
    if (typeof zoneId !== 'string' || !WORLD_ID.test(zoneId)) wr.fail(`zones[${i}]`, 'must be a zone id (lower-case letters, digits, _ and -)');
    if (zones.has(zoneId)) wr.fail(`zones[${i}]`, `zone '${zoneId}' is listed twice`);
    const zoneFile = path.join(worldDir, 'zones', `${zoneId}.json`);
    const zr: Reader = new Reader(zoneFile);
    const zraw = zr.object(await readJson(zoneFile), '');
    const declared = zr.string(zraw, 'id', '');
    if (declared !== zoneId) zr.fail('id', `'${declared}' differs from the file name '${zoneId}'`);

    const roomIds: string[] = [];
    for (const [key, roomRaw] of zr.entries(zraw, 'rooms')) {
      const where = `rooms.${key}`;
      const roomId = zr.bounded(roomRaw, 'id', where, MAX_ID_LENGTH);
      if (roomId !== key) zr.fail(`${where}.id`, `'${roomId}' differs from its key '${key}'`);
      const previous = roomOrigin.get(roomId);
      if (previous) zr.fail(where, `duplicate room id '${roomId}' (already defined in ${previous})`);
      const room: Room = {
        id: roomId,
        zoneId,
        name: zr.bounded(roomRaw, 'name', where, WORLD_LIMITS.name),
        description: zr.bounded(roomRaw, 'description', where, WORLD_LIMITS.description),
        exits: {},
        items: [],
        script: await readScript(zr, roomRaw, where, worldDir),
        version: 1,
      };
      const exitsRaw = roomRaw.exits === undefined ? {} : zr.object(roomRaw.exits, `${where}.exits`);
      for (const [direction, target] of Object.entries(exitsRaw)) {
        if (!isDirection(direction)) {
          zr.fail(`${where}.exits.${direction}`, `unknown direction (expected one of ${DIRECTIONS.join(', ')})`);
        }
        if (typeof target !== 'string' || target.trim() === '') zr.fail(`${where}.exits.${direction}`, "must be a room id or 'zone:room'");
        exits.push({ reader: zr, where: `${where}.exits.${direction}`, room, direction: direction as Direction, target });
      }
      const itemList = roomRaw.items ?? [];
      if (!Array.isArray(itemList)) zr.fail(`${where}.items`, 'must be a list of item ids');
      for (const [j, itemId] of itemList.entries()) {
        if (typeof itemId !== 'string') zr.fail(`${where}.items[${j}]`, 'must be an item id');
        room.items.push(itemId);
        placements.push({ reader: zr, where: `${where}.items[${j}]`, itemId });
      }
      rooms.set(roomId, room);
      roomOrigin.set(roomId, zoneFile);
      roomIds.push(roomId);
    }
    if (roomIds.length === 0) zr.fail('rooms', 'a zone needs at least one room');

    for (const [key, itemRaw] of zr.entries(zraw, 'items')) {
      const previous = itemOrigin.get(key);
      if (previous) zr.fail(`items.${key}`, `duplicate item id '${key}' (already defined in ${previous})`);
      items.set(key, await readItem(zr, key, itemRaw, `items.${key}`, worldDir));
      itemOrigin.set(key, zoneFile);
    }

    for (const [key, npcRaw] of zr.entries(zraw, 'npcs')) {
      const where = `npcs.${key}`;
      const npcId = zr.bounded(npcRaw, 'id', where, MAX_ID_LENGTH);
      if (npcId !== key || !WORLD_ID.test(npcId)) zr.fail(`${where}.id`, `'${npcId}' must equal its key and be lower-case letters, digits, _ and -`);
      const previous = npcOrigin.get(npcId);
      if (previous) zr.fail(where, `duplicate NPC id '${npcId}' (already defined in ${previous})`);
      const npc: Npc = {
        id: npcId,
        name: zr.bounded(npcRaw, 'name', where, WORLD_LIMITS.name),
        description: zr.bounded(npcRaw, 'description', where, WORLD_LIMITS.description),
        roomId: zr.string(npcRaw, 'room', where),
        script: await readScript(zr, npcRaw, where, worldDir),
        version: 1,
      };
      npcs.set(npcId, npc);
      npcOrigin.set(npcId, zoneFile);
      homes.push({ reader: zr, where: `${where}.room`, npc });
    }

    const spawnRoom = zr.string(zraw, 'spawn_room', '', roomIds[0]);
    if (!roomIds.includes(spawnRoom)) zr.fail('spawn_room', `unknown room '${spawnRoom}' (not in this zone)`);
    zones.set(zoneId, {
      id: zoneId,
      name: typeof zraw.name === 'string' && zraw.name.trim() ? zraw.name : zoneId,
      description: typeof zraw.description === 'string' ? zraw.description : '',
      spawnRoom,
      roomIds,
    });
  }

  for (const exit of exits) {
    const sep = exit.target.indexOf(':');
    const zoneId = sep === -1 ? exit.room.zoneId : exit.target.slice(0, sep);
    const roomId = sep === -1 ? exit.target : exit.target.slice(sep + 1);
    const zone = zones.get(zoneId);
    if (!zone) exit.reader.fail(exit.where, `unknown zone '${zoneId}' in '${exit.target}'`);
    if (!zone.roomIds.includes(roomId)) exit.reader.fail(exit.where, `unknown room '${exit.target}'`);
    exit.room.exits[exit.direction] = roomId;
  }
  for (const placement of placements) {
    if (!items.has(placement.itemId)) placement.reader.fail(placement.where, `unknown item '${placement.itemId}'`);
  }
  for (const home of homes) {
    if (!rooms.has(home.npc.roomId)) home.reader.fail(home.where, `unknown room '${home.npc.roomId}'`);
  }
  const spawnZone = zones.get(defaultSpawn.zone);
  if (!spawnZone) wr.fail('default_spawn.zone', `unknown zone '${defaultSpawn.zone}'`);
  if (!spawnZone.roomIds.includes(defaultSpawn.room)) wr.fail('default_spawn.room', `unknown room '${defaultSpawn.room}' in zone '${defaultSpawn.zone}'`);

  return {
    id,
    name,
    description,
    version,
    active,
    defaultSpawn,
    zones,
    rooms,
    items,
    npcs,
    characterPolicy: readPolicy(wr, raw.character_policy),
    translationLayer: optionalBlock(wr, raw, 'translation_layer'),
    axisEngine: optionalBlock(wr, raw, 'axis_engine'),
    policyArtifactPath: await existingFile(path.join(worldDir, POLICY_ARTIFACT_FILE)),
  };
}

/** Loads every world package below `root` (sub-folders; hidden ones are skipped). */
export async function loadWorlds(root: string): Promise<World[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    throw new WorldLoadError(`${root}: worlds root folder is missing or unreadable`);
  }
  const dirs = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
  if (dirs.length === 0) throw new WorldLoadError(`${root}: no world packages found`);
  const worlds: World[] = [];
  for (const dir of dirs) worlds.push(await loadWorld(path.join(root, dir)));
  return worlds;
}
