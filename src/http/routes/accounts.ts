import { Router } from 'express';
import type { components } from '../../../generated/openapi.d.ts';
import type { AccountService } from '../../services/accounts/account-service.ts';
import { normalizeClientType, type SessionService } from '../../services/accounts/session-service.ts';
import { authenticate, sessionOf } from '../middleware/auth.ts';
import { byAddress, type RateLimits } from '../middleware/rate-limit.ts';

type Schemas = components['schemas'];

export function accountsRouter(accounts: AccountService, sessions: SessionService, limits: RateLimits): Router {
  const router = Router();

  router.post('/register', limits.registerByAddress, limits.registerByUsername, async (req, res) => {
    const body = req.body as Schemas['RegisterRequest'];
    res.json(await accounts.register(body.username, body.password, body.password_confirm));
  });

  // Failed logins are counted per address by the account service (authenticate).
  router.post('/login', async (req, res) => {
    const body = req.body as Schemas['LoginRequest'];
    res.json(await accounts.login(body.username, body.password, body.world_id, normalizeClientType(req.get('x-client-type')), byAddress(req)));
  });

  router.post('/logout', authenticate(sessions, 'body'), async (_req, res) => {
    res.json(await accounts.logout(sessionOf(res)));
  });

  router.post('/change-password', limits.changePasswordByAddress, authenticate(sessions, 'body'), async (req, res) => {
    const body = req.body as Schemas['ChangePasswordRequest'];
    res.json(await accounts.changePassword(sessionOf(res), body.old_password, body.new_password));
  });

  // Validation itself refreshes the session's activity and sliding expiry.
  router.post('/ping/:session_id', authenticate(sessions, 'params'), (_req, res) => {
    res.json({ ok: true });
  });

  return router;
}
