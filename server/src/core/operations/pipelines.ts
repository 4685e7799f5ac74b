// Pipeline executions through the public API: queue one (its status URL to follow) and read its
// status. The engine is core/pipeline-engine/; the steps run in the pipelines resource's runner.
import { formatTimestamp } from '../../lib/time';
import { DomainError } from '../errors';
import { createExecution, readExecution } from '../pipeline-engine/executions';
import type { PipelineStep } from '../pipeline-engine/step-types';
import type { BodyOf, OperationContext } from './context';

export async function executePipeline(cx: OperationContext, name: string, body: BodyOf<'executePipeline'> | undefined) {
  const { core, workspace } = cx;
  const pipeline = await core.db.prisma.pipeline.findUnique({ where: { workspaceId_name: { workspaceId: workspace.id, name } } });
  if (!pipeline) throw new DomainError('not_found');
  const { id, createdAt } = await createExecution(core, {
    workspaceId: workspace.id,
    pipelineName: pipeline.name,
    apiKeyId: cx.keyId,
    steps: pipeline.steps as PipelineStep[],
    input: body?.input ?? {},
  });
  const statusUrl = `${core.config.baseUrl}/api/v1/${encodeURIComponent(workspace.name)}/pipelines/executions/${id}`;
  return { id, pipeline: pipeline.name, status: 'queued' as const, status_url: statusUrl, created_at: formatTimestamp(createdAt) };
}

export async function getPipelineExecution(cx: OperationContext, id: string) {
  const execution = await readExecution(cx.core.db, cx.workspace.id, id);
  if (!execution) throw new DomainError('not_found');
  return execution;
}
