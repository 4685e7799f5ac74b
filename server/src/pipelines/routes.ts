// Executions through the public API: queue one (`202` with its status URL) and read its status.
// The engine is core/pipelines/.
import type { PipelineStep } from '../core/pipelines/step-types';
import { handlers } from '../http/handlers';
import { notFound } from '../http/errors';
import { formatTimestamp } from '../lib/time';
import { createExecution, readExecution } from '../core/pipelines/executions';

export const executionHandlers = handlers({
  async executePipeline({ params, body, principal }, app) {
    const p = principal!;
    const pipeline = await app.db.prisma.pipeline.findUnique({ where: { workspaceId_name: { workspaceId: p.workspace.id, name: params.name } } });
    if (!pipeline) throw notFound();
    const input = body?.input ?? {};
    const { id, createdAt } = await createExecution(app, { workspaceId: p.workspace.id, pipelineName: pipeline.name, apiKeyId: p.keyId, steps: pipeline.steps as PipelineStep[], input });
    const statusUrl = `${app.config.baseUrl}/api/v1/${encodeURIComponent(p.workspace.name)}/pipelines/executions/${id}`;
    return { status: 202, body: { id, pipeline: pipeline.name, status: 'queued', status_url: statusUrl, created_at: formatTimestamp(createdAt) } };
  },

  async getPipelineExecution({ params, principal }, app) {
    const execution = await readExecution(app.db, principal!.workspace.id, params.id);
    if (!execution) throw notFound();
    return { status: 200, body: execution };
  },
});
