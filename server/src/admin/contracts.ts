// JSON Schema contracts for Objects. The schema must be a valid draft 2020-12 schema that Ajv can
// compile; saving one marks the objects it may govern `validation.pending` and queues their
// recheck (core/content/revalidate.ts, core/content/contract-writes.ts).
import type { components } from '@workspace-api/sdk/openapi';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { fieldError, oneFieldError } from '../lib/field-errors';
import { uniqueOr422 } from '../core/errors';
import { presentContract } from './presenters';
import { requireWorkspace } from '../http/lookup';
import { REVALIDATE_JOB } from '../core/content/revalidate';
import { contractErrors, saveContract } from '../core/content/contract-writes';
import { transaction } from '../core/transaction';

type ContractInput = components['schemas']['ContractInput'];

/** Saves the contract (`replacing` one), refusing an invalid one; then queues the recheck. */
async function save(app: AppContext, workspaceId: number, body: ContractInput, replacing?: { id: number; name: string }) {
  const errors = contractErrors(body);
  if (body.bucket !== undefined && body.bucket !== null) {
    const bucket = await app.db.prisma.bucket.findUnique({ where: { workspaceId_name: { workspaceId, name: body.bucket } } });
    if (!bucket) errors.bucket = [fieldError('exists', 'The selected :attribute is invalid.')];
  }
  if (Object.keys(errors).length) throw validationFailed(errors);
  const contract = await uniqueOr422('name', () =>
    transaction(app, async (tx) => {
      const saved = await saveContract(tx, workspaceId, body, app.clock.now(), replacing);
      if (saved) return saved;
      // Its bucket is no bucket of the workspace, or (replacing) it was deleted meanwhile.
      if (body.bucket !== undefined && body.bucket !== null)
        throw validationFailed(oneFieldError('bucket', fieldError('exists', 'The selected :attribute is invalid.')));
      throw notFound();
    }),
  );
  await app.jobs.send(REVALIDATE_JOB, {});
  return presentContract(contract);
}

export const contractHandlers = handlers({
  async createContract({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 201, body: await save(app, workspace.id, body) };
  },

  async listContracts({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.contract.findMany({
      where: { workspaceId: workspace.id },
      include: { bucket: true },
      orderBy: { name: 'asc' },
    });
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
    const current = await app.db.prisma.contract.findUnique({
      where: { workspaceId_name: { workspaceId: workspace.id, name: params.name } },
    });
    if (!current) throw notFound();
    return { status: 200, body: await save(app, workspace.id, body, current) };
  },
});
