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
import type { BusEvent, EventBus, ScriptCause } from '../../db/event-bus.ts';
import type { GameRepository, NewChatMessage } from '../../db/repositories/game-repository.ts';
import type { BuildRepository } from '../../db/repositories/build-repository.ts';
import type { NpcRepository, Timer } from '../../db/repositories/npc-repository.ts';
import { HostRefusal, WorldSandbox, type HostApi, type RunOutcome, type SandboxLimits, type ScriptState } from '../../integrations/script-sandbox.ts';
import type { Logger } from '../../logging/logger.ts';
import { DomainError } from '../../shared/errors.ts';
import { decodeEntities } from '../../shared/event-text.ts';
import { escapeHtml, plainText } from '../../shared/plain-text.ts';
import type { BuildService } from '../building/build-service.ts';
import type { WorldSync } from '../building/world-sync.ts';
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
  /**
   * Runs by outcome: `ok` (what it left is written), the error kind that stopped it, or why it
   * never ran: `budget` (its happening's runs_per_happening spent), `shed` (the world's queue
   * full), `changed` (its script was saved or removed while it waited). A run that lost a race
   * to another instance is not counted.
   */
  runsByOutcome: Record<string, number>;
  /** Wall time the runs took in their sandboxes, seconds. */
  runSeconds: number;
  /** Runs waiting in the worlds' queues now. */
  queued: number;
}

/** Longest text a script hands the game at once: a command's limit. */
const TEXT_CHARACTERS = 2000;

/**
 * A happening: one player's action, one timer's firing or one script's load, and what it has
 * left to spend on the runs and lines it leads to, at every depth together (`[scripts]
 * runs_per_happening`, `lines_per_happening`). `chain_depth` bounds how deep a chain goes; this
 * bounds how wide: a script that echoes twenty lines to another that echoes twenty back grows
 * as twenty to the depth's power without it.
 */
interface Happening {
  id: number;
  runs: number;
  lines: number;
  /** The refusals recorded for builders, one of each kind (budget, shed); the rest are only counted. */
  refused: Set<string>;
  startedAt: number;
}

/** Where a run stands: its happening, how many scripts led to it, and the script whose doing woke it (not woken by it again). */
interface Chain {
  happening: Happening;
  depth: number;
  by: string | null;
}

/** A hook waiting its turn in its world's queue. */
interface Job {
  owner: Owner;
  hook: string;
  args: unknown[];
  chain: Chain;
  at: { roomId: string | null; actor: ScriptActor | null };
}

/**
 * How long a happening's budget is kept for the runs it leads to. What a script does wakes
 * others through the bus within milliseconds; one still queued past this is dropped as spent.
 */
const HAPPENING_MS = 60_000;
/** Happenings remembered at once, at most (the oldest go first). */
const HAPPENINGS_KEPT = 10_000;
/** While a world loads (`onLoad` of every script), its clock's lease is renewed at least this often. */
const RENEW_EVERY_MS = 1_000;

