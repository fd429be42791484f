/**
 * Self-service accounts: registration of temporary accounts, login, logout and password
 * change, with the checks of the interface specification in its order and wording.
 */
import type { Config } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';
import { toDbTime, type Clock } from '../../db/clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { NewUser, UserRecord, UserRepository } from '../../db/repositories/user-repository.ts';
import type { Knex } from 'knex';
import type { SessionRepository } from '../../db/repositories/session-repository.ts';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { components } from '../../../generated/openapi.d.ts';
import { InvalidInput, TooManyRequests, Unauthenticated } from '../../shared/errors.ts';
import type { WorldAccessService } from '../worlds/world-access.ts';
import type { PasswordHasher } from './password-hasher.ts';
import { checkStandardPassword } from './password-policy.ts';
import type { AuthenticatedSession, OpenedSession, SessionService } from './session-service.ts';
import type { Limit, Limits } from '../limits/limits.ts';
import { usernameKey } from '../../shared/names.ts';
import { reservedWordIn } from './reserved-names.ts';
import type { Presence } from '../presence/presence.ts';

type LoginResponse = components['schemas']['LoginResult'];
type SuccessMessage = components['schemas']['SuccessMessage'];

export const TEMPORARY_ACCOUNT_HOURS = 24;
const BAD_CREDENTIALS = 'Invalid username or password';
const WRONG_CURRENT_PASSWORD = 'Current password is incorrect';

/**
 * What a new username may consist of: nothing a listing or a greeting could render as markup,
 * and no invisible, control or look-alike characters.
 */
const USERNAME_CHARACTERS = /^[A-Za-z0-9_.-]+$/;

/** Trimmed username, or 400 when its length is outside 2..20 (the only rule a login applies). */
export function normalizeUsername(raw: string): string {
  const username = raw.trim();
  if (username.length < 2 || username.length > 20) throw new InvalidInput('Username must be 2-20 characters');
  return username;
}

/** The name of a new account: normalizeUsername's length, then USERNAME_CHARACTERS (400 otherwise). */
export function newUsername(raw: string): string {
  const username = normalizeUsername(raw);
  if (!USERNAME_CHARACTERS.test(username)) {
    throw new InvalidInput("Username may contain only letters (A-Z, a-z), digits and the characters '_', '.' and '-'");
  }
  return username;
}

/** A self-registered account: a player that expires TEMPORARY_ACCOUNT_HOURS after creation. */
export function temporaryAccount(username: string, passwordHash: string, now: Date): NewUser {
  return {
    username,
    passwordHash,
    role: 'player',
    isGuest: true,
    guestExpiresAt: toDbTime(new Date(now.getTime() + TEMPORARY_ACCOUNT_HOURS * 3_600_000)),
    accountOrigin: 'visitor',
    createdAt: toDbTime(now),
  };
}

/** 400 with every failing STANDARD rule, joined by single spaces. */
export function assertStandardPassword(password: string): void {
  const check = checkStandardPassword(password);
  if (!check.ok) throw new InvalidInput(check.errors.join(' '));
}

export interface AccountDeps {
  db: Db;
  users: UserRepository;
  sessions: SessionRepository;
  characters: CharacterRepository;
  sessionService: SessionService;
  worldAccess: WorldAccessService;
  hasher: PasswordHasher;
  clock: Clock;
  config: Config;
  presence: Presence;
  /**
   * Failed passwords count per account (docs/decisions.md): `failedLogins`, `failedPasswordChanges`;
   * failed logins per address and per address and name: `loginByAddress`, `loginByAddressAndName`.
   */
  limits: Pick<Limits, 'failedLogins' | 'failedPasswordChanges' | 'loginByAddress' | 'loginByAddressAndName'>;
}

export class AccountService {
  private readonly d: AccountDeps;
  /** Hash compared against when the username is unknown, so timing does not reveal it. */
  private dummyHash: Promise<string> | undefined;

