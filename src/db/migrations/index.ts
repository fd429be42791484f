/**
 * Migrations are listed in code, in order, instead of being discovered on disk: the same list
 * serves the server, the CLI and the tests, and no file-extension rules can drift.
 * Applied migrations are immutable: add a new one, never edit an old one.
 */
import type { Knex } from 'knex';
import * as worlds from './20261121000001_worlds.ts';
import * as accounts from './20261121000002_accounts.ts';
import * as locationsAndChat from './20261121000003_locations_and_chat.ts';
import * as policyStore from './20261121000004_policy_store.ts';
import * as characterState from './20261121000005_character_state.ts';
import * as items from './20261121000006_items.ts';
import * as ledger from './20261121000007_ledger.ts';
import * as sessionTokenHash from './20261121000008_session_token_hash.ts';
import * as usernameKey from './20261121000009_username_key.ts';
import * as characterNameSkeleton from './20261125002101_character_name_skeleton.ts';
import * as worldBuilding from './20261125002201_world_building.ts';
import * as presence from './20261125002301_presence.ts';
import * as limitWindows from './20261125002401_limit_windows.ts';
import * as worldRevisions from './20261127003001_world_revisions.ts';
import * as moderation from './20261128003301_moderation.ts';
import * as npcsAndScripts from './20261128003401_npcs_and_scripts.ts';
import * as telnetSettings from './20261128003501_telnet_settings.ts';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261121000001_worlds', worlds],
  ['20261121000002_accounts', accounts],
  ['20261121000003_locations_and_chat', locationsAndChat],
  ['20261121000004_policy_store', policyStore],
  ['20261121000005_character_state', characterState],
  ['20261121000006_items', items],
  ['20261121000007_ledger', ledger],
  ['20261121000008_session_token_hash', sessionTokenHash],
  ['20261121000009_username_key', usernameKey],
  ['20261125002101_character_name_skeleton', characterNameSkeleton],
  ['20261125002201_world_building', worldBuilding],
  ['20261125002301_presence', presence],
  ['20261125002401_limit_windows', limitWindows],
  ['20261127003001_world_revisions', worldRevisions],
  ['20261128003301_moderation', moderation],
  ['20261128003401_npcs_and_scripts', npcsAndScripts],
  ['20261128003501_telnet_settings', telnetSettings],
];

export const migrationSource: Knex.MigrationSource<readonly [string, Migration]> = migrationsUpTo(MIGRATIONS.length);

/** The names of this release's migrations, in order. */
export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

/**
 * The first `count` migrations: a database made with them has the schema of one whose first
 * `count` were applied, which is what `copy-db` gives its target (the source's schema, for the
 * server to migrate further as it would the source).
 */
export function migrationsUpTo(count: number): Knex.MigrationSource<readonly [string, Migration]> {
  return {
    getMigrations: async () => MIGRATIONS.slice(0, count),
    getMigrationName: ([name]) => name,
    getMigration: async ([, migration]) => migration,
  };
}
