// Deleting parts of a workspace's content model: a content type, a bucket. What they hold (typed
// entries, objects, content types) is refused unless the caller asks to purge it, and then goes in
// the same transaction: foreign keys cascade from the bucket and the entry rows to documents,
// revisions, kept texts and reviews; triggers drop each type's typed table and tell every process
// to drop its cached model and answers (content_types, buckets changes).
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { publishEvent } from '../../events/outbox';
import { DomainError } from '../errors';
import { rows, sql, type Sql } from '../sql';
import { transaction } from '../transaction';
import { GENERAL_BUCKET } from './content-types';
import { shortLockWait } from './content-type-changes';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A 409 for what a resource holds, with its counts (zero counts left out of the message). */
function holds(what: string, counts: Record<string, number>, names: Record<string, [string, string]>): DomainError {
  const listed = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => plural(n, ...names[k]));
  return new DomainError('conflict', undefined, {
    message: `The ${what} holds ${listed.join(', ')}: delete them first, or pass purge=true.`,
    counts,
  });
}

/** Entries of `where` (on `e`), typed and otherwise (objects, submissions), live or in Trash. */
async function entryCounts(tx: SqlRunner, where: Sql): Promise<{ entries: number; objects: number }> {
  const [n] = await rows<{ entries: number; objects: number }>(
    tx,
    sql`SELECT count(*) FILTER (WHERE e.kind = 'typed')::int AS entries, count(*) FILTER (WHERE e.kind <> 'typed')::int AS objects FROM entries e WHERE ${where}`,
  );
  return n;
}

/**
 * Deletes a content type of the bucket (its entries too with `purge`). Relation fields of types in
 * `together` (deleted in the same unit of work) may accept it.
 */
export function deleteContentType(
  core: CoreContext,
  bucket: { id: number; workspaceId: number; name: string },
  typeName: string,
  purge: boolean,
  together: readonly string[] = [],
): Promise<void> {
  return transaction(core, async (tx) => {
    const [type] = await rows<{ id: number }>(
      tx,
      sql`SELECT id FROM content_types WHERE bucket_id = ${bucket.id}::int AND name = ${typeName} FOR UPDATE`,
    );
    if (!type) throw new DomainError('not_found');
    const accepting = await rows<{ field: string }>(
      tx,
      sql`SELECT t.name || '.' || f.name AS field FROM field_definitions f JOIN content_types t ON t.id = f.content_type_id
           WHERE t.bucket_id = ${bucket.id}::int AND t.id <> ${type.id}::int AND NOT t.name = ANY(${together}::text[]) AND ${typeName}::text = ANY(f.targets)
           ORDER BY t.name, f.position`,
    );
    if (accepting.length) {
      throw new DomainError('conflict', undefined, {
        message: `Relation fields of other content types accept this type: ${accepting.map((a) => a.field).join(', ')}. Change their targets first.`,
      });
    }
    const { entries } = await entryCounts(tx, sql`e.content_type_id = ${type.id}::int AND e.kind = 'typed'`);
    if (entries && !purge) throw holds('content type', { entries }, { entries: ['entry', 'entries'] });
    await rows(tx, sql`DELETE FROM entries WHERE content_type_id = ${type.id}::int AND kind = 'typed'`);
    // Its typed table is dropped with it (a trigger): not waited for long (withStorageLocks).
    await shortLockWait(tx);
    await rows(tx, sql`DELETE FROM content_types WHERE id = ${type.id}::int`);
    await publishEvent(tx, core.clock.now(), {
      workspaceId: bucket.workspaceId,
      event: 'content_type.deleted',
      data: { id: type.id, name: typeName, bucket: bucket.name },
    });
  });
}

/** Deletes a bucket of the workspace (what it holds too with `purge`); never its default bucket. */
export function deleteBucket(core: CoreContext, workspaceId: number, bucketName: string, purge: boolean): Promise<void> {
  return transaction(core, async (tx) => {
    const [bucket] = await rows<{ id: number }>(
      tx,
      sql`SELECT id FROM buckets WHERE workspace_id = ${workspaceId}::int AND name = ${bucketName} FOR UPDATE`,
    );
    if (!bucket) throw new DomainError('not_found');
    if (bucketName === GENERAL_BUCKET) {
      throw new DomainError('conflict', undefined, {
        message: "The general bucket is the workspace's default bucket: it is deleted with its workspace only.",
      });
    }
    const [{ content_types }] = await rows<{ content_types: number }>(
      tx,
      sql`SELECT count(*)::int AS content_types FROM content_types WHERE bucket_id = ${bucket.id}::int`,
    );
    const counts = { content_types, ...(await entryCounts(tx, sql`e.bucket_id = ${bucket.id}::int`)) };
    if ((counts.content_types || counts.entries || counts.objects) && !purge) {
      throw holds('bucket', counts, {
        content_types: ['content type', 'content types'],
        entries: ['entry', 'entries'],
        objects: ['object', 'objects'],
      });
    }
    // Entries first (their own statement: its triggers see the types they belong to), then the
    // bucket, which takes its content types and contracts with it; batch results kept for it go too.
    await rows(tx, sql`DELETE FROM entries WHERE bucket_id = ${bucket.id}::int`);
    await rows(tx, sql`DELETE FROM idempotency_records WHERE bucket_id = ${bucket.id}::int`);
    await shortLockWait(tx);
    await rows(tx, sql`DELETE FROM buckets WHERE id = ${bucket.id}::int`);
  });
}
