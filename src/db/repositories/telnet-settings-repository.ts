/** SQL of the `telnet_settings` table: what each account chose for the telnet door (`config`). */
import type { Db } from '../database.ts';

export interface TelnetSettingsRow {
  colour: boolean | null;
  prompt: string | null;
  screenReader: boolean;
}

export class TelnetSettingsRepository {
  private readonly db: Db;
  constructor(db: Db) {
    this.db = db;
  }

  async find(userId: number): Promise<TelnetSettingsRow | undefined> {
    const row = await this.db('telnet_settings').where({ user_id: userId }).first('colour', 'prompt', 'screen_reader');
    if (!row) return undefined;
    // SQLite answers booleans as 0 and 1.
    return { colour: row.colour === null ? null : Boolean(row.colour), prompt: (row.prompt as string | null) ?? null, screenReader: Boolean(row.screen_reader) };
  }

  /** Writes the account's settings whole, in one statement (two connections saving at once: the later wins). */
  async save(userId: number, settings: TelnetSettingsRow, now: string): Promise<void> {
    await this.db('telnet_settings')
      .insert({ user_id: userId, colour: settings.colour, prompt: settings.prompt, screen_reader: settings.screenReader, updated_at: now })
      .onConflict('user_id')
      .merge(['colour', 'prompt', 'screen_reader', 'updated_at']);
  }
}
