// The SQLSTATE of a database error whichever client raised it, and whether an error means a
// dependency is down. No imports: the error mapping (http/errors.ts) and the rules built on it
// (core/errors.ts `uniqueOr422`) both use it.
/** lock_not_available: a lock was not free within the statement's lock_timeout. */
export const LOCK_NOT_AVAILABLE = '55P03';

/** unique_violation: a concurrent duplicate of a unique key. */
export const isUniqueViolation = (err: unknown) => sqlState(err) === '23505';

type ErrorShape = {
  code?: string;
  cause?: { code?: string; originalCode?: string };
  meta?: { driverAdapterError?: { cause?: { originalCode?: string } } };
};

/**
 * The PostgreSQL SQLSTATE of an error from any path: Prisma on adapter-pg (P2002 with the original
 * code in meta), Prisma on the PGlite adapter (DriverAdapterError with `cause.code`), raw `pg`.
 */
export function sqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as ErrorShape;
  if (e.code === 'P2002') return '23505';
  return (
    e.meta?.driverAdapterError?.cause?.originalCode ??
    e.cause?.originalCode ??
    e.cause?.code ??
    (/^[0-9A-Z]{5}$/.test(e.code ?? '') ? e.code : undefined)
  );
}

/**
 * Whether `err` (or one of its causes) is SQLSTATE 57014 query_canceled: a statement the
 * database stopped, over the pools' statement timeout (or cancelled by an operator). Its
 * transaction rolled back; the connection stays usable.
 */
export function isQueryCanceled(err: unknown): boolean {
  let e = err as { cause?: unknown } | undefined;
  for (let i = 0; i < 8 && e && typeof e === 'object'; i++, e = e.cause as typeof e) if (sqlState(e) === '57014') return true;
  return false;
}

// Errors that say a dependency (PostgreSQL, Redis, S3) cannot be reached right now, from any
// client: a refused or dropped socket, PostgreSQL shutting down or out of connections, Prisma's
// "can't reach the database". These are `503` with `Retry-After`, never `500`.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);
const PRISMA_UNREACHABLE = new Set(['P1001', 'P1002', 'P1017', 'P2024']);
const ADAPTER_UNREACHABLE = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);
const UNREACHABLE_TEXT =
  /Connection terminated|timeout exceeded when trying to connect|Connection is closed|connection error|Can't reach database server|MaxRetriesPerRequest|Client was closed/i;

/** Whether `err` (or one of its causes) says a dependency is down rather than the request wrong. */
export function isDependencyDown(err: unknown): boolean {
  let e = err as
    | (ErrorShape & { message?: string; name?: string; errors?: unknown[]; meta?: { driverAdapterError?: { cause?: { kind?: string } } } })
    | undefined;
  for (let i = 0; i < 8 && e && typeof e === 'object'; i++, e = e.cause as typeof e) {
    const state = sqlState(e);
    if (NETWORK_CODES.has(e.code ?? '') || PRISMA_UNREACHABLE.has(e.code ?? '')) return true;
    // SQLSTATE 08xxx connection exception, 57P01-57P03 shutdown / cannot connect now, 53300 too many connections.
    if (state && /^(08|57P0[123]|53300)/.test(state)) return true;
    if (ADAPTER_UNREACHABLE.has(e.meta?.driverAdapterError?.cause?.kind ?? '')) return true;
    if (typeof e.message === 'string' && UNREACHABLE_TEXT.test(e.message)) return true;
    // AggregateError (a refused connection on both IPv4 and IPv6).
    if (Array.isArray(e.errors) && e.errors.some((x) => isDependencyDown(x))) return true;
  }
  return false;
}
