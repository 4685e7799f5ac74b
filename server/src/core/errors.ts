// What an operation can refuse, in the core's words: a kind (a code programs can switch on), the
// field errors it found (data keyed by request path), and what the kind needs besides. The HTTP
// edge renders each kind as the documents answer it, in one place (http/errors.ts
// `httpErrorOf`); a pipeline step reports the same answer as its failure.
import { fieldError, fieldErrors, oneFieldError, type FieldErrors } from '../lib/field-errors';
import { isUniqueViolation } from '../lib/sql-state';

export type DomainErrorKind =
  /** No such resource for this caller (missing, foreign, wrong kind, expired); `message` may name it. */
  | 'not_found'
  /** Refused as it is: a resource this API may not change (a legacy form submission), a session token unknown, expired or revoked. */
  | 'forbidden'
  /** The key lacks an ability, or its creator a permission. */
  | 'not_permitted'
  /** The request is invalid; `errors` keyed by request path. */
  | 'invalid'
  /** A locale parameter names no locale of the workspace. */
  | 'invalid_locale'
  /** The version the caller saw is not the current one; `errors` on the field that carried it. */
  | 'stale_version'
  /** A pending review blocks the write; `errors` say where. */
  | 'review_pending'
  /** A batch operation's `check` did not hold; `index` names it. */
  | 'condition_failed'
  /** The request conflicts with an earlier one (an idempotency key reused for another request). */
  | 'conflict'
  /** Another request holds what this one needs; worth retrying shortly. */
  | 'contention';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly errors: FieldErrors = fieldErrors(),
    readonly detail: { message?: string; index?: number; counts?: Record<string, number> } = {},
  ) {
    super(detail.message ?? kind);
  }
}

/** A single-path `invalid`: `template` names the field `:attribute` (lib/field-errors.ts). */
export const invalidAt = (path: string, template: string, params?: Record<string, string | number>, rule = 'invalid') =>
  new DomainError('invalid', oneFieldError(path, fieldError(rule, template, params)));

/** Refuses when any error was found. */
export function throwIfInvalid(errors: FieldErrors): void {
  if (Object.keys(errors).length) throw new DomainError('invalid', errors);
}

/** Runs `write`; a unique violation (a concurrent duplicate) becomes `invalid` on `field`, rule `taken`. */
export async function uniqueOr422<T>(field: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw invalidAt(field, 'The :attribute has already been taken.', undefined, 'taken');
    throw err;
  }
}
