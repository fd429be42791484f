/**
 * Builders' scripts at play (docs/decisions.md, "Scripts"): which script a happening wakes, a
 * run in the world's sandbox (src/integrations/script-sandbox.ts) with the host API the README
 * documents, and what the run leaves behind. A run is pure until it ends: its `state`, timers and
 * actions are collected, then its state and timers are written in one transaction only while
 * the state is still the version it read (two instances running one script at once: one wins,
 * the other's run is dropped and, unless a timer fired it, runs again), and its actions (says,
 * emotes, echoes, tells, moves, exits) are made after that commit, through the same stores and
 * bus events as players' (GameCore, NpcPlaces, BuildService).
 *
 * A happening wakes scripts on the instance where it committed (the bus's onCommitted), so once;
 * what a script does wakes others one level deeper, up to `[scripts] chain_depth`. Timers are
 * kept in the database and fired by the instance holding the world's clock (ScriptClock).
 * A run that throws or breaks a limit is dropped and its error recorded for builders; after
 * `faults_to_suspend` in a row the script is suspended until a builder saves it again.
 */
import type { Config } from '../../config/config.ts';
import type { Clock } from '../../db/clock.ts';
import { toDbTime } from '../../db/clock.ts';
import type { Db } from '../../db/database.ts';
import type { BusEvent, EventBus } from '../../db/event-bus.ts';
import type { ChatRow, GameRepository, NewChatMessage } from '../../db/repositories/game-repository.ts';
import type { BuildRepository } from '../../db/repositories/build-repository.ts';
import type { NpcRepository, Timer } from '../../db/repositories/npc-repository.ts';
import { HostRefusal, WorldSandbox, type HostApi, type RunOutcome, type SandboxLimits, type ScriptState } from '../../integrations/script-sandbox.ts';
import type { Logger } from '../../logging/logger.ts';
import { DomainError } from '../../shared/errors.ts';
import { decodeEntities } from '../../shared/event-text.ts';
import { escapeHtml, plainText } from '../../shared/plain-text.ts';
import type { BuildService } from '../building/build-service.ts';
import { emoteText } from '../game/verbs/communication.ts';
import type { GameCore } from '../game/game-core.ts';
import { directionNamed, type Room, type Script, type World } from '../worlds/world-loader.ts';
import { itemName, itemScript } from '../worlds/world-overlay.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';

/** Who a hook is about: a character (its id, to `tell` it) or an NPC. */
export interface ScriptActor {
  name: string;
  characterId: number | null;
}

/** A script that may run: whose it is (`npc:<id>`, `room:<id>`, `item:<row id>`), its source, and what `self` is. */
interface Owner {
  key: string;
  script: Script;
  kind: 'npc' | 'room' | 'item';
  id: string;
  name: string;
}

/** What a run asked for, made after its state is written. */
type Action =
  | { kind: 'say' | 'emote' | 'echo'; text: string }
  | { kind: 'tell'; characterId: number; name: string; text: string }
  | { kind: 'move'; direction: string }
  | { kind: 'exit'; direction: string; to: string | null };

type TimerChange = { kind: 'set'; timer: Timer } | { kind: 'cancel'; name: string };

/** A run's result, ready to be written. */
interface Ran {
  outcome: RunOutcome;
  actions: Action[];
  timers: TimerChange[];
  told: string[];
}

export type ScriptLimits = Config['scripts'];

/** Running totals of this instance's script runs, for /metrics. */
export interface ScriptCounters {
  /** Runs by outcome: `ok` (what it left is written), or the error kind that stopped it (a run that lost a race to another instance is not counted). */
  runsByOutcome: Record<string, number>;
  /** Wall time the runs took in their sandboxes, seconds. */
  runSeconds: number;
}

/** Longest text a script hands the game at once: a command's limit. */
const TEXT_CHARACTERS = 2000;

export class ScriptService {
  private readonly d: { db: Db; worlds: WorldCatalog; npcs: NpcRepository; items: BuildRepository; game: GameCore; repo: GameRepository; bus: EventBus; clock: Clock; logger: Logger; limits: ScriptLimits };
  private readonly sandboxes = new Map<string, Promise<WorldSandbox>>();
  /** A sandbox for compiling builders' scripts before they are saved. */
  private compiler: WorldSandbox | null = null;
  private build: BuildService | null = null;
  private readonly counters: ScriptCounters = { runsByOutcome: {}, runSeconds: 0 };

