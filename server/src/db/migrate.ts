// Applies prisma/migrations/*/migration.sql in order, once each, under an advisory lock so that
// several processes starting together migrate once. Rows go to Prisma's own `_prisma_migrations`
// table (checksum = sha256 of the file), so `prisma migrate status` agrees with what ran.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { withoutStatementTimeout, type Database } from './database';
import { migrationsDir } from '../paths';

export const LOCK_KEY = 72_817_001; // arbitrary, constant: "workspace-api migrations"

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/**
 * Runs `fn` while holding the migration lock, so that schema work outside our migrations (the job
 * queue's own schema) is done by one starting process at a time. PGlite has one process only.
 */
export async function withSchemaLock<T>(db: Database, fn: () => Promise<T>): Promise<T> {
  if (db.kind === 'pglite') return fn();
  // The lock is held by a transaction on one connection while `fn` uses others of the pool.
  // (A bare transaction: start-up work on the Database alone, before there is an app or a scheduler.)
  return db.transaction(async (tx) => {
    // Waiting for another process's schema work is no runaway statement.
    await withoutStatementTimeout(tx);
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    return fn();
  });
}

/** Returns the names of the migrations applied by this call. */
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  // A bare transaction: start-up work on the Database alone, before there is an app or a scheduler.
  return db.transaction(async (tx) => {
    // A migration (or the wait for another process's) must not be cut by the pool's statement
    // timeout: a migration stopped half-way would stop every start after it.
    await withoutStatementTimeout(tx);
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.exec(CREATE_TABLE);
    const done = await tx.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM "_prisma_migrations" WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL',
    );
    const applied = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const ran: string[] = [];
    for (const m of migrations) {
      const previous = applied.get(m.name);
      if (previous !== undefined) {
        if (previous !== m.checksum) throw new Error(`migration ${m.name} was changed after it was applied`);
        continue;
      }
      await tx.exec(m.sql);
      await tx.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
         VALUES ($1, $2, $3, now(), 1)`,
        [randomUUID(), m.checksum, m.name],
      );
      ran.push(m.name);
    }
    return ran;
  });
}
