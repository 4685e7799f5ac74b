// The one error type of the server and its mapping to the documented bodies:
// `422` {message, errors}, every other status {message}. Handlers and middleware throw HttpError;
// `errorResponder` turns it (and parser errors, and anything unexpected) into the response.
import type { Middleware } from 'koa';
import { isDependencyDown } from '../lib/sql-state';

export type FieldErrors = Record<string, string[]>;

/**
 * An empty error map. Its keys are request paths, which users choose (`constructor`,
 * `__proto__`): no prototype, so no key finds an inherited member.
 */
export const fieldErrors = (): FieldErrors => Object.create(null) as FieldErrors;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { message: string; errors?: FieldErrors; [extra: string]: unknown },
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
} as const;

/** What `503` answers ask clients to wait before retrying. */
export const RETRY_AFTER_SECONDS = 5;

export const notFound = () => new HttpError(404, { message: MESSAGES.notFound });
/** An upstream (the image proxy, an origin) failed; nothing of its answer is exposed. */
export const badGateway = () => new HttpError(502, { message: 'Bad Gateway' });
export const forbidden = (message: string = MESSAGES.forbidden) => new HttpError(403, { message });

/** A `422` whose message is the first error, followed by how many more there are. */
export function validationFailed(errors: FieldErrors): HttpError {
  const all = Object.values(errors).flat();
  const more = all.length - 1;
  const message = more > 0 ? `${all[0]} (and ${more} more error${more > 1 ? 's' : ''})` : (all[0] ?? 'The given data was invalid.');
  return new HttpError(422, { message, errors });
}

/** Shorthand for a single-field 422. */
export const invalid = (field: string, message: string) => validationFailed(Object.assign(fieldErrors(), { [field]: [message] }));

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

export function errorResponder(log: (err: unknown, requestId: string) => void): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      // An answer sent before the request body was read leaves the rest of it on the socket:
      // close the connection after the answer instead of reading (or misreading) what remains.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
      const err = thrown instanceof HttpError ? thrown : fromParserError(thrown as ParserError);
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