  constructor(d: ScriptService['d']) {
    this.d = d;
    d.bus.onCommitted((event) => {
      // After the answer to what caused it: a player's say is answered first, then the NPC speaks.
      setImmediate(() => void this.heard(event).catch((err: Error) => d.logger.error('Script trigger failed', { event: event.type, error: err.message })));
    });
  }

  /** Scripts may change exits through the building service (which needs this service to check scripts). */
  useBuild(build: BuildService): void {
    this.build = build;
  }

  async start(): Promise<void> {
    this.compiler = await WorldSandbox.create(sandboxLimits(this.d.limits));
  }

  stop(): void {
    this.compiler?.dispose();
    for (const sandbox of this.sandboxes.values()) void sandbox.then((s) => s.dispose());
    this.sandboxes.clear();
  }

  stats(): ScriptCounters {
    return { runsByOutcome: { ...this.counters.runsByOutcome }, runSeconds: this.counters.runSeconds };
  }

  /** Whether a script compiles (for BuildService before it saves one). */
  check(source: string): { message: string; line: number | null } | null {
    if (!this.compiler) throw new Error('The script service has not started');
    return this.compiler.compile(source);
  }

  // --- what wakes scripts ---

  private async heard(event: BusEvent): Promise<void> {
    switch (event.type) {
      case 'chat':
        if (!event.worldWide) await this.chatHeard(event.worldId, event.messageIds, event.depth ?? 0);
        return;
      case 'move':
        if (event.cause === 'walk' || event.cause === 'recall') {
          const who = { name: event.name, characterId: event.characterId };
          await this.moved(event.worldId, who, event.from, event.to, 0);
        }
        return;
      case 'npc.move':
        if (event.from !== null && event.to !== null) await this.moved(event.worldId, { name: event.name, characterId: null }, event.from, event.to, event.depth ?? 0, `npc:${event.npcId}`);
        return;
      case 'item':
        if ((event.action === 'take' || event.action === 'drop') && event.characterId !== null && event.itemRowId !== undefined) {
          const owner = await this.itemOwner(event.worldId, event.itemRowId);
          if (owner) await this.run(event.worldId, owner, event.action === 'take' ? 'onGet' : 'onDrop', [], 1, { roomId: event.roomId, actor: { name: event.name!, characterId: event.characterId } });
        }
        return;
      case 'world.changed':
        for (const key of event.scripts ?? []) await this.saved(event.worldId, key);
        return;
      default:
        return;
    }
  }

  /** Says, yells and emotes wake `onSay` of the NPCs, room and items where they are heard. */
  private async chatHeard(worldId: string, messageIds: readonly number[], depth: number): Promise<void> {
    if (depth >= this.d.limits.chainDepth) return;
    for (const row of await this.d.game.chatRows(messageIds)) {
      if (row.channel !== 'say' && row.channel !== 'yell' && row.channel !== 'emote') continue;
      const text = decodeEntities(row.channel === 'yell' ? row.text.replace(/^\[YELL\] /, '') : row.text);
      const actor = { name: row.sender, characterId: row.senderId };
      for (const owner of await this.ownersIn(worldId, row.roomId, speakerKey(row))) {
        await this.run(worldId, owner, 'onSay', [text], depth + 1, { roomId: row.roomId, actor });
      }
    }
  }

  private async moved(worldId: string, actor: ScriptActor, from: string | null, to: string | null, depth: number, mover?: string): Promise<void> {
    if (depth >= this.d.limits.chainDepth) return;
    if (from !== null) for (const owner of await this.ownersIn(worldId, from, mover, false)) await this.run(worldId, owner, 'onLeave', [], depth + 1, { roomId: from, actor });
    if (to !== null) for (const owner of await this.ownersIn(worldId, to, mover, false)) await this.run(worldId, owner, 'onEnter', [], depth + 1, { roomId: to, actor });
  }

  /** A script saved: it runs again (faults forgotten) and loads (`onLoad`). */
  private async saved(worldId: string, key: string): Promise<void> {
    await this.d.npcs.clearFaults(worldId, key);
    const owner = await this.owner(worldId, key);
    if (owner) await this.run(worldId, owner, 'onLoad', [], 1, { roomId: await this.roomOf(worldId, owner), actor: null });
  }

