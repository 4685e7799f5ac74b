// Pipeline helpers: run a saved pipeline and, when asked, wait for its end by polling the
// execution's status with backoff.
import type { components } from './generated/openapi.js';
import type { PublicClient } from './index.js';
import type { Result as Outcome } from './content/client.js';
import { wait as sleep } from './wait.js';

export type PipelineExecution = components['schemas']['PipelineExecution'];
export type PipelineExecutionQueued = components['schemas']['PipelineExecutionQueued'];

export interface RunOptions {
  /** Wait until the execution succeeded or failed (polling its status URL); default false. */
  wait?: boolean;
  /** Give up waiting after this many milliseconds (a PipelineTimeoutError); default 300000. */
  timeoutMs?: number;
  /** First wait between polls, growing by half each time; default 200 ms. */
  intervalMs?: number;
  /** Longest wait between polls; default 5000 ms. */
  maxIntervalMs?: number;
}

/** The execution did not end within `timeoutMs`; it goes on running on the server. */
export class PipelineTimeoutError extends Error {
  constructor(
    readonly executionId: string,
    readonly statusUrl: string,
  ) {
    super(`The pipeline execution ${executionId} did not end in time; its status: ${statusUrl}`);
    this.name = 'PipelineTimeoutError';
  }
}

export interface Pipelines {
  /** Queues an execution (`202`); with `{wait: true}` resolves with the ended execution instead. */
  run(name: string, input?: Record<string, unknown>, options?: RunOptions & { wait?: false }): Promise<Outcome<PipelineExecutionQueued>>;
  run(name: string, input: Record<string, unknown> | undefined, options: RunOptions & { wait: true }): Promise<Outcome<PipelineExecution>>;
  /** An execution's status. */
  status(id: string): Promise<Outcome<PipelineExecution>>;
}

/** The pipelines of `workspace`. */
export function pipelines(client: PublicClient, workspace: string): Pipelines {
  const status = async (id: string) =>
    (await client.GET('/api/v1/{workspace}/pipelines/executions/{id}', {
      params: { path: { workspace, id } },
    })) as Outcome<PipelineExecution>;
  const run = async (name: string, input: Record<string, unknown> = {}, options: RunOptions = {}) => {
    const queued = (await client.POST('/api/v1/{workspace}/pipelines/{name}/executions', {
      params: { path: { workspace, name } },
      body: { input },
    })) as Outcome<PipelineExecutionQueued>;
    if (!options.wait || queued.error) return queued;
    const deadline = Date.now() + (options.timeoutMs ?? 300_000);
    let interval = options.intervalMs ?? 200;
    for (;;) {
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())));
      const current = await status(queued.data.id);
      if (current.error || current.data.status === 'succeeded' || current.data.status === 'failed') return current;
      if (Date.now() >= deadline) throw new PipelineTimeoutError(queued.data.id, queued.data.status_url);
      interval = Math.min(interval * 1.5, options.maxIntervalMs ?? 5_000);
    }
  };
  return { run: run as Pipelines['run'], status };
}
