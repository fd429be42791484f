/**
 * The first superuser: created at start-up from MUD_ADMIN_USER/MUD_ADMIN_PASSWORD when none
 * exists, or by `mud-server create-superuser`. The STANDARD password policy applies.
 */
import { toDbTime, type Clock } from '../../db/clock.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { UserRepository } from '../../db/repositories/user-repository.ts';
import { InvalidInput } from '../../shared/errors.ts';
import { newUsername } from './account-service.ts';
import { checkStandardPassword } from './password-policy.ts';
import type { PasswordHasher } from './password-hasher.ts';

export class SuperuserError extends Error {}

export async function createSuperuser(
  users: UserRepository,
  hasher: PasswordHasher,
  clock: Clock,
  rawUsername: string,
  password: string,
  origin: 'system' | 'superuser',
): Promise<string> {
  let username: string;
  try {
    username = newUsername(rawUsername);
  } catch (err) {
    throw err instanceof InvalidInput ? new SuperuserError(err.message) : err;
  }
  const check = checkStandardPassword(password);
  if (!check.ok) throw new SuperuserError(check.errors.join(' '));
  if (await users.usernameTaken(username)) throw new SuperuserError(`Username '${username}' already exists`);
  try {
    await users.create({
      username,
      passwordHash: await hasher.hash(password),
      role: 'superuser',
      isGuest: false,
      guestExpiresAt: null,
      accountOrigin: origin,
      createdAt: toDbTime(clock()),
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new SuperuserError(`Username '${username}' already exists`);
    throw err;
  }
  return username;
}

/**
 * Creates the bootstrap superuser when the variables are set and no superuser exists.
 * Returns the username created, or null. Safe when several instances start together.
 */
export async function bootstrapSuperuser(
  users: UserRepository,
  hasher: PasswordHasher,
  clock: Clock,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const username = env.MUD_ADMIN_USER?.trim();
  const password = env.MUD_ADMIN_PASSWORD;
  if (!username || !password) return null;
  if ((await users.countByRole('superuser')) > 0) return null;
  try {
    return await createSuperuser(users, hasher, clock, username, password, 'system');
  } catch (err) {
    // Another instance won the race, or the account already exists: nothing to do.
    if (err instanceof SuperuserError && /already exists/.test(err.message)) return null;
    throw new SuperuserError(`MUD_ADMIN_USER/MUD_ADMIN_PASSWORD: ${(err as Error).message}`);
  }
}
