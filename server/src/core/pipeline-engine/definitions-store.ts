// Pipeline definitions written by the management API's routes and by a model's apply alike, in the
// caller's unit of work. Their steps are checked first by the caller (definition.ts); a taken
// name is the database's unique violation.
import type { components } from '@workspace-api/sdk/openapi';
import type { SqlRunner } from '../../db/database';
import type { Pipeline } from '../../generated/prisma/client';
import { rows, sql } from '../sql';

export type PipelineInput = components['schemas']['PipelineInput'];

const COLUMNS = sql`id, workspace_id AS "workspaceId", name, description, steps, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** Saves the pipeline: a new one, or the one with id `replacing` (undefined when it is gone). */
export async function savePipeline(
  tx: SqlRunner,
  workspaceId: number,
  input: PipelineInput,
  now: Date,
  replacing?: number,
): Promise<Pipeline | undefined> {
  const steps = JSON.stringify(input.steps);
  const description = input.description ?? null;
  const [row] = await rows<Pipeline>(
    tx,
    replacing === undefined
      ? sql`INSERT INTO pipelines (workspace_id, name, description, steps, created_at, updated_at)
            VALUES (${workspaceId}::int, ${input.name}, ${description}::text, ${steps}::jsonb, ${now}, ${now}) RETURNING ${COLUMNS}`
      : sql`UPDATE pipelines SET name = ${input.name}, description = ${description}::text, steps = ${steps}::jsonb, updated_at = ${now}
             WHERE id = ${replacing}::int AND workspace_id = ${workspaceId}::int RETURNING ${COLUMNS}`,
  );
  return row;
}

/** Deletes a pipeline (its executions keep their steps); whether it was there. */
export async function deletePipeline(tx: SqlRunner, workspaceId: number, id: number): Promise<boolean> {
  return (await rows(tx, sql`DELETE FROM pipelines WHERE id = ${id}::int AND workspace_id = ${workspaceId}::int RETURNING id`)).length > 0;
}
