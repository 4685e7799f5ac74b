// The one transaction idiom of the entry core: run the work in one database transaction on one
// connection, retry the whole of it when PostgreSQL reports a serialization failure or a deadlock
// (40001, 40P01), then wake the event dispatcher once it has committed. Events and audit records
// are written inside the work (events/outbox.ts, events/audit.ts), so a rollback publishes nothing.
import type { AppContext } from '../context';
import type { SqlRunner } from '../db/database';
import { sqlState } from '../lib/sql-state';

const RETRYABLE = new Set(['40001', '40P01']);
const ATTEMPTS = 4;

export async function transaction<T>(app: AppContext, work: (tx: SqlRunner) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await app.db.transaction(work);
      app.scheduler.kick();
      return result;
    } catch (err) {
      if (attempt >= ATTEMPTS || !RETRYABLE.has(sqlState(err) ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
}
