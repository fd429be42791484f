/**
 * copy-db's checksum of a table (src/db/tables.ts) is the same for the same rows as SQLite's
 * driver and pg's give them: booleans as 1/0 or true/false, bigints as numbers or text,
 * floats, text and nulls; and different for any change of a value, a row or their order.
 */
import { expect } from 'chai';
import { describe, it } from 'mocha';
import { TableChecksum, writableRow, type TableInfo } from '../../src/db/tables.ts';

const TABLE: TableInfo = {
  name: 'samples',
  columns: [
    { name: 'active', kind: 'boolean' },
    { name: 'id', kind: 'integer' },
    { name: 'name', kind: 'text' },
    { name: 'reset_at', kind: 'integer' },
    { name: 'score', kind: 'float' },
  ],
  primaryKey: ['id'],
  counter: 'id',
  references: [],
};

const asSqlite = [
  { id: 1, name: 'Wren', active: 1, score: 0.1, reset_at: 1764288000123 },
  { id: 2, name: 'Ölfa ✓', active: 0, score: 2, reset_at: null },
  { id: 3, name: null, active: 1, score: -0.5, reset_at: 4102444800000 },
];
const asPostgres = [
  { id: 1, name: 'Wren', active: true, score: 0.1, reset_at: '1764288000123' },
  { id: 2, name: 'Ölfa ✓', active: false, score: 2, reset_at: null },
  { id: 3, name: null, active: true, score: -0.5, reset_at: '4102444800000' },
];

function checksum(rows: Array<Record<string, unknown>>): string {
  const sum = new TableChecksum(TABLE);
  for (const row of rows) sum.add(row);
  return sum.digest();
}

describe('table checksum (copy-db)', () => {
  it('is the same for the rows as SQLite gives them and as PostgreSQL gives them', () => {
    expect(checksum(asSqlite)).to.equal(checksum(asPostgres));
  });

  it('differs for a changed value, a missing row, rows in another order or a null for an empty text', () => {
    const base = checksum(asPostgres);
    expect(checksum([{ ...asPostgres[0]!, score: 0.1000001 }, ...asPostgres.slice(1)])).to.not.equal(base);
    expect(checksum([{ ...asPostgres[0]!, active: false }, ...asPostgres.slice(1)])).to.not.equal(base);
    expect(checksum(asPostgres.slice(0, 2))).to.not.equal(base);
    expect(checksum([asPostgres[1]!, asPostgres[0]!, asPostgres[2]!])).to.not.equal(base);
    expect(checksum([asPostgres[0]!, asPostgres[1]!, { ...asPostgres[2]!, name: '' }])).to.not.equal(base);
  });

  it('writes what it reads in a form both drivers store as the same value', () => {
    expect(asSqlite.map((row) => writableRow(TABLE, row))).to.deep.equal([
      { id: 1, name: 'Wren', active: true, score: 0.1, reset_at: 1764288000123 },
      { id: 2, name: 'Ölfa ✓', active: false, score: 2, reset_at: null },
      { id: 3, name: null, active: true, score: -0.5, reset_at: 4102444800000 },
    ]);
    expect(asPostgres.map((row) => writableRow(TABLE, row))).to.deep.equal(asSqlite.map((row) => writableRow(TABLE, row)));
    // Past 2^53 an integer stays text, which both databases read into a bigint column exactly.
    expect(writableRow(TABLE, { ...asPostgres[2]!, reset_at: '9007199254740993' })).to.deep.include({ reset_at: '9007199254740993' });
  });
});
