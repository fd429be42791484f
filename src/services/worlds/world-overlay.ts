/**
 * A world as it now is: its read-only package with the builders' rooms over it
 * (docs/decisions.md, "Building worlds"). A stored room wins over the package's room of the same
 * id; a deleted one hides it. `checkWorld` holds every world to what the loader demands of a
 * package, so that a builder's change is refused before it could make the world unloadable.
 */
import type { StoredRoom } from '../../db/repositories/build-repository.ts';
import { WORLD_LIMITS, type Direction, type Room, type World, type Zone } from './world-loader.ts';

/** An item row's own name (a builder's), else its package item's, else its id. */
export function itemName(world: World, item: { itemId: string; name?: string | null }): string {
  return item.name ?? world.items.get(item.itemId)?.name ?? item.itemId;
}

export function itemDescription(world: World, item: { itemId: string; description?: string | null }): string {
  return item.description ?? world.items.get(item.itemId)?.description ?? '';
}

/**
 * The package with the stored rooms applied. Rooms in a zone the package no longer has are
 * left out, and so are exits to rooms that no longer exist (a package changed under its
 * builders' rooms); what the builders store is always whole, so nothing else can be missing.
 */
export function composeWorld(pkg: World, stored: readonly StoredRoom[]): World {
  if (stored.length === 0) return pkg;
  const rooms = new Map<string, Room>(pkg.rooms);
  for (const row of stored) {
    if (row.deleted || !pkg.zones.has(row.zoneId)) {
      rooms.delete(row.roomId);
      continue;
    }
    rooms.set(row.roomId, {
      id: row.roomId,
      zoneId: row.zoneId,
      name: row.name,
      description: row.description,
      exits: { ...row.exits } as Room['exits'],
      items: pkg.rooms.get(row.roomId)?.items ?? [],
      version: row.version,
    });
  }
  for (const [id, room] of rooms) {
    const dangling = Object.entries(room.exits).filter(([, target]) => !rooms.has(target));
    if (dangling.length > 0) {
      const exits = { ...room.exits };
      for (const [direction] of dangling) delete exits[direction as Direction];
      rooms.set(id, { ...room, exits });
    }
  }
  const zones = new Map<string, Zone>();
  for (const zone of pkg.zones.values()) {
    // The package's order first, then the builders' rooms in the order they were stored.
    const roomIds = zone.roomIds.filter((id) => rooms.get(id)?.zoneId === zone.id);
    for (const row of stored) if (rooms.get(row.roomId)?.zoneId === zone.id && !roomIds.includes(row.roomId)) roomIds.push(row.roomId);
    zones.set(zone.id, { ...zone, roomIds });
  }
  return { ...pkg, rooms, zones };
}

/**
 * What makes a world unloadable, one message per problem (none: it loads): a zone without rooms
 * or without its spawn room, a missing default spawn, an exit to no room, a name or description
 * out of bounds.
 */
export function worldProblems(world: World): string[] {
  const problems: string[] = [];
  for (const zone of world.zones.values()) {
    if (zone.roomIds.length === 0) problems.push(`zone '${zone.id}' has no rooms`);
    else if (!zone.roomIds.includes(zone.spawnRoom)) problems.push(`zone '${zone.id}' lost its spawn room '${zone.spawnRoom}'`);
  }
  if (world.rooms.get(world.defaultSpawn.room)?.zoneId !== world.defaultSpawn.zone) problems.push(`the default spawn room '${world.defaultSpawn.room}' is missing`);
  for (const room of world.rooms.values()) {
    for (const [direction, target] of Object.entries(room.exits)) {
      if (!world.rooms.has(target)) problems.push(`room '${room.id}' exit ${direction} leads to unknown room '${target}'`);
    }
    if ([...room.name].length > WORLD_LIMITS.name || [...room.description].length > WORLD_LIMITS.description) problems.push(`room '${room.id}' has a name or description out of bounds`);
  }
  return problems;
}

/** Rooms no walk from the default spawn reaches (exits followed as they lead). */
export function unreachableRooms(world: World): string[] {
  const reached = new Set([world.defaultSpawn.room]);
  const queue = [world.defaultSpawn.room];
  while (queue.length > 0) {
    for (const target of Object.values(world.rooms.get(queue.shift()!)?.exits ?? {})) {
      if (!reached.has(target)) {
        reached.add(target);
        queue.push(target);
      }
    }
  }
  return [...world.rooms.keys()].filter((id) => !reached.has(id));
}
