import { Router } from 'express';
import type { InspectionService } from '../../services/admin/inspection-service.ts';
import type { CharacterAction, UserAdminService } from '../../services/admin/user-admin-service.ts';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { AuditLog } from '../../services/moderation/audit.ts';
import type { ReportService } from '../../services/moderation/reports.ts';
import type { Announcements } from '../../services/moderation/announcements.ts';
import { authenticate, requirePermission, sessionOf } from '../middleware/auth.ts';
import { queryInt } from '../support/query.ts';

export interface AdminRouterDeps {
  sessions: SessionService;
  inspection: InspectionService;
  userAdmin: UserAdminService;
  audit: AuditLog;
  reports: ReportService;
  announcements: Announcements;
  /** Starts the graceful shutdown; called once the response has been sent. */
  requestStop: () => void;
}

/** A query string parameter the contract allows (and checked), when sent. */
const queryText = (value: unknown): string | null => (value === undefined ? null : String(value));

export function adminRouter({ sessions, inspection, userAdmin, audit, reports, announcements, requestStop }: AdminRouterDeps): Router {
  const router = Router();
  const viewLogs = [authenticate(sessions, 'query'), requirePermission('view_logs')];
  const withBodySession = authenticate(sessions, 'body');

  router.get('/admin/database/players', ...viewLogs, async (_req, res) => {
    res.json({ players: await inspection.players() });
  });
  router.get('/admin/database/connections', ...viewLogs, async (_req, res) => {
    res.json({ connections: await inspection.connections(sessionOf(res)) });
  });
  router.get('/admin/database/player-locations', ...viewLogs, async (_req, res) => {
    res.json({ locations: await inspection.locations(sessionOf(res)) });
  });
  router.get('/admin/database/tables', ...viewLogs, async (_req, res) => {
    res.json({ tables: await inspection.tables() });
  });
  router.get('/admin/database/table/:table_name', ...viewLogs, async (req, res) => {
    const tableName = String(req.params.table_name);
    res.json(await inspection.table(tableName, queryInt(req.query.limit, 100), queryInt(req.query.offset, 0)));
  });
  router.get('/admin/database/sessions', ...viewLogs, async (_req, res) => {
    res.json({ sessions: await inspection.sessions(sessionOf(res)) });
  });
  router.get('/admin/database/chat-messages', ...viewLogs, async (req, res) => {
    res.json({ messages: await inspection.chatMessages(sessionOf(res), queryInt(req.query.limit, 100), queryText(req.query.world_id) ?? undefined) });
  });
  router.get('/admin/database/worlds', ...viewLogs, async (_req, res) => {
    res.json({ worlds: await inspection.worldStatus() });
  });
  router.get('/admin/database/schema', ...viewLogs, async (_req, res) => {
    res.json({ tables: await inspection.schema() });
  });

  router.get('/admin/audit', ...viewLogs, async (req, res) => {
    const q = req.query;
    const before = queryText(q.before);
    res.json(await audit.list({ limit: queryInt(q.limit, 50), before: before === null ? null : Number(before), target: queryText(q.target), actor: queryText(q.actor) }));
  });
  router.get('/admin/reports', authenticate(sessions, 'query'), requirePermission('ban_users'), async (req, res) => {
    res.json(await reports.list(queryInt(req.query.limit, 20), queryInt(req.query.offset, 0)));
  });
  router.post('/admin/reports/:report_id/resolve', withBodySession, requirePermission('ban_users'), async (req, res) => {
    res.json(await reports.resolve(sessionOf(res), 'http', Number(req.params.report_id), String(req.body.note)));
  });
  router.post('/admin/wall', withBodySession, requirePermission('announce'), async (req, res) => {
    await announcements.announce(sessionOf(res), 'http', String(req.body.text));
    res.json({ success: true, message: 'Announced to every connected player.' });
  });

  router.post('/admin/session/kick', withBodySession, requirePermission('kick_users'), async (req, res) => {
    const b = req.body as { target_session_id: string; reason?: string };
    res.json(await userAdmin.kick(sessionOf(res), String(b.target_session_id), b.reason, 'http'));
  });
  router.post('/admin/character/kick', withBodySession, requirePermission('kick_users'), async (req, res) => {
    const b = req.body as { character_id: number; reason?: string };
    res.json(await userAdmin.kickCharacter(sessionOf(res), b.character_id, b.reason, 'http'));
  });
  router.post('/admin/character/manage', withBodySession, requirePermission('manage_users'), async (req, res) => {
    const b = req.body as { character_id: number; action: CharacterAction };
    res.json(await userAdmin.manageCharacter(sessionOf(res), b.character_id, b.action, 'http'));
  });
  router.post('/admin/user/create', withBodySession, requirePermission('create_users'), async (req, res) => {
    const b = req.body as { username: string; role: string; password: string; password_confirm: string };
    res.json(await userAdmin.createUser(sessionOf(res), { username: b.username, role: b.role, password: b.password, passwordConfirm: b.password_confirm }));
  });
  // The permission depends on the action, so the service checks it.
  router.post('/admin/user/manage', withBodySession, async (req, res) => {
    const b = req.body as { action: string; target_username: string; new_role?: string; new_password?: string; minutes?: number; reason?: string };
    res.json(
      await userAdmin.manageUser(
        sessionOf(res),
        { action: b.action, targetUsername: b.target_username, newRole: b.new_role, newPassword: b.new_password, minutes: b.minutes, reason: b.reason },
        'http',
      ),
    );
  });
  router.post('/admin/user/world-access', withBodySession, async (req, res) => {
    const b = req.body as { target_username: string; world_id: string; can_access: boolean; reason?: string };
    res.json(await userAdmin.setWorldAccess(sessionOf(res), { targetUsername: b.target_username, worldId: b.world_id, canAccess: b.can_access, reason: b.reason }, 'http'));
  });
  router.post('/admin/server/stop', withBodySession, requirePermission('stop_server'), (_req, res) => {
    res.on('finish', requestStop);
    res.json({ success: true, message: `Server shutdown initiated by ${sessionOf(res).username}.` });
  });

  return router;
}
