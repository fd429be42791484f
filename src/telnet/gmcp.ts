/**
 * GMCP (Generic MUD Communication Protocol, telnet option 201) as graphical clients read it:
 * `Room.Info` in the form Mudlet's mapper scripts read (num, name, area, exits by short
 * direction to room numbers), and what a client supports. The messages themselves are sent by
 * the screens (src/telnet/screens/login.ts for Char.Login, play.ts for the rest). A message is
 * `<Package.Message> <JSON>`.
 */
import { createHash } from 'node:crypto';
import type { World } from '../services/worlds/world-loader.ts';

/** Directions as GMCP exits name them. */
export const SHORT: Record<string, string> = { north: 'n', south: 's', east: 'e', west: 'w', up: 'u', down: 'd' };

export interface RoomInfo {
  num: number;
  name: string;
  area: string;
  /** Short direction → number of the room it leads to. */
  exits: Record<string, number>;
}

/**
 * A room's number for mappers, which key rooms by positive integers: the first 31 bits of a
 * SHA-256 of world and room id. It is the same on every instance and after every restart, and
 * needs nothing stored. Two of a world's n rooms share a number with odds of about n²/2³²: 1 in
 * 4,300 for a world of 1,000 rooms.
 */
export function roomNumber(worldId: string, roomId: string): number {
  return createHash('sha256').update(`${worldId}\u0000${roomId}`).digest().readUInt32BE(0) >>> 1 || 1;
}

export function roomInfo(world: World, roomId: string): RoomInfo | null {
  const room = world.rooms.get(roomId);
  if (!room) return null;
  const exits: Record<string, number> = {};
  for (const [direction, target] of Object.entries(room.exits)) exits[SHORT[direction] ?? direction] = roomNumber(world.id, target);
  return { num: roomNumber(world.id, room.id), name: room.name, area: world.zones.get(room.zoneId)?.name ?? room.zoneId, exits };
}

export function encode(name: string, data: unknown): Buffer {
  return Buffer.from(`${name} ${JSON.stringify(data)}`, 'utf8');
}

/** A client's message: its name and its JSON data (undefined when it sent none or none that parses). */
export function decode(payload: Buffer): { name: string; data: unknown } {
  const text = payload.toString('utf8');
  const space = text.indexOf(' ');
  const name = space < 0 ? text : text.slice(0, space);
  if (space < 0) return { name, data: undefined };
  try {
    return { name, data: JSON.parse(text.slice(space + 1)) as unknown };
  } catch {
    return { name, data: undefined };
  }
}

/**
 * The packages a client said it supports (`Core.Supports.Set/Add/Remove`, entries such as
 * `"Room 1"`). Until a client says, it gets every message: many clients never send the list.
 */
export class Supports {
  private modules: Set<string> | null = null;

  /** Applies a `Core.Supports.*` message; other messages are not its business. */
  apply(name: string, data: unknown): void {
    if (!/^Core\.Supports\.(Set|Add|Remove)$/i.test(name) || !Array.isArray(data)) return;
    const listed = data.filter((entry): entry is string => typeof entry === 'string').map((entry) => entry.trim().split(/\s+/)[0]!.toLowerCase());
    const verb = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
    if (verb === 'set' || this.modules === null) this.modules = new Set();
    for (const module of listed) {
      if (verb === 'remove') this.modules.delete(module);
      else if (this.modules.size < 100) this.modules.add(module);
    }
  }

  /**
   * Whether to send a message: some package it belongs to (`Comm`, `Comm.Channel`) is
   * supported. `Core` always is (GMCP's own: Core.Ping must be answered whatever a client
   * lists, and Mudlet's list leaves it out).
   */
  wants(message: string): boolean {
    if (this.modules === null) return true;
    const parts = message.toLowerCase().split('.');
    if (parts[0] === 'core') return true;
    for (let n = 1; n < parts.length; n++) if (this.modules.has(parts.slice(0, n).join('.'))) return true;
    return false;
  }
}
