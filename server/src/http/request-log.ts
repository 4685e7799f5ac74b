// Request logs of the public API: one row per request that names an existing workspace, with the
// bytes received and sent. A route that knows better sets `ctx.state.uploadSize` (decoded upload
// bytes) or `ctx.state.responseSize` (streamed downloads).
//
// Rows are kept off the response path: the middleware appends to a per-process buffer, written
// with one multi-row INSERT at most every FLUSH_MS, when the buffer fills, at shutdown, and before
// the management route reads the logs (`flush()`). A crash (SIGKILL, power loss) can lose the rows
// of the last FLUSH_MS; see docs/architecture/audit-and-request-logs.md.
//
// Operators read these rows, so no credential is kept: the path is logged without its query (where
// signed links carry `signature`) and with the token of a tokenized download replaced.
import type { Middleware } from 'koa';
import type { SqlRunner } from '../db/database';
import type { Clock } from '../clock';
import type { Logger } from '../lib/logger';

export const FLUSH_MS = 250;
/** A flush starts early once this many rows wait. */
const BATCH_ROWS = 500;
/** While the database is unreachable rows wait; past this many the oldest are dropped (and logged). */
const MAX_PENDING = 50_000;

/** What a secret path segment is replaced by. */
const REDACTED = '[redacted]';
/**
 * Path segments that are credentials: the token of a tokenized download,
 * `/api/v1/{workspace}/files/{file}/{uuid}/{token}` (routes match case-insensitively). The
 * migration 20261127090000_secrets_at_rest scrubs rows written before with the same pattern.
 */
const SECRET_SEGMENTS = [/^(\/api\/v1\/[^/]+\/files\/[^/]+\/[^/]+\/)[^/]+/i];

/** The path as logged: secret segments replaced by `[redacted]`. */
export const loggedPath = (path: string) => SECRET_SEGMENTS.reduce((p, re) => p.replace(re, `$1${REDACTED}`), path);

interface Row {
  workspaceId: number;
  method: string;
  path: string;
  status: number;
  uploadSize: number;
  responseSize: number;
  apiKeyId: number | null;
  createdAt: Date;
}

export class RequestLogBuffer {
  private pending: Row[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: SqlRunner,
    private readonly log: Logger,
  ) {}

  add(row: Row): void {
    this.pending.push(row);
    if (this.pending.length > MAX_PENDING) {
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.log.error('request log buffer full: oldest rows dropped', { dropped: dropped.length });
    }
    if (this.pending.length >= BATCH_ROWS) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** Writes every row added so far; resolves when they are committed (or the write failed and was logged). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.pending;
    this.pending = [];
    // Writes run one after another, so rows keep their order (ids follow request completion).
    this.writing = this.writing.then(() => (rows.length ? this.write(rows) : undefined));
    return this.writing;
  }

  private async write(rows: Row[]): Promise<void> {
    const col = <K extends keyof Row>(k: K) => rows.map((r) => r[k]);
    try {
      await this.db.query(
        // Not for a workspace being deleted (or gone): the lock makes its deletion wait for this
        // write, whose rows it then deletes too (core/workspace-deletion.ts). In the requests'
        // order (their ids are the logs' order), whatever order the join gives.
        `INSERT INTO request_logs (workspace_id, method, path, status, upload_size, response_size, api_key_id, created_at)
         SELECT u.w, u.m, u.p, u.s, u.us, u.rs, u.k, u.c
           FROM unnest($1::int[], $2::text[], $3::text[], $4::int[], $5::int8[], $6::int8[], $7::int[], $8::timestamptz[]) WITH ORDINALITY AS u(w, m, p, s, us, rs, k, c, o)
           JOIN workspaces ws ON ws.id = u.w AND NOT ws.deleting
          ORDER BY u.o FOR KEY SHARE OF ws`,
        [
          col('workspaceId'),
          col('method'),
          col('path'),
          col('status'),
          col('uploadSize'),
          col('responseSize'),
          col('apiKeyId'),
          rows.map((r) => r.createdAt.toISOString()),
        ],
        true,
      );
    } catch (err) {
      // Kept for the next flush (the database may be back by then); bounded by MAX_PENDING.
      this.pending.unshift(...rows);
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS * 4).unref();
      this.log.error('request log write failed', { error: String(err), rows: rows.length });
    }
  }
}

export function requestLog(buffer: RequestLogBuffer, clock: Clock): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const workspaceId = ctx.state.workspaceId as number | undefined;
      if (workspaceId !== undefined) {
        buffer.add({
          workspaceId,
          method: ctx.method,
          path: loggedPath(ctx.path),
          status: ctx.status,
          uploadSize: (ctx.state.uploadSize as number | undefined) ?? (Number(ctx.get('Content-Length')) || 0),
          responseSize: (ctx.state.responseSize as number | undefined) ?? ctx.response.length ?? 0,
          apiKeyId: (ctx.state.apiKeyId as number | undefined) ?? null,
          createdAt: clock.now(),
        });
      }
    }
  };
}
