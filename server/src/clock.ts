// The server clock: every timestamp, expiry and schedule reads `clock.now()`. With TEST_CLOCK=1
// the management API moves it; the offset lives in the database (clock_state), so every server
// process on one database moves together. Without TEST_CLOCK the offset is always zero and the
// database is never read. Authenticated requests read the offset inside their key lookup
// (`offsetColumn`), so the test clock costs them no round trip of its own.
import { performance } from 'node:perf_hooks';
import type { Database } from './db/database';
import { raw, sql, type Sql } from './core/sql';

export class Clock {
  private offset = 0;

  /** The test clock's offset from real time (0 unless TEST_CLOCK=1 moved it). */
  get offsetMs(): number {
    return this.offset;
  }

  constructor(
    private readonly db: Database,
    readonly adjustable: boolean,
  ) {}

  now(): Date {
    return new Date(Date.now() + this.offset);
  }

  /**
   * The server clock in SQL, with real microseconds: PostgreSQL's statement time moved by the
   * offset. The embedded PostgreSQL's clock has only milliseconds, so there the time comes from
   * Node's high-resolution clock.
   */
  sqlNow(): Sql {
    if (this.db.kind === 'pglite') {
      const micros = Math.round((performance.timeOrigin + performance.now() + this.offset) * 1000);
      const iso = `${new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
      return sql`${iso}::timestamptz`;
    }
    return this.offset === 0
      ? raw('statement_timestamp()')
      : sql`(statement_timestamp() + make_interval(secs => ${this.offset / 1000}::float8))`;
  }

  /** A column expression reading the shared offset, for a query that runs anyway; undefined when fixed. */
  get offsetColumn(): string | undefined {
    return this.adjustable ? '(SELECT offset_ms FROM clock_state WHERE id = 1)' : undefined;
  }

  /** Takes an offset read through `offsetColumn`. */
  useOffset(offsetMs: number): void {
    if (this.adjustable) this.offset = offsetMs;
  }

  /** Re-reads the shared offset; called at the start of each request and job. */
  async refresh(): Promise<void> {
    if (!this.adjustable) return;
    const res = await this.db.query<{ offset_ms: number }>('SELECT offset_ms FROM clock_state WHERE id = 1');
    this.offset = Number(res.rows[0]?.offset_ms ?? 0);
  }

  async setNow(target: Date): Promise<Date> {
    return this.store(target.getTime() - Date.now());
  }

  async advance(seconds: number): Promise<Date> {
    // Computed in SQL so that two concurrent advances both count.
    const res = await this.db.query<{ offset_ms: number }>(
      `INSERT INTO clock_state (id, offset_ms) VALUES (1, $1)
       ON CONFLICT (id) DO UPDATE SET offset_ms = clock_state.offset_ms + EXCLUDED.offset_ms
       RETURNING offset_ms`,
      [seconds * 1000],
    );
    this.offset = Number(res.rows[0].offset_ms);
    return this.now();
  }

  async reset(): Promise<Date> {
    return this.store(0);
  }

  private async store(offsetMs: number): Promise<Date> {
    await this.db.query(
      `INSERT INTO clock_state (id, offset_ms) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET offset_ms = EXCLUDED.offset_ms`,
      [offsetMs],
    );
    this.offset = offsetMs;
    return this.now();
  }
}
