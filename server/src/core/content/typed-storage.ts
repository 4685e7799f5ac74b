// The `entries:typed-storage` task: fills the typed storage of content types whose entries were
// stored before it existed (the typed_storage migration creates their tables empty), in batches
// of their own transactions (typed_storage_fill). It resumes where a stopped run left off, runs
// beside the writes (each batch locks only its own entries, and gives way to a write), and any
// number of processes can run it. Until a type's table is complete its queries read documents
// (ContentTypeDef.typedReady), so the answers are the same throughout.
import type { AppContext } from '../../context';
import { sqlState } from '../../lib/sql-state';
import { rows, sql } from '../sql';

/** lock_not_available: a batch gave way to a write (its lock_timeout); it is run again later. */
const GAVE_WAY = '55P03';

export async function fillTypedStorage(app: AppContext, budgetMs = 40_000, batch = 1000): Promise<number> {
  const started = Date.now();
  let filled = 0;
  const pending = await rows<{ id: number }>(app.db, sql`SELECT content_type_id AS id FROM typed_tables WHERE backfill_after IS NOT NULL ORDER BY content_type_id`);
  for (const { id } of pending) {
    for (;;) {
      if (Date.now() - started > budgetMs) return filled;
      let count: number;
      try {
        [{ count }] = await rows<{ count: number }>(app.db, sql`SELECT typed_storage_fill(${id}::int, ${batch}::int) AS count`);
      } catch (err) {
        if (sqlState(err) !== GAVE_WAY) throw err;
        // Another batch, or the next run, tries again.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      // 0: complete, or another process is filling this table.
      if (!count) break;
      filled += count;
    }
  }
  return filled;
}
