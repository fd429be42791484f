/**
 * Assembles the Express application from already-built services. Order matters:
 * request context → untrusted-proxy warning → CORS → docs and play client (outside the
 * contract) → JSON body → NUL refusal → contract validation → routers → 404 → error mapper.
 */
import express, { type Express } from 'express';
import cors from 'cors';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import type { Contract } from './support/openapi.ts';
import { contractValidator } from './support/openapi.ts';
import { requestContextMiddleware } from './middleware/request-context.ts';
import { untrustedProxyWarning } from './middleware/proxy-warning.ts';
import { normalizeCaseInsensitiveFields } from './middleware/normalize.ts';
import { rejectNul } from './middleware/reject-nul.ts';
import { errorHandler, notFound } from './support/errors.ts';
import { docsRouter } from './routes/docs.ts';
import { playRouter } from './routes/play.ts';
import { publicRouter } from './routes/public.ts';
import { accountsRouter } from './routes/accounts.ts';
import { adminRouter } from './routes/admin.ts';
import { createRateLimits } from './middleware/rate-limit.ts';
import type { Services } from '../services/container.ts';
import { policyRouter } from './routes/policy.ts';
import { charactersRouter } from './routes/characters.ts';
import { gameRouter } from './routes/game.ts';
import { labRouter } from './routes/lab.ts';
import { pipelineRouter } from './routes/pipeline.ts';
import { ledgerRouter } from './routes/ledger.ts';
import { buildingRouter } from './routes/building.ts';
import { keepFloats } from '../shared/canonical-json.ts';
import { createMetrics, metricsRouter } from './metrics.ts';

export interface AppOptions {
  config: Config;
  logger: Logger;
  contract: Contract;
  version: string;
  services: Services;
  /** Starts the graceful shutdown (POST /admin/server/stop). */
  requestStop: () => void;
}

export function createApp({ config, logger, contract, version, services, requestStop }: AppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // req.ip, which the per-address limits count by, reads X-Forwarded-For only from these proxies.
  app.set('trust proxy', config.server.trustProxy);

  // First, so every request is counted and timed (GET /metrics; off → no registry at all).
  const metrics = config.metrics.mode === 'off' ? null : createMetrics(
    () => services.entityStateCounters(),
    () => services.streams.stats(),
    () => services.scripts.stats(),
  );
  if (metrics) app.use(metrics.middleware);
  app.use(requestContextMiddleware(logger));
  app.use(untrustedProxyWarning(logger));
  const corsHeaders = cors({
    origin: config.security.corsOrigins,
    credentials: true,
    exposedHeaders: ['X-Request-Id', 'Retry-After'],
    maxAge: 600,
  });
  // Browsers send Origin with every cross-origin request: without it there is nothing to allow,
  // so polls from other clients skip the work. Caches still learn that the answer varies.
  app.use((req, res, next) => {
    if (req.headers.origin !== undefined) return corsHeaders(req, res, next);
    res.vary('Origin');
    next();
  });
  app.use(docsRouter(contract));
  app.use(playRouter());
  // Policy documents keep `1.0` apart from `1`, so their hashes match the reference server's.
  const json = express.json({ limit: config.server.maxBodyBytes });
  const jsonKeepingFloats = express.json({ limit: config.server.maxBodyBytes, reviver: keepFloats as (key: string, value: unknown) => unknown });
  app.use((req, res, next) => (req.path.startsWith('/api/polic') ? jsonKeepingFloats : json)(req, res, next));
  app.use(rejectNul);
  app.use(normalizeCaseInsensitiveFields);
  app.use(contractValidator(contract, config.server.validateResponses));

  const limits = createRateLimits(services.limits);
  // First: the routes every client calls every second pass no other router's layers.
  app.use(gameRouter(services.sessions, services.game, services.streams));
  app.use(publicRouter(services.health, version));
  app.use(metricsRouter({ mode: config.metrics.mode, metrics, sessions: services.sessions }));
  app.use(accountsRouter(services.accounts, services.sessions, limits));
  app.use(labRouter(services.sessions, services.lab, services.llm));
  app.use(pipelineRouter(services.sessions, services.conditionAxis));
  app.use(charactersRouter({ sessions: services.sessions, characters: services.characters, entry: services.entry, worldAccess: services.worldAccess, limits }));
  app.use(ledgerRouter(services.sessions, services.ledger));
  app.use(buildingRouter(services.sessions, services.build));
  app.use(
    adminRouter({
      sessions: services.sessions,
      inspection: services.inspection,
      userAdmin: services.userAdmin,
      audit: services.audit,
      reports: services.reports,
      announcements: services.announcements,
      requestStop,
    }),
  );
  app.use(
    policyRouter({
      sessions: services.sessions,
      policies: services.policies,
      publisher: services.publisher,
      importer: services.importer,
      defaultWorldId: config.worlds.defaultWorldId,
    }),
  );

  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