  constructor(deps: AccountDeps) {
    this.d = deps;
  }

  async register(rawUsername: string, password: string, passwordConfirm: string): Promise<SuccessMessage> {
    const username = newUsername(rawUsername);
    const reserved = reservedWordIn(username);
    if (reserved !== undefined) throw new InvalidInput(`Username must not contain the reserved word '${reserved}'`);
    if (await this.d.users.usernameTaken(username)) throw new InvalidInput('Username already taken');
    if (password !== passwordConfirm) throw new InvalidInput('Passwords do not match');
    assertStandardPassword(password);
    const now = this.d.clock();
    const passwordHash = await this.d.hasher.hash(password);
    try {
      await this.d.users.create(temporaryAccount(username, passwordHash, now));
    } catch (err) {
      // Two registrations racing for one name: the database decides, the loser hears why.
      if (isUniqueViolation(err)) throw new InvalidInput('Username already taken');
      throw err;
    }
    return {
      success: true,
      message: `Temporary account created successfully! You can now login as ${username}. Character creation is a separate step.`,
    };
  }

  /**
   * The name of the account a player typed at a door that takes names in any letter case (the
   * telnet door's `connect`): the exact name when an account has it, else the account whose
   * name it is in another case (names are unique so); null when there is none. POST /login keeps
   * the specification's exact lookup (docs/decisions.md, "Names as players type them").
   */
  async usernameFor(typed: string): Promise<string | null> {
    const username = typed.trim();
    const user = (await this.d.users.findByUsername(username)) ?? (await this.d.users.findByUsernameKey(username));
    return user?.username ?? null;
  }

  /**
   * The account for these credentials, or 401 (the same message for an unknown name and a
   * wrong password). Past the account's allowance of failures a wrong password is 429; the
   * right one is always let in. A login from `address` (the client address as the limits key
   * it) is refused with 429 before its password is checked while the address has failed
   * `login_per_address` times in the window, or this name from it `login_per_username` times;
   * only failures count there (docs/decisions.md, "Failed logins count, per address and per
   * name"), so the right password costs a shared address nothing.
   */
  async authenticate(rawUsername: string, password: string, address: string): Promise<UserRecord> {
    const username = normalizeUsername(rawUsername);
    const counted: Array<[Limit, string]> = [
      [this.d.limits.loginByAddress, address],
      [this.d.limits.loginByAddressAndName, `${address} ${usernameKey(username)}`],
    ];
    for (const [limit, key] of counted) {
      const refused = await limit.check(key);
      if (refused) throw refused;
    }
    try {
      return await this.verify(username, password);
    } catch (err) {
      // A guess: an unknown name or a wrong password (a deactivated account's right one is not).
      if (err instanceof TooManyRequests || (err instanceof Unauthenticated && err.message === BAD_CREDENTIALS)) {
        for (const [limit, key] of counted) await limit.hit(key);
      }
      throw err;
    }
  }

  private async verify(username: string, password: string): Promise<UserRecord> {
    const user = await this.d.users.findByUsername(username);
    const expired = user?.isGuest && user.guestExpiresAt !== null && user.guestExpiresAt <= toDbTime(this.d.clock());
    if (!user || expired) {
      this.dummyHash ??= this.d.hasher.hash('timing-equaliser-password');
      await this.d.hasher.verify(password, await this.dummyHash);
      throw new Unauthenticated(BAD_CREDENTIALS);
    }
    if (!(await this.d.hasher.verify(password, user.passwordHash))) {
      throw (await this.d.limits.failedLogins.hit(String(user.id))) ?? new Unauthenticated(BAD_CREDENTIALS);
    }
    if (!user.isActive) throw new Unauthenticated('Account is deactivated');
    return user;
  }

