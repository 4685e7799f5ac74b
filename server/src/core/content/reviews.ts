// Reviews of entries (created and resolved by operators): a pending review blocks what the
// documents say it blocks (json-entries.ts asks `hasPendingReview`).
import type { CoreContext } from '../context';
import { isoTimestamp, rows, sql } from '../sql';
import { DomainError, invalidAt } from '../errors';

export interface ReviewRow {
  id: number;
  entry_id: string;
  status: 'pending' | 'resolved';
  created_at: string;
}

const RETURNING = sql`RETURNING id, (SELECT entry_id FROM entries WHERE id = entry_pk) AS entry_id, status, ${isoTimestamp(sql`created_at`)} AS created_at`;

export async function createReview(core: CoreContext, workspaceId: number, entryId: string): Promise<ReviewRow> {
  const [row] = await rows<ReviewRow>(
    core.db,
    sql`INSERT INTO reviews (workspace_id, entry_pk, status, created_at)
        SELECT ${workspaceId}::int, id, 'pending', ${core.clock.sqlNow()} FROM entries
         WHERE workspace_id = ${workspaceId} AND entry_id = ${entryId} AND deleted_at IS NULL
        ${RETURNING}`,
  );
  if (!row) throw invalidAt('entry_id', 'The selected :attribute is invalid.');
  return row;
}

export async function resolveReview(core: CoreContext, workspaceId: number, id: number): Promise<ReviewRow> {
  const [row] = await rows<ReviewRow>(
    core.db,
    sql`UPDATE reviews SET status = 'resolved', resolved_at = ${core.clock.sqlNow()}
         WHERE id = ${id} AND workspace_id = ${workspaceId}
        ${RETURNING}`,
  );
  if (!row) throw new DomainError('not_found');
  return row;
}
