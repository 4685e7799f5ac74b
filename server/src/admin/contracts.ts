// JSON Schema contracts for Objects. The schema must be a valid draft 2020-12 schema that Ajv can
// compile; saving one marks the objects it may govern `validation.pending` and queues their
// recheck (core/entries/revalidate.ts).
import type { components } from '@workspace-api/sdk/openapi';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { notFound, validationFailed, type FieldErrors } from '../http/errors';
import { uniqueOr422 } from '../lib/db-errors';
import { presentContract } from './presenters';
import { normalizePrefix, schemaProblems } from '../core/contract-schema';
import { requireWorkspace } from '../http/lookup';
import { REVALIDATE_JOB, markForRevalidation } from '../core/entries/revalidate';
import { prismaSql } from '../db/database';

type ContractInput = components['schemas']['ContractInput'];

async function contractData(app: AppContext, workspaceId: number, body: ContractInput) {
  const errors: FieldErrors = {};
  const problems = schemaProblems(body.schema);
  if (problems.length) errors.schema = problems;
  const prefix = normalizePrefix(body.prefix);
  if (prefix !== null && prefix.split('/').some((s) => s === '')) errors.prefix = ['The prefix field must not contain empty folder names.'];
  let bucketId: number | null = null;
  if (body.bucket !== undefined && body.bucket !== null) {
    const bucket = await app.db.prisma.bucket.findUnique({ where: { workspaceId_name: { workspaceId, name: body.bucket } } });
    if (!bucket) errors.bucket = ['The selected bucket is invalid.'];
    else bucketId = bucket.id;
  }
  if (Object.keys(errors).length) throw validationFailed(errors);
  return { name: body.name, schema: body.schema as object, mode: body.mode ?? 'enforce', bucketId, prefix };
}

export const contractHandlers = handlers({
  async createContract({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const data = await contractData(app, workspace.id, body);
    const now = app.clock.now();
    const contract = await uniqueOr422('name', () =>
      app.db.prisma.$transaction(async (tx) => {
        const created = await tx.contract.create({ data: { ...data, workspaceId: workspace.id, createdAt: now, updatedAt: now }, include: { bucket: true } });
        await markForRevalidation(prismaSql(tx), workspace.id, created.name);
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
      app.db.prisma.$transaction(async (tx) => {
        const updated = await tx.contract.update({ where: { id: current.id }, data: { ...data, updatedAt: app.clock.now() }, include: { bucket: true } });
        // Entries under the old and the new name (a rename) are rechecked.
        for (const name of new Set([current.name, updated.name])) await markForRevalidation(prismaSql(tx), workspace.id, name);
        return updated;
      }),
    );
    await app.jobs.send(REVALIDATE_JOB, {});
    return { status: 200, body: presentContract(contract) };
  },
});

