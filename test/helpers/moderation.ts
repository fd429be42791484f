/**
 * Moderation's state as a player makes it, for tests of operations that need it: a report filed
 * through the game (`report` over POST /command), which no HTTP operation creates.
 */
import { expect } from 'chai';
import type { TestServer } from './test-server.ts';
import { registerGuest, uniqueName } from './players.ts';

/** The session's character reports a new guest's character (the first report on a fresh install is report 1). */
export async function fileReport(server: TestServer, session: string): Promise<void> {
  const name = uniqueName('Reported');
  await registerGuest(server, name);
  const res = await server.post('/command', { command: `report ${name} spam in the square` }, { Authorization: `Bearer ${session}` });
  expect(res.body, res.text).to.include({ success: true });
}
