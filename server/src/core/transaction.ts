// The unit of work every write runs in: one database transaction on one connection, retried as a
// whole when PostgreSQL reports a serialization failure or a deadlock (40001, 40P01), then the
// event dispatcher woken once it has committed. Events and audit records are written inside the
// work (events/outbox.ts, events/audit.ts), so a rollback publishes nothing.
//
// A unit started inside another one of the same database joins it (AsyncLocalStorage carries the
// open transaction down the calls): its work runs in the open transaction, and the outermost unit
// commits, rolls back or retries everything. So one write (an entry's create) composes into a
// larger one (a batch) with no second, transaction-taking version of each function.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CoreContext } from './context';
import type { SqlRunner } from '../db/database';
import { sqlState } from '../lib/sql-state';

const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 4;

/** The open unit of this async path; `tx` is cleared when it ends (work it started may outlive it). */
const open = new AsyncLocalStorage<{ db: unknown; tx?: SqlRunner }>();

function joinable(core: CoreContext): SqlRunner | undefined {
  const unit = open.getStore();
  return unit?.db === core.db ? unit.tx : undefined;
}

/** Where a read sees the open unit's own writes: its transaction, or else the pool. */
export const openRunner = (core: CoreContext): SqlRunner => joinable(core) ?? core.db;

/**
 * Runs `work` in the open unit of `core`'s database, or in a new one. `runner` wraps a new unit's
 * transaction for its work and every unit that joins it (a batch counts its database time).
 */
export async function transaction<T>(
  core: CoreContext,
  work: (tx: SqlRunner) => Promise<T>,
  runner?: (tx: SqlRunner) => SqlRunner,
): Promise<T> {
  const joined = joinable(core);
  if (joined) return work(joined);
  for (let attempt = 1; ; attempt++) {
    const unit: { db: unknown; tx?: SqlRunner } = { db: core.db };
    try {
      const result = await core.db.transaction((raw) => {
        const tx = (unit.tx = runner ? runner(raw) : raw);
        return open.run(unit, () => work(tx));
      });
      core.scheduler.kick();
      return result;
    } catch (err) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (0.5 + Math.random())));
    } finally {
      unit.tx = undefined;
    }
  }
}
