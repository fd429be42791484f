/**
 * Imports the reference server's SQLite database (and its JSONL ledger) into this server's
 * database: accounts, characters with their rooms and items, world grants, axis scores and
 * events, chat, the policy store and the ledger, in one transaction (all or nothing). Each row
 * is imported as it is, mapped by a rule of docs/decisions.md ("Moving from the reference
 * server"), found already here (a second run under --merge), or skipped with its reason; the
 * report counts them per table and lists every mapping and skip.
 */
import path from 'node:path';
import type { Knex } from 'knex';
import type { Db } from '../../db/database.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import { nameKey, nameSkeleton, usernameKey } from '../../shared/names.ts';
import type { ImportedChat, ReferenceImportRepository } from '../../db/repositories/reference-import-repository.ts';
import type { AxisStateRepository } from '../../db/repositories/axis-state-repository.ts';
import type { LedgerRepository } from '../../db/repositories/ledger-repository.ts';
import type { PolicyRepository } from '../../db/repositories/policy-repository.ts';
import { ReferenceDatabase, type Row } from '../../integrations/reference-database.ts';
import { ledgerFiles, ledgerLines, ReferenceLedgerError } from '../../integrations/reference-ledger.ts';
import { isRole, rank, type Role } from '../../shared/roles.ts';
import { canonicalJson, parseJson } from '../../shared/canonical-json.ts';
import { newUsername, normalizeUsername } from '../accounts/account-service.ts';
import { reservedWordIn } from '../accounts/reserved-names.ts';
import { validateCharacterName } from '../characters/character-service.ts';
import { MAX_SEED } from '../../integrations/seeded-random.ts';
import { isAxisSnapshot } from '../characters/character-state.ts';
import { decodeEntities } from '../../shared/event-text.ts';
import { MAX_COMMAND_CHARACTERS, plainText } from '../../shared/plain-text.ts';
import { envelopeChecksum, LEDGER_EVENT_TYPES, type Envelope } from '../ledger/ledger-service.ts';
import { MAX_CONTENT_BYTES } from '../policy/policy-validation.ts';
import { importPolicyStore } from './reference-policies.ts';
import { jsonRule, textRule } from './reference-rows.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { World } from '../worlds/world-loader.ts';
import { Conflict, DomainError } from '../../shared/errors.ts';
import { idChunks, type EventBus } from '../../db/event-bus.ts';

export interface ReferenceImportOptions {
  /** Directory of the reference's `<world_id>.jsonl` ledger files. */
  ledgerDir?: string;
  /** Run everything, then roll back. */
  dryRun?: boolean;
  /** Import into a database that already has game data, leaving what is there alone. */
  merge?: boolean;
  /** Commit even when rows are skipped (otherwise a skip rolls the whole import back). */
  allowSkips?: boolean;
  /** Receives a progress line now and then on large tables. */
  progress?: (line: string) => void;
}

export type Outcome = 'imported' | 'mapped' | 'existing' | 'skipped';

export interface TableSummary {
  table: string;
  read: number;
  imported: number;
  mapped: number;
  /** Already in this database (an earlier import, under --merge). */
  existing: number;
  skipped: number;
}

export interface ReportLine {
  table: string;
  /** The reference row: `<table>#<id> '<name>'`. */
  row: string;
  outcome: 'mapped' | 'skipped' | 'note';
  reason: string;
}

export interface ImportReport {
  file: string;
  dryRun: boolean;
  merge: boolean;
  /** True when the import was written (not a dry run, and no skip held it back). */
  committed: boolean;
  tables: TableSummary[];
  lines: ReportLine[];
  skipped: number;
}

/** A failure of the import as a whole (nothing was written). */
export class ReferenceImportError extends DomainError {}

/** Tables that report progress from this many rows on. */
const PROGRESS_EVERY = 1000;
const BCRYPT_HASH = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/;
const ROMAN = ['II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX', 'X'];
const MAX_CHARACTER_NAME = 40;
/** How the reference's whispers begin: `[WHISPER: <sender> → <target>] `. */
const WHISPER_PREFIX = /^\[WHISPER: .+ \u2192 .+\] /;
/** The prefix a stored message carries before what was said (the shortest, so nothing said is taken for it). */
const CHAT_PREFIX = /^(?:\[YELL\] |\[WHISPER: .+? \u2192 .+?\] )/;
/**
 * A ledger line's bound. This server's own lines carry one chat message (at most
 * MAX_COMMAND_CHARACTERS), its translation and an axis snapshot: a few KB.
 */
const MAX_LEDGER_LINE_BYTES = 64 * 1024;
/** An axis event's metadata as canonical JSON: this server's own events carry a few short fields (source, seed, versions). */
const MAX_EVENT_METADATA_BYTES = 4096;
/** The axis registry's name column (migration 20261121000005). */
const MAX_AXIS_NAME = 64;

/** A score as this server keeps one: a number from 0 to 1 (its axis engine clamps to that). */
const isAxisScore = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1;

/** Rolls the dry run (or a held-back import) back once its report is complete. */
class RollBack extends Error {}

/** The reference's `YYYY-MM-DD HH:MM:SS` (or ISO-8601) UTC time as this server stores it; null when it is none. */
export function referenceTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(value.trim());
  if (!match) return null;
  const [, date, time, zone] = match;
  if (!zone || /^(Z|[+-]00:?00)$/.test(zone)) return `${date} ${time}`;
  const parsed = new Date(`${date}T${time}${zone}`);
  return Number.isNaN(parsed.getTime()) ? null : toDbTime(parsed);
}

