// Statements a request shapes (a query's filter and sort) are kept prepared per connection, within
// bounds (db/shaped-statements.ts): only once their shape repeats, none too long, at most so many
// and so many bytes of text, the least recently used deallocated first.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { openDatabase, type Database } from '../src/db/database';
import { MAX_PREPARED_TEXT, MAX_SHAPED_STATEMENTS, SHAPED_TEXT_BYTES } from '../src/db/shaped-statements';
import { DEFAULT_SHARED_BUFFERS_MB, loadConfig } from '../src/config';
import { migrationsDir } from '../src/paths';

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
  const held = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 's\\_%'`)).rows[0].n;

  /** Asks `text` `times` times, checking its answer. */
  const ask = async (n: number, times = 2, pad = 0) => {
    for (let i = 0; i < times; i++)
      expect((await db.query<{ v: number }>(`${shaped(n)}${pad ? ` -- ${'x'.repeat(pad)}` : ''}`, [1], 'bounded')).rows).toEqual([
        { v: 1 + n },
      ]);
  };

  it('prepares a shape only once it repeats, keeps at most MAX_SHAPED_STATEMENTS per connection, and runs an evicted one again', async () => {
    const before = await held();
    for (let n = 0; n < 50; n++) await ask(n, 1);
    expect(await held()).toBe(before);
    for (let n = 0; n < MAX_SHAPED_STATEMENTS + 20; n++) await ask(n);
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
    // The first ones were deallocated; asked again (twice), they are prepared again (and another goes).
    await ask(0);
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
    // A recently used one stays: no new Parse is needed, its answer is the same.
    await ask(MAX_SHAPED_STATEMENTS + 19, 1);
    expect((await held()) - before).toBe(MAX_SHAPED_STATEMENTS);
  });

  it('keeps no statement longer than MAX_PREPARED_TEXT, and at most SHAPED_TEXT_BYTES of text', async () => {
    const longer = async (than: number) =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE length(statement) > $1`, [than])).rows[0]
        .n;
    await ask(5000, 3, MAX_PREPARED_TEXT);
    expect(await longer(MAX_PREPARED_TEXT)).toBe(0);
    const size = Math.floor(MAX_PREPARED_TEXT * 0.9);
    const length = `${shaped(6000)} -- `.length + size;
    for (let n = 0; n < 12; n++) await ask(6000 + n, 2, size);
    // The small ones held before went first, then the oldest large ones.
    expect(await longer(size)).toBe(Math.floor(SHAPED_TEXT_BYTES / length));
    expect(await held()).toBe(Math.floor(SHAPED_TEXT_BYTES / length));
  });

  it('leaves no plan memory behind for statements asked once, however many and large', async () => {
    const plans = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT coalesce(sum(total_bytes), 0)::int AS n FROM pg_backend_memory_contexts WHERE name LIKE 'CachedPlan%'`,
        )
      ).rows[0].n;
    await plans();
    const before = await plans();
    // 100 distinct statements with large plans (a UNION ALL of 200 branches each).
    for (let n = 0; n < 100; n++) {
      const text = Array.from({ length: 200 }, (_, i) => `SELECT $1::int + ${n * 1000 + i} AS v`).join(' UNION ALL ');
      expect((await db.query<{ v: number }>(text, [0], 'bounded')).rows).toHaveLength(200);
    }
    expect((await plans()) - before).toBeLessThan(64 * 1024);
  });

  it("does the same on a transaction's connection", async () => {
    await db.transaction(async (tx) => {
      for (let n = 0; n < MAX_SHAPED_STATEMENTS + 5; n++) {
        for (let i = 0; i < 2; i++)
          expect((await tx.query<{ v: number }>(shaped(1000 + n), [0], 'bounded')).rows).toEqual([{ v: 1000 + n }]);
      }
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
  const prepared = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 's\\_%'`)).rows[0].n;

  it('answers as bound parameters do, whatever the values hold', async () => {
    const text = `SELECT $1::text AS s, $2::text[] AS a, $3::jsonb AS j, $4::numeric::text AS n, $5::boolean AS b, $6::int AS i, $7::timestamptz AS t, $8::text AS nul`;
    const values = [
      "it's a \\ back'slash",
      ['a,b', 'c"d', "e'f", '\\g', '', null],
      { k: "v'\\" },
      '123456789012345678901234567890.000000000001',
      true,
      -7,
      new Date('2024-02-29T12:34:56.789Z'),
      null,
    ];
    const bound = (await db.query(text, values)).rows;
    expect((await db.query(text, values, true)).rows).toEqual(bound);
    expect((await db.query(text, values, true)).rows).toEqual(bound);
    expect(bound[0]).toMatchObject({ s: values[0], a: values[1], j: values[2], n: values[3], b: true, i: -7, nul: null });
    // A NUL is refused as a bound parameter is.
    await expect(db.query('SELECT $1::text AS s', ['a\u0000b'], true)).rejects.toThrow();
    expect((await db.query('SELECT $1::text AS s', ['ok'], true)).rows).toEqual([{ s: 'ok' }]);
  });

  it('prepares a shape once it repeats, keeps at most MAX_SHAPED_STATEMENTS, prepares a deallocated one again, and runs one PREPARE refuses as it comes', async () => {
    const before = await prepared();
    const ask = (n: number, v: number) => db.query<{ v: number }>(`SELECT $1::int + ${n} AS v`, [v], true);
    expect((await ask(-1, 1)).rows).toEqual([{ v: 0 }]);
    expect(await prepared()).toBe(before);
    for (let n = 0; n < MAX_SHAPED_STATEMENTS + 20; n++) for (let i = 0; i < 2; i++) expect((await ask(n, 1)).rows).toEqual([{ v: 1 + n }]);
    expect(await prepared()).toBeLessThanOrEqual(MAX_SHAPED_STATEMENTS + before);
    expect(await prepared()).toBeGreaterThan(before);
    await db.exec('DEALLOCATE ALL');
    expect((await ask(MAX_SHAPED_STATEMENTS + 19, 2)).rows).toEqual([{ v: MAX_SHAPED_STATEMENTS + 21 }]);
    // $1 of no inferable type: PREPARE refuses it.
    for (let i = 0; i < 2; i++) expect((await db.query<{ v: string }>(`SELECT $1 AS v`, ['x'], true)).rows).toEqual([{ v: 'x' }]);
  });
});

