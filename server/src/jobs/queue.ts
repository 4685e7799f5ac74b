// The durable job queue: pg-boss on the application's own database (PostgreSQL, or PGlite in
// process on the embedded default), so that every server process on one database shares the
// work and a job outlives the process that took it. Due times of our own schedules (retries,
// periods, publication) live in our own rows, computed from the server clock; jobs carry work.
import type PgBoss from 'pg-boss';
import type { Database } from '../db/database';
import type { Logger } from '../lib/logger';

export type JobHandler<T> = (data: T) => Promise<void>;

export interface JobOptions {
  /** Insert the job through this connection, inside the caller's transaction. */
  db?: Pick<Database, 'query'>;
  /** At most one queued job per key (for example a task and its period). */
  singletonKey?: string;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
}

/**
 * pg-boss's schema migrations and maintenance (archiving, purging) are scripts in a transaction of
 * their own under its advisory lock (`BEGIN; SET LOCAL lock_timeout ...`): work that must finish,
 * so they run without the pool's statement timeout, lifted for that transaction only. Its other
 * statements (fetching, completing jobs) keep it, as the jobs' own statements do.
 */
const unbounded = (script: string) => script.replace(/^\s*BEGIN;/, 'BEGIN; SET LOCAL statement_timeout = 0;');

/**
 * pg-boss runs its SQL through our connection: parameterised queries, or scripts without values.
 * Its statements in flight are kept in `pending`: pg-boss completes a worker's batch without
 * awaiting it, after our handler returned, so `stop` waits for them before the database closes.
 */
function bossDb(db: Database, pending: Set<Promise<unknown>>): PgBoss.Db {
  return {
    executeSql: (text: string, values?: unknown[]) => {
      const statement = values && values.length ? db.query(text, values) : db.execReturning(unbounded(text));
      const settled = statement.then(
        () => undefined,
        () => undefined,
      );
      pending.add(settled);
      void settled.then(() => pending.delete(settled));
      return statement;
    },
  };
}

