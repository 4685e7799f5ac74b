// Executions through the public API (core/operations/pipelines.ts): queue one (`202` with its
// status URL) and read its status.
import { handlers } from '../http/handlers';
import { operationContext } from '../http/auth';
import { executePipeline, getPipelineExecution } from '../core/operations/pipelines';

export const executionHandlers = handlers({
  async executePipeline({ params, body, principal }, app) {
    return { status: 202, body: await executePipeline(operationContext(app, principal), params.name, body) };
  },

  async getPipelineExecution({ params, principal }, app) {
    return { status: 200, body: await getPipelineExecution(operationContext(app, principal), params.id) };
  },
});
