// Statements a request shapes (a query's filter and sort) are kept prepared per connection, within
// a bound: the least recently used is deallocated first (db/database.ts).
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
