// Pipeline definitions (management API): every step is checked before anything is saved
// (core/pipeline-engine/definition.ts); a taken name is a 422 on `name`.
import type { components } from '@workspace-api/sdk/openapi';
import type { AppContext } from '../context';
import type { Pipeline } from '../generated/prisma/client';
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { uniqueOr422 } from '../core/errors';
import { formatTimestamp } from '../lib/time';
import { requireWorkspace } from '../http/lookup';
import { definitionErrors } from '../core/pipeline-engine/definition';
import { deletePipeline, savePipeline } from '../core/pipeline-engine/definitions-store';
import { transaction } from '../core/transaction';
import type { PipelineStep } from '../core/pipeline-engine/step-types';

type S = components['schemas'];

const present = (p: Pipeline): S['Pipeline'] => ({
  id: p.id,
  name: p.name,
  description: p.description,
  steps: p.steps as PipelineStep[],
  created_at: formatTimestamp(p.createdAt),
  updated_at: formatTimestamp(p.updatedAt),
});

function check(app: AppContext, body: S['PipelineInput']): void {
  const errors = definitionErrors(app.config, app.operations, body.steps);
  if (Object.keys(errors).length) throw validationFailed(errors);
}

async function requirePipeline(app: AppContext, workspaceName: string, name: string) {
  const workspace = await requireWorkspace(app, workspaceName);
  const pipeline = await app.db.prisma.pipeline.findUnique({ where: { workspaceId_name: { workspaceId: workspace.id, name } } });
  if (!pipeline) throw notFound();
  return pipeline;
}

export const pipelineHandlers = handlers({
  async createPipeline({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    check(app, body);
    const pipeline = await uniqueOr422('name', () => transaction(app, (tx) => savePipeline(tx, workspace.id, body, app.clock.now())));
    return { status: 201, body: present(pipeline!) };
  },

  async listPipelines({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const found = await app.db.prisma.pipeline.findMany({ where: { workspaceId: workspace.id }, orderBy: { name: 'asc' } });
    return { status: 200, body: { data: found.map(present) } };
  },

  async getPipeline({ params }, app) {
    return { status: 200, body: present(await requirePipeline(app, params.workspace, params.name)) };
  },

  async replacePipeline({ params, body }, app) {
    const current = await requirePipeline(app, params.workspace, params.name);
    check(app, body);
    const pipeline = await uniqueOr422('name', () =>
      transaction(app, (tx) => savePipeline(tx, current.workspaceId, body, app.clock.now(), current.id)),
    );
    // Deleted by another request meanwhile: as if this one came after it.
    if (!pipeline) throw notFound();
    return { status: 200, body: present(pipeline) };
  },

  async deletePipeline({ params }, app) {
    const current = await requirePipeline(app, params.workspace, params.name);
    // A concurrent delete already removed it: the same answer.
    await transaction(app, (tx) => deletePipeline(tx, current.workspaceId, current.id));
    return { status: 204 };
  },
});
