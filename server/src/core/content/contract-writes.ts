// Saving and deleting Objects contracts, by the management API's routes and by a model's apply
// alike, in the caller's transaction. Saving marks the objects a contract may govern
// `validation.pending` (revalidate.ts); the caller queues REVALIDATE_JOB after the commit.
import type { components } from '@workspace-api/sdk/openapi';
import type { SqlRunner } from '../../db/database';
import { fieldError, fieldErrors, type FieldErrors } from '../../lib/field-errors';
import { normalizePrefix, schemaProblems } from '../contract-schema';
import { rows, sql } from '../sql';
import { markForRevalidation } from './revalidate';

export type ContractInput = components['schemas']['ContractInput'];

/** A contract's row as presentContract reads it (Prisma's names, its bucket's name). */
export interface ContractRow {
  id: number;
  name: string;
  schema: Record<string, unknown>;
  mode: 'enforce' | 'report';
  bucket: string | null;
  prefix: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The input's problems that the schema cannot express (its JSON Schema, its prefix), keyed by path. */
export function contractErrors(input: ContractInput): FieldErrors {
  const errors = fieldErrors();
  const problems = schemaProblems(input.schema);
  if (problems.length) errors.schema = problems.map((problem) => fieldError('schema', ':problem', { problem }));
  const prefix = normalizePrefix(input.prefix);
  if (prefix !== null && prefix.split('/').some((s) => s === ''))
    errors.prefix = [fieldError('format', 'The :attribute field must not contain empty folder names.')];
  return errors;
}

/** The stored form of the input's members (mode default, prefix normalized, bucket by name). */
export const contractValues = (input: ContractInput) => ({
  name: input.name,
  schema: input.schema,
  mode: input.mode ?? 'enforce',
  bucket: input.bucket ?? null,
  prefix: normalizePrefix(input.prefix),
});

/**
 * Saves the contract: a new one, or the one with id `replacing`. Undefined when `replacing` is gone,
 * or when its bucket names no bucket of the workspace. The objects it governed and governs are
 * marked for a recheck.
 */
export async function saveContract(
  tx: SqlRunner,
  workspaceId: number,
  input: ContractInput,
  now: Date,
  replacing?: { id: number; name: string },
): Promise<ContractRow | undefined> {
  const v = contractValues(input);
  const bucket = sql`(SELECT id FROM buckets WHERE workspace_id = ${workspaceId}::int AND name = ${v.bucket}::text)`;
  if (v.bucket !== null) {
    const [found] = await rows(tx, sql`SELECT 1 FROM buckets WHERE workspace_id = ${workspaceId}::int AND name = ${v.bucket}::text`);
    if (!found) return undefined;
  }
  const write = replacing
    ? sql`UPDATE contracts SET name = ${v.name}, schema = ${JSON.stringify(v.schema)}::jsonb, mode = ${v.mode}, bucket_id = ${bucket}, prefix = ${v.prefix}::text, updated_at = ${now}
           WHERE id = ${replacing.id}::int RETURNING *`
    : sql`INSERT INTO contracts (workspace_id, name, schema, mode, bucket_id, prefix, created_at, updated_at)
          VALUES (${workspaceId}::int, ${v.name}, ${JSON.stringify(v.schema)}::jsonb, ${v.mode}, ${bucket}, ${v.prefix}::text, ${now}, ${now}) RETURNING *`;
  const [row] = await rows<ContractRow>(
    tx,
    sql`WITH c AS (${write})
        SELECT c.id, c.name, c.schema, c.mode, b.name AS bucket, c.prefix, c.created_at AS "createdAt", c.updated_at AS "updatedAt"
          FROM c LEFT JOIN buckets b ON b.id = c.bucket_id`,
  );
  if (!row) return undefined;
  // Objects under the old and the new name (a rename) are rechecked.
  for (const name of new Set([replacing?.name ?? row.name, row.name])) await markForRevalidation(tx, workspaceId, name);
  return row;
}

/** Deletes the workspace's contract `name`; the objects it governed are rechecked. Whether it was there. */
export async function deleteContract(tx: SqlRunner, workspaceId: number, name: string): Promise<boolean> {
  const gone = await rows(tx, sql`DELETE FROM contracts WHERE workspace_id = ${workspaceId}::int AND name = ${name} RETURNING id`);
  if (gone.length) await markForRevalidation(tx, workspaceId, name);
  return gone.length > 0;
}