export class JobQueue {
  private boss!: PgBoss;
  private starting?: Promise<void>;
  private started = false;
  private readonly queues = new Map<string, Promise<void>>();
  private creating: Promise<void> = Promise.resolve();
  private readonly handlers = new Map<string, JobHandler<object>>();
  /** Batches being handled in this process: `stop` waits for them before the database closes. */
  private readonly running = new Set<Promise<void>>();
  /** pg-boss's statements in flight (see `bossDb`). */
  private readonly statements = new Set<Promise<unknown>>();
  /** Workers being registered: one registered after `stop` would poll a closed database. */
  private workersStarting?: Promise<void>;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly pollingIntervalSeconds = 1,
  ) {}

  /**
   * Creates or migrates pg-boss's schema (also done at build time in the embedded seed) and starts
   * its maintenance. Idempotent; `send` and `work` wait for it.
   */
  start(): Promise<void> {
    this.starting ??= (async () => {
      // Loaded here, off the start-up path of the HTTP server.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded late on purpose, see above
      const Boss = require('pg-boss') as typeof PgBoss;
      // pg-boss's cron is not used (its schedule reads real time, not the server clock): the
      // scheduler claims periods in its own rows and sends jobs.
      this.boss = new Boss({ db: bossDb(this.db, this.statements), schedule: false, supervise: true, migrate: true });
      this.boss.on('error', (err) => this.log.error('job queue error', { error: String(err) }));
      await this.boss.start();
      this.started = true;
    })();
    return this.starting;
  }

  /**
   * Creates the queue `name` now, outside any transaction: a `send` in a transaction (`db`) must
   * not create it there, since creating takes a connection of its own, which on the embedded
   * database is the one the transaction holds (the send then waits for itself).
   */
  prepare(name: string): Promise<void> {
    return this.ensureQueue(name);
  }

  /**
   * Deletes the jobs of `name` still waiting to run (created or to be retried) whose data's
   * `field` is one of `values`: work for rows that are gone (a deleted workspace's). Returns how many.
   */
  async dropWaiting(name: string, field: string, values: (string | number)[]): Promise<number> {
    if (!values.length) return 0;
    await this.start();
    const { rowCount } = await this.db.query(
      `DELETE FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry') AND data ->> $2 = ANY($3::text[])`,
      [name, field, values.map(String)],
    );
    return rowCount ?? 0;
  }

  /**
   * Creates the queue once per process. Creations run one at a time (pg-boss's DDL for two queues
   * at once can deadlock), and a deadlock with another process's creation is retried.
   */
  private ensureQueue(name: string): Promise<void> {
    let created = this.queues.get(name);
    if (!created) {
      created = this.creating = this.creating
        .catch(() => undefined)
        .then(async () => {
          await this.start();
          for (let attempt = 1; ; attempt++) {
            try {
              return await this.boss.createQueue(name);
            } catch (err) {
              if ((err as { code?: string }).code !== '40P01' || attempt >= 5) throw err;
              await new Promise((r) => setTimeout(r, 50 * attempt));
            }
          }
        });
      // A failed creation is tried again by the next caller.
      created.catch(() => this.queues.delete(name));
      this.queues.set(name, created);
    }
    return created;
  }

  async send<T extends object>(name: string, data: T, options: JobOptions = {}): Promise<string | null> {
    await this.ensureQueue(name);
    const { db, ...rest } = options;
    return this.boss.send(name, data, {
      retryLimit: 3,
      retryDelay: 5,
      retryBackoff: true,
      expireInSeconds: 300,
      ...rest,
      ...(db ? { db: { executeSql: (text: string, values: unknown[]) => db.query(text, values) } } : {}),
    });
  }

  /** Declares the handler of a job type; workers take them once `startWorkers` runs. */
  define<T extends object>(name: string, handler: JobHandler<T>): this {
    this.handlers.set(name, handler as JobHandler<object>);
    return this;
  }

  /** Starts taking jobs of every defined type in this process. */
  async startWorkers(): Promise<void> {
    this.workersStarting = (async () => {
      for (const [name, handler] of this.handlers) await this.work(name, handler);
    })();
    await this.workersStarting;
  }

  /** Takes jobs of `name` in this process; a failed job is retried (by any process). */
  async work<T extends object>(name: string, handler: JobHandler<T>): Promise<void> {
    await this.ensureQueue(name);
    // pg-boss waits a polling interval between fetches, so each fetch takes a batch; every job
    // of it is completed or failed on its own, so one failure does not redo the others.
    await this.boss.work<T>(name, { pollingIntervalSeconds: this.pollingIntervalSeconds, batchSize: 50 }, async (jobs) => {
      const batch = (async () => {
        for (const job of jobs) {
          try {
            await handler(job.data);
            await this.boss.complete(name, job.id);
          } catch (err) {
            this.log.error('job failed', { job: name, id: job.id, error: err instanceof Error ? err.message : String(err) });
            // Recording the failure can fail too (the database gone): the job then expires and is retried.
            await this.boss.fail(name, job.id, { message: err instanceof Error ? err.message : String(err) }).catch((e: unknown) => {
              this.log.error('job failure not recorded', { job: name, id: job.id, error: String(e) });
            });
          }
        }
      })();
      this.running.add(batch);
      await batch.finally(() => this.running.delete(batch));
    });
  }

  /** Stops taking jobs and waits for the running ones. */
  async stop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.workersStarting?.catch(() => undefined);
    if (!this.started) return;
    await this.boss.stop({ graceful: true, wait: true, close: false, timeout: 10_000 });
    // A fetch in flight at the stop (pg-boss does not wait for it) may return jobs: their batch
    // runs after it, and pg-boss then completes it without awaiting (an unhandled rejection once
    // the database is closed). So wait until neither batches nor statements are in flight; each
    // round lets the microtasks run that start the next (a completion follows its batch).
    while (this.running.size || this.statements.size) {
      await Promise.allSettled([...this.running, ...this.statements]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.started = false;
  }
}