  /** A world started on this instance (it took the world's clock): every script loads. */
  async loadWorld(worldId: string): Promise<void> {
    const world = this.d.worlds.get(worldId);
    if (!world) return;
    for (const owner of this.worldOwners(world)) await this.run(worldId, owner, 'onLoad', [], 1, { roomId: await this.roomOf(worldId, owner), actor: null });
  }

  /**
   * A verb the game does not know, typed in a room: the items and NPCs there that the words
   * name, then the room, may handle it (`onCommand` returns true). Its answer is what the
   * scripts told the actor.
   */
  async command(worldId: string, roomId: string, actor: ScriptActor, verb: string, args: string): Promise<string | null> {
    const owners = await this.ownersIn(worldId, roomId);
    const words = args.toLowerCase();
    const named = owners.filter((o) => o.kind !== 'room' && words !== '' && o.name.toLowerCase().includes(words));
    const rest = owners.filter((o) => !named.includes(o) && o.kind === 'room');
    for (const owner of [...named, ...rest]) {
      const ran = await this.run(worldId, owner, 'onCommand', [verb, args], 1, { roomId, actor });
      if (ran?.outcome.ok && ran.outcome.returned === true) return ran.told.join('\n') || 'Done.';
    }
    return null;
  }

  /** A timer fell due (ScriptClock, on the instance holding the world's clock): its callback runs once. */
  async fire(worldId: string, timer: Timer, now: number): Promise<void> {
    const owner = await this.owner(worldId, timer.owner);
    if (!owner) {
      await this.d.db.transaction((trx) => this.d.npcs.cancelTimer(trx, worldId, timer.owner, timer.name));
      return;
    }
    await this.run(worldId, owner, timer.name, [], 1, { roomId: await this.roomOf(worldId, owner), actor: null }, { timer, now });
  }

  // --- which scripts ---

  private worldOwners(world: World): Owner[] {
    const owners: Owner[] = [];
    for (const npc of world.npcs.values()) if (npc.script) owners.push({ key: `npc:${npc.id}`, script: npc.script, kind: 'npc', id: npc.id, name: npc.name });
    for (const room of world.rooms.values()) if (room.script) owners.push({ key: `room:${room.id}`, script: room.script, kind: 'room', id: room.id, name: room.name });
    return owners;
  }

  /** The scripts of a room: its NPCs' (not `except`), its own, and the items lying there. */
  private async ownersIn(worldId: string, roomId: string, except?: string, withItems = true): Promise<Owner[]> {
    const world = this.d.worlds.get(worldId);
    const room = world?.rooms.get(roomId);
    if (!world || !room) return [];
    const owners: Owner[] = [];
    for (const npc of await this.d.game.npcs.inRoom(worldId, roomId)) {
      if (npc.script && `npc:${npc.id}` !== except) owners.push({ key: `npc:${npc.id}`, script: npc.script, kind: 'npc', id: npc.id, name: npc.name });
    }
    if (room.script && `room:${room.id}` !== except) owners.push(roomOwner(room, room.script));
    if (withItems) {
      for (const item of await this.d.game.itemsLyingIn(worldId, roomId)) {
        const script = itemScript(world, item);
        if (script && `item:${item.id}` !== except) owners.push({ key: `item:${item.id}`, script, kind: 'item', id: String(item.id), name: itemName(world, item) });
      }
    }
    return owners;
  }

  private async owner(worldId: string, key: string): Promise<Owner | null> {
    const world = this.d.worlds.get(worldId);
    if (!world) return null;
    const [kind, id] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if (kind === 'npc') {
      const npc = world.npcs.get(id);
      return npc?.script ? { key, script: npc.script, kind: 'npc', id, name: npc.name } : null;
    }
    if (kind === 'room') {
      const room = world.rooms.get(id);
      return room?.script ? roomOwner(room, room.script) : null;
    }
    return kind === 'item' ? this.itemOwner(worldId, Number(id)) : null;
  }

  private async itemOwner(worldId: string, rowId: number): Promise<Owner | null> {
    const world = this.d.worlds.get(worldId);
    const item = world ? await this.d.items.item(worldId, rowId) : undefined;
    if (!world || !item) return null;
    const script = itemScript(world, item);
    return script ? { key: `item:${rowId}`, script, kind: 'item', id: String(rowId), name: itemName(world, item) } : null;
  }

