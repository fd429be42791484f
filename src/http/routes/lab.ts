/** Lab diagnostics (admin or superuser) and the language-model runtime commands. */
import { Router, type RequestHandler } from 'express';
import type { SessionService } from '../../services/accounts/session-service.ts';
import { rank } from '../../shared/roles.ts';
import type { LabService } from '../../services/lab/lab-service.ts';
import type { LlmCommandService } from '../../services/lab/llm-commands.ts';
import { HttpError } from '../support/errors.ts';
import { authenticate, requirePermission, sessionOf } from '../middleware/auth.ts';

const labRole: RequestHandler = (_req, res, next) => {
  next(rank(sessionOf(res).role) >= rank('admin') ? undefined : new HttpError(403, 'Lab endpoints require admin or superuser role.'));
};

type AxisValues = Record<string, { label: string; score: number }>;

export function labRouter(sessions: SessionService, lab: LabService, llm: LlmCommandService): Router {
  const router = Router();
  const viaQuery = [authenticate(sessions, 'query'), labRole];
  const viaBody = [authenticate(sessions, 'body'), labRole];

  router.get('/api/lab/worlds', ...viaQuery, (_req, res) => {
    res.json({ worlds: lab.listWorlds() });
  });
  router.get('/api/lab/world-config/:world_id', ...viaQuery, (req, res) => {
    res.json(lab.getWorldConfig(String(req.params.world_id)));
  });
  router.get('/api/lab/world-image-policy-bundle/:world_id', ...viaQuery, async (req, res) => {
    res.json(await lab.imageBundle(String(req.params.world_id)));
  });
  router.post('/api/lab/compile-image-prompt', ...viaBody, async (req, res) => {
    const b = req.body as {
      world_id: string;
      species: string;
      gender: string;
      axes: AxisValues;
      world_context?: string[];
      occupation_signals?: string[];
      model_id?: string | null;
      aspect_ratio?: string | null;
      seed?: number | null;
    };
    res.json(
      await lab.compile({
        worldId: b.world_id,
        species: b.species,
        gender: b.gender,
        axes: b.axes,
        worldContext: b.world_context,
        occupationSignals: b.occupation_signals,
        modelId: b.model_id,
        aspectRatio: b.aspect_ratio,
        seed: b.seed,
      }),
    );
  });
  router.post('/api/lab/translate', ...viaBody, async (req, res) => {
    const b = req.body as {
      world_id: string;
      ooc_message: string;
      axes: AxisValues;
      character_name?: string;
      channel?: string;
      seed?: number;
      temperature?: number;
      prompt_template_override?: string | null;
    };
    res.json(
      await lab.translate({
        worldId: b.world_id,
        oocMessage: b.ooc_message,
        axes: b.axes,
        characterName: b.character_name,
        channel: b.channel,
        seed: b.seed,
        temperature: b.temperature,
        promptTemplateOverride: b.prompt_template_override,
      }),
    );
  });

  const viewLogs = [authenticate(sessions, 'body'), requirePermission('view_logs')];
  router.post('/admin/llm/command', ...viewLogs, async (req, res) => {
    const b = req.body as { command: string; server_url?: string };
    const session = sessionOf(res);
    res.json(await llm.run(session.id, session.role, b.command, b.server_url));
  });
  router.post('/admin/llm/clear-context', ...viewLogs, (_req, res) => {
    res.json(llm.clear(sessionOf(res).id));
  });
  return router;
}