// A new embedded database is a copy of the built seed (dist/pglite-seed/), made beside its place
// and renamed in, so that a start cut off midway leaves nothing a later start takes for a database.
describe('a new embedded database', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(tmpdir(), 'wsapi-seeded-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const migrated = async (db: Database) =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL')).rows[0].n;

  it('starts from the seed with every migration, its buffer pool as configured', async () => {
    const db = await openDatabase({ dataDir: dir, embeddedSharedBuffersMb: 24 });
    try {
      expect(await migrated(db)).toBe(readdirSync(migrationsDir).filter((d) => /^\d{14}_/.test(d)).length);
      expect((await db.query<{ v: string }>("SELECT current_setting('shared_buffers') AS v")).rows[0].v).toBe('24MB');
    } finally {
      await db.close();
    }
    expect(readdirSync(dir)).toEqual(['pgdata']);
    // The default, on the restart of the same database.
    const again = await openDatabase({ dataDir: dir });
    try {
      expect((await again.query<{ v: string }>("SELECT current_setting('shared_buffers') AS v")).rows[0].v).toBe(
        `${DEFAULT_SHARED_BUFFERS_MB}MB`,
      );
    } finally {
      await again.close();
    }
  });

  it('replaces a copy a cut-off start left, and an empty pgdata directory', async () => {
    mkdirSync(path.join(dir, 'pgdata'));
    mkdirSync(path.join(dir, 'pgdata.seeding', 'base'), { recursive: true });
    writeFileSync(path.join(dir, 'pgdata.seeding', 'PG_VERSION'), 'half a copy');
    const db = await openDatabase({ dataDir: dir });
    try {
      expect(await migrated(db)).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
    expect(readdirSync(dir)).toEqual(['pgdata']);
  });

  it('refuses an EMBEDDED_SHARED_BUFFERS_MB that is not a positive integer', () => {
    for (const bad of ['0', '-1', '1.5', '32MB'])
      expect(() => loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: bad, DATA_DIR: dir })).toThrow(
        `EMBEDDED_SHARED_BUFFERS_MB must be an integer >= 1, got "${bad}"`,
      );
    expect(loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '64', DATA_DIR: dir }).embeddedSharedBuffersMb).toBe(64);
  });
});
