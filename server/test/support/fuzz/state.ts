// "A rejected write changed nothing": a snapshot of the test database (row count and a hash of
// the rows of every table) taken before and after each write the server refused.
import { Client } from 'pg';
import type { TestServer } from '../server';

/**
 * Tables that change on requests by design, whatever the answer: request logs, rate-limit
 * counters, upload bandwidth (counted for rejected uploads too, documented in `Usage`), the
 * scheduler's task periods, Prisma's migration table, and hosted authentication's one-time codes
 * (a wrong code refused with a 422 counts one of the code's 5 attempts, by design). The job
 * queue lives in its own schema (`pgboss`) and is not looked at. Everything else, audit
 * records, outbox events, webhook deliveries and the clock included, must not move when a
 * write is refused.
 */
export const VOLATILE_TABLES = ['request_logs', 'rate_limits', 'workspace_usage', 'task_runs', '_prisma_migrations', 'auth_otps'];

/**
 * Queued jobs whose work touches only volatile tables (upload usage counting, into
 * `workspace_usage`): nothing waits for them.
 */
export const VOLATILE_JOBS = ['usage.record'];

export type Snapshot = Map<string, { rows: number; hash: string }>;

type Query = (sql: string) => Promise<Record<string, unknown>[]>;

export class StateProbe {
  private constructor(
    private readonly query: Query,
    private readonly tables: string[],
    /** Tables with an `id` column: their rows are told apart by it. */
    private readonly withId: Set<string>,
    private readonly close_: () => Promise<void>,
  ) {}

  /** On the test server's database: its own connection in PostgreSQL mode, the server's PGlite in embedded mode. */
  static async open(s: TestServer): Promise<StateProbe> {
    let query: Query;
    let close = async () => {};
    if (s.db.url) {
      const c = new Client({ connectionString: s.db.url });
      await c.connect();
      query = async (sql) => (await c.query(sql)).rows;
      close = () => c.end();
    } else {
      const db = s.server.app.db;
      query = async (sql) => (await db.query(sql)).rows as Record<string, unknown>[];
    }
    const rows = await query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const tables = rows.map((r) => String(r.table_name)).filter((t) => !VOLATILE_TABLES.includes(t));
    const ids = await query(`SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'id'`);
    return new StateProbe(query, tables, new Set(ids.map((r) => String(r.table_name))), close);
  }

  get watched(): readonly string[] {
    return this.tables;
  }

  async snapshot(): Promise<Snapshot> {
    const sql = this.tables
      .map((t) => `SELECT '${t}' AS t, count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${t}" x`)
      .join(' UNION ALL ');
    const rows = await this.query(sql);
    return new Map(rows.map((r) => [String(r.t), { rows: Number(r.n), hash: String(r.h) }]));
  }

  /** Every row of the watched tables: `table:id` (or `table:md5(row)` without an id) to md5(row). */
  async rows(): Promise<Map<string, string>> {
    const sql = this.tables
      .map((t) => `SELECT '${t}' AS t, ${this.withId.has(t) ? 'x.id::text' : 'md5(x::text)'} AS k, md5(x::text) AS h FROM "${t}" x`)
      .join(' UNION ALL ');
    return new Map((await this.query(sql)).map((r) => [`${r.t}:${r.k}`, String(r.h)]));
  }

  /** What differs between two snapshots, one line per table (empty when nothing does). */
  static diff(before: Snapshot, after: Snapshot): string[] {
    const out: string[] = [];
    for (const [t, a] of after) {
      const b = before.get(t);
      if (!b || b.hash !== a.hash)
        out.push(b && b.rows === a.rows ? `${t}: rows changed (${a.rows} rows)` : `${t}: ${b?.rows ?? 0} -> ${a.rows} rows`);
    }
    return out;
  }

  /**
   * Work the server still has to do after a change: events to fan out, deliveries due, pipeline
   * executions not ended, queued jobs due (pg-boss, in its own schema). `complete` is false when some of it cannot be read
   * (then `settle` also waits for the database to stand still).
   */
  async pendingWork(): Promise<{ pending: number; complete: boolean }> {
    const count = async (sql: string) => {
      try {
        return Number((await this.query(sql))[0]?.n ?? 0);
      } catch {
        return undefined;
      }
    };
    // Pipeline executions run after their job completed (pipelines/runner.ts): counted until they end.
    const events = await count(
      `SELECT (SELECT count(*) FROM outbox_events WHERE dispatched_at IS NULL)::int + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now())::int
              + (SELECT count(*) FROM pipeline_executions WHERE status IN ('queued', 'running'))::int AS n`,
    );
    const ignored = VOLATILE_JOBS.map((j) => `'${j}'`).join(', ');
    const jobs = await count(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE state IN ('created', 'retry', 'active') AND start_after <= now() AND name NOT IN (${ignored})`,
    );
    return { pending: (events ?? 0) + (jobs ?? 0), complete: events !== undefined && jobs !== undefined };
  }

  close(): Promise<void> {
    return this.close_();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the background work a successful write started is done (events dispatched,
 * deliveries sent), so that it cannot show up in the next snapshot as a change of a refused write.
 * When that cannot be read from the server, waits for two equal snapshots in a row instead.
 */
export async function settle(s: TestServer, probe: StateProbe, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const scheduler = (s.server.app as { scheduler?: { kick?: () => void; idle?: () => Promise<void> } }).scheduler;
  for (;;) {
    scheduler?.kick?.();
    await scheduler?.idle?.();
    const { pending, complete } = await probe.pendingWork();
    if (pending === 0 && complete && scheduler?.idle) return;
    if (pending === 0) break;
    if (Date.now() > deadline) {
      throw new Error(
        `fuzz: the server's background work (${pending} events to dispatch, deliveries or jobs due) did not finish within ${timeoutMs} ms; is its job queue running?`,
      );
    }
    await sleep(25);
  }
  let last = await probe.snapshot();
  for (;;) {
    await sleep(30);
    const next = await probe.snapshot();
    if (!StateProbe.diff(last, next).length) return;
    if (Date.now() > deadline)
      throw new Error(`fuzz: the database keeps changing without requests: ${StateProbe.diff(last, next).join('; ')}`);
    last = next;
  }
}