/**
 * A room the reference names (a bare id, or `zone:room` in a yell's adjoining rows) as this
 * server's room id: the world packages keep a bare id in the zone the reference resolves it to
 * and rename the other zones' copies `<zone>_<id>`.
 */
export function resolveRoom(world: World, reference: string): string | undefined {
  const sep = reference.indexOf(':');
  if (sep === -1) return world.rooms.has(reference) ? reference : undefined;
  const zoneId = reference.slice(0, sep);
  const roomId = reference.slice(sep + 1);
  for (const candidate of [roomId, `${zoneId}_${roomId}`]) {
    if (world.rooms.get(candidate)?.zoneId === zoneId) return candidate;
  }
  return undefined;
}

/** The reference's chat kinds: a whisper has a recipient, a yell its `[YELL] ` prefix. */
export function chatChannel(message: string, recipient: unknown): ImportedChat['channel'] {
  if (recipient !== null && recipient !== undefined) return 'whisper';
  return message.startsWith('[YELL] ') ? 'yell' : 'say';
}

interface Deps {
  db: Db;
  worlds: WorldCatalog;
  repo: ReferenceImportRepository;
  axisState: AxisStateRepository;
  ledger: LedgerRepository;
  /** The policy store's pointers and activation history, which the imported ones must agree with. */
  policies: PolicyRepository;
  /** Told of the imported chat at commit, so every instance's chat caches forget the rooms it landed in. */
  events: EventBus;
  /** This server's chat retention, to say which imported messages it will prune. */
  chat: { retentionDays: number; maxMessagesPerRoom: number };
  clock: Clock;
}

/** One run's state: the report and the reference ids mapped to this database's. */
class Run {
  readonly tables = new Map<string, TableSummary>();
  readonly lines: ReportLine[] = [];
  readonly users = new Map<number, { id: number; role: Role }>();
  readonly characters = new Map<number, { id: number; name: string; worldId: string; imported: boolean }>();
  /** Names of reference characters that were not imported, for the chat they wrote. */
  readonly characterNames = new Map<number, string>();
  readonly usernames = new Map<number, string>();

  summary(table: string): TableSummary {
    let s = this.tables.get(table);
    if (!s) this.tables.set(table, (s = { table, read: 0, imported: 0, mapped: 0, existing: 0, skipped: 0 }));
    return s;
  }

  count(table: string, outcome: Outcome, row?: string, reason?: string): void {
    const s = this.summary(table);
    s.read++;
    s[outcome]++;
    if ((outcome === 'mapped' || outcome === 'skipped') && row !== undefined && reason !== undefined) this.lines.push({ table, row, outcome, reason });
  }

  /** Several mapping reasons for one row: one line each, the row counted once. */
  mapped(table: string, row: string, reasons: string[]): void {
    if (reasons.length === 0) return this.count(table, 'imported');
    this.count(table, 'mapped');
    for (const reason of reasons) this.lines.push({ table, row, outcome: 'mapped', reason });
  }

  note(table: string, reason: string): void {
    this.summary(table);
    this.lines.push({ table, row: table, outcome: 'note', reason });
  }

  /** A table this server has no place for: its rows counted as read, and one line saying why. */
  notRead(table: string, rows: number, why: string): void {
    this.summary(table).read = rows;
    this.note(table, `${rows} ${why}`);
  }

  get skipped(): number {
    return [...this.tables.values()].reduce((n, s) => n + s.skipped, 0);
  }
}

export class ReferenceImportService {
  private readonly d: Deps;
  constructor(deps: Deps) {
    this.d = deps;
  }

  async run(file: string, options: ReferenceImportOptions = {}): Promise<ImportReport> {
    const ref = await ReferenceDatabase.open(file);
    const run = new Run();
    let committed = false;
    try {
      await this.d.db.transaction(async (trx) => {
        if (!options.merge) {
          const rows = await this.d.repo.gameRows(trx);
          if (Object.keys(rows).length > 0) {
            const what = Object.entries(rows).map(([table, n]) => `${n} ${table}`).join(', ');
            throw new Conflict(`This database already has game data (${what}): the import goes into an empty database. Run it with --merge to add to what is there (rows already present are left alone).`);
          }
        }
        await this.steps(ref, run, trx, options);
        if (options.dryRun || (run.skipped > 0 && !options.allowSkips)) throw new RollBack();
        committed = true;
      });
    } catch (err) {
      if (!(err instanceof RollBack)) throw err;
    } finally {
      await ref.close();
    }
    return { file, dryRun: Boolean(options.dryRun), merge: Boolean(options.merge), committed, tables: [...run.tables.values()], lines: run.lines, skipped: run.skipped };
  }

