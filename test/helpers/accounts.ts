/**
 * Test fixtures for accounts: arrange users of any role directly through the services
 * (there is no public route that creates an admin), then act and assert through HTTP.
 */
import { toDbTime } from '../../src/db/clock.ts';
import { sessionTokenHash } from '../../src/db/repositories/session-repository.ts';
import type { Role } from '../../src/shared/roles.ts';
import type { TestServer } from './test-server.ts';

/** Passes the STANDARD policy. */
export const GOOD_PASSWORD = 'Quiet-Lantern-42';
export const OTHER_GOOD_PASSWORD = 'Copper-Heron-Tide-9';

export async function createUser(server: TestServer, username: string, role: Role, password = GOOD_PASSWORD): Promise<number> {
  return server.services.users.create({
    username,
    passwordHash: await server.services.hasher.hash(password),
    role,
    isGuest: false,
    guestExpiresAt: null,
    accountOrigin: 'system',
    createdAt: toDbTime(server.clock.now()),
  });
}

export async function login(server: TestServer, username: string, password = GOOD_PASSWORD, headers: Record<string, string> = {}): Promise<string> {
  const res = await server.post('/login', { username, password }, headers);
  if (res.status !== 200) throw new Error(`login ${username} failed: ${res.status} ${res.text}`);
  return res.body.session_id as string;
}

/** Creates a user of the role and returns a fresh session id for it. */
export async function sessionFor(server: TestServer, username: string, role: Role): Promise<string> {
  await createUser(server, username, role);
  return login(server, username);
}

/**
 * The `sessions` row of a token as the driver gives it, undefined when there is none. The
 * database keeps only the token's hash; tests inspect arbitrary columns, hence `any`.
 */
export async function sessionRow(server: TestServer, token: string): Promise<any> {
  return server.db('sessions').where({ token_hash: sessionTokenHash(token) }).first();
}

/** The `Authorization` header that presents a session as a bearer token. */
export const bearer = (sessionId: string): Record<string, string> => ({ Authorization: `Bearer ${sessionId}` });
