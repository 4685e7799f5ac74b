// The one error type of the server and its mapping to the documented bodies:
// `422` {message, errors}, every other status {message}. Handlers and middleware throw HttpError;
// `errorResponder` turns it (and parser errors, and anything unexpected) into the response.
import type { Middleware } from 'koa';

export type FieldErrors = Record<string, string[]>;

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
  tooLarge: 'The request body is too large.',
  unsupportedMediaType: 'Unsupported Media Type: expected application/json.',
  tooManyRequests: 'Too Many Attempts.',
  serverError: 'Server Error',
} as const;

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
export const invalid = (field: string, message: string) => validationFailed({ [field]: [message] });

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
      const err = thrown instanceof HttpError ? thrown : fromParserError(thrown as ParserError);
      if (err) {
        ctx.status = err.status;
        ctx.body = err.body;
        ctx.set(err.headers);
        return;
      }
      log(thrown, String(ctx.state.requestId ?? ''));
      ctx.status = 500;
      ctx.body = { message: MESSAGES.serverError };
    }
  };
}
