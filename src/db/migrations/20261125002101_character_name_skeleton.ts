import { createRequire } from 'node:module';
import type { Knex } from 'knex';

/**
 * Character names that look alike cannot share a world: `characters.name_skeleton` holds each
 * name's look-alike key (UTS #39 skeleton, compared in lower case) under a unique index per
 * world. Characters whose names already look alike are all kept: the oldest of each group gets
 * the key, the others none, and one warning names them for an operator to settle.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('characters', (t) => {
    t.string('name_skeleton', 255).nullable();
  });
  const rows: Array<{ id: number; world_id: string; name: string }> = await knex('characters').orderBy('id').select('id', 'world_id', 'name');
  const holders = new Map<string, { id: number; name: string }>();
  const clashes: string[] = [];
  for (const row of rows) {
    const skeleton = nameSkeleton(row.name);
    const key = `${row.world_id}\n${skeleton}`;
    const holder = holders.get(key);
    if (holder) {
      clashes.push(`'${row.name}' (id ${row.id}) looks like '${holder.name}' (id ${holder.id}) in world '${row.world_id}'`);
      continue;
    }
    holders.set(key, row);
    await knex('characters').where({ id: row.id }).update({ name_skeleton: skeleton });
  }
  await knex.schema.alterTable('characters', (t) => {
    t.unique(['world_id', 'name_skeleton'], { indexName: 'characters_world_name_skeleton_unique' });
  });
  if (clashes.length > 0) {
    knex.client.logger.warn?.(`Character names that look alike were kept, the later ones without a name_skeleton: ${clashes.join('; ')}. Rename one of each pair to settle them.`);
  }
}

/** Not knex's dropColumn: on SQLite it rebuilds `characters`, which other tables reference. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('characters', (t) => {
    t.dropUnique(['world_id', 'name_skeleton'], 'characters_world_name_skeleton_unique');
  });
  await knex.raw('ALTER TABLE ?? DROP COLUMN ??', ['characters', 'name_skeleton']);
}

/**
 * The look-alike key as it was when this migration was written (a copy, not the repository's,
 * so that this migration never changes with today's code): the skeleton, lower-cased, and the
 * skeleton of that.
 */
function nameSkeleton(name: string): string {
  const prototypes = new Map(Object.entries(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>));
  const skeleton = (text: string): string => [...text.normalize('NFD')].map((c) => prototypes.get(c) ?? c).join('').normalize('NFD');
  return skeleton(skeleton(name).toLowerCase());
}