  /** Where a script's owner is: an NPC where it stands, a room itself, an item where it lies or is held. */
  private async roomOf(worldId: string, owner: Owner): Promise<string | null> {
    if (owner.kind === 'room') return owner.id;
    if (owner.kind === 'npc') return (await this.d.game.npcs.where(worldId, owner.id)) ?? null;
    const item = await this.d.items.item(worldId, Number(owner.id));
    if (!item || item.roomId !== null) return item?.roomId ?? null;
    // An item someone holds is where its holder stands.
    return item.characterId === null ? null : ((await this.d.repo.roomsOf([item.characterId])).get(item.characterId) ?? null);
  }

  // --- a run ---

  private async sandboxOf(worldId: string): Promise<WorldSandbox> {
    let sandbox = this.sandboxes.get(worldId);
    const current = sandbox ? await sandbox : null;
    if (current?.healthy) return current;
    current?.dispose();
    sandbox = WorldSandbox.create(sandboxLimits(this.d.limits));
    this.sandboxes.set(worldId, sandbox);
    return sandbox;
  }

  /**
   * Runs a hook and applies what it leaves: state and timers written while the state is still
   * the version read (a timer's firing only while the timer is still due), then its actions.
   * A run that lost the race to another runs once more from the state that won, unless a timer
   * fired it (the other instance's firing stands). Returns the run, or null when it did not run.
   */
  private async run(worldId: string, owner: Owner, hook: string, args: unknown[], depth: number, at: { roomId: string | null; actor: ScriptActor | null }, timer?: { timer: Timer; now: number }): Promise<Ran | null> {
    if (!timer && !mayDefine(owner.script, hook)) return null;
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = this.d.clock();
      const stored = await this.d.npcs.state(worldId, owner.key, now);
      if (stored.suspendedAt !== null) return null;
      const ran = await this.execute(worldId, owner, hook, args, JSON.parse(stored.state) as ScriptState, at);
      if (!ran.outcome.ok) {
        this.count(ran.outcome.error.kind);
        await this.faulted(worldId, owner, hook, ran.outcome.error);
        return ran;
      }
      const state = JSON.stringify(ran.outcome.state ?? {});
      // A run that changed neither its state nor its timers, after no fault, has nothing to write: it only acts.
      if (!timer && state === stored.state && ran.timers.length === 0 && stored.faults === 0) {
        this.count('ok');
        await this.act(worldId, owner, ran.actions, depth, at.roomId);
        return ran;
      }
      const written = await this.d.db.transaction(async (trx) => {
        if (timer && !(await this.d.npcs.fireTimer(trx, worldId, timer.timer, timer.now))) return 'fired elsewhere';
        if (!(await this.d.npcs.writeState(trx, worldId, owner.key, stored.version, state, now))) {
          if (timer) throw new StaleRun();
          return 'stale';
        }
        for (const change of ran.timers) {
          if (change.kind === 'cancel') await this.d.npcs.cancelTimer(trx, worldId, owner.key, change.name);
          else await this.d.npcs.setTimer(trx, worldId, change.timer, hook === 'onLoad');
        }
        if (ran.timers.some((t) => t.kind === 'set') && (await this.d.npcs.timerCount(worldId, trx)) > this.d.limits.timersPerWorld) throw new TooManyTimers();
        return 'written';
      }).catch(async (err: unknown) => {
        if (err instanceof StaleRun) return 'fired elsewhere';
        if (!(err instanceof TooManyTimers)) throw err;
        this.count('limit');
        await this.faulted(worldId, owner, hook, { kind: 'limit', message: `The world has more than ${this.d.limits.timersPerWorld} timers ([scripts] timers_per_world)`, line: null });
        return 'refused';
      });
      if (written === 'stale') continue;
      if (written !== 'written') return null;
      this.count('ok');
      await this.act(worldId, owner, ran.actions, depth, at.roomId);
      return ran;
    }
    return null;
  }

  /** One run in the sandbox, with the host API bound to what this run may see and do. */
  private async execute(worldId: string, owner: Owner, hook: string, args: unknown[], state: ScriptState, at: { roomId: string | null; actor: ScriptActor | null }): Promise<Ran> {
    const world = this.d.worlds.get(worldId)!;
    const room = at.roomId === null ? undefined : world.rooms.get(at.roomId);
    const ran: Ran = { outcome: { ok: true, returned: null, state }, actions: [], timers: [], told: [] };
    const limits = this.d.limits;
    let count = 0;
    const spend = (): void => {
      if (++count > limits.actionsPerRun) throw new HostRefusal(`more than ${limits.actionsPerRun} actions in one run ([scripts] actions_per_run)`);
    };
    const act = (action: Action): void => {
      spend();
      ran.actions.push(action);
    };
    const clean = (text: string): string => plainText(String(text).normalize('NFC'));
    const timerSet = (seconds: number, name: string, every: boolean): void => {
      spend();
      if (!Number.isFinite(seconds) || seconds < limits.minPeriodSeconds) throw new HostRefusal(`timers fire at most once every ${limits.minPeriodSeconds} s ([scripts] min_period_seconds)`);
      if (!/^[A-Za-z_$][\w$]{0,63}$/.test(String(name))) throw new HostRefusal(`'${String(name).slice(0, 40)}' is not a function name`);
      const periodMs = Math.round(seconds * 1000);
      ran.timers.push({ kind: 'set', timer: { owner: owner.key, name: String(name), dueAt: this.d.clock().getTime() + periodMs, periodMs: every ? periodMs : null } });
    };
    // Read before the run (the script's calls are answered at once), and only what its text may ask for.
    const asks = (call: string): boolean => room !== undefined && owner.script.source.includes(call);
    const seen = {
      characters: asks('characters') ? (await this.d.game.state.activeInRoom(worldId, room!.id, this.d.clock())).map((c) => c.name) : [],
      npcs: asks('npcs') ? (await this.d.game.npcs.inRoom(worldId, room!.id)).map((n) => n.name) : [],
      items: asks('items') ? (await this.d.game.itemsLyingIn(worldId, room!.id)).map((i) => itemName(world, i)) : [],
    };
    const api: HostApi = {
      self: {
        id: owner.id,
        name: owner.name,
        say: (text) => act({ kind: 'say', text: clean(text) }),
        emote: (text) => act({ kind: 'emote', text: clean(text) }),
        ...(owner.kind === 'npc' ? { move: (direction: string) => act({ kind: 'move', direction: String(direction) }) } : {}),
      },
      room: {
        id: room?.id ?? '',
        name: room?.name ?? '',
        echo: (text) => act({ kind: 'echo', text: clean(text) }),
        characters: () => [...seen.characters],
        npcs: () => [...seen.npcs],
        items: () => [...seen.items],
        openExit: (direction, roomId) => act({ kind: 'exit', direction: String(direction).toLowerCase(), to: String(roomId) }),
        closeExit: (direction) => act({ kind: 'exit', direction: String(direction).toLowerCase(), to: null }),
      },
      actor: at.actor
        ? {
            name: at.actor.name,
            tell: (text) => {
              spend();
              ran.told.push(clean(text));
              const to = at.actor!;
              if (to.characterId !== null && hook !== 'onCommand') ran.actions.push({ kind: 'tell', characterId: to.characterId, name: to.name, text: clean(text) });
            },
          }
        : null,
      every: (seconds, name) => timerSet(Number(seconds), name, true),
      after: (seconds, name) => timerSet(Number(seconds), name, false),
      cancel: (name) => {
        spend();
        ran.timers.push({ kind: 'cancel', name: String(name) });
      },
      random: Math.random,
    };
    const sandbox = await this.sandboxOf(worldId);
    const started = performance.now();
    ran.outcome = await sandbox.run(owner.script.source, hook, args, state, api);
    this.counters.runSeconds += (performance.now() - started) / 1000;
    return ran;
  }

  /** A run's end for /metrics: `ok` once what it left is written, else what stopped it. */
  private count(outcome: string): void {
    this.counters.runsByOutcome[outcome] = (this.counters.runsByOutcome[outcome] ?? 0) + 1;
  }

  private async faulted(worldId: string, owner: Owner, hook: string, error: { kind: string; message: string; line: number | null }): Promise<void> {
    const now = this.d.clock();
    await this.d.npcs.recordError(worldId, { owner: owner.key, hook, kind: error.kind, message: error.message.slice(0, 500), line: error.line }, now);
    if (await this.d.npcs.fault(worldId, owner.key, this.d.limits.faultsToSuspend, now)) {
      await this.d.npcs.recordError(worldId, { owner: owner.key, hook, kind: 'suspended', message: `Suspended after ${this.d.limits.faultsToSuspend} faults in a row: save the script again to run it`, line: null }, now);
      this.d.logger.warn('Script suspended', { world_id: worldId, owner: owner.key });
    }
  }

  // --- what a run does ---

  private async act(worldId: string, owner: Owner, actions: Action[], depth: number, roomId: string | null): Promise<void> {
    const world = this.d.worlds.get(worldId);
    if (!world) return;
    let here = roomId;
    for (const action of actions) {
      if (action.kind === 'move') {
        here = await this.move(world, owner, here, action.direction, depth);
        continue;
      }
      if (action.kind === 'exit') {
        // The exit of the room the run is about; a refusal (no such room, a direction taken) is the script's error.
        if (this.build && roomId !== null) {
          await this.build.scriptExit(worldId, owner.key, roomId, action.direction, action.to).catch((err: unknown) => {
            if (!(err instanceof DomainError)) throw err;
            return this.faulted(worldId, owner, action.to === null ? 'room.closeExit' : 'room.openExit', { kind: 'limit', message: err.message, line: null });
          });
        }
        continue;
      }
      if (here === null || action.text === '') continue;
      const message = this.message(worldId, owner, here, action);
      await this.d.game.post({ worldId }, [message], action.kind === 'tell' ? action.name : null, action.kind === 'tell', depth);
    }
  }

  private message(worldId: string, owner: Owner, roomId: string, action: Extract<Action, { text: string }>): NewChatMessage {
    const speaker = owner.kind === 'npc' ? ('npc' as const) : ('world' as const);
    const base = { worldId, roomId, characterId: null, speaker, ...(owner.kind === 'npc' ? { npcId: owner.id } : {}), senderName: owner.name.slice(0, 40), createdAt: toDbTime(this.d.clock()) };
    switch (action.kind) {
      case 'say':
        return { ...base, channel: 'say', recipientCharacterId: null, message: escapeHtml(action.text) };
      case 'emote':
        return { ...base, channel: 'emote', recipientCharacterId: null, message: escapeHtml(emoteText(owner.name, action.text)) };
      case 'echo':
        return { ...base, channel: 'emote', recipientCharacterId: null, message: escapeHtml(action.text) };
      case 'tell':
        return { ...base, channel: 'tell', recipientCharacterId: action.characterId, message: escapeHtml(action.text) };
    }
  }

  /** An NPC walks an exit of the room it stands in; where it stands afterwards. */
  private async move(world: World, owner: Owner, from: string | null, wanted: string, depth: number): Promise<string | null> {
    const npc = world.npcs.get(owner.id);
    const direction = directionNamed(wanted);
    const to = from === null || !direction ? undefined : world.rooms.get(from)?.exits[direction];
    if (!npc || !direction || to === undefined) return from;
    await this.d.game.npcs.move(world.id, npc, to, direction, depth);
    return to;
  }
}

