/**
 * Knex configuration for tooling (e.g. `npx knex migrate:status`), built from the same
 * config as the server. The server itself migrates at start and via `mud-server migrate`.
 */
import { loadConfig } from './src/config/config.ts';
import { knexConfig } from './src/db/database.ts';

const { config } = loadConfig();

export default knexConfig({ sqlitePath: config.database.path, url: config.database.url });
