/**
 * The admin database listings. Four of them (connections, player locations, sessions, chat
 * messages) are limited to the caller's world when the caller's session is bound to one.
 */
import { fromDbTime, toDbTime, type Clock } from '../../db/clock.ts';
import type { InspectionRepository } from '../../db/repositories/inspection-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { NotFound } from '../../shared/errors.ts';
import type { WorldCatalog } from '../worlds/world-catalog.ts';
import type { AuthenticatedSession } from '../accounts/session-service.ts';

type Schemas = components['schemas'];

/**
 * A session's handle as the reference server's clients read it from `session_id`: its row id in
 * decimal, which `POST /admin/session/kick` accepts, never the token (docs/decisions.md).
 */
const sessionHandle = (id: number): string => String(id);

/**
 * `character_locations`, the reference server's table of where characters stand, which its
 * admin client reads by name: here the room is a column of `characters`, so the reader answers
 * that name from there (docs/decisions.md, "Accounts and sessions").
 */
const CHARACTER_LOCATIONS = 'character_locations';

/** Sessions idle longer than this do not count as connections. */
const CONNECTION_WINDOW_MINUTES = 30;

/** A listed session; `idleSince`: a request after it keeps a session connected ([presence] idle_seconds). */
/** `callerId`: the session asking, whose row is marked `current`. */
function toSessionRow(r: Record<string, unknown>, idleSince: string, callerId?: number): Schemas['SessionRow'] {
  const openStreams = Number(r.open_streams ?? 0);
  const lastActivity = String(r.last_activity);
  const disconnectedAt = (r.disconnected_at as string | null) ?? null;
  return {
    id: Number(r.id),
    session_id: sessionHandle(Number(r.id)),
    username: String(r.username),
    character_name: (r.character_name as string | null) ?? null,
    world_id: (r.world_id as string | null) ?? null,
    client_type: String(r.client_type),
    created_at: String(r.created_at),
    last_activity: String(r.last_activity),
    expires_at: (r.expires_at as string | null) ?? null,
    open_streams: openStreams,
    connected: openStreams > 0 || (lastActivity > idleSince && (disconnectedAt === null || lastActivity > disconnectedAt)),
    away: Boolean(r.away),
    ...(callerId === undefined ? {} : { current: Number(r.id) === callerId }),
  };
}

/** An account's mute while it holds; one that ended by itself is history (the audit log keeps it). */
function muteInForce(until: string | null, reason: string | null, now: Date): Pick<Schemas['PlayerRow'], 'muted_until' | 'mute_reason'> {
  return until !== null && until > toDbTime(now) ? { muted_until: until, mute_reason: reason } : { muted_until: null, mute_reason: null };
}

export class InspectionService {
  private readonly repo: InspectionRepository;
  private readonly worlds: WorldCatalog;
  private readonly clock: Clock;

  private readonly idleMs: number;

  constructor(repo: InspectionRepository, worlds: WorldCatalog, clock: Clock, idleMs: number) {
    this.repo = repo;
    this.worlds = worlds;
    this.clock = clock;
    this.idleMs = idleMs;
  }

  private idleSince(now: Date): string {
    return toDbTime(new Date(now.getTime() - this.idleMs));
  }

  /** The world a listing is limited to: the caller's, when its session is bound. */
  private scope(caller: AuthenticatedSession): string | undefined {
    return caller.worldId ?? undefined;
  }

  async players(): Promise<Schemas['PlayerRow'][]> {
    const now = this.clock();
    const [users, sessions] = await Promise.all([this.repo.players(), this.repo.sessions(now, { orderBy: 'created_at' })]);
    const online = new Map<number, { account: boolean; worlds: Set<string> }>();
    for (const s of sessions) {
      const entry = online.get(Number(s.user_id)) ?? { account: true, worlds: new Set<string>() };
      if (s.character_id !== null && s.world_id !== null) entry.worlds.add(String(s.world_id));
      online.set(Number(s.user_id), entry);
    }
    return users.map((u) => {
      const status = online.get(Number(u.id));
      return {
        id: Number(u.id),
        username: String(u.username),
        role: u.role as Schemas['Role'],
        account_origin: String(u.account_origin),
        is_guest: Boolean(u.is_guest),
        guest_expires_at: (u.guest_expires_at as string | null) ?? null,
        created_at: String(u.created_at),
        last_login: (u.last_login as string | null) ?? null,
        is_active: Boolean(u.is_active),
        ...muteInForce(u.muted_until as string | null, u.mute_reason as string | null, now),
        character_count: Number(u.character_count),
        is_online_account: status !== undefined,
        is_online_in_world: (status?.worlds.size ?? 0) > 0,
        online_world_ids: [...(status?.worlds ?? [])].sort(),
      };
    });
  }