  private async steps(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction, options: ReferenceImportOptions): Promise<void> {
    const step = async (name: string, work: () => Promise<void>): Promise<void> => {
      try {
        await work();
      } catch (err) {
        if (err instanceof DomainError) throw err;
        throw new ReferenceImportError(`The import failed while writing ${name}, and wrote nothing: ${(err as Error).message}`, { cause: err });
      }
    };
    const progress = (table: string, total: number) => {
      let done = 0;
      return () => {
        done++;
        if (options.progress && total >= PROGRESS_EVERY && (done % PROGRESS_EVERY === 0 || done === total)) options.progress(`${table}: ${done}/${total}`);
      };
    };
    await step('worlds', () => this.worlds(ref, run));
    await step('users', () => this.importUsers(ref, run, trx, progress));
    await step('characters', () => this.importCharacters(ref, run, trx, progress, Boolean(options.merge)));
    await step('world_permissions', () => this.importGrants(ref, run, trx));
    await step('axis scores', () => this.importAxes(ref, run, trx, progress));
    await step('chat_messages', () => this.importChat(ref, run, trx, progress, Boolean(options.merge)));
    await step('the policy store', () => this.importPolicies(ref, run, trx));
    await step('the ledger', () => this.importLedger(options.ledgerDir, run, trx));
    run.notRead('sessions', await ref.count('sessions'), 'session(s) not carried over: sessions are not imported, everyone logs in again');
  }

  private world(worldId: unknown): World | undefined {
    return typeof worldId === 'string' ? this.d.worlds.get(worldId) : undefined;
  }

  /**
   * The reference tables this server has no table for: its world catalog (here the world
   * packages are; a world its game uses and no package provides is worth a line) and the axis
   * values (here the active axis bundle policy holds the labels).
   */
  private async worlds(ref: ReferenceDatabase, run: Run): Promise<void> {
    if (ref.has('worlds')) run.notRead('worlds', await ref.count('worlds'), "world row(s) not imported: this server's worlds come from the packages in its worlds root");
    const used = new Set<string>();
    for (const table of ['characters', 'chat_messages', 'world_permissions'] as const) for (const r of await ref.rows(table)) used.add(String(r.world_id));
    for (const worldId of used) {
      if (!this.world(worldId)) run.note('worlds', `world '${worldId}' has no package in this server's worlds root: its characters, chat and grants are skipped`);
    }
    if (ref.has('axis_value')) run.notRead('axis_value', await ref.count('axis_value'), "axis value row(s) not imported: here an axis's labels come from the world's active axis bundle (the policy store)");
  }

  private async importUsers(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction, progress: (t: string, n: number) => () => void): Promise<void> {
    const rows = await ref.rows('users');
    const tick = progress('users', rows.length);
    const now = toDbTime(this.d.clock());
    let emails = 0;
    for (const u of rows) {
      tick();
      const refId = Number(u.id);
      const raw = String(u.username);
      const label = `users#${refId} '${raw}'`;
      run.usernames.set(refId, raw);
      if (u.email_hash !== null && u.email_hash !== undefined) emails++;
      if (u.tombstoned_at !== null && u.tombstoned_at !== undefined) {
        run.count('users', 'mapped', label, 'deleted in the reference: not recreated (this server deletes accounts outright); its characters stay unowned');
        continue;
      }
      const origin = u.account_origin ?? 'legacy';
      const originRule = textRule('account_origin', origin, 20);
      if (originRule !== undefined) {
        run.count('users', 'skipped', label, originRule);
        continue;
      }
      const checked = importedUsername(raw, origin === 'visitor');
      if (typeof checked === 'string') {
        run.count('users', 'skipped', label, checked);
        continue;
      }
      const { username, notes: reasons } = checked;
      const hash = String(u.password_hash);
      if (!BCRYPT_HASH.test(hash)) {
        run.count('users', 'skipped', label, 'the password hash is not a bcrypt hash: nobody could log in with it');
        continue;
      }
      let role: Role = 'player';
      if (isRole(String(u.role))) role = String(u.role) as Role;
      else reasons.push(`unknown role '${String(u.role)}' imported as 'player'`);
      const isGuest = Number(u.is_guest) === 1;
      const guestExpiresAt = isGuest ? referenceTime(u.guest_expires_at) : null;
      if (guestExpiresAt !== null && guestExpiresAt <= now) {
        run.count('users', 'mapped', label, `temporary account expired at ${guestExpiresAt} UTC: not recreated (this server purges expired temporary accounts); its characters stay unowned`);
        continue;
      }
      const exact = await this.d.repo.userByName(username, trx);
      if (exact) {
        if (exact.passwordHash === hash) {
          run.users.set(refId, { id: exact.id, role });
          run.count('users', 'existing');
        } else run.count('users', 'skipped', label, `an account of this server already has the username '${username}'`);
        continue;
      }
      const key = usernameKey(username);
      const holder = await this.d.repo.userByKey(key, trx);
      if (holder) reasons.push(`the name differs from '${holder.username}' only in letter case: kept without the case-insensitive key, it logs in by its exact name`);
      let createdAt = referenceTime(u.created_at);
      if (createdAt === null) {
        createdAt = now;
        reasons.push('no readable created_at: set to the time of the import');
      }
      const id = await this.d.repo.insertUser(
        {
          username,
          usernameKey: holder ? null : key,
          passwordHash: hash,
          role,
          isActive: Number(u.is_active) === 1,
          isGuest,
          guestExpiresAt,
          accountOrigin: origin as string,
          createdAt,
          lastLogin: referenceTime(u.last_login),
        },
        trx,
      );
      run.users.set(refId, { id, role });
      run.mapped('users', label, reasons);
    }
    if (emails > 0) run.note('users', `${emails} email hash(es) not carried over: this server keeps no email`);
  }

  /** `name`, or the first of `name II`, `name III`, … (cut to fit 40 characters) that `free` accepts. */
  private async freeName(name: string, free: (candidate: string) => Promise<boolean>): Promise<string | undefined> {
    if (await free(name)) return name;
    for (const suffix of ROMAN) {
      const candidate = `${[...name].slice(0, MAX_CHARACTER_NAME - suffix.length - 1).join('').trimEnd()} ${suffix}`;
      if (await free(candidate)) return candidate;
    }
    return undefined;
  }

