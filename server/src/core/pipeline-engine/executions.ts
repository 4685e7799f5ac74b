// The stored state of executions: the execution row (status, input, the steps it started with,
// the lease of the process running it) and one row per step (status, times, output). Every write
// of a running execution is conditioned on its lease, so a process that lost it (it stalled past
// the lease and another took over) changes nothing.
import { randomUUID } from 'node:crypto';
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { stringifyExact } from '../../lib/exact-json';
import { isoTimestamp, raw, rows, sql } from '../sql';
import { transaction } from '../transaction';
import type { PipelineStep } from './step-types';

export const PIPELINE_JOB = 'pipelines.execute';

export interface ExecutionJob {
  executionId: string;
  /** The lease reserved for this job: it may claim the execution while the lease is current. */
  lease: string;
}

/** Days an ended execution stays readable at its status URL (the `pipelines:prune` task). */
export const EXECUTION_RETENTION_DAYS = 30;

export type StepStatus = ExecutionView['steps'][number]['status'];

const leaseUntil = (core: CoreContext) => new Date(Date.now() + core.config.pipelines.leaseSeconds * 1000);

/**
 * Stores a queued execution with one pending row per step and queues its job, all in one
 * transaction: a committed execution always has a job, and a failed insert queues nothing.
 */
export async function createExecution(
  core: CoreContext,
  e: { workspaceId: number; pipelineName: string; apiKeyId: number; steps: PipelineStep[]; input: object },
) {
  const id = randomUUID();
  const lease = randomUUID();
  const now = core.clock.now();
  // The job is sent in the transaction: its queue exists first (jobs/queue.ts prepare).
  await core.jobs.prepare(PIPELINE_JOB);
  // A write of the API (executePipeline): a unit of work, retried as a whole (the IDs are the same on a retry).
  await transaction(core, async (tx) => {
    await rows(
      tx,
      sql`INSERT INTO pipeline_executions (id, workspace_id, pipeline_name, api_key_id, steps, status, input, lease, locked_until, created_at)
          VALUES (${id}::uuid, ${e.workspaceId}::int, ${e.pipelineName}::text, ${e.apiKeyId}::int, ${JSON.stringify(e.steps)}::jsonb, 'queued',
                  ${JSON.stringify(e.input)}::jsonb, ${lease}::uuid, ${leaseUntil(core).toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)`,
    );
    await rows(
      tx,
      sql`INSERT INTO pipeline_step_runs (execution_id, position, step_id, status)
          SELECT ${id}::uuid, p - 1, s, 'pending' FROM unnest(${e.steps.map((s) => s.id)}::text[]) WITH ORDINALITY AS t(s, p)`,
    );
    await core.jobs.send<ExecutionJob>(PIPELINE_JOB, { executionId: id, lease }, { db: tx, retryLimit: 0 });
  });
  return { id, createdAt: now };
}

/** An execution as the status route answers it (the spec's schema). */
export type ExecutionView = components['schemas']['PipelineExecution'];

/** An execution of the workspace as the status route shows it, or undefined. */
export async function readExecution(db: SqlRunner, workspaceId: number, id: string): Promise<ExecutionView | undefined> {
  const at = (column: string) => isoTimestamp(raw(column));
  const [found] = await rows<ExecutionView>(
    db,
    sql`SELECT e.id, e.pipeline_name AS pipeline, e.status, e.input, e.output, e.error,
               ${at('e.created_at')} AS created_at, ${at('e.started_at')} AS started_at, ${at('e.finished_at')} AS finished_at,
               COALESCE((SELECT json_agg(json_build_object('id', r.step_id, 'status', r.status, 'started_at', ${at('r.started_at')},
                                                          'finished_at', ${at('r.finished_at')}, 'error', r.error) ORDER BY r.position)
                           FROM pipeline_step_runs r WHERE r.execution_id = e.id), '[]') AS steps
          FROM pipeline_executions e WHERE e.id = ${id}::uuid AND e.workspace_id = ${workspaceId}::int`,
  );
  return found;
}

export interface Claimed {
  id: string;
  workspace_id: number;
  api_key_id: number;
  steps: PipelineStep[];
  input: Record<string, unknown>;
  attempts: number;
  lease: string;
}