export class ScriptService {
  private readonly d: { db: Db; worlds: WorldCatalog; sync: Pick<WorldSync, 'catchUp'>; npcs: NpcRepository; items: BuildRepository; game: GameCore; repo: GameRepository; bus: EventBus; clock: Clock; logger: Logger; limits: ScriptLimits };
  private readonly sandboxes = new Map<string, Promise<WorldSandbox>>();
  /** A sandbox for compiling builders' scripts before they are saved, replaced when a compile broke it. */
  private compiler: Promise<WorldSandbox> | null = null;
  private build: BuildService | null = null;
  private readonly counters: ScriptCounters = { runsByOutcome: {}, runSeconds: 0, queued: 0 };
  /** This instance's happenings still leading to runs, oldest first. */
  private readonly happenings = new Map<number, Happening>();
  private lastHappening = 0;
  /**
   * Each world's hooks waiting their turn (bounded by `queue_per_world`), run one at a time, so
   * a backlog waits here and not in the world's sandbox, where a player's `onCommand` and the
   * clock's timers would wait behind it.
   */
  private readonly queues = new Map<string, Job[]>();
  private stopped = false;

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
    this.compiler = WorldSandbox.create(sandboxLimits(this.d.limits));
    await this.compiler;
  }

  stop(): void {
    this.stopped = true;
    this.queues.clear();
    this.counters.queued = 0;
    void this.compiler?.then((s) => s.dispose());
    for (const sandbox of this.sandboxes.values()) void sandbox.then((s) => s.dispose());
    this.sandboxes.clear();
  }

  stats(): ScriptCounters {
    return { runsByOutcome: { ...this.counters.runsByOutcome }, runSeconds: this.counters.runSeconds, queued: this.counters.queued };
  }

  /**
   * Whether a script compiles (for BuildService before it saves one), on the instance's compiler
   * thread: a source that broke it (its memory, its thread) gets the next compile a new one.
   */
  async check(source: string): Promise<{ message: string; line: number | null } | null> {
    if (!this.compiler) throw new Error('The script service has not started');
    let compiler = await this.compiler;
    if (!compiler.healthy) {
      compiler.dispose();
      this.compiler = WorldSandbox.create(sandboxLimits(this.d.limits));
      compiler = await this.compiler;
    }
    return compiler.compile(source);
  }

  // --- what wakes scripts ---

  private async heard(event: BusEvent): Promise<void> {
    switch (event.type) {
      case 'chat':
        if (!event.worldWide) await this.chatHeard(event.worldId, event.messageIds, this.chainOf(event.cause));
        return;
      case 'move':
        if (event.cause === 'walk' || event.cause === 'recall') {
          const who = { name: event.name, characterId: event.characterId };
          await this.moved(event.worldId, who, event.from, event.to, this.begin());
        }
        return;
      case 'npc.move':
        if (event.from !== null && event.to !== null) await this.moved(event.worldId, { name: event.name, characterId: null }, event.from, event.to, this.chainOf(event.cause));
        return;
      case 'item':
        if ((event.action === 'take' || event.action === 'drop') && event.characterId !== null && event.itemRowId !== undefined) {
          const owner = await this.itemOwner(event.worldId, event.itemRowId);
          if (owner) this.wake(event.worldId, { owner, hook: event.action === 'take' ? 'onGet' : 'onDrop', args: [], chain: this.begin(), at: { roomId: event.roomId, actor: { name: event.name!, characterId: event.characterId } } });
        }
        return;
      case 'world.changed':
        if (!event.scripts?.length) return;
        // The change's own instance applies it to its worlds after the commit, as this hears it: read it here first.
        await this.d.sync.catchUp(event.worldId);
        for (const key of event.scripts) await this.saved(event.worldId, key);
        return;
      default:
        return;
    }
  }

  /**
   * The chain an event continues: its happening's when a script caused it (null once that
   * happening is forgotten: it is spent), else a new happening (a player's action).
   */
  private chainOf(cause: ScriptCause | undefined): Chain | null {
    if (!cause) return this.begin();
    const happening = this.happenings.get(cause.happening);
    return happening ? { happening, depth: cause.depth, by: cause.by } : null;
  }

  /** The chain of a new happening, with the whole budget. */
  private begin(): Chain {
    const now = performance.now();
    for (const [id, old] of this.happenings) {
      if (now - old.startedAt < HAPPENING_MS && this.happenings.size < HAPPENINGS_KEPT) break;
      this.happenings.delete(id);
    }
    const happening = { id: ++this.lastHappening, runs: this.d.limits.runsPerHappening, lines: this.d.limits.linesPerHappening, refused: new Set<string>(), startedAt: now };
    this.happenings.set(happening.id, happening);
    return { happening, depth: 0, by: null };
  }

  /** Says, yells and emotes wake `onSay` of the NPCs, room and items where they are heard, but not of the script that made them. */
  private async chatHeard(worldId: string, messageIds: readonly number[], chain: Chain | null): Promise<void> {
    if (!chain || chain.depth >= this.d.limits.chainDepth) return;
    for (const row of await this.d.game.chatRows(messageIds)) {
      if (row.channel !== 'say' && row.channel !== 'yell' && row.channel !== 'emote') continue;
      const text = decodeEntities(row.channel === 'yell' ? row.text.replace(/^\[YELL\] /, '') : row.text);
      const actor = { name: row.sender, characterId: row.senderId };
      for (const owner of await this.ownersIn(worldId, row.roomId, chain.by ?? undefined)) {
        this.wake(worldId, { owner, hook: 'onSay', args: [text], chain, at: { roomId: row.roomId, actor } });
      }
    }
  }

  private async moved(worldId: string, actor: ScriptActor, from: string | null, to: string | null, chain: Chain | null): Promise<void> {
    if (!chain || chain.depth >= this.d.limits.chainDepth) return;
    const except = chain.by ?? undefined;
    if (from !== null) for (const owner of await this.ownersIn(worldId, from, except, false)) this.wake(worldId, { owner, hook: 'onLeave', args: [], chain, at: { roomId: from, actor } });
    if (to !== null) for (const owner of await this.ownersIn(worldId, to, except, false)) this.wake(worldId, { owner, hook: 'onEnter', args: [], chain, at: { roomId: to, actor } });
  }

  /** A script saved: it runs again (faults forgotten) and loads (`onLoad`). */
  private async saved(worldId: string, key: string): Promise<void> {
    await this.d.npcs.clearFaults(worldId, key);
    const owner = await this.owner(worldId, key);
    if (owner) this.wake(worldId, { owner, hook: 'onLoad', args: [], chain: this.begin(), at: { roomId: await this.roomOf(worldId, owner), actor: null } });
  }

  /**
   * A world started on this instance (it took the world's clock): every script loads, NPCs',
   * rooms' and items'. `renew` keeps the clock's lease while it takes long (thousands of
   * scripts); when it answers false, another instance holds the clock and loading stops. Whether
   * every script loaded.
   */
  async loadWorld(worldId: string, renew: () => Promise<boolean>): Promise<boolean> {
    const world = this.d.worlds.get(worldId);
    if (!world) return true;
    const packageScripted = [...world.items.values()].filter((item) => item.script).map((item) => item.id);
    const items = (await this.d.items.scriptedItems(worldId, packageScripted)).flatMap((item): Owner[] => {
      const script = itemScript(world, item);
      return script ? [{ key: `item:${item.id}`, script, kind: 'item', id: String(item.id), name: itemName(world, item) }] : [];
    });
    let renewed = performance.now();
    for (const owner of [...this.worldOwners(world), ...items]) {
      if (!mayDefine(owner.script, 'onLoad')) continue;
      if (performance.now() - renewed >= RENEW_EVERY_MS) {
        if (!(await renew())) return false;
        renewed = performance.now();
      }
      await this.run(worldId, owner, 'onLoad', [], this.begin(), { roomId: await this.roomOf(worldId, owner), actor: null });
    }
    return true;
  }

  /**
   * A verb the game does not know, typed in a room: the items and NPCs there that the words
   * name, then the room, may handle it (`onCommand` returns true). Its answer is what the
   * scripts told the actor. It runs at once, not behind the world's queue.
   */
  async command(worldId: string, roomId: string, actor: ScriptActor, verb: string, args: string): Promise<string | null> {
    const owners = await this.ownersIn(worldId, roomId);
    const words = args.toLowerCase();
    const named = owners.filter((o) => o.kind !== 'room' && words !== '' && o.name.toLowerCase().includes(words));
    const rest = owners.filter((o) => !named.includes(o) && o.kind === 'room');
    const chain = this.begin();
    for (const owner of [...named, ...rest]) {
      const ran = await this.run(worldId, owner, 'onCommand', [verb, args], chain, { roomId, actor });
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
    await this.run(worldId, owner, timer.name, [], this.begin(), { roomId: await this.roomOf(worldId, owner), actor: null }, { timer, now });
  }

  // --- the worlds' queues ---

  /**
   * A hook to run in its turn: only when its script may define it, while its happening has runs
   * left, and while the world's queue has room; else it is dropped, counted, and the first
   * refusal of its happening recorded for the world's builders.
   */
  private wake(worldId: string, job: Job): void {
    if (this.stopped || !mayDefine(job.owner.script, job.hook)) return;
    if (job.chain.happening.runs <= 0) {
      this.refuse(worldId, job, 'budget', `One happening woke more than ${this.d.limits.runsPerHappening} script runs ([scripts] runs_per_happening); the rest did not run`);
      return;
    }
    let queue = this.queues.get(worldId);
    if (queue && queue.length >= this.d.limits.queuePerWorld) {
      this.refuse(worldId, job, 'shed', `More than ${this.d.limits.queuePerWorld} script runs were waiting in this world ([scripts] queue_per_world); this one did not run`);
      return;
    }
    job.chain.happening.runs--;
    this.counters.queued++;
    if (queue) {
      queue.push(job);
      return;
    }
    queue = [job];
    this.queues.set(worldId, queue);
    void this.drain(worldId, queue);
  }

  /** Runs a world's queue to its end, one job at a time. */
  private async drain(worldId: string, queue: Job[]): Promise<void> {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      this.counters.queued--;
      if (this.stopped) return;
      await this.runQueued(worldId, job).catch((err: Error) => this.d.logger.error('Script run failed', { world_id: worldId, owner: job!.owner.key, hook: job!.hook, error: err.message }));
    }
    this.queues.delete(worldId);
  }

  /** A queued hook runs with its script as it is now: one saved or removed while it waited does not run. */
  private async runQueued(worldId: string, job: Job): Promise<void> {
    const current = await this.owner(worldId, job.owner.key);
    if (!current || current.script.source !== job.owner.script.source) {
      this.count('changed');
      return;
    }
    if (performance.now() - job.chain.happening.startedAt > HAPPENING_MS) {
      this.refuse(worldId, job, 'shed', `A script run waited more than ${HAPPENING_MS / 1000} s in this world's queue and did not run`);
      return;
    }
    await this.run(worldId, current, job.hook, job.args, job.chain, job.at);
  }

  /** A run (counted by `outcome`) or a line that its happening or world had no room for: recorded for builders once per happening and kind. */
  private refuse(worldId: string, job: Pick<Job, 'owner' | 'hook' | 'chain'>, outcome: string | null, message: string): void {
    if (outcome !== null) this.count(outcome);
    const refused = job.chain.happening.refused;
    if (refused.has(message)) return;
    refused.add(message);
    void this.d.npcs
      .recordError(worldId, { owner: job.owner.key, hook: job.hook, kind: 'limit', message, line: null }, this.d.clock())
      .catch((err: Error) => this.d.logger.warn('Script error not recorded', { world_id: worldId, error: err.message }));
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
  private async run(worldId: string, owner: Owner, hook: string, args: unknown[], chain: Chain, at: { roomId: string | null; actor: ScriptActor | null }, timer?: { timer: Timer; now: number }): Promise<Ran | null> {
    if (!timer && !mayDefine(owner.script, hook)) return null;
    const depth = chain.depth + 1;
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = this.d.clock();
      const stored = await this.d.npcs.state(worldId, owner.key, now);
      if (stored.suspendedAt !== null) {
        // A suspended script's timer moves on rather than coming due at every tick.
        if (timer) await this.d.npcs.passTimer(worldId, timer.timer, timer.now);
        return null;
      }
      const ran = await this.execute(worldId, owner, hook, args, JSON.parse(stored.state) as ScriptState, at);
      if (!ran.outcome.ok) {
        this.count(ran.outcome.error.kind);
        // A failed run's timer still fires once: it is not tried again at every tick, starving the world's other timers.
        if (timer) await this.d.npcs.passTimer(worldId, timer.timer, timer.now);
        await this.faulted(worldId, owner, hook, ran.outcome.error);
        return ran;
      }
      const state = JSON.stringify(ran.outcome.state ?? {});
      // A run that changed neither its state nor its timers, after no fault, has nothing to write: it only acts.
      if (!timer && state === stored.state && ran.timers.length === 0 && stored.faults === 0) {
        this.count('ok');
        await this.act(worldId, owner, ran.actions, { ...chain, depth }, at.roomId);
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
        if (timer) await this.d.npcs.passTimer(worldId, timer.timer, timer.now);
        await this.faulted(worldId, owner, hook, { kind: 'limit', message: `The world has more than ${this.d.limits.timersPerWorld} timers ([scripts] timers_per_world)`, line: null });
        return 'refused';
      });
      if (written === 'stale') continue;
      if (written !== 'written') return null;
      this.count('ok');
      await this.act(worldId, owner, ran.actions, { ...chain, depth }, at.roomId);
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
      if (seconds > limits.maxPeriodSeconds) throw new HostRefusal(`timers wait at most ${limits.maxPeriodSeconds} s ([scripts] max_period_seconds)`);
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

  /** Makes a run's actions, as part of its happening (`chain`, at the run's depth): lines past the happening's budget are dropped. */
  private async act(worldId: string, owner: Owner, actions: Action[], chain: Chain, roomId: string | null): Promise<void> {
    const world = this.d.worlds.get(worldId);
    if (!world) return;
    const cause: ScriptCause = { happening: chain.happening.id, depth: chain.depth, by: owner.key };
    let here = roomId;
    for (const action of actions) {
      if (action.kind === 'move') {
        here = await this.move(world, owner, here, action.direction, cause);
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
      if (chain.happening.lines <= 0) {
        this.refuse(worldId, { owner, hook: 'self.say', chain }, null, `One happening made more than ${this.d.limits.linesPerHappening} lines of scripts ([scripts] lines_per_happening); the rest were not said`);
        continue;
      }
      chain.happening.lines--;
      const message = this.message(worldId, owner, here, action);
      await this.d.game.post({ worldId }, [message], action.kind === 'tell' ? action.name : null, action.kind === 'tell', cause);
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
  private async move(world: World, owner: Owner, from: string | null, wanted: string, cause: ScriptCause): Promise<string | null> {
    const npc = world.npcs.get(owner.id);
    const direction = directionNamed(wanted);
    const to = from === null || !direction ? undefined : world.rooms.get(from)?.exits[direction];
    if (!npc || !direction || to === undefined) return from;
    await this.d.game.npcs.move(world.id, npc, to, direction, cause);
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

class StaleRun extends Error {}
class TooManyTimers extends Error {}