  private async importCharacters(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction, progress: (t: string, n: number) => () => void, merge: boolean): Promise<void> {
    const locations = new Map((await ref.rows('character_locations')).map((l) => [Number(l.character_id), l]));
    const rows = await ref.rows('characters');
    const tick = progress('characters', rows.length);
    for (const c of rows) {
      tick();
      const refId = Number(c.id);
      const storedName = String(c.name);
      const label = `characters#${refId} '${storedName}'`;
      // An admin's character tombstone renames it `tombstone_<id>_<name>` and detaches it.
      const tombstone = new RegExp(`^tombstone_${refId}_(.+)$`, 's').exec(storedName);
      const rawName = tombstone && (c.user_id === null || c.user_id === undefined) ? tombstone[1]! : storedName;
      run.characterNames.set(refId, rawName);
      const world = this.world(c.world_id);
      if (!world) {
        run.count('characters', 'skipped', label, `world '${String(c.world_id)}' is not loaded here`);
        this.skipInventory(run, c, 'its character was skipped');
        continue;
      }
      const stateRule = characterStateRule(c);
      if (stateRule !== undefined) {
        run.count('characters', 'skipped', label, stateRule);
        this.skipInventory(run, c, 'its character was skipped');
        continue;
      }
      const reasons: string[] = [];
      let ownerId: number | null = null;
      let ownerRole: Role = 'player';
      if (c.user_id !== null && c.user_id !== undefined) {
        const owner = run.users.get(Number(c.user_id));
        if (owner) ({ id: ownerId, role: ownerRole } = owner);
        else reasons.push(`its account '${run.usernames.get(Number(c.user_id)) ?? c.user_id}' was not imported: the character stays unowned`);
      }
      const checked = importedCharacterName(rawName, rank(ownerRole) === rank('player'));
      if (typeof checked === 'string') {
        run.count('characters', 'skipped', label, checked);
        this.skipInventory(run, c, 'its character was skipped');
        continue;
      }
      const name = checked.name;
      if (rawName !== storedName) reasons.push(`tombstoned in the reference: kept unowned under its name '${rawName}' (the reference keeps it, and its name taken, too)`);
      reasons.push(...checked.notes);
      const createdAt = referenceTime(c.created_at) ?? toDbTime(this.d.clock());
      // A character an earlier run imported: same world, owner and creation time under its name or a renamed one.
      const found: { existing?: number } = {};
      const finalName = await this.freeName(name, async (candidate) => {
        const holder = await this.d.repo.characterByNameKey(nameKey(candidate), trx);
        if (!holder) return true;
        if (merge && holder.worldId === world.id && holder.userId === ownerId && (await this.d.repo.exists('characters', { id: holder.id, created_at: createdAt }, trx))) {
          found.existing = holder.id;
          return true;
        }
        return false;
      });
      if (found.existing !== undefined) {
        run.characters.set(refId, { id: found.existing, name: finalName!, worldId: world.id, imported: false });
        run.count('characters', 'existing');
        continue;
      }
      if (finalName === undefined) {
        run.count('characters', 'skipped', label, `the name is taken here, and so are its numbered variants`);
        this.skipInventory(run, c, 'its character was skipped');
        continue;
      }
      if (finalName !== name) reasons.push(`the name '${name}' is taken here (names are unique across worlds in any letter case): renamed '${finalName}'`);
      let skeleton: string | null = nameSkeleton(finalName);
      if (await this.d.repo.skeletonTaken(world.id, skeleton, trx)) {
        reasons.push(`looks like the name of another character of '${world.id}': kept without the look-alike key`);
        skeleton = null;
      }
      const location = locations.get(refId);
      let roomId = location && location.world_id === world.id ? resolveRoom(world, String(location.room_id)) : undefined;
      if (roomId === undefined) {
        roomId = world.defaultSpawn.room;
        reasons.push(location ? `room '${String(location.room_id)}' is not in world '${world.id}': placed at its spawn '${roomId}'` : `no location: placed at the spawn '${roomId}'`);
      }
      const id = await this.d.repo.insertCharacter(
        {
          userId: ownerId,
          name: finalName,
          nameKey: nameKey(finalName),
          nameSkeleton: skeleton,
          worldId: world.id,
          roomId,
          isGuestCreated: Number(c.is_guest_created) === 1,
          createdAt,
          updatedAt: referenceTime(c.updated_at) ?? createdAt,
          // Checked by characterStateRule.
          stateSeed: Number(c.state_seed ?? 0),
          stateVersion: (c.state_version as string | null | undefined) ?? null,
          baseStateJson: (c.base_state_json as string | null | undefined) ?? null,
          currentStateJson: (c.current_state_json as string | null | undefined) ?? null,
          stateUpdatedAt: (c.state_updated_at as string | null | undefined) ?? null,
        },
        trx,
      );
      run.characters.set(refId, { id, name: finalName, worldId: world.id, imported: true });
      run.mapped('characters', label, reasons);
      await this.importInventory(run, c, world, id, trx);
    }
  }

  private inventoryOf(c: Row): unknown[] | string {
    try {
      const items = JSON.parse(String(c.inventory ?? '[]'));
      return Array.isArray(items) ? items : 'the inventory is not a JSON list';
    } catch {
      return 'the inventory is not JSON';
    }
  }

