/**
 * Where the NPCs of each world stand, as this instance remembers it (docs/decisions.md,
 * "Scripts"). Positions live in the database (`npc_positions`); a world's are read once, NPCs
 * that stand nowhere yet are placed at their home, and every NPC move is announced on the bus
 * (`npc.move`), which keeps each instance's memory current, this one's at commit. A builders'
 * change of the world reads its positions again; nothing is served from memory while the bus
 * may miss events.
 */
import type { Clock } from '../../db/clock.ts';
import type { BusEvent, EventBus, ScriptCause } from '../../db/event-bus.ts';
import type { NpcRepository } from '../../db/repositories/npc-repository.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { Direction, Npc } from '../worlds/world-loader.ts';

export class NpcPlaces {
  private readonly repo: NpcRepository;
  private readonly worlds: WorldCatalog;
  private readonly bus: EventBus;
  private readonly clock: Clock;
  /** World → NPC id → room id. */
  private readonly places = new Map<string, Map<string, string>>();
  /** World → room id → the ids of the NPCs there (the same places, by room: a room's NPCs are read on every look). */
  private readonly byRoom = new Map<string, Map<string, Set<string>>>();
  private readonly loads = new Map<string, Promise<Map<string, string>>>();

  constructor(repo: NpcRepository, worlds: WorldCatalog, bus: EventBus, clock: Clock) {
    this.repo = repo;
    this.worlds = worlds;
    this.bus = bus;
    this.clock = clock;
    const heard = (event: BusEvent) => this.heard(event);
    bus.onCommitted(heard);
    bus.subscribe(heard);
  }

  /** The NPCs standing in a room, by name. */
  async inRoom(worldId: string, roomId: string): Promise<Npc[]> {
    const world = this.worlds.get(worldId);
    if (!world) return [];
    const places = await this.of(worldId);
    const here = this.byRoom.get(worldId)?.get(roomId) ?? new Set([...places].filter(([, at]) => at === roomId).map(([id]) => id));
    return [...here].flatMap((id) => world.npcs.get(id) ?? []).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Where an NPC stands. */
  async where(worldId: string, npcId: string): Promise<string | undefined> {
    return (await this.of(worldId)).get(npcId);
  }

  /** Moves an NPC (its script walked it, as part of `cause`) and tells every instance. */
  async move(worldId: string, npc: Npc, to: string, direction: Direction | null, cause: ScriptCause): Promise<void> {
    const from = (await this.where(worldId, npc.id)) ?? null;
    await this.repo.move(worldId, npc.id, to, this.clock());
    await this.bus.publish({ type: 'npc.move', worldId, npcId: npc.id, name: npc.name, from, to, direction, cause });
  }

  private async of(worldId: string): Promise<Map<string, string>> {
    const known = this.places.get(worldId);
    if (known) return known;
    let load = this.loads.get(worldId);
    if (!load) {
      load = this.load(worldId).finally(() => this.loads.delete(worldId));
      this.loads.set(worldId, load);
    }
    return load;
  }

  private async load(worldId: string): Promise<Map<string, string>> {
    const world = this.worlds.get(worldId);
    if (!world) return new Map();
    let places = await this.repo.positions(worldId);
    const unplaced = [...world.npcs.values()].filter((npc) => !places.has(npc.id)).map((npc) => ({ npcId: npc.id, roomId: npc.roomId }));
    if (unplaced.length > 0) {
      await this.repo.placeNew(worldId, unplaced, this.clock());
      places = await this.repo.positions(worldId);
    }
    // NPCs deleted by builders keep no place.
    for (const id of [...places.keys()]) if (!world.npcs.has(id)) places.delete(id);
    if (this.bus.connected()) {
      this.places.set(worldId, places);
      const rooms = new Map<string, Set<string>>();
      for (const [id, roomId] of places) place(rooms, id, roomId);
      this.byRoom.set(worldId, rooms);
    }
    return places;
  }

  private heard(event: BusEvent): void {
    if (event.type === 'npc.move') {
      const places = this.places.get(event.worldId);
      const rooms = this.byRoom.get(event.worldId);
      if (!places || !rooms) return;
      const was = places.get(event.npcId);
      if (was !== undefined) rooms.get(was)?.delete(event.npcId);
      if (event.to === null) places.delete(event.npcId);
      else {
        places.set(event.npcId, event.to);
        place(rooms, event.npcId, event.to);
      }
    } else if (event.type === 'world.changed') {
      this.places.delete(event.worldId);
      this.byRoom.delete(event.worldId);
    } else if (event.type === 'reconnected') {
      this.places.clear();
      this.byRoom.clear();
    }
  }
}

function place(rooms: Map<string, Set<string>>, npcId: string, roomId: string): void {
  let here = rooms.get(roomId);
  if (!here) rooms.set(roomId, (here = new Set()));
  here.add(npcId);
}
