import { Router } from 'express';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { LedgerService } from '../../services/ledger/ledger-service.ts';
import { authenticate, requirePermission } from '../middleware/auth.ts';
import { queryInt } from '../support/query.ts';

/** GET /admin/ledger (VIEW_LOGS): the event ledger, newest first, checksums verified. */
export function ledgerRouter(sessions: SessionService, ledger: LedgerService): Router {
  const router = Router();
  router.get('/admin/ledger', authenticate(sessions, 'query'), requirePermission('view_logs'), async (req, res) => {
    const worldId = typeof req.query.world_id === 'string' && req.query.world_id !== '' ? req.query.world_id : undefined;
    res.json({ events: await ledger.list(worldId, queryInt(req.query.limit, 100)) });
  });
  return router;
}