  private skipInventory(run: Run, c: Row, why: string): void {
    const items = this.inventoryOf(c);
    if (typeof items === 'string') return;
    for (const item of items) run.count('items', 'skipped', `characters#${c.id} item '${String(item)}'`, why);
  }

  /** Held items as item rows with no room, one per id (the reference holds each id once). */
  private async importInventory(run: Run, c: Row, world: World, characterId: number, trx: Knex.Transaction): Promise<void> {
    const items = this.inventoryOf(c);
    if (typeof items === 'string') {
      run.count('items', 'skipped', `characters#${c.id} inventory`, items);
      return;
    }
    const held: string[] = [];
    for (const item of items) {
      if (typeof item === 'string' && world.items.has(item)) {
        held.push(item);
        run.count('items', 'imported');
      } else run.count('items', 'skipped', `characters#${c.id} item '${String(item)}'`, `no item '${String(item)}' in world '${world.id}'`);
    }
    await this.d.repo.insertHeldItems(world.id, characterId, held, trx);
  }

  private async importGrants(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction): Promise<void> {
    for (const g of await ref.rows('world_permissions')) {
      const label = `world_permissions '${run.usernames.get(Number(g.user_id)) ?? g.user_id}' → '${String(g.world_id)}'`;
      const user = run.users.get(Number(g.user_id));
      if (!user) {
        run.count('world_permissions', 'skipped', label, 'its account was not imported');
        continue;
      }
      if (!this.world(g.world_id)) {
        run.count('world_permissions', 'skipped', label, `world '${String(g.world_id)}' is not loaded here`);
        continue;
      }
      if (await this.d.repo.grantExists(user.id, String(g.world_id), trx)) {
        run.count('world_permissions', 'existing');
        continue;
      }
      await this.d.repo.insertGrant({ userId: user.id, worldId: String(g.world_id), canAccess: Number(g.can_access) === 1, createdAt: referenceTime(g.created_at) ?? toDbTime(this.d.clock()) }, trx);
      run.count('world_permissions', 'imported');
    }
  }

  /** Axis scores and the axis event log, by axis name, for the characters this run imported. */
  private async importAxes(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction, progress: (t: string, n: number) => () => void): Promise<void> {
    // An axis name this server's registry cannot hold leaves its scores and deltas out.
    const axisNames = new Map<number, string>();
    const badAxes = new Map<number, string>();
    for (const a of await ref.rows('axis')) {
      const why = textRule('axis name', a.name, MAX_AXIS_NAME) ?? (plainText(String(a.name)) === a.name ? undefined : 'the axis name holds invisible or control characters, or surrounding spaces');
      if (why === undefined) axisNames.set(Number(a.id), String(a.name));
      else badAxes.set(Number(a.id), `axis#${a.id}: ${why}`);
    }
    // This server's axis ids by world and name, registered on first use.
    const known = new Map<string, number>();
    const axisIds = async (worldId: string, names: string[]): Promise<Map<string, number>> => {
      const missing = names.filter((n) => !known.has(`${worldId}\n${n}`));
      if (missing.length > 0) for (const [name, id] of await this.d.axisState.ensureAxes(worldId, missing, trx)) known.set(`${worldId}\n${name}`, id);
      return new Map(names.map((n) => [n, known.get(`${worldId}\n${n}`)!]));
    };
    const scores = await ref.rows('character_axis_score');
    const tick = progress('character_axis_score', scores.length);
    for (const s of scores) {
      tick();
      const label = `character_axis_score character#${s.character_id} axis#${s.axis_id}`;
      const character = run.characters.get(Number(s.character_id));
      const axis = axisNames.get(Number(s.axis_id));
      if (!character) run.count('character_axis_score', 'skipped', label, 'its character was not imported');
      else if (!character.imported) run.count('character_axis_score', 'existing');
      else if (axis === undefined) run.count('character_axis_score', 'skipped', label, badAxes.get(Number(s.axis_id)) ?? 'no such axis in the reference');
      else if (!isAxisScore(s.axis_score)) run.count('character_axis_score', 'skipped', label, `axis_score ${String(s.axis_score)} is not a number from 0 to 1`);
      else {
        const ids = await axisIds(character.worldId, [axis]);
        await this.d.axisState.setScores(character.id, [{ axisId: ids.get(axis)!, score: Number(s.axis_score) }], referenceTime(s.updated_at) ?? toDbTime(this.d.clock()), trx);
        run.count('character_axis_score', 'imported');
      }
    }
    // The reference logs one event for several characters; here each character has its own.
    const types = new Map((await ref.rows('event_type')).map((t) => [Number(t.id), String(t.name)]));
    const metadata = new Map<number, Record<string, string>>();
    for (const m of await ref.rows('event_metadata')) {
      const id = Number(m.event_id);
      metadata.set(id, { ...metadata.get(id), [String(m.key)]: String(m.value) });
    }
    const deltas = new Map<number, Row[]>();
    for (const d of await ref.rows('event_entity_axis_delta')) deltas.set(Number(d.event_id), [...(deltas.get(Number(d.event_id)) ?? []), d]);
    const deltaRule = (d: Row): string | undefined => {
      const axis = Number(d.axis_id);
      if (badAxes.has(axis)) return badAxes.get(axis);
      if (!axisNames.has(axis)) return `a delta names axis#${axis}, which the reference does not have`;
      if (!isAxisScore(d.old_score) || !isAxisScore(d.new_score)) return `a delta's scores (${String(d.old_score)} to ${String(d.new_score)}) are not numbers from 0 to 1`;
      return undefined;
    };
    const events = await ref.rows('event');
    const eventTick = progress('event', events.length);
    for (const e of events) {
      eventTick();
      const label = `event#${e.id}`;
      const byCharacter = new Map<number, Row[]>();
      for (const d of deltas.get(Number(e.id)) ?? []) byCharacter.set(Number(d.character_id), [...(byCharacter.get(Number(d.character_id)) ?? []), d]);
      if (byCharacter.size === 0) {
        run.count('event', 'skipped', label, 'an axis event with no character deltas: events here belong to a character');
        continue;
      }
      const eventType = types.get(Number(e.event_type_id)) ?? 'unknown';
      const eventMetadata = metadata.get(Number(e.id)) ?? {};
      const metadataBytes = Buffer.byteLength(canonicalJson(eventMetadata));
      const eventRule =
        textRule('event type', eventType, 64) ??
        (metadataBytes > MAX_EVENT_METADATA_BYTES ? `its metadata is ${metadataBytes} bytes as JSON, over the ${MAX_EVENT_METADATA_BYTES} of an axis event's` : undefined);
      for (const [refCharacter, rows] of byCharacter) {
        const character = run.characters.get(refCharacter);
        if (!character) {
          run.count('event', 'skipped', `${label} character#${refCharacter}`, 'its character was not imported');
          continue;
        }
        if (!character.imported) {
          run.count('event', 'existing');
          continue;
        }
        const why = eventRule ?? rows.map(deltaRule).find((r) => r !== undefined);
        if (why !== undefined) {
          run.count('event', 'skipped', `${label} character#${refCharacter}`, why);
          continue;
        }
        const names = rows.map((d) => axisNames.get(Number(d.axis_id))!);
        const ids = await axisIds(character.worldId, names);
        await this.d.axisState.insertEvent(
          {
            characterId: character.id,
            worldId: character.worldId,
            eventType,
            description: `Imported from the reference server (event ${e.id}).`,
            metadata: eventMetadata,
            createdAt: referenceTime(e.timestamp) ?? toDbTime(this.d.clock()),
            deltas: rows.map((d) => ({ axisId: ids.get(axisNames.get(Number(d.axis_id))!)!, oldScore: Number(d.old_score), newScore: Number(d.new_score) })),
          },
          trx,
        );
        run.count('event', 'imported');
      }
    }
  }