/**
 * Takes the execution for this process under a new lease: when `jobLease` is still its lease, or
 * its lease ended (the process running it died or gave it back). Undefined when it is finished
 * or another process holds it.
 */
export async function claimExecution(core: CoreContext, executionId: string, jobLease: string): Promise<Claimed | undefined> {
  const lease = randomUUID();
  const [claimed] = await rows<Claimed>(
    core.db,
    sql`UPDATE pipeline_executions
           SET status = 'running', lease = ${lease}::uuid, locked_until = ${leaseUntil(core).toISOString()}::timestamptz, attempts = attempts + 1,
               started_at = COALESCE(started_at, ${core.clock.now().toISOString()}::timestamptz)
         WHERE id = ${executionId}::uuid AND status IN ('queued', 'running')
           AND (lease = ${jobLease}::uuid OR locked_until IS NULL OR locked_until < ${new Date().toISOString()}::timestamptz)
     RETURNING id, workspace_id, api_key_id, steps, input, attempts, lease`,
  );
  return claimed;
}

/** Executions whose lease ended get a fresh one each, for a job that takes them up. */
export async function reserveAbandoned(core: CoreContext, limit = 20): Promise<ExecutionJob[]> {
  return rows<ExecutionJob>(
    core.db,
    sql`UPDATE pipeline_executions SET lease = gen_random_uuid(), locked_until = ${leaseUntil(core).toISOString()}::timestamptz
         WHERE id IN (SELECT id FROM pipeline_executions
                       WHERE status IN ('queued', 'running') AND (locked_until IS NULL OR locked_until < ${new Date().toISOString()}::timestamptz)
                       ORDER BY created_at LIMIT ${limit}::int FOR UPDATE SKIP LOCKED)
     RETURNING id AS "executionId", lease`,
  );
}

/** The lease went to another process: the transaction rolls back. */
class LeaseLost extends Error {}

/** Writes of one claimed execution, each conditioned on its lease (false: the lease is lost). */
export class ExecutionState {
  constructor(
    private readonly core: CoreContext,
    readonly id: string,
    readonly lease: string,
  ) {}

  private mine = () => sql`id = ${this.id}::uuid AND lease = ${this.lease}::uuid`;
  private now = () => this.core.clock.now().toISOString();

  async renew(): Promise<boolean> {
    return (
      (
        await rows(
          this.core.db,
          sql`UPDATE pipeline_executions SET locked_until = ${leaseUntil(this.core).toISOString()}::timestamptz WHERE ${this.mine()} RETURNING 1`,
        )
      ).length > 0
    );
  }

  /**
   * What earlier attempts left, by position: the outputs of steps that succeeded, and what the
   * write of an interrupted step committed.
   */
  async earlierAttempts(): Promise<{ outputs: Map<number, unknown>; committed: Map<number, unknown> }> {
    const found = await rows<{ position: number; status: StepStatus; output: unknown; committed: unknown }>(
      this.core.db,
      sql`SELECT position, status, output, committed FROM pipeline_step_runs
           WHERE execution_id = ${this.id}::uuid AND (status = 'succeeded' OR committed IS NOT NULL)`,
    );
    return {
      outputs: new Map(found.filter((r) => r.status === 'succeeded').map((r) => [r.position, r.output])),
      committed: new Map(found.filter((r) => r.status !== 'succeeded').map((r) => [r.position, r.committed])),
    };
  }

  /** Records, in the transaction of a step's write, what it committed; a lost lease rolls the write back. */
  async recordWrite(tx: SqlRunner, position: number, written: unknown): Promise<void> {
    if (!(await this.stepUpdate(tx, position, sql`committed = ${JSON.stringify(written)}::jsonb`))) throw new LeaseLost();
  }

  private async stepUpdate(tx: SqlRunner, position: number, set: ReturnType<typeof sql>): Promise<boolean> {
    const done = await rows(
      tx,
      sql`UPDATE pipeline_step_runs r SET ${set} FROM pipeline_executions e
           WHERE e.id = r.execution_id AND e.lease = ${this.lease}::uuid AND r.execution_id = ${this.id}::uuid AND r.position = ${position}::int RETURNING 1`,
    );
    return done.length > 0;
  }

