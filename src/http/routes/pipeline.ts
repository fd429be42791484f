/**
 * The generation pipeline: `POST /api/pipeline/condition-axis/generate`, stateless, any valid
 * session (`session_id` in the query). The contract has already checked the body strictly;
 * its violations answer 422 CONDITION_AXIS_VALIDATION_ERROR (errors.ts).
 */
import { Router } from 'express';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { ConditionAxisRequest, ConditionAxisService } from '../../services/axis/condition-axis.ts';
import { authenticate } from '../middleware/auth.ts';
import { CONDITION_AXIS_PATH } from '../support/errors.ts';

export function pipelineRouter(sessions: SessionService, conditionAxis: ConditionAxisService): Router {
  const router = Router();
  router.post(CONDITION_AXIS_PATH, authenticate(sessions, 'query'), async (req, res) => {
    res.json(await conditionAxis.generate(req.body as ConditionAxisRequest));
  });
  return router;
}
