/**
 * What a player chose for the telnet door with `config` (docs/decisions.md, "The telnet door"),
 * kept per account across sessions and connections: colours on or off (or left to the door,
 * which reads the client's terminal type), the prompt shown after each answer, and
 * screen-reader mode. The door applies them; this service keeps them and checks the prompt.
 */
import { toDbTime, type Clock } from '../../db/clock.ts';
import type { TelnetSettingsRepository, TelnetSettingsRow } from '../../db/repositories/telnet-settings-repository.ts';
import { InvalidInput } from '../../shared/errors.ts';
import { plainText } from '../../shared/plain-text.ts';

export type TelnetSettings = TelnetSettingsRow;

/** The prompt of an account that chose none: the room and its exits, `[Lockkeeper's Square] n e s > `. */
export const DEFAULT_PROMPT = '[%r] %e > ';
/** The longest prompt a player may set (its tokens count as typed). */
export const MAX_PROMPT_CHARACTERS = 80;

const DEFAULTS: TelnetSettings = { colour: null, prompt: null, screenReader: false };

export class TelnetSettingsService {
  private readonly repo: TelnetSettingsRepository;
  private readonly clock: Clock;

  constructor(repo: TelnetSettingsRepository, clock: Clock) {
    this.repo = repo;
    this.clock = clock;
  }

  async get(userId: number): Promise<TelnetSettings> {
    return (await this.repo.find(userId)) ?? { ...DEFAULTS };
  }

  /**
   * Changes some of the account's settings and returns them all. A prompt is made plain text
   * (no escapes or control characters reach the terminal), ends in a space and may have
   * MAX_PROMPT_CHARACTERS; an empty one means no prompt.
   */
  async change(userId: number, change: Partial<TelnetSettings>): Promise<TelnetSettings> {
    const next = { ...(await this.get(userId)), ...change };
    if (change.prompt !== undefined && change.prompt !== null) {
      // Ending in a space keeps what the player types apart from the prompt.
      const prompt = plainText(change.prompt) === '' ? '' : `${plainText(change.prompt)} `;
      if ([...prompt].length > MAX_PROMPT_CHARACTERS) throw new InvalidInput(`A prompt may have at most ${MAX_PROMPT_CHARACTERS} characters.`);
      next.prompt = prompt;
    }
    await this.repo.save(userId, next, toDbTime(this.clock()));
    return next;
  }
}
