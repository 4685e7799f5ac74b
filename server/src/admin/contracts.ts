// JSON Schema contracts for Objects. The schema must be a valid draft 2020-12 schema that Ajv can
// compile; saving one marks the objects it may govern `validation.pending` and queues their
// recheck (core/content/revalidate.ts).
import type { components } from '@workspace-api/sdk/openapi';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { fieldError, fieldErrors } from '../lib/field-errors';
import { uniqueOr422 } from '../lib/db-errors';
import { presentContract } from './presenters';
import { normalizePrefix, schemaProblems } from '../core/contract-schema';
import { requireWorkspace } from '../http/lookup';
import { REVALIDATE_JOB, markForRevalidation } from '../core/content/revalidate';
import { transaction } from '../core/transaction';
import type { SqlRunner } from '../db/database';
import type { Bucket, Contract } from '../generated/prisma/client';

type ContractInput = components['schemas']['ContractInput'];

async function contractData(app: AppContext, workspaceId: number, body: ContractInput) {
  const errors = fieldErrors();
  const problems = schemaProblems(body.schema);
  if (problems.length) errors.schema = problems.map((problem) => fieldError('schema', ':problem', { problem }));
  const prefix = normalizePrefix(body.prefix);
  if (prefix !== null && prefix.split('/').some((s) => s === '')) errors.prefix = [fieldError('format', 'The :attribute field must not contain empty folder names.')];
  let bucketId: number | null = null;
  if (body.bucket !== undefined && body.bucket !== null) {
    const bucket = await app.db.prisma.bucket.findUnique({ where: { workspaceId_name: { workspaceId, name: body.bucket } } });
    if (!bucket) errors.bucket = [fieldError('exists', 'The selected :attribute is invalid.')];
    else bucketId = bucket.id;
  }
  if (Object.keys(errors).length) throw validationFailed(errors);
  return { name: body.name, schema: body.schema as object, mode: body.mode ?? 'enforce', bucketId, prefix };
}

type ContractData = Awaited<ReturnType<typeof contractData>>;

/**
 * Runs `write` (an INSERT or UPDATE of one contract, without RETURNING) and returns the row as
 * Prisma's `Contract` with its bucket, as presentContract reads it; undefined when it wrote none.
 */
async function writeContract(tx: SqlRunner, write: string, values: unknown[]): Promise<(Contract & { bucket: Bucket | null }) | undefined> {
  type Row = Contract & { bucketWorkspaceId: number | null; bucketName: string | null; bucketCreatedAt: Date | null };
  const { rows } = await tx.query<Row>(
    `WITH c AS (${write} RETURNING *)
     SELECT c.id, c.workspace_id AS "workspaceId", c.name, c.schema, c.mode, c.bucket_id AS "bucketId", c.prefix,
            c.created_at AS "createdAt", c.updated_at AS "updatedAt",
            b.workspace_id AS "bucketWorkspaceId", b.name AS "bucketName", b.created_at AS "bucketCreatedAt"
       FROM c LEFT JOIN buckets b ON b.id = c.bucket_id`,
    values,
  );
  if (!rows[0]) return undefined;
  const { bucketWorkspaceId, bucketName, bucketCreatedAt, ...contract } = rows[0];
  const bucket = contract.bucketId === null ? null : { id: contract.bucketId, workspaceId: bucketWorkspaceId!, name: bucketName!, createdAt: bucketCreatedAt! };
  return { ...contract, bucket };
}

/** The columns of `data` as parameters $2 to $6 (name, schema, mode, bucket_id, prefix). */
const dataValues = (data: ContractData) => [data.name, JSON.stringify(data.schema), data.mode, data.bucketId, data.prefix];

export const contractHandlers = handlers({
  async createContract({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const data = await contractData(app, workspace.id, body);
    const now = app.clock.now();
    const contract = await uniqueOr422('name', () =>
      transaction(app, async (tx) => {
        const created = (await writeContract(
          tx,
          `INSERT INTO contracts (workspace_id, name, schema, mode, bucket_id, prefix, created_at, updated_at) VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $7)`,
          [workspace.id, ...dataValues(data), now],
        ))!;
        await markForRevalidation(tx, workspace.id, created.name);
        return created;
      }),
    );
    await app.jobs.send(REVALIDATE_JOB, {});
    return { status: 201, body: presentContract(contract) };
  },

  async listContracts({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.contract.findMany({ where: { workspaceId: workspace.id }, include: { bucket: true }, orderBy: { name: 'asc' } });
    return { status: 200, body: { data: rows.map(presentContract) } };
  },

  async getContract({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const contract = await app.db.prisma.contract.findUnique({
      where: { workspaceId_name: { workspaceId: workspace.id, name: params.name } },
      include: { bucket: true },
    });
    if (!contract) throw notFound();
    return { status: 200, body: presentContract(contract) };
  },

  async replaceContract({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const current = await app.db.prisma.contract.findUnique({ where: { workspaceId_name: { workspaceId: workspace.id, name: params.name } } });
    if (!current) throw notFound();
    const data = await contractData(app, workspace.id, body);
    const contract = await uniqueOr422('name', () =>
      transaction(app, async (tx) => {
        const updated = await writeContract(
          tx,
          `UPDATE contracts SET name = $2, schema = $3::jsonb, mode = $4, bucket_id = $5, prefix = $6, updated_at = $7 WHERE id = $1`,
          [current.id, ...dataValues(data), app.clock.now()],
        );
        // Deleted by another request meanwhile: as if this one came after it.
        if (!updated) throw notFound();
        // Entries under the old and the new name (a rename) are rechecked.
        for (const name of new Set([current.name, updated.name])) await markForRevalidation(tx, workspace.id, name);
        return updated;
      }),
    );
    await app.jobs.send(REVALIDATE_JOB, {});
    return { status: 200, body: presentContract(contract) };
  },
});

