// Deleting a creator (a workspace's user): the person goes with their API keys (refused from then
// on), the batch results kept for those keys, and the files they own (profile pictures), stored
// contents included. What they wrote through their keys stays: it is the workspace's content.
import type { AppContext } from '../context';
import { DomainError } from './errors';
import { eraseFiles } from './file-records';
import { rows, sql } from './sql';
import { transaction } from './transaction';

export async function deleteCreator(app: AppContext, workspaceId: number, userId: number): Promise<void> {
  await transaction(app, async (tx) => {
    const [user] = await rows<{ id: number }>(tx, sql`SELECT id FROM users WHERE id = ${userId}::int AND workspace_id = ${workspaceId}::int FOR UPDATE`);
    if (!user) throw new DomainError('not_found');
    await rows(tx, sql`DELETE FROM idempotency_records WHERE api_key_id IN (SELECT id FROM api_keys WHERE user_id = ${userId}::int)`);
    // Its keys go with it (foreign key).
    await rows(tx, sql`DELETE FROM users WHERE id = ${userId}::int`);
  });
  // Its own files are invisible to the workspace's Files API: nothing else refers to them.
  await eraseFiles(app, sql`user_id = ${userId}::int AND workspace_id = ${workspaceId}::int`);
}