/** The sandbox's limits from `[scripts]`. */
export function sandboxLimits(limits: ScriptLimits): SandboxLimits {
  return { cpuMs: limits.cpuMs, memoryBytes: limits.memoryMb * 1024 * 1024, stateBytes: limits.stateBytes, textCharacters: TEXT_CHARACTERS };
}

function roomOwner(room: Room, script: Script): Owner {
  return { key: `room:${room.id}`, script, kind: 'room', id: room.id, name: room.name };
}

/** The hooks the game calls (a timer's callback is any other name). */
const HOOKS: ReadonlySet<string> = new Set(['onLoad', 'onEnter', 'onLeave', 'onSay', 'onCommand', 'onGet', 'onDrop']);

/**
 * Whether a script may define a hook: not when the hook's name appears nowhere in its source,
 * which saves a run for every happening in a room whose scripts do not care (most moves).
 */
function mayDefine(script: Script, hook: string): boolean {
  return !HOOKS.has(hook) || script.source.includes(hook);
}

/** The script key of a chat line's speaker, so it does not hear itself. */
function speakerKey(row: ChatRow): string | undefined {
  return row.speaker === 'npc' && row.npcId ? `npc:${row.npcId}` : undefined;
}

class StaleRun extends Error {}
class TooManyTimers extends Error {}