  private async importChat(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction, progress: (t: string, n: number) => () => void, merge: boolean): Promise<void> {
    const rows = await ref.rows('chat_messages');
    const tick = progress('chat_messages', rows.length);
    const batch: ImportedChat[] = [];
    for (const m of rows) {
      tick();
      const label = `chat_messages#${m.id}`;
      const world = this.world(m.world_id);
      if (!world) {
        run.count('chat_messages', 'skipped', label, `world '${String(m.world_id)}' is not loaded here`);
        continue;
      }
      const roomId = resolveRoom(world, String(m.room));
      if (roomId === undefined) {
        run.count('chat_messages', 'skipped', label, `room '${String(m.room)}' is not in world '${world.id}'`);
        continue;
      }
      if (typeof m.message !== 'string') {
        run.count('chat_messages', 'skipped', label, 'the message has no text');
        continue;
      }
      const reasons: string[] = [];
      let recipient: number | null = null;
      if (m.recipient_character_id !== null && m.recipient_character_id !== undefined) {
        const target = run.characters.get(Number(m.recipient_character_id));
        if (!target) {
          // Without its recipient a whisper would read as said to the whole room.
          run.count('chat_messages', 'skipped', label, 'a whisper whose recipient was not imported');
          continue;
        }
        recipient = target.id;
      } else if (WHISPER_PREFIX.test(m.message)) {
        // The reference clears a whisper's recipient when that character is deleted.
        run.count('chat_messages', 'skipped', label, 'a whisper whose recipient no longer exists in the reference');
        continue;
      }
      // Stored as this server stores chat: HTML-escaped, with the reference's [YELL]/[WHISPER: …] prefixes.
      const raw = m.message;
      const message = plainText(raw);
      // What was said, as a player typed it: no longer than a command.
      const said = [...decodeEntities(message.replace(CHAT_PREFIX, ''))].length;
      if (said === 0) {
        run.count('chat_messages', 'skipped', label, 'the message has no text');
        continue;
      }
      if (said > MAX_COMMAND_CHARACTERS) {
        run.count('chat_messages', 'skipped', label, `the message is ${said} characters long: this server's chat carries at most ${MAX_COMMAND_CHARACTERS} (a command's limit)`);
        continue;
      }
      if (message !== raw) reasons.push('invisible or control characters, or surrounding spaces, removed from the text');
      const sender = m.character_id === null || m.character_id === undefined ? undefined : run.characters.get(Number(m.character_id));
      const senderName = sender?.name ?? this.absentSender(run, m);
      if (!sender) reasons.push(`its sender's character was not imported: shown as '${senderName}'`);
      const row: ImportedChat = {
        worldId: world.id,
        roomId,
        characterId: sender?.id ?? null,
        senderName,
        channel: chatChannel(message, m.recipient_character_id),
        recipientCharacterId: recipient,
        message,
        createdAt: referenceTime(m.timestamp) ?? toDbTime(this.d.clock()),
      };
      if (merge && (await this.d.repo.chatExists(row, trx))) {
        run.count('chat_messages', 'existing');
        continue;
      }
      batch.push(row);
      run.mapped('chat_messages', label, reasons);
    }
    this.noteRetention(run, batch);
    const ids = await this.d.repo.insertChat(batch, trx);
    // Announced as any chat is, by id, one room per event and in bounded events: running
    // instances (an import under --merge) drop their cached rooms, and players there receive
    // the messages on their streams.
    const byRoom = new Map<string, { worldId: string; roomId: string; ids: number[] }>();
    batch.forEach((m, i) => {
      const key = `${m.worldId}\n${m.roomId}`;
      const room = byRoom.get(key) ?? { worldId: m.worldId, roomId: m.roomId, ids: [] };
      room.ids.push(ids[i]!);
      byRoom.set(key, room);
    });
    for (const room of byRoom.values()) {
      for (const chunk of idChunks(room.ids)) await this.d.events.publish({ type: 'chat', worldId: room.worldId, roomIds: [room.roomId], messageIds: chunk }, trx);
    }
  }

