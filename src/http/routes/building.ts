/**
 * The building API (tag Building): rooms, exits, items, NPCs, the history of a world and its
 * scripts' errors. Every rule
 * is BuildService's; this layer reads the session, the version the client sends (`If-Match`
 * or `version`) and answers with the version as `ETag`.
 */
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { SessionService } from '../../services/accounts/session-service.ts';
import { assertMayBuild, type BuildService, type Builder, type Expected } from '../../services/building/build-service.ts';
import { HttpError } from '../support/errors.ts';
import { authenticate, sessionOf } from '../middleware/auth.ts';
import { queryInt } from '../support/query.ts';

/** `"3"`, `W/"3"` or `3`; `*` (any version) writes over whatever is there. */
const IF_MATCH = /^(?:W\/)?"?(\d{1,10})"?$/;

const builderOf = (res: Response): Builder => {
  const s = sessionOf(res);
  return { role: s.role, userId: s.userId, username: s.username, worldId: s.worldId, via: 'api' };
};

/** The version the client last read, from `If-Match` or `version` (which must agree when both are sent). */
function expectedVersion(req: Request, fromBody: unknown): Expected {
  const header = req.get('if-match')?.trim();
  const field = fromBody ?? (req.query.version === undefined ? undefined : Number(req.query.version));
  let fromHeader: Expected | undefined;
  if (header !== undefined && header !== '') {
    if (header === '*') fromHeader = 'current';
    else {
      const m = IF_MATCH.exec(header);
      if (!m) throw new HttpError(400, `If-Match must be a version as ETag gives it (e.g. "3"), not ${header}`);
      fromHeader = Number(m[1]);
    }
  }
  if (fromHeader !== undefined && field !== undefined && fromHeader !== field) throw new HttpError(400, 'If-Match and version name different versions; send one of them.');
  const expected = fromHeader ?? (field as number | undefined);
  if (expected === undefined) throw new HttpError(400, 'Send the version you last read: an If-Match header (its ETag) or version.');
  return expected;
}

function withETag<T extends { version: number }>(res: Response, body: T, status = 200): void {
  res.status(status).set('ETag', `"${body.version}"`).json(body);
}

const param = (req: Request, name: string): string => String(req.params[name]);