  startStep(position: number): Promise<boolean> {
    return this.stepUpdate(
      this.core.db,
      position,
      sql`status = 'running', started_at = ${this.now()}::timestamptz, finished_at = NULL, error = NULL`,
    );
  }

  /** Stores the step's output, with its write (`commit`, which joins the unit) in the same transaction when it has one. */
  async succeedStep(position: number, output: unknown, commit?: () => Promise<void>): Promise<boolean> {
    const set = sql`status = 'succeeded', output = ${stringifyExact(output ?? null)}::jsonb, finished_at = ${this.now()}::timestamptz`;
    if (!commit) return this.stepUpdate(this.core.db, position, set);
    try {
      // A unit of work: the step's write (an email step's sendEmail) joins it, so both commit or neither.
      return await transaction(this.core, async (tx) => {
        if (!(await this.stepUpdate(tx, position, set))) throw new LeaseLost();
        await commit();
        return true;
      });
    } catch (err) {
      if (err instanceof LeaseLost) return false;
      throw err;
    }
  }

  /** The step failed: later steps are skipped and the execution fails, in one transaction. */
  async failStep(position: number, stepId: string, message: string): Promise<boolean> {
    // A bare transaction: the runner's own records publish no event, so transaction()'s kick would run a scheduler tick for nothing.
    return this.core.db.transaction(async (tx) => {
      if (
        !(await this.stepUpdate(tx, position, sql`status = 'failed', error = ${message}::text, finished_at = ${this.now()}::timestamptz`))
      )
        return false;
      await rows(
        tx,
        sql`UPDATE pipeline_step_runs SET status = 'skipped' WHERE execution_id = ${this.id}::uuid AND position > ${position}::int`,
      );
      return this.finish(tx, 'failed', null, { step: stepId, message });
    });
  }

  /** The execution fails as a whole (out of attempts): an interrupted step fails, the ones after it are skipped. */
  async giveUp(message: string): Promise<boolean> {
    // A bare transaction: see failStep.
    return this.core.db.transaction(async (tx) => {
      if (!(await this.finish(tx, 'failed', null, { step: null, message }))) return false;
      await rows(
        tx,
        sql`UPDATE pipeline_step_runs SET status = CASE WHEN status = 'running' THEN 'failed' ELSE 'skipped' END,
               error = CASE WHEN status = 'running' THEN ${message}::text END,
               finished_at = CASE WHEN status = 'running' THEN ${this.now()}::timestamptz END
             WHERE execution_id = ${this.id}::uuid AND status IN ('running', 'pending')`,
      );
      return true;
    });
  }

  async finish(
    db: SqlRunner,
    status: 'succeeded' | 'failed',
    output: unknown,
    error: { step: string | null; message: string } | null,
  ): Promise<boolean> {
    const done = await rows(
      db,
      sql`UPDATE pipeline_executions SET status = ${status}::text, output = ${output === null ? null : stringifyExact(output)}::jsonb,
             error = ${error === null ? null : JSON.stringify(error)}::jsonb, finished_at = ${this.now()}::timestamptz, lease = NULL, locked_until = NULL
           WHERE ${this.mine()} RETURNING 1`,
    );
    return done.length > 0;
  }

  /** Gives the execution back: any process may take it up `afterMs` from now. */
  async release(afterMs: number): Promise<void> {
    await rows(
      this.core.db,
      sql`UPDATE pipeline_executions SET locked_until = ${new Date(Date.now() + afterMs).toISOString()}::timestamptz WHERE ${this.mine()}`,
    );
  }
}

/** The `pipelines:prune` task: executions that ended over EXECUTION_RETENTION_DAYS ago go (their steps with them). */
export async function pruneExecutions(core: CoreContext): Promise<number> {
  const gone = await rows(
    core.db,
    sql`DELETE FROM pipeline_executions
         WHERE status IN ('succeeded', 'failed') AND finished_at <= ${core.clock.now().toISOString()}::timestamptz - make_interval(days => ${EXECUTION_RETENTION_DAYS}::int)
         RETURNING 1`,
  );
  return gone.length;
}
