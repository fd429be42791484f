/**
 * The policy control plane routes. Every route takes `session_id` in the query and needs an
 * admin or superuser session; policy failures answer `{detail, code, stage: "policy"}`.
 */
import { Router, type RequestHandler } from 'express';
import type { components } from '../../../generated/openapi.d.ts';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { PolicyService } from '../../services/policy/policy-service.ts';
import type { PublishService } from '../../services/policy/publish-service.ts';
import type { ImportService } from '../../services/policy/import-service.ts';
import { hashSnapshot } from '../../services/policy/hash-snapshot.ts';
import { HttpError } from '../support/errors.ts';
import { authenticate, sessionOf } from '../middleware/auth.ts';

type Schemas = components['schemas'];

export interface PolicyRouterDeps {
  sessions: SessionService;
  policies: PolicyService;
  publisher: PublishService;
  importer: ImportService;
  defaultWorldId: string;
}

function requireAdminRole(detail: string): RequestHandler {
  return (_req, res, next) => {
    const role = sessionOf(res).role;
    next(role === 'admin' || role === 'superuser' ? undefined : new HttpError(403, detail));
  };
}

const optionalString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function draftFrom(body: Schemas['PolicyVariantInput'], variant: string) {
  return { variant, schemaVersion: body.schema_version, policyVersion: body.policy_version, status: body.status, content: body.content };
}

export function policyRouter({ sessions, policies, publisher, importer, defaultWorldId }: PolicyRouterDeps): Router {
  const router = Router();
  const admin = [authenticate(sessions, 'query'), requireAdminRole('Policy API requires admin or superuser role.')];
  // Audit fields record who is logged in, never a name the client supplies.
  const actor = (res: Parameters<typeof sessionOf>[0]): string => sessionOf(res).username;

  router.get('/api/policy-capabilities', ...admin, (_req, res) => {
    res.json(policies.capabilities(sessionOf(res).role as 'admin' | 'superuser'));
  });
  router.get('/api/policies', ...admin, async (req, res) => {
    const items = await policies.list({
      policyType: optionalString(req.query.policy_type),
      namespace: optionalString(req.query.namespace),
      status: optionalString(req.query.status),
    });
    res.json({ items });
  });
  router.get('/api/policies/:policy_id', ...admin, async (req, res) => {
    res.json(await policies.get(String(req.params.policy_id), optionalString(req.query.variant)));
  });
  router.post('/api/policies/:policy_id/validate', ...admin, async (req, res) => {
    const body = req.body as Schemas['PolicyVariantInput'];
    res.json(await policies.validate(String(req.params.policy_id), draftFrom(body, String(req.query.variant)), actor(res)));
  });
  router.put('/api/policies/:policy_id/variants/:variant', ...admin, async (req, res) => {
    const body = req.body as Schemas['PolicyVariantInput'];
    res.json(await policies.upsert(String(req.params.policy_id), draftFrom(body, String(req.params.variant)), actor(res)));
  });
  router.post('/api/policy-activations', ...admin, async (req, res) => {
    const b = req.body as { world_id: string; client_profile?: string | null; policy_id: string; variant: string; rollback_of_activation_id?: number | null };
    res.json(
      await policies.activate(
        { worldId: b.world_id, clientProfile: b.client_profile, policyId: b.policy_id, variant: b.variant, rollbackOfActivationId: b.rollback_of_activation_id },
        actor(res),
      ),
    );
  });
  router.get('/api/policy-activations', ...admin, async (req, res) => {
    res.json(await policies.listActivations(String(req.query.scope), String(req.query.effective ?? true) !== 'false'));
  });
  router.post('/api/policy-publish', ...admin, async (req, res) => {
    const b = req.body as { world_id: string; client_profile?: string | null };
    res.json(await publisher.publish(b.world_id, b.client_profile, actor(res)));
  });
  router.get('/api/policy-publish/:publish_run_id', ...admin, async (req, res) => {
    res.json(await publisher.getRun(Number(req.params.publish_run_id)));
  });
  router.post('/api/policy-import', ...admin, async (req, res) => {
    const b = req.body as { artifact: Record<string, unknown>; activate?: boolean };
    res.json(await importer.importArtifact(b.artifact, b.activate ?? true, actor(res)));
  });
  router.get(
    '/api/policy/hash-snapshot',
    authenticate(sessions, 'query'),
    requireAdminRole('Policy hash snapshot endpoint requires admin or superuser role.'),
    async (req, res) => {
      res.json(await hashSnapshot(policies, optionalString(req.query.world_id) ?? defaultWorldId));
    },
  );
  return router;
}
