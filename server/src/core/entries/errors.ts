// What an entry operation can refuse, in the core's words. Each API maps these to its wire errors
// in one place at its edge (objects/errors.ts), since the two documents answer some conditions
// differently (`lock_version` versus `expected_version`, for instance).
import { fieldErrors, type FieldErrors } from '../../lib/field-errors';

export type EntryErrorKind =
  /** No such entry for this caller (missing, foreign, wrong kind, expired). */
  | 'not_found'
  /** The entry cannot be changed through this API (legacy form submissions). */
  | 'read_only'
  /** The request is invalid; `errors` keyed by request path. */
  | 'invalid'
  /** The version the caller saw is not the current one. */
  | 'stale_version'
  /** A pending review blocks the operation. */
  | 'review_pending';

export class EntryError extends Error {
  constructor(
    readonly kind: EntryErrorKind,
    readonly errors: FieldErrors = fieldErrors(),
  ) {
    super(kind);
  }
}

/** A single-path `invalid`. */
export const invalidEntry = (path: string, message: string) => new EntryError('invalid', Object.assign(fieldErrors(), { [path]: [message] }));