  /**
   * The name a message shows when its sender's character was not imported: that character's
   * name, or else its account's, as this server would keep them; else 'Unknown'.
   */
  private absentSender(run: Run, m: Row): string {
    const characterName = run.characterNames.get(Number(m.character_id));
    const asCharacter = characterName === undefined ? undefined : importedCharacterName(characterName, false);
    if (asCharacter !== undefined && typeof asCharacter !== 'string') return asCharacter.name;
    const username = run.usernames.get(Number(m.user_id));
    const asAccount = username === undefined ? undefined : importedUsername(username, false);
    if (asAccount !== undefined && typeof asAccount !== 'string') return asAccount.username;
    return 'Unknown';
  }

  /** Imported chat that this server's retention ([chat] retention_days, max_messages_per_room) will delete at its next prune. */
  private noteRetention(run: Run, batch: readonly ImportedChat[]): void {
    const { retentionDays, maxMessagesPerRoom } = this.d.chat;
    const before = toDbTime(new Date(this.d.clock().getTime() - retentionDays * 86_400_000));
    const old = batch.filter((m) => m.createdAt < before).length;
    if (old > 0) {
      run.note('chat_messages', `${old} message(s) are older than [chat] retention_days (${retentionDays}): this server deletes them at its next chat prune; raise retention_days before starting it to keep them`);
    }
    const perRoom = new Map<string, number>();
    for (const m of batch) perRoom.set(`${m.worldId}/${m.roomId}`, (perRoom.get(`${m.worldId}/${m.roomId}`) ?? 0) + 1);
    const over = [...perRoom.values()].reduce((n, count) => n + Math.max(0, count - maxMessagesPerRoom), 0);
    if (over > 0) {
      run.note('chat_messages', `${over} message(s) are beyond the newest [chat] max_messages_per_room (${maxMessagesPerRoom}) of their room: this server deletes them at its next chat prune; raise max_messages_per_room to keep them`);
    }
  }

  /** The policy store: the same tables here, each row checked as this server checks its own (reference-policies.ts). */
  private async importPolicies(ref: ReferenceDatabase, run: Run, trx: Knex.Transaction): Promise<void> {
    if (!ref.hasPolicyStore) {
      run.note('policy', 'the reference database has no policy store');
      return;
    }
    await importPolicyStore(ref, { tally: run, trx, repo: this.d.repo, policies: this.d.policies, world: (worldId) => this.world(worldId) });
  }

  /**
   * Each `*.jsonl` file of the ledger directory, line by line, into the event ledger (ids, times
   * and checksums as they are). Regular files only (reference-ledger.ts): a link or a FIFO among
   * them stops the import.
   */
  private async importLedger(dir: string | undefined, run: Run, trx: Knex.Transaction): Promise<void> {
    if (dir === undefined) {
      run.note('ledger', 'no --ledger directory given: the reference ledger (its <world>.jsonl files) was not imported');
      return;
    }
    try {
      await this.importLedgerFiles(dir, run, trx);
    } catch (err) {
      if (err instanceof ReferenceLedgerError) throw new ReferenceImportError(`${err.message}. Nothing was written.`);
      throw err;
    }
  }

  private async importLedgerFiles(dir: string, run: Run, trx: Knex.Transaction): Promise<void> {
    const files = await ledgerFiles(dir);
    if (files.length === 0) run.note('ledger', `no .jsonl file in '${dir}'`);
    let unverified = 0;
    for (const file of files) {
      for await (const line of ledgerLines(file, MAX_LEDGER_LINE_BYTES)) {
        const label = `${path.basename(file)}:${line.number}`;
        const envelope = 'text' in line ? ledgerEnvelope(line.text) : `the line is ${line.tooLong} bytes long, over the ${MAX_LEDGER_LINE_BYTES} of a ledger line`;
        if (typeof envelope === 'string') {
          run.count('ledger', 'skipped', label, envelope);
          continue;
        }
        if (await this.d.repo.ledgerEventExists(envelope.event_id, trx)) {
          run.count('ledger', 'existing');
          continue;
        }
        const { _checksum: checksum, ...body } = envelope;
        if (envelopeChecksum(body) !== checksum) unverified++;
        await this.d.ledger.insert(
          {
            event_id: body.event_id,
            world_id: body.world_id,
            event_type: body.event_type,
            schema_version: body.schema_version,
            ipc_hash: body.ipc_hash,
            meta_json: canonicalJson(body.meta),
            data_json: canonicalJson(body.data),
            timestamp: body.timestamp,
            checksum,
          },
          trx,
        );
        run.count('ledger', 'imported');
      }
    }
    if (unverified > 0) run.note('ledger', `${unverified} line(s) whose _checksum does not match their content were kept as they are (the ledger shows them unverified)`);
  }
}