  async connections(caller: AuthenticatedSession): Promise<Schemas['ConnectionRow'][]> {
    const now = this.clock();
    const rows = await this.repo.sessions(now, {
      worldId: this.scope(caller),
      activeSince: new Date(now.getTime() - CONNECTION_WINDOW_MINUTES * 60_000),
      orderBy: 'last_activity',
    });
    return rows.map((r) => {
      const row = toSessionRow(r, this.idleSince(now));
      return { ...row, age_seconds: Math.max(0, Math.floor((now.getTime() - fromDbTime(row.last_activity).getTime()) / 1000)) };
    });
  }

  async sessions(caller: AuthenticatedSession): Promise<Schemas['SessionRow'][]> {
    const now = this.clock();
    const rows = await this.repo.sessions(now, { worldId: this.scope(caller), orderBy: 'created_at' });
    return rows.map((r) => toSessionRow(r, this.idleSince(now), caller.id));
  }

  async locations(caller: AuthenticatedSession): Promise<Schemas['LocationRow'][]> {
    const rows = await this.repo.locations(this.scope(caller));
    return rows.map((r) => {
      const roomId = (r.room_id as string | null) ?? null;
      const room = roomId === null ? undefined : this.worlds.get(String(r.world_id))?.rooms.get(roomId);
      return {
        character_id: Number(r.character_id),
        character_name: String(r.character_name),
        world_id: String(r.world_id),
        room_id: roomId,
        zone_id: room?.zoneId ?? null,
        updated_at: String(r.updated_at),
      };
    });
  }

  /** `worldId` narrows the listing to that world, within the caller's (another world than the caller's lists nothing). */
  async chatMessages(caller: AuthenticatedSession, limit: number, worldId?: string): Promise<Schemas['ChatMessageRow'][]> {
    const scope = this.scope(caller);
    if (worldId !== undefined && scope !== undefined && worldId !== scope) return [];
    const rows = await this.repo.chatMessages(limit, worldId ?? scope);
    return rows.map((r) => ({
      id: Number(r.id),
      username: String(r.username),
      message: String(r.message),
      channel: r.channel as Schemas['ChatMessageRow']['channel'],
      world_id: String(r.world_id),
      room_id: String(r.room_id),
      created_at: String(r.created_at),
    }));
  }

  async tables(): Promise<Schemas['TableInfo'][]> {
    const names = await this.repo.tableNames();
    return Promise.all(
      names.map(async (name) => ({ name, columns: await this.repo.columns(name), row_count: await this.repo.rowCount(name) })),
    );
  }

  /** Each table with its column names and foreign keys, in the reference server's shape. */
  async schema(): Promise<Schemas['SchemaTable'][]> {
    const names = await this.repo.tableNames();
    return Promise.all(
      names.map(async (name) => ({ name, columns: (await this.repo.columns(name)).map((c) => c.name), foreign_keys: await this.repo.foreignKeys(name) })),
    );
  }

  /**
   * Every world with the characters online there (an unexpired session that is not away plays
   * them, as the lists show them) and the sessions that play them, newest activity first.
   */
  async worldStatus(): Promise<Schemas['WorldStatus'][]> {
    const [worlds, sessions] = await Promise.all([this.repo.worlds(), this.repo.sessions(this.clock(), { orderBy: 'last_activity' })]);
    const playing = sessions.filter((s) => s.character_id !== null && s.world_id !== null && !s.away);
    return worlds.map((w) => {
      const here = playing.filter((s) => s.world_id === w.id);
      return {
        world_id: String(w.id),
        name: String(w.name),
        description: String(w.description),
        is_active: Boolean(w.is_active),
        is_online: here.length > 0,
        active_session_count: here.length,
        active_character_count: new Set(here.map((s) => Number(s.character_id))).size,
        last_activity: here.length > 0 ? String(here[0]!.last_activity) : null,
        active_characters: here.map((s) => ({
          character_id: Number(s.character_id),
          character_name: String(s.character_name),
          username: String(s.username),
          session_id: sessionHandle(Number(s.id)),
          last_activity: String(s.last_activity),
          client_type: String(s.client_type),
        })),
      };
    });
  }

  async table(name: string, limit: number, offset: number): Promise<{ table: string; columns: string[]; rows: unknown[][] }> {
    if (name === CHARACTER_LOCATIONS) {
      return { table: name, columns: ['character_id', 'world_id', 'room_id', 'updated_at'], rows: await this.repo.characterLocations(limit, offset) };
    }
    const names = await this.repo.tableNames();
    if (!names.includes(name)) throw new NotFound(`Table '${name}' does not exist`);
    const columns = (await this.repo.columns(name)).map((c) => c.name);
    return { table: name, columns, rows: await this.repo.rows(name, columns, limit, offset) };
  }
}
