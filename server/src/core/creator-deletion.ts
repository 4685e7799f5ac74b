// Deleting a creator (a workspace's user): the person goes with their API keys (refused from then
// on), the batch results kept for those keys, and the files they own (profile pictures), stored
// contents included. What they wrote through their keys stays: it is the workspace's content.
import type { CoreContext } from './context';
import { DomainError } from './errors';
import { deleteUnsharedContents } from './file-records';
import { rows, sql } from './sql';
import { transaction } from './transaction';

export async function deleteCreator(core: CoreContext, workspaceId: number, userId: number): Promise<void> {
  const hashes = await transaction(core, async (tx) => {
    const [user] = await rows<{ id: number }>(
      tx,
      sql`SELECT id FROM users WHERE id = ${userId}::int AND workspace_id = ${workspaceId}::int FOR UPDATE`,
    );
    if (!user) throw new DomainError('not_found');
    await rows(tx, sql`DELETE FROM idempotency_records WHERE api_key_id IN (SELECT id FROM api_keys WHERE user_id = ${userId}::int)`);
    // Its keys go with it (foreign key); its own files (invisible to the Files API, so nothing
    // else refers to them) in the same transaction.
    await rows(tx, sql`DELETE FROM users WHERE id = ${userId}::int`);
    return (
      await rows<{ content_hash: string }>(
        tx,
        sql`DELETE FROM files WHERE user_id = ${userId}::int AND workspace_id = ${workspaceId}::int RETURNING content_hash`,
      )
    ).map((r) => r.content_hash);
  });
  // Their stored contents after the commit: one that fails to go is left to files:prune-storage.
  await deleteUnsharedContents(core, hashes).catch((err) =>
    core.log.error('stored contents of a deleted creator not deleted', { error: String(err) }),
  );
}
