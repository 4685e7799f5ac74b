// Recognises database errors that are the client's doing, so they become 4xx and never 500.
import { invalid } from '../http/errors';
import { sqlState } from './sql-state';

export const isUniqueViolation = (err: unknown) => sqlState(err) === '23505';

/** Runs `write`; a unique violation (a concurrent duplicate) becomes a 422 on `field`. */
export async function uniqueOr422<T>(field: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw invalid(field, 'The :attribute has already been taken.', undefined, 'taken');
    throw err;
  }
}
