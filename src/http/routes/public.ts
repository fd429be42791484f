import { Router } from 'express';
import type { components } from '../../../generated/openapi.d.ts';
import type { HealthService } from '../../services/health-service.ts';

type ServiceInfo = components['schemas']['ServiceInfo'];

export function publicRouter(health: HealthService, version: string): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    const body: ServiceInfo = { message: 'MUD Server API', version };
    res.json(body);
  });
  router.get('/health', async (_req, res) => {
    const report = await health.check();
    res.status(report.status === 'ok' ? 200 : 503).json(report);
  });
  return router;
}
