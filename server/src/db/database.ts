// One interface over the two supported engines: a PostgreSQL server (DATABASE_URL) and the
// embedded PostgreSQL (PGlite in DATA_DIR). Everything above this module is engine-agnostic.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { Pool, types as pgTypes, type QueryResult as PgResult } from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client';
import { pgliteSeedPath } from '../paths';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** A place to run SQL: the database itself or one transaction on it. */
export interface SqlRunner {
  /**
   * Runs one statement. `prepare` names it on a PostgreSQL server: each connection parses and
   * plans it once and then only binds values (for the few fixed statements every request runs).
   */
  query<T = Record<string, unknown>>(text: string, values?: unknown[], prepare?: boolean): Promise<QueryResult<T>>;
  /** Runs a script of several statements (no parameters). */
  exec(sql: string): Promise<void>;
  /** Like `exec`, returning the rows of the script's last statement (pg-boss runs scripts). */
  execReturning<T = Record<string, unknown>>(sql: string): Promise<QueryResult<T>>;
}

export interface Database extends SqlRunner {
  kind: 'postgres' | 'pglite';
  prisma: PrismaClient;
  /** Runs `fn` in one transaction on one connection (commit on success, rollback on throw). */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A prepared statement's name, from its text (the same statement gets the same name everywhere). */
const statementName = (text: string) => `s_${createHash('sha1').update(text).digest('hex')}`;

// int8 arrives as a string from pg; our bigint columns (counters, offsets) fit in a double.
pgTypes.setTypeParser(20, (v) => Number(v));

function normalizeRows<T>(rows: T[]): T[] {
  // PGlite returns int8 as BigInt; make both engines hand back numbers.
  for (const row of rows as Record<string, unknown>[]) {
    for (const key of Object.keys(row)) if (typeof row[key] === 'bigint') row[key] = Number(row[key]);
  }
  return rows;
}

async function openPostgres(url: string, poolSize: number): Promise<Database> {
  // A server that does not answer must not hold requests forever: give up connecting after 5 s
  // (the request then gets 503, see lib/db-errors.ts).
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    // Many short requests at once: a parallel scan for one of them takes cores from the others.
    options: '-c max_parallel_workers_per_gather=0',
  });
  // An idle connection dropped by the server (restart, failover) is replaced on the next query;
  // without a listener the error would end the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const runner = (client: { query: Pool['query'] }): SqlRunner => ({
    async query(text, values, prepare) {
      const res = prepare ? await client.query({ name: statementName(text), text, values: values as unknown[] }) : await client.query(text, values as unknown[]);
      return { rows: res.rows, rowCount: res.rowCount ?? res.rows.length };
    },
    async exec(sql) {
      await client.query(sql);
    },
    async execReturning(sql) {
      const res = (await client.query(sql)) as unknown as PgResult | PgResult[];
      const last = Array.isArray(res) ? res[res.length - 1] : res;
      return { rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0 };
    },
  });
  return {
    kind: 'postgres',
    prisma,
    ...runner(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(runner(client as unknown as Pool));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

async function openPglite(dataDir: string): Promise<Database> {
  return (await openPgliteWithHandle(dataDir)).db;
}

/** The embedded database and its PGlite instance (for dumping it, see scripts/build.mjs). */
export async function openPgliteWithHandle(dataDir: string): Promise<{ db: Database; pglite: PGlite }> {
  const dir = path.join(dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  // A new data dir starts from the seed (initdb and migrations done at build time, about 1.5 s
  // faster than initdb here); later migrations are applied on top as usual.
  const fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  const seed = fresh && existsSync(pgliteSeedPath) ? new Blob([readFileSync(pgliteSeedPath)]) : undefined;
  const pg = await PGlite.create(dir, seed ? { loadDataDir: seed } : {});
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pg) });
  type PgliteLike = Pick<PGlite, 'query' | 'exec'>;
  // `prepare` is ignored: PGlite's protocol has no named statements (and EXECUTE takes no bound
  // parameters), so each statement is parsed and planned in process as it comes.
  const runner = (client: PgliteLike): SqlRunner => ({
    async query<T>(text: string, values?: unknown[]) {
      const res = await client.query<T>(text, values as unknown[]);
      return { rows: normalizeRows(res.rows), rowCount: res.affectedRows ?? res.rows.length };
    },
    async exec(sql: string) {
      await client.exec(sql);
    },
    async execReturning<T>(sql: string) {
      const results = await client.exec(sql);
      const last = results[results.length - 1];
      return { rows: normalizeRows((last?.rows ?? []) as T[]), rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
    },
  });
  const db: Database = {
    kind: 'pglite',
    prisma,
    ...runner(pg),
    transaction: (fn) => pg.transaction((tx) => fn(runner(tx))),
    async close() {
      await prisma.$disconnect();
      await pg.close();
    },
  };
  return { db, pglite: pg };
}

/**
 * A Prisma interactive transaction as a SqlRunner, so that code written in raw SQL (events,
 * audit records) joins a transaction that Prisma opened.
 */
export function prismaSql(tx: { $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>; $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number> }): SqlRunner {
  return {
    async query<T>(text: string, values: unknown[] = []) {
      const rows = normalizeRows(await tx.$queryRawUnsafe<T[]>(text, ...values));
      return { rows, rowCount: rows.length };
    },
    async exec(sql: string) {
      await tx.$executeRawUnsafe(sql);
    },
    async execReturning<T>(sql: string) {
      const rows = normalizeRows(await tx.$queryRawUnsafe<T[]>(sql));
      return { rows, rowCount: rows.length };
    },
  };
}

export async function openDatabase(opts: { databaseUrl?: string; dataDir: string; databasePoolSize?: number }): Promise<Database> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.databasePoolSize ?? 10) : openPglite(opts.dataDir);
}

