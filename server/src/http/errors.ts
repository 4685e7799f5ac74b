// The one error type of the server and its mapping to the documented bodies:
// `422` {message, errors}, every other status {message}. Handlers and middleware throw HttpError;
// `errorResponder` turns it (and parser errors, and anything unexpected) into the response.
import type { Middleware } from 'koa';
import { isDependencyDown, isQueryCanceled } from '../lib/sql-state';
import { closeAfterUnreadBody } from './linger';
import { fieldError, fieldErrors, MAX_ERROR_PATHS, oneFieldError, renderFieldErrors, type FieldErrors } from '../lib/field-errors';
import { DomainError } from '../core/errors';

export { fieldErrors, MAX_ERROR_PATHS, type FieldErrors };

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message: string; errors?: Record<string, string[]>; [extra: string]: unknown },
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

export const MESSAGES = {
  notFound: 'Not Found',
  forbidden: 'Forbidden',
  notPermitted: 'This API key is not permitted to perform this action',
  suspended: 'Workspace suspended',
  malformedJson: 'Malformed JSON body.',
  malformedRequest: 'Malformed HTTP request.',
  tooLarge: 'The request body is too large.',
  unsupportedMediaType: 'Unsupported Media Type: expected application/json.',
  tooManyRequests: 'Too Many Attempts.',
  serverError: 'Server Error',
  unavailable: 'Service Unavailable.',
  queryTooLong:
    'The request needed more database time than the server allows and was stopped; nothing was changed. Narrow it: a more selective filter, fewer paths through multiple relations, a smaller page.',
  databaseBusy: 'The request needed more database time than the server allows and was stopped; nothing was changed. Retry later.',
} as const;

/** What `503` answers ask clients to wait before retrying. */
export const RETRY_AFTER_SECONDS = 5;

export const notFound = () => new HttpError(404, { message: MESSAGES.notFound });
/** An upstream (the image proxy, an origin) failed; nothing of its answer is exposed. */
export const badGateway = () => new HttpError(502, { message: 'Bad Gateway' });
export const forbidden = (message: string = MESSAGES.forbidden) => new HttpError(403, { message });

/**
 * A `422` with the field errors rendered (lib/field-errors.ts): its message is the first error,
 * followed by how many more there are (of those listed).
 */
export function validationFailed(found: FieldErrors): HttpError {
  const listed = fieldErrors();
  for (const key of Object.keys(found).slice(0, MAX_ERROR_PATHS)) listed[key] = found[key];
  const errors = renderFieldErrors(listed);
  const all = Object.values(errors).flat();
  const more = all.length - 1;
  const message = more > 0 ? `${all[0]} (and ${more} more error${more > 1 ? 's' : ''})` : (all[0] ?? 'The given data was invalid.');
  return new HttpError(422, { message, errors });
}

/** A single-field 422: `template` names the field `:attribute` (lib/field-errors.ts). */
export const invalid = (field: string, template: string, params?: Record<string, string | number>, rule = 'invalid') =>
  validationFailed(oneFieldError(field, fieldError(rule, template, params)));

/** A refusal of the core (core/errors.ts) as the documents answer it: the one place of that mapping. */
export function httpErrorOf(err: DomainError): HttpError {
  switch (err.kind) {
    case 'not_found':
      return new HttpError(404, { message: err.detail.message ?? MESSAGES.notFound });
    case 'forbidden':
      return forbidden();
    case 'not_permitted':
      return forbidden(MESSAGES.notPermitted);
    case 'invalid_locale':
      return new HttpError(400, { message: 'Invalid locale.' });
    case 'invalid':
    case 'stale_version':
    case 'review_pending':
      return validationFailed(err.errors);
    case 'condition_failed':
      return new HttpError(409, { message: err.message, code: 'condition_failed', index: err.detail.index, committed: false });
    case 'conflict':
      return new HttpError(409, { message: err.message, ...(err.detail.counts ? { counts: err.detail.counts } : {}) });
    case 'contention':
      return new HttpError(409, { message: err.message }, { 'Retry-After': '1' });
  }
}

/** An error as an answer: HttpError as it is, the core's refusals mapped; anything else unchanged. */
export const asHttpError = (err: unknown): unknown => (err instanceof DomainError ? httpErrorOf(err) : err);

interface ParserError extends Error {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

function fromParserError(err: ParserError): HttpError | undefined {
  const status = err.status ?? err.statusCode;
  if (status === 413 || err.type === 'entity.too.large') return new HttpError(413, { message: MESSAGES.tooLarge });
  if (status === 415) return new HttpError(415, { message: MESSAGES.unsupportedMediaType });
  if (status === 400 && err.expose !== false) return new HttpError(400, { message: MESSAGES.malformedJson });
  return undefined;
}

/**
 * A statement stopped by the database's time limit (DATABASE_STATEMENT_TIMEOUT_MS). The work of a
 * request with a JSON body (a query's filter, aggregate and page, a batch) is what the body asked
 * for: the client's to narrow, a `422` on `body` that is not worth retrying as it is. Without a
 * body (a list, a read, a delete) the request was an ordinary one and the database too busy: `503`.
 */
const timedOut = (withBody: boolean) =>
  withBody
    ? invalid('body', MESSAGES.queryTooLong)
    : new HttpError(503, { message: MESSAGES.databaseBusy }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });

export function errorResponder(log: (err: unknown, requestId: string) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      // An answer sent before the request body was read leaves the rest of it on the socket:
      // close the connection after the answer (lingering, so the client can read it).
      closeAfterUnreadBody(ctx);
      const err =
        thrown instanceof HttpError
          ? thrown
          : thrown instanceof DomainError
            ? httpErrorOf(thrown)
            : isQueryCanceled(thrown)
              ? timedOut(ctx.state.body !== undefined)
              : fromParserError(thrown as ParserError);
      if (err) {
        ctx.status = err.status;
        ctx.body = err.body;
        ctx.set(err.headers);
        return;
      }
      log(thrown, String(ctx.state.requestId ?? ''));
      if (isDependencyDown(thrown)) {
        // The database (or Redis, or S3) is unreachable: the client may retry; nothing was written.
        ctx.status = 503;
        ctx.body = { message: MESSAGES.unavailable };
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
        return;
      }
      ctx.status = 500;
      ctx.body = { message: MESSAGES.serverError };
    }
  };
}