export function buildingRouter(sessions: SessionService, build: BuildService): Router {
  const router = Router();
  // Players are refused before anything about the request is read.
  const mayBuild: RequestHandler = (_req, res, next) => {
    assertMayBuild(sessionOf(res).role);
    next();
  };
  /**
   * The ETag is the version for If-Match, not a validator of the whole answer (a room's items,
   * where an item lies, change without it): answers are never stored and never 304.
   */
  const fresh: RequestHandler = (req, res, next) => {
    delete req.headers['if-none-match'];
    res.set('Cache-Control', 'no-store');
    next();
  };
  const viaQuery = [fresh, authenticate(sessions, 'query'), mayBuild];
  const viaBody = [fresh, authenticate(sessions, 'body'), mayBuild];
  const base = '/api/worlds/:world_id';

  router.get(`${base}/rooms`, ...viaQuery, async (req, res) => {
    res.json(await build.listRooms(builderOf(res), param(req, 'world_id')));
  });
  router.post(`${base}/rooms`, ...viaBody, async (req, res) => {
    const b = req.body as { id?: string; zone?: string; name: string; description: string };
    withETag(res, await build.createRoom(builderOf(res), param(req, 'world_id'), b), 201);
  });
  router.get(`${base}/rooms/:room_id`, ...viaQuery, async (req, res) => {
    withETag(res, await build.getRoom(builderOf(res), param(req, 'world_id'), param(req, 'room_id')));
  });
  router.patch(`${base}/rooms/:room_id`, ...viaBody, async (req, res) => {
    const b = req.body as { version?: number; name?: string; description?: string; zone?: string; script?: string | null };
    withETag(res, await build.updateRoom(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), expectedVersion(req, b.version), b));
  });
  router.delete(`${base}/rooms/:room_id`, ...viaQuery, async (req, res) => {
    res.json(await build.deleteRoom(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), expectedVersion(req, undefined)));
  });
  router.post(`${base}/rooms/:room_id/revert`, ...viaBody, async (req, res) => {
    const b = req.body as { version?: number };
    withETag(res, await build.revertRoom(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), expectedVersion(req, b.version)));
  });
  router.post(`${base}/rooms/:room_id/exits`, ...viaBody, async (req, res) => {
    const b = req.body as { direction: string; to: string; two_way?: boolean; version?: number };
    const room = await build.addExit(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), expectedVersion(req, b.version), {
      direction: b.direction,
      to: b.to,
      twoWay: b.two_way === true,
    });
    withETag(res, room);
  });
  router.delete(`${base}/rooms/:room_id/exits/:direction`, ...viaQuery, async (req, res) => {
    const twoWay = String(req.query.two_way) === 'true';
    withETag(res, await build.removeExit(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), expectedVersion(req, undefined), param(req, 'direction'), twoWay));
  });
  router.post(`${base}/rooms/:room_id/items`, ...viaBody, async (req, res) => {
    const b = req.body as { name: string; description: string };
    withETag(res, await build.createItem(builderOf(res), param(req, 'world_id'), param(req, 'room_id'), b), 201);
  });
  router.get(`${base}/items/:item_id`, ...viaQuery, async (req, res) => {
    withETag(res, await build.getItem(builderOf(res), param(req, 'world_id'), Number(req.params.item_id)));
  });
  router.patch(`${base}/items/:item_id`, ...viaBody, async (req, res) => {
    const b = req.body as { version?: number; name?: string; description?: string; room_id?: string; script?: string | null };
    const item = await build.updateItem(builderOf(res), param(req, 'world_id'), Number(req.params.item_id), expectedVersion(req, b.version), {
      name: b.name,
      description: b.description,
      roomId: b.room_id,
      script: b.script,
    });
    withETag(res, item);
  });
  router.delete(`${base}/items/:item_id`, ...viaQuery, async (req, res) => {
    res.json(await build.deleteItem(builderOf(res), param(req, 'world_id'), Number(req.params.item_id), expectedVersion(req, undefined)));
  });
  router.get(`${base}/npcs`, ...viaQuery, async (req, res) => {
    const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
    res.json(await build.listNpcs(builderOf(res), param(req, 'world_id'), { limit: queryInt(req.query.limit, 50), after: text(req.query.after), standingIn: text(req.query.standing_in) }));
  });
  router.post(`${base}/npcs`, ...viaBody, async (req, res) => {
    const b = req.body as { id?: string; name: string; description: string; room_id: string; script?: string | null };
    withETag(res, await build.createNpc(builderOf(res), param(req, 'world_id'), { id: b.id, name: b.name, description: b.description, roomId: b.room_id, script: b.script }), 201);
  });
  router.get(`${base}/npcs/:npc_id`, ...viaQuery, async (req, res) => {
    withETag(res, await build.getNpc(builderOf(res), param(req, 'world_id'), param(req, 'npc_id')));
  });
  router.patch(`${base}/npcs/:npc_id`, ...viaBody, async (req, res) => {
    const b = req.body as { version?: number; name?: string; description?: string; room_id?: string; script?: string | null };
    const npc = await build.updateNpc(builderOf(res), param(req, 'world_id'), param(req, 'npc_id'), expectedVersion(req, b.version), {
      name: b.name,
      description: b.description,
      roomId: b.room_id,
      script: b.script,
    });
    withETag(res, npc);
  });
  router.delete(`${base}/npcs/:npc_id`, ...viaQuery, async (req, res) => {
    res.json(await build.deleteNpc(builderOf(res), param(req, 'world_id'), param(req, 'npc_id'), expectedVersion(req, undefined)));
  });
  router.post(`${base}/npcs/:npc_id/revert`, ...viaBody, async (req, res) => {
    const b = req.body as { version?: number };
    withETag(res, await build.revertNpc(builderOf(res), param(req, 'world_id'), param(req, 'npc_id'), expectedVersion(req, b.version)));
  });
  router.get(`${base}/changes`, ...viaQuery, async (req, res) => {
    const before = req.query.before === undefined ? null : Number(req.query.before);
    res.json(await build.changes(builderOf(res), param(req, 'world_id'), queryInt(req.query.limit, 50), before));
  });
  router.get(`${base}/script-errors`, ...viaQuery, async (req, res) => {
    const before = req.query.before === undefined ? null : Number(req.query.before);
    const owner = typeof req.query.owner === 'string' ? req.query.owner : null;
    res.json(await build.scriptErrors(builderOf(res), param(req, 'world_id'), queryInt(req.query.limit, 50), before, owner));
  });
  return router;
}
