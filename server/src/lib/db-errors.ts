// Recognises database errors that are the client's doing, so they become 4xx and never 500.
import { invalid } from '../http/errors';

type ErrorShape = { code?: string; cause?: { code?: string; originalCode?: string }; meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } };

/**
 * The PostgreSQL SQLSTATE of an error from any path: Prisma on adapter-pg (P2002 with the original
 * code in meta), Prisma on the PGlite adapter (DriverAdapterError with `cause.code`), raw `pg`.
 */
export function sqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as ErrorShape;
  if (e.code === 'P2002') return '23505';
  return e.meta?.driverAdapterError?.cause?.originalCode ?? e.cause?.originalCode ?? e.cause?.code ?? (/^[0-9A-Z]{5}$/.test(e.code ?? '') ? e.code : undefined);
}

export const isUniqueViolation = (err: unknown) => sqlState(err) === '23505';

/** Runs `write`; a unique violation (a concurrent duplicate) becomes a 422 on `field`. */
export async function uniqueOr422<T>(field: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw invalid(field, `The ${field} has already been taken.`);
    throw err;
  }
}
