import { Router, type RequestHandler, type Response } from 'express';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { GameService, Player } from '../../services/game/game-service.ts';
import { resumePoint, type EventStreams, type StreamSink } from '../../services/game/event-streams.ts';
import { queryInt } from '../query.ts';
import { HttpError } from '../errors.ts';
import { authenticate, sessionOf } from '../middleware/auth.ts';
import type { RateLimits } from '../middleware/rate-limit.ts';

/** A game route needs a session bound to a character: 409 (not 401) when there is none. */
function requireCharacter(characters: CharacterRepository): RequestHandler {
  return async (_req, res, next) => {
    const session = sessionOf(res);
    if (session.characterId === null) throw new HttpError(409, 'No character selected for session. Select a character first.');
    const character = await characters.findById(session.characterId);
    if (!character) throw new HttpError(409, 'Selected character not found');
    const player: Player = { characterId: character.id, name: character.name, worldId: character.worldId, roomId: character.roomId };
    res.locals.player = player;
    next();
  };
}

const playerOf = (res: Response): Player => res.locals.player as Player;

/** Sent with the first frame; proxies must neither cache nor buffer the stream (nginx reads X-Accel-Buffering). */
const STREAM_HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' };

export function gameRouter(sessions: SessionService, characters: CharacterRepository, game: GameService, streams: EventStreams, limits: RateLimits): Router {
  const router = Router();
  const bound = requireCharacter(characters);
  router.post('/command', authenticate(sessions, 'body'), limits.commandBySession, bound, async (req, res) => {
    res.json(await game.command(playerOf(res), String(req.body.command)));
  });
  router.get('/status/:session_id', authenticate(sessions, 'params'), bound, async (_req, res) => {
    res.json(await game.status(playerOf(res)));
  });
  router.get('/chat/:session_id', authenticate(sessions, 'params'), bound, async (req, res) => {
    res.json(await game.chat(playerOf(res), queryInt(req.query.after, 0)));
  });
  // Frames are written straight to the socket: the response validator only sees res.json
  // bodies, and nothing in the app compresses, so no event is held back.
  router.get('/events/:session_id', authenticate(sessions, 'params'), bound, async (req, res) => {
    const sink: StreamSink = {
      write: (frame) => {
        if (!res.headersSent) res.writeHead(200, STREAM_HEADERS);
        return res.write(frame);
      },
      onDrain: (listener) => res.on('drain', listener),
      close: (abort) => (abort ? res.destroy() : res.end()),
    };
    res.once('close', () => streams.closed(sink));
    await streams.open(sessionOf(res).id, playerOf(res), resumePoint(req.get('last-event-id')), sink);
  });
  return router;
}
