// Runs executions. A job (queued with the execution, or by the recovery sweep) claims its
// execution under a lease and runs it in the background of this process: each step in order,
// from the first one without a stored output, the lease renewed meanwhile. A process that dies
// stops renewing; once the lease ends, the scheduler's sweep (`recover`, every tick of every
// process) hands the execution to a new job, so any process takes it up. A failure that is not
// the step's own refusal (the database gone, a bug) gives the execution back for a later attempt;
// after MAX_ATTEMPTS claims it fails.
import type { AppContext } from '../context';
import { authorize } from '../http/auth';
import { asHttpError, HttpError } from '../http/errors';
import { principalOfKey } from '../http/auth';
import { unstorableErrors } from '../http/validation';
import {
  claimExecution,
  ExecutionState,
  PIPELINE_JOB,
  reserveAbandoned,
  type Claimed,
  type ExecutionJob,
} from '../core/pipeline-engine/executions';
import { Interrupted } from '../core/pipeline-engine/http-request';
import { runStep, type StepResult, type StepRun } from './run-step';
import { StepFailed } from '../core/pipeline-engine/step-failed';
import { resolveStepWith } from '../core/pipeline-engine/url-placeholders';

export const MAX_ATTEMPTS = 5;

export class PipelineRunner {
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private stopping = false;

  constructor(private readonly app: AppContext) {}

  /** The job: claim the execution, then run it without holding the job (executions may take long). */
  async take(job: ExecutionJob): Promise<void> {
    if (this.stopping || this.running.has(job.executionId)) return;
    const claimed = await claimExecution(this.app, job.executionId, job.lease);
    if (!claimed || this.stopping) return;
    const stop = new AbortController();
    const done = this.execute(claimed, stop.signal).finally(() => this.running.delete(claimed.id));
    this.running.set(claimed.id, { stop, done });
  }

  /** The sweep: executions whose lease ended are queued again. Returns how many. */
  async recover(): Promise<number> {
    if (this.stopping) return 0;
    const jobs = await reserveAbandoned(this.app);
    for (const job of jobs) await this.app.jobs.send(PIPELINE_JOB, job, { retryLimit: 0 });
    return jobs.length;
  }

  /** Resolves when this process runs no execution (tests). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /**
   * Shutdown: running executions stop after their current step (an `http.request` in flight is cut
   * short and runs again elsewhere) and are given back at once.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const r of this.running.values()) r.stop.abort();
    await this.idle();
  }

  private async execute(claimed: Claimed, stop: AbortSignal): Promise<void> {
    const { app } = this;
    const state = new ExecutionState(app, claimed.id, claimed.lease);
    let lost = false;
    const heartbeat = setInterval(
      () =>
        void state.renew().then(
          (kept) => (lost ||= !kept),
          () => undefined,
        ),
      (app.config.pipelines.leaseSeconds * 1000) / 3,
    );
    try {
      if (claimed.attempts > MAX_ATTEMPTS) {
        await state.giveUp(`The execution did not finish after ${MAX_ATTEMPTS} attempts.`);
        return;
      }
      const earlier = await state.earlierAttempts();
      const finished = earlier.outputs;
      const outputs = new Map<string, unknown>();
      let last: unknown = null;
      for (const [position, step] of claimed.steps.entries()) {
        if (finished.has(position)) {
          last = finished.get(position);
          outputs.set(step.id, last);
          continue;
        }
        if (stop.aborted) return void (await state.release(0));
        if (lost || !(await state.startStep(position))) return;
        let result: StepResult;
        try {
          result = await this.runOne(claimed, position, outputs, {
            stop,
            committed: earlier.committed.get(position),
            recordWrite: (tx, written) => state.recordWrite(tx, position, written),
          });
        } catch (err) {
          if (!(err instanceof StepFailed)) throw err;
          await state.failStep(position, step.id, err.message);
          return;
        }
        if (lost || !(await state.succeedStep(position, result.output, result.commit))) return;
        outputs.set(step.id, result.output);
        last = result.output;
      }
      await state.finish(app.db, 'succeeded', last, null);
    } catch (err) {
      // Cut short by shutdown: any process may go on at once. Otherwise after a backoff.
      if (!(err instanceof Interrupted))
        app.log.error('pipeline execution failed; it will be tried again', {
          execution: claimed.id,
          attempt: claimed.attempts,
          error: err instanceof Error ? err.stack : String(err),
        });
      await state.release(err instanceof Interrupted ? 0 : 1000 * 2 ** claimed.attempts).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** One step: the key's rights as they are now, placeholders, then the step itself. */
  private async runOne(
    claimed: Claimed,
    position: number,
    outputs: Map<string, unknown>,
    attempt: Pick<StepRun, 'stop' | 'committed' | 'recordWrite'>,
  ): Promise<StepResult> {
    const { app } = this;
    const step = claimed.steps[position];
    const principal = await principalOfKey(app.db, claimed.api_key_id, claimed.workspace_id);
    if ('refused' in principal) throw new StepFailed(principal.refused);
    try {
      // A step runs only while the key may still start the pipeline: the rights of its route.
      const execute = app.operations.spec('executePipeline');
      authorize(principal, execute.abilities, execute.permissions);
    } catch (thrown) {
      const err = asHttpError(thrown);
      if (err instanceof HttpError) throw new StepFailed(err.body.message);
      throw thrown;
    }
    await app.clock.refresh();
    const resolved = resolveStepWith(step, { input: claimed.input, outputs });
    const result = await runStep(app, { executionId: claimed.id, step, resolved, principal, ...attempt });
    const unstorable = unstorableErrors(result.output, 'output');
    if (Object.keys(unstorable).length)
      throw new StepFailed(`The output holds text that cannot be stored: ${Object.keys(unstorable).slice(0, 5).join(', ')}.`);
    return result;
  }
}
