// The `entries:field-cleanup` task: the values of removed fields leave the documents, in batches of
// their own transactions (field_cleanup_step), after the change that removed them answered. Until
// then they are invisible: reads, queries and writes see a type's fields only, and a new field
// never gets a removed field's key. It resumes where a stopped run left off, gives way to
// writes, and any number of processes can run it.
import type { CoreContext } from '../context';
import { runSteps } from '../batched-steps';
import { rows, sql } from '../sql';

/** Queued by a change that removed fields (in its transaction): the cleanup starts once it commits. */
export const FIELD_CLEANUP_JOB = 'entries.field-cleanup';

export async function cleanUpRemovedFields(core: CoreContext, budgetMs = 40_000, batch = 1000): Promise<number> {
  const pending = await rows<{ id: number }>(core.db, sql`SELECT id FROM field_removals WHERE NOT finished ORDER BY id`);
  // A step's 0: done, or another process is on it.
  const step = async (id: number) =>
    (await rows<{ count: number }>(core.db, sql`SELECT field_cleanup_step(${id}::int, ${batch}::int) AS count`))[0].count;
  return runSteps(
    pending.map((p) => p.id),
    step,
    budgetMs,
  );
}
