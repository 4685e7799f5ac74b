// Statements a request shapes (a query's filter and sort) are kept prepared per connection, within
// a bound: the least recently used is deallocated first (db/database.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { MAX_SHAPED_STATEMENTS, openDatabase, type Database } from '../src/db/database';

describeWithPostgres('request-shaped prepared statements', () => {
  let test: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    test = await createTestDatabase();
    // One connection: every statement below runs on it.
    db = await openDatabase({ databaseUrl: test.url, dataDir: test.dataDir, databasePoolSize: 1 });
  });
  afterAll(async () => {
    await db.close();
    await test.drop();
  });

  const shaped = (n: number) => `SELECT $1::int + ${n} AS v`;
  const held = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 's\\_%'`)).rows[0].n;

  it('keeps at most MAX_SHAPED_STATEMENTS per connection, and runs an evicted one again', async () => {
    const before = await held();
    for (let n = 0; n < MAX_SHAPED_STATEMENTS + 20; n++) {
      expect((await db.query<{ v: number }>(shaped(n), [1], 'bounded')).rows).toEqual([{ v: 1 + n }]);
    }
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
    // The first ones were deallocated; asked again, they are prepared again (and another goes).
    expect((await db.query<{ v: number }>(shaped(0), [5], 'bounded')).rows).toEqual([{ v: 5 }]);
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
    // A recently used one stays: no new Parse is needed, its answer is the same.
    expect((await db.query<{ v: number }>(shaped(MAX_SHAPED_STATEMENTS + 19), [2], 'bounded')).rows).toEqual([{ v: 2 + MAX_SHAPED_STATEMENTS + 19 }]);
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
  });

  it('does the same on a transaction\'s connection', async () => {
    await db.transaction(async (tx) => {
      for (let n = 0; n < MAX_SHAPED_STATEMENTS + 5; n++) expect((await tx.query<{ v: number }>(shaped(1000 + n), [0], 'bounded')).rows).toEqual([{ v: 1000 + n }]);
    });
    expect(await held()).toBe(MAX_SHAPED_STATEMENTS);
  });
});

// The embedded database prepares the same statements with SQL PREPARE/EXECUTE, each parameter a
// literal of its text form: the answers must be those of bound parameters.
describe('prepared statements on the embedded database', () => {
  let dir: string;
  let db: Database;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wsapi-prepared-'));
    db = await openDatabase({ dataDir: dir });
  });
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const prepared = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 's\\_%'`)).rows[0].n;

  it('answers as bound parameters do, whatever the values hold', async () => {
    const text = `SELECT $1::text AS s, $2::text[] AS a, $3::jsonb AS j, $4::numeric::text AS n, $5::boolean AS b, $6::int AS i, $7::timestamptz AS t, $8::text AS nul`;
    const values = ["it's a \\ back'slash", ['a,b', 'c"d', "e'f", '\\g', '', null], { k: "v'\\" }, '123456789012345678901234567890.000000000001', true, -7, new Date('2024-02-29T12:34:56.789Z'), null];
    const bound = (await db.query(text, values)).rows;
    expect((await db.query(text, values, true)).rows).toEqual(bound);
    expect((await db.query(text, values, true)).rows).toEqual(bound);
    expect(bound[0]).toMatchObject({ s: values[0], a: values[1], j: values[2], n: values[3], b: true, i: -7, nul: null });
    // A NUL is refused as a bound parameter is.
    await expect(db.query('SELECT $1::text AS s', ['a\u0000b'], true)).rejects.toThrow();
    expect((await db.query('SELECT $1::text AS s', ['ok'], true)).rows).toEqual([{ s: 'ok' }]);
  });

  it('keeps at most MAX_SHAPED_STATEMENTS, prepares a deallocated one again, and runs one PREPARE refuses as it comes', async () => {
    const before = await prepared();
    for (let n = 0; n < MAX_SHAPED_STATEMENTS + 20; n++) expect((await db.query<{ v: number }>(`SELECT $1::int + ${n} AS v`, [1], true)).rows).toEqual([{ v: 1 + n }]);
    expect(await prepared()).toBeLessThanOrEqual(MAX_SHAPED_STATEMENTS + before);
    await db.exec('DEALLOCATE ALL');
    expect((await db.query<{ v: number }>(`SELECT $1::int + ${MAX_SHAPED_STATEMENTS + 19} AS v`, [2], true)).rows).toEqual([{ v: MAX_SHAPED_STATEMENTS + 21 }]);
    // $1 of no inferable type: PREPARE refuses it.
    expect((await db.query<{ v: string }>(`SELECT $1 AS v`, ['x'], true)).rows).toEqual([{ v: 'x' }]);
  });
});
