import { Router, type RequestHandler, type Response } from 'express';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { Actor } from '../../services/game/command-table.ts';
import { sessionActor, type GameService } from '../../services/game/game-service.ts';
import { resumePoint, type EventStreams, type StreamSink } from '../../services/game/event-streams.ts';
import { queryInt } from '../support/query.ts';
import { authenticate, sessionOf } from '../middleware/auth.ts';
import { byAddress } from '../middleware/rate-limit.ts';
import type { components } from '../../../generated/openapi.d.ts';

/** A game route needs a session bound to a character (read with the session): 409 (not 401) when there is none. */
const requireCharacter: RequestHandler = (_req, res, next) => {
  res.locals.actor = sessionActor(sessionOf(res), 'http');
  next();
};

const actorOf = (res: Response): Actor => res.locals.actor as Actor;

/** The JSON of each world's active names, by the list GameService.status shares until it changes. */
const namesJson = new WeakMap<readonly string[], string>();

/**
 * GET /status as JSON. Every player of a world gets the same list of active names, so it is
 * serialized once per list, not once per poll (docs/decisions.md, "The hot path").
 */
function statusJson(status: components['schemas']['GameStatus']): string {
  let names = namesJson.get(status.active_players);
  if (names === undefined) namesJson.set(status.active_players, (names = JSON.stringify(status.active_players)));
  let linkdead = namesJson.get(status.linkdead_players);
  if (linkdead === undefined) namesJson.set(status.linkdead_players, (linkdead = JSON.stringify(status.linkdead_players)));
  return `{"active_players":${names},"linkdead_players":${linkdead},"current_room":${JSON.stringify(status.current_room)},"inventory":${JSON.stringify(status.inventory)}}`;
}

/** Sent with the first frame; proxies must neither cache nor buffer the stream (nginx reads X-Accel-Buffering). */
const STREAM_HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' };

export function gameRouter(sessions: SessionService, game: GameService, streams: EventStreams): Router {
  const router = Router();
  router.post('/command', authenticate(sessions, 'body'), requireCharacter, async (req, res) => {
    // The throttle counts the session's row id, never its token (counts keyed by a secret would keep it in the store).
    res.json(await game.play(actorOf(res), String(req.body.command), String(sessionOf(res).id)));
  });
  router.get('/commands/:session_id', authenticate(sessions, 'params'), (_req, res) => {
    res.json({ commands: game.commands(sessionOf(res).role) });
  });
  router.get('/status/:session_id', authenticate(sessions, 'params'), requireCharacter, async (_req, res) => {
    res.type('application/json').send(statusJson(await game.status(actorOf(res))));
  });
  router.get('/chat/:session_id', authenticate(sessions, 'params'), requireCharacter, async (req, res) => {
    res.json(await game.chat(actorOf(res), queryInt(req.query.after, 0)));
  });
  // Frames are written straight to the socket: the response validator only sees res.json
  // bodies, and nothing in the app compresses, so no event is held back.
  router.get('/events/:session_id', authenticate(sessions, 'params'), requireCharacter, async (req, res) => {
    const sink: StreamSink = {
      write: (chunk) => {
        if (!res.headersSent) res.writeHead(200, STREAM_HEADERS);
        res.write(chunk);
      },
      // What the response and its socket hold that the client has not read.
      buffered: () => res.writableLength,
      // The client may have hung up while the request was being authenticated.
      onClose: (listener) => (res.destroyed || res.closed ? listener() : res.once('close', listener)),
      close: (drainMs) => {
        res.end();
        const drop = setTimeout(() => res.destroy(), drainMs);
        drop.unref();
        res.once('close', () => clearTimeout(drop));
      },
    };
    const session = sessionOf(res);
    await streams.open(session.id, { accountId: session.userId, address: byAddress(req) }, actorOf(res), resumePoint(req.get('last-event-id')), sink);
  });
  return router;
}
