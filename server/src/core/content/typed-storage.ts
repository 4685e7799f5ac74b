// The `entries:typed-storage` task: fills the typed storage of content types whose entries were
// stored before it existed (the typed_storage migration creates their tables empty), in batches
// of their own transactions (typed_storage_fill). It resumes where a stopped run left off, runs
// beside the writes (each batch locks only its own entries, and gives way to a write), and any
// number of processes can run it. Until a type's table is complete its queries read documents
// (ContentTypeDef.typedReady), so the answers are the same throughout.
import type { CoreContext } from '../context';
import { runSteps } from '../batched-steps';
import { rows, sql } from '../sql';

export async function fillTypedStorage(core: CoreContext, budgetMs = 40_000, batch = 1000): Promise<number> {
  const pending = await rows<{ id: number }>(
    core.db,
    sql`SELECT content_type_id AS id FROM typed_tables WHERE backfill_after IS NOT NULL ORDER BY content_type_id`,
  );
  // A step's 0: complete, or another process is filling this table.
  const step = async (id: number) =>
    (await rows<{ count: number }>(core.db, sql`SELECT typed_storage_fill(${id}::int, ${batch}::int) AS count`))[0].count;
  return runSteps(
    pending.map((p) => p.id),
    step,
    budgetMs,
  );
}

/**
 * Builds the sort indexes the type's fields want and its table lacks (a field added or made
 * `indexed` by a change), after the change committed: concurrently on PostgreSQL, so that reads
 * and writes of the type go on meanwhile; an invalid one (a build that failed) is built again.
 */
export async function buildSortIndexes(core: CoreContext, typeId: number): Promise<void> {
  const missing = await rows<{ name: string; definition: string; invalid: boolean }>(
    core.db,
    sql`SELECT * FROM typed_storage_missing_indexes(${typeId}::int)`,
  );
  // The embedded database has one connection: nothing could go on beside a build anyway.
  const concurrently = core.db.kind === 'postgres' ? 'CONCURRENTLY ' : '';
  // Names are typed_<id>_f<id>_asc/desc: nothing to quote.
  for (const { name, definition, invalid } of missing) {
    if (invalid) await core.db.query(`DROP INDEX ${concurrently}IF EXISTS "${name}"`);
    await core.db.query(`CREATE INDEX ${concurrently}IF NOT EXISTS "${name}" ${definition}`);
  }
}