/**
 * The username an imported account keeps, with a note for each rule of this server it breaks
 * but keeps (login checks only the length: the account still logs in by it), or why it cannot
 * be kept. The reference limits usernames to 2..20 characters, nothing else.
 */
export function importedUsername(raw: string, selfRegistered: boolean): { username: string; notes: string[] } | string {
  if (plainText(raw) !== raw.trim()) return 'the username holds invisible or control characters: nobody could type it';
  const notes: string[] = [];
  const username = raw.normalize('NFC').trim();
  if (username !== raw) notes.push(`username stored as '${username}' (trimmed, Unicode NFC as logins arrive)`);
  try {
    normalizeUsername(username);
  } catch (err) {
    return `this server refuses the username: ${(err as Error).message}`;
  }
  try {
    newUsername(username);
  } catch (err) {
    notes.push(`kept as it is, though this server refuses it for a new account: ${(err as Error).message}`);
  }
  const reserved = reservedWordIn(username);
  if (reserved !== undefined && selfRegistered) notes.push(`kept as it is, though a self-registered name may not carry the reserved word '${reserved}' here`);
  return { username, notes };
}

/**
 * Why a character's axis state cannot be kept as it is, or undefined: the seed as this server
 * draws one (0..MAX_SEED; none is the reference's default 0), the snapshots as it writes them
 * (no larger than the axis bundle they come from may be), text within its column.
 */
function characterStateRule(c: Row): string | undefined {
  const seed = c.state_seed ?? 0;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0 || seed > MAX_SEED) return `state_seed ${String(seed)} is not a whole number from 0 to ${MAX_SEED}`;
  const text = textRule('state_version', c.state_version, 64, { nullable: true }) ?? textRule('state_updated_at', c.state_updated_at, 32, { nullable: true });
  if (text !== undefined) return text;
  for (const column of ['base_state_json', 'current_state_json']) {
    const value = c[column];
    if (value === null || value === undefined) continue;
    if (typeof value === 'string' && Buffer.byteLength(value) > MAX_CONTENT_BYTES) return `${column} is larger than the ${MAX_CONTENT_BYTES} bytes of an axis bundle`;
    const parsed = jsonRule(column, value, 'object');
    if (typeof parsed === 'string') return parsed;
    if (!isAxisSnapshot(parsed.value)) return `${column} is not an axis snapshot as this server writes one ({world_id, seed, policy_hash, axes: {<axis>: {score, label}}})`;
  }
  return undefined;
}

/** Anything a character name may not hold here. */
const NOT_NAME_CHARACTERS = /[^\p{L}' -]+/gu;

/**
 * The name an imported character gets, with notes, or why it has none: cleaned as a player's
 * name is (invisible characters, NFC, trimmed); a name this server refuses loses every
 * character a name may not hold (the reference accepts any text) and is cut to 40; a reserved
 * word stays (the name is not being chosen now) with a note.
 */
export function importedCharacterName(raw: string, playerOwned: boolean): { name: string; notes: string[] } | string {
  const notes: string[] = [];
  let name: string;
  try {
    name = validateCharacterName(raw, true);
    if (name !== raw) notes.push(`name cleaned to '${name}'`);
  } catch (err) {
    const refused = (err as Error).message;
    const stripped = [...plainText(raw).normalize('NFC').replace(NOT_NAME_CHARACTERS, ' ').replace(/ +/g, ' ').trim()].slice(0, MAX_CHARACTER_NAME).join('').trim();
    try {
      name = validateCharacterName(stripped, true);
    } catch {
      return `this server refuses the name: ${refused}`;
    }
    notes.push(`renamed '${name}': ${refused}`);
  }
  const reserved = reservedWordIn(name);
  if (reserved !== undefined && playerOwned) notes.push(`kept the reserved word '${reserved}', which a player may not choose for a new name here`);
  return { name, notes };
}

type LedgerLine = Envelope & { _checksum: string };

/** A ledger line as an envelope, or what is wrong with it. */
function ledgerEnvelope(line: string): LedgerLine | string {
  let value: unknown;
  try {
    value = parseJson(line);
  } catch {
    return 'not a JSON line';
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const v = value as Record<string, unknown>;
  const limits: Record<string, number> = { _checksum: 80, event_id: 32, timestamp: 40, world_id: 64, event_type: 64, schema_version: 16 };
  for (const [field, max] of Object.entries(limits)) {
    if (typeof v[field] !== 'string' || v[field] === '' || (v[field] as string).length > max) return `'${field}' is missing or not a string of at most ${max} characters`;
  }
  if (!(LEDGER_EVENT_TYPES as readonly unknown[]).includes(v.event_type)) return `'event_type' is none of ${LEDGER_EVENT_TYPES.join(', ')}`;
  if (v.ipc_hash !== null && (typeof v.ipc_hash !== 'string' || v.ipc_hash.length > 64)) return "'ipc_hash' is neither null nor a string of at most 64 characters";
  for (const field of ['meta', 'data']) {
    const f = v[field];
    if (typeof f !== 'object' || f === null || Array.isArray(f)) return `'${field}' is not an object`;
  }
  return v as unknown as LedgerLine;
}
