import { Router, type RequestHandler, type Response } from 'express';
import type { CharacterRepository } from '../../db/repositories/character-repository.ts';
import type { SessionService } from '../../services/accounts/session-service.ts';
import type { GameService, Player } from '../../services/game/game-service.ts';
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

export function gameRouter(sessions: SessionService, characters: CharacterRepository, game: GameService, limits: RateLimits): Router {
  const router = Router();
  const bound = requireCharacter(characters);
  router.post('/command', authenticate(sessions, 'body'), limits.commandBySession, bound, async (req, res) => {
    res.json(await game.command(playerOf(res), String(req.body.command)));
  });
  router.get('/status/:session_id', authenticate(sessions, 'params'), bound, async (_req, res) => {
    res.json(await game.status(playerOf(res)));
  });
  router.get('/chat/:session_id', authenticate(sessions, 'params'), bound, async (_req, res) => {
    res.json(await game.chat(playerOf(res)));
  });
  return router;
}