  /**
   * Opens a session for the account `authenticate` returned (closing its others when only one
   * is allowed), or 401 when its password changed or it was banned since: a login in flight
   * during a password change must not keep a session the change could not end.
   */
  async openSession(user: UserRecord, clientType: string, trx: Knex.Transaction): Promise<OpenedSession> {
    if (!(await this.d.users.recordLogin(user.id, user.passwordHash, toDbTime(this.d.clock()), trx))) throw new Unauthenticated(BAD_CREDENTIALS);
    if (!this.d.config.session.allowMultipleSessions) {
      await this.d.presence.ended(await this.d.sessions.deleteForUser(user.id, trx), 'replaced', trx);
    }
    return this.d.sessionService.open(user.id, clientType, trx);
  }

  /** `address`: the client address as the limits key it (authenticate). */
  async login(rawUsername: string, password: string, worldId: string | null | undefined, clientType: string, address: string): Promise<LoginResponse> {
    const user = await this.authenticate(rawUsername, password, address);
    const session = await this.d.db.transaction((trx) => this.openSession(user, clientType, trx));
    const world = worldId?.trim() || this.d.config.worlds.defaultWorldId;
    const [characters, availableWorlds] = await Promise.all([
      this.d.characters.listSummaries(user.id, world),
      this.d.worldAccess.listForAccount(user.id, user.role),
    ]);
    return {
      success: true,
      message: 'Login successful. Select a character to enter the world.',
      session_id: session.token,
      role: user.role,
      characters,
      available_worlds: availableWorlds,
    };
  }

  async logout(session: AuthenticatedSession): Promise<SuccessMessage> {
    await this.d.db.transaction(async (trx) => {
      if ((await this.d.sessions.delete(session.id, trx)) > 0) await this.d.presence.ended([session], 'logout', trx);
    });
    return { success: true, message: `Goodbye, ${session.username}!` };
  }

  /**
   * Ends the account's other sessions of `clientType` that play the session's character and
   * that nothing is connected through (no open event stream on any instance): what a telnet
   * connection the client dropped left link-dead, taken over by the session it came back with.
   * The character stays, played by this session, so nobody sees it leave or arrive. Returns how
   * many ended (reason `replaced`).
   */
  async takeOver(session: AuthenticatedSession, clientType: string): Promise<number> {
    const characterId = session.characterId;
    if (characterId === null) return 0;
    return this.d.db.transaction(async (trx) => {
      const ended = await this.d.sessions.deleteUnheld(session.userId, characterId, clientType, session.id, toDbTime(this.d.clock()), trx);
      if (ended.length > 0) await this.d.presence.ended(ended, 'replaced', trx);
      return ended.length;
    });
  }

  /** Like authenticate, a wrong current password past the account's allowance is 429. Ends the account's other sessions. */
  async changePassword(session: AuthenticatedSession, oldPassword: string, newPassword: string): Promise<SuccessMessage> {
    const user = await this.d.users.findById(session.userId);
    if (!user) throw new Unauthenticated(WRONG_CURRENT_PASSWORD);
    if (!(await this.d.hasher.verify(oldPassword, user.passwordHash))) {
      throw (await this.d.limits.failedPasswordChanges.hit(String(user.id))) ?? new Unauthenticated(WRONG_CURRENT_PASSWORD);
    }
    if (newPassword === oldPassword) throw new InvalidInput('New password must be different from current password');
    assertStandardPassword(newPassword);
    const passwordHash = await this.d.hasher.hash(newPassword);
    // Whoever else holds a session may have learnt the old password: only this one stays.
    // Logins still in flight with the old password open no session after this commits
    // (openSession); a concurrent change that won first makes the old password wrong here too.
    await this.d.db.transaction(async (trx) => {
      if (!(await this.d.users.replacePasswordHash(user.id, user.passwordHash, passwordHash, trx))) throw new Unauthenticated(WRONG_CURRENT_PASSWORD);
      await this.d.presence.ended(await this.d.sessions.deleteForUser(user.id, trx, session.id), 'password_change', trx);
    });
    return { success: true, message: 'Password changed successfully!' };
  }
}
