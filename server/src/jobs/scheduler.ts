// The scheduler of each server process. Every tick (SCHEDULER_TICK_MS, 1 s by default, and right
// after a commit that published events) it:
//   1. claims the current period of each registered task in `task_runs` (the insert succeeds in
//      one process only, so a task runs once per period across all processes) and queues the run
//      as a durable job in the same transaction;
//   2. fans committed events out to webhook subscriptions (events/outbox.ts);
//   3. sends the webhook deliveries that are due (webhooks/deliver.ts);
//   4. queues again pipeline executions whose process stopped renewing their lease (pipelines/runner.ts).
// Periods and due times follow the server clock, so the test clock moves them.
import { hostname } from 'node:os';
import type { AppContext } from '../context';
import type { Cadence } from '../tasks';
import { dispatchOutbox } from '../events/outbox';
import { deliverDue } from '../webhooks/deliver';

export const TASK_JOB = 'tasks.run';
const RUNNER = `${hostname()}:${process.pid}`;

/** The period a moment falls in, for a cadence (UTC). */
export function periodOf(cadence: Cadence, at: Date): string {
  const iso = at.toISOString();
  return cadence === 'minutely' ? iso.slice(0, 16) : cadence === 'hourly' ? iso.slice(0, 13) : iso.slice(0, 10);
}

export class Scheduler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  /** Last period each task was seen claimed in (by any process): no insert until it changes. */
  private readonly seen = new Map<string, string>();

  constructor(private readonly app: AppContext) {}

  async start(): Promise<void> {
    const { app } = this;
    app.jobs.define<{ task: string; period: string }>(TASK_JOB, (job) => this.runTask(job.task, job.period));
    await app.jobs.startWorkers();
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), app.config.schedulerTickMs);
    this.timer.unref();
    this.kick();
  }

  /** Runs a tick now (or right after the one in progress). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.tick()
      .catch((err) => this.app.log.error('scheduler tick failed', { error: err instanceof Error ? err.stack : String(err) }))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** One pass; exported for tests through `kick`/`idle`. */
  private async tick(): Promise<void> {
    await this.app.clock.refresh();
    await this.claimPeriods();
    while ((await dispatchOutbox(this.app)) > 0);
    while ((await deliverDue(this.app)) > 0);
    await this.app.pipelines.recover();
  }

  private async claimPeriods(): Promise<void> {
    const { app } = this;
    const now = app.clock.now();
    for (const task of app.tasks.list()) {
      const period = periodOf(task.cadence, now);
      if (this.seen.get(task.name) === period) continue;
      // A bare transaction: this is the scheduler's own pass, which transaction() would wake again after each commit.
      await app.db.transaction(async (tx) => {
        const claimed = await tx.query(
          `INSERT INTO task_runs (task, period, claimed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING task`,
          [task.name, period, now],
        );
        if (claimed.rowCount > 0) {
          await app.jobs.send(TASK_JOB, { task: task.name, period }, { singletonKey: `${task.name}:${period}`, db: tx });
        }
      });
      this.seen.set(task.name, period);
    }
  }

  private async runTask(name: string, period: string): Promise<void> {
    const { app } = this;
    const task = app.tasks.get(name);
    if (!task) return;
    await app.db.query(`UPDATE task_runs SET attempts = attempts + 1, runner = $3 WHERE task = $1 AND period = $2`, [name, period, RUNNER]);
    await app.clock.refresh();
    try {
      const processed = await task.run(app);
      await app.db.query(`UPDATE task_runs SET processed = $3, finished_at = $4, error = NULL WHERE task = $1 AND period = $2`, [
        name,
        period,
        processed,
        app.clock.now(),
      ]);
    } catch (err) {
      await app.db.query(`UPDATE task_runs SET error = $3 WHERE task = $1 AND period = $2`, [name, period, String(err)]);
      throw err;
    }
  }

  /** Resolves when no tick is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.idle();
  }
}
