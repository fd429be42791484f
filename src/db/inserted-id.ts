/** The id from `insert(...).returning('id')`: PostgreSQL gives `{id}`, SQLite the bare value. */
export function insertedId(row: unknown): number {
  return typeof row === 'object' && row !== null ? Number((row as { id: number }).id) : Number(row);
}
