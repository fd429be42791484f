import { Router } from 'express';
import type { CharacterService } from '../../services/characters/character-service.ts';
import type { EntryService } from '../../services/characters/entry-service.ts';
import type { WorldAccessService } from '../../services/worlds/world-access.ts';
import { normalizeClientType, type SessionService } from '../../services/accounts/session-service.ts';
import { authenticate, requirePermission, sessionOf } from '../middleware/auth.ts';
import { byAddress, type RateLimits } from '../middleware/rate-limit.ts';
import { queryInt } from '../support/query.ts';

export interface CharactersRouterDeps {
  sessions: SessionService;
  characters: CharacterService;
  entry: EntryService;
  worldAccess: WorldAccessService;
  limits: RateLimits;
}

export function charactersRouter({ sessions, characters, entry, worldAccess, limits }: CharactersRouterDeps): Router {
  const router = Router();
  const viewLogs = [authenticate(sessions, 'query'), requirePermission('view_logs')];

  // Guest registration creates an account, so it shares registration's per-address limit.
  router.post('/register-guest', limits.registerByAddress, async (req, res) => {
    const b = req.body as { password: string; password_confirm: string; character_name: string };
    res.json(await entry.registerGuest(b.password, b.password_confirm, b.character_name));
  });
  // Failed logins are counted per address by the account service (authenticate).
  router.post('/login-direct', async (req, res) => {
    const b = req.body as { username: string; password: string; world_id: string; character_name?: string; create_character?: boolean };
    res.json(
      await entry.loginDirect(
        { username: b.username, password: b.password, worldId: b.world_id, characterName: b.character_name, createCharacter: b.create_character ?? false },
        normalizeClientType(req.get('x-client-type')),
        byAddress(req),
      ),
    );
  });
  router.get('/characters', authenticate(sessions, 'query'), async (req, res) => {
    const worldId = typeof req.query.world_id === 'string' ? req.query.world_id : undefined;
    res.json({ characters: await characters.list(sessionOf(res), worldId) });
  });
  router.get('/worlds', authenticate(sessions, 'query'), async (_req, res) => {
    const { userId, role } = sessionOf(res);
    res.json({ worlds: await worldAccess.listForAccount(userId, role) });
  });
  router.post('/characters/create', authenticate(sessions, 'body'), async (req, res) => {
    res.json(await characters.create(sessionOf(res), String(req.body.world_id)));
  });
  router.post('/characters/select', authenticate(sessions, 'body'), async (req, res) => {
    const b = req.body as { character_id: number; world_id?: string | null };
    res.json(await characters.select(sessionOf(res), b.character_id, b.world_id));
  });
  router.post('/characters/deselect', authenticate(sessions, 'body'), async (_req, res) => {
    res.json(await characters.deselect(sessionOf(res)));
  });
  router.post('/admin/user/create-character', authenticate(sessions, 'body'), requirePermission('create_users'), async (req, res) => {
    const b = req.body as { target_username: string; world_id: string };
    res.json(await characters.adminCreate(sessionOf(res), b.target_username, b.world_id));
  });
  router.get('/admin/characters/:character_id/axis-state', ...viewLogs, async (req, res) => {
    res.json(await characters.axisState(Number(req.params.character_id)));
  });
  router.get('/admin/characters/:character_id/axis-events', ...viewLogs, async (req, res) => {
    res.json(await characters.axisEvents(Number(req.params.character_id), queryInt(req.query.limit, 50)));
  });
  return router;
}
