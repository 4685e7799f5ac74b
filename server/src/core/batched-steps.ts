// Background work done in resumable steps of their own transactions (a typed table's fill, a
// removed field's cleanup): each item's step runs until it reports nothing left, within a time
// budget; a step that gave way to a write is simply run again.
import { LOCK_NOT_AVAILABLE, sqlState } from '../lib/sql-state';

/**
 * Runs `step(id)` for each of `ids` until it returns 0 (done, or another process is on it), while
 * `budgetMs` lasts; returns the sum of what the steps returned.
 */
export async function runSteps(ids: number[], step: (id: number) => Promise<number>, budgetMs: number): Promise<number> {
  const started = Date.now();
  let total = 0;
  for (const id of ids) {
    for (;;) {
      if (Date.now() - started > budgetMs) return total;
      let count: number;
      try {
        count = await step(id);
      } catch (err) {
        // A step that gave way to a write (its lock_timeout) is run again.
        if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      if (!count) break;
      total += count;
    }
  }
  return total;
}
