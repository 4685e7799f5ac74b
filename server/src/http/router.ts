// Builds the Koa router from the spec's operation table. Each route runs the same visible chain:
// authenticate (and read the test clock; hosted-auth routes open their workspace) -> rate limit
// (per key, IP or credential) -> parse the body within its limit -> validate -> rate limit (per
// a body property) -> handle (delivery reads through the response cache, http/response-cache.ts;
// a write answers once every process has dropped what its change makes stale).
import { Stream } from 'node:stream';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { json as parseJson } from 'co-body';
import { parseExact, stringifyExact } from '../lib/exact-json';
import type { AppContext } from '../context';
import { authenticateAdmin, authenticateApiKey, authorize, type ApiKeyPrincipal } from './auth';
import { HttpError, MESSAGES, invalid, notFound } from './errors';
import type { RateLimitSubject } from './rate-limit';
import { openAuthWorkspace } from './auth-workspace';
import { assertDepth, unstorable } from './validation';
import type { OperationSpec } from './spec';
import type { OperationReply, Operations } from './operations';
import { answerKey, keepable } from './response-cache';
import { filledBytes, withHoles, type HoledJson } from '../lib/fresh-json';
import { answerBuffer } from './answer-buffers';

const koaPath = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

function hasBody(ctx: Context): boolean {
  return Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
}

/**
 * JSON bodies only, read by co-body within the operation's `x-body-limit`. `__proto__` is an
 * ordinary key, as JSON.parse makes it (an own property, not a prototype): every map built from
 * user keys has no prototype (http/errors.ts `fieldErrors`), and JSON data keeps what it was given.
 */
function jsonBody(op: OperationSpec): Middleware {
  return async (ctx, next) => {
    const none = async () => {
      ctx.state.body = op.bodyRequired ? {} : undefined;
      await next();
    };
    if (!hasBody(ctx)) return none();
    if (!ctx.is('application/json', '+json')) throw new HttpError(415, { message: MESSAGES.unsupportedMediaType });
    // Refuse a declared oversize body before reading it.
    if (Number(ctx.get('Content-Length') || 0) > op.bodyLimit) throw new HttpError(413, { message: MESSAGES.tooLarge });
    // Any JSON value parses (`strict: false`): `"s"` or `5` is valid JSON, so a body of the wrong
    // type is the schema's `422` (`body`), not a malformed-JSON `400`.
    // (`onProtoPoisoning` is co-body's own option, missing from its type definitions.)
    const options = { limit: op.bodyLimit, strict: false, onProtoPoisoning: 'ignore', returnRawBody: true } as Parameters<
      typeof parseJson
    >[1];
    const { parsed, raw } = (await parseJson(ctx, options).catch((err: { status?: number }) => {
      // A route may document malformed JSON as a validation failure (the Objects query does).
      if (err.status === 400 && op.malformedJsonStatus === 422) throw invalid('body', 'The :attribute must be valid JSON.');
      throw err;
    })) as { parsed: unknown; raw: string };
    // An empty body (chunked, with no chunk) is no body, as without Content-Length.
    if (raw === '') return none();
    assertDepth(parsed, raw);
    ctx.state.body = parsed;
    ctx.state.rawBody = raw;
    // Documents stored as jsonb keep numbers a double cannot hold (lib/exact-json.ts): the
    // handler gets them exact, validation sees the plain parse.
    if (op.exactNumbers) {
      const exact = parseExact(raw);
      ctx.state.exactBody = exact.value;
      // Whether any number needed keeping: documents without one skip the lossless paths.
      ctx.state.exactNumbers = exact.exact;
    }
    await next();
  };
}

/** A plain JSON body (not a stream, buffer or text). */
const isJsonValue = (body: unknown) => body !== null && typeof body === 'object' && !(body instanceof Stream) && !Buffer.isBuffer(body);

/** A JSON body's text, numbers exact where the handler says they must be. */
const serialize = (reply: OperationReply) => (reply.exactJson ? stringifyExact(reply.body) : JSON.stringify(reply.body));

/** A JSON answer's text with its fresh values as holes (built as text already, or serialized). */
const holedText = (reply: OperationReply) => reply.json ?? withHoles(() => serialize(reply));

/** JSON text (or its bytes) as the answer (serialized once: for an object body Koa would stringify it twice, length then write). */
function sendJson(ctx: Context, status: number, headers: Record<string, string> | undefined, text: string | Buffer): void {
  ctx.status = status;
  if (headers) ctx.set(headers);
  ctx.type = 'application/json';
  ctx.body = text;
}

/** JSON text with holes filled at `now` as the answer's bytes, in a buffer reused once they are sent. */
const answerBytes = (ctx: Context, json: HoledJson, now: Date) => filledBytes(json, now, (size) => answerBuffer(ctx.res, size));

/** `now`: the time its fresh values are given at (the app's clock), asked for only when it has some. */
function send(ctx: Context, reply: OperationReply, now: () => Date): void {
  if (reply.json) return sendJson(ctx, reply.status, reply.headers, answerBytes(ctx, reply.json, now()));
  if (reply.body !== undefined && (reply.exactJson || isJsonValue(reply.body)))
    return sendJson(ctx, reply.status, reply.headers, serialize(reply));
  ctx.status = reply.status;
  if (reply.headers) ctx.set(reply.headers);
  if (reply.body !== undefined) ctx.body = reply.body;
  // A bodiless redirect stays empty (Koa would write the status text).
  else if (reply.status !== 204) ctx.body = '';
}

export function buildRouter(app: AppContext, operations: Operations): Router {
  const router = new Router();
  for (const op of operations.list) {
    // Limits counted per key, IP or credential run before the body is read; those per a body
    // property once it is validated.
    const requestLimits = op.rateLimits.filter((r) => !r.per.startsWith('body.'));
    const bodyLimits = op.rateLimits.filter((r) => r.per.startsWith('body.'));
    const subject = (ctx: Context, body?: unknown): RateLimitSubject => ({
      workspace: String((ctx.params as Record<string, string | undefined>).workspace ?? ''),
      keyId: (ctx.state.principal as ApiKeyPrincipal | undefined)?.keyId,
      ip: ctx.ip,
      authorization: ctx.get('Authorization'),
      body,
    });

    const chain: Middleware[] = [
      async (ctx, next) => {
        // How much of a body refused before it was read is still read and dropped (http/linger.ts).
        ctx.state.bodyLimit = op.bodyLimit;
        // A path that PostgreSQL could not even compare names no resource.
        if (Object.values(ctx.params as Record<string, string>).some(unstorable)) throw notFound();
        if (op.security === 'apiKey') {
          // The key lookup also reads the test clock's offset (one round trip for both).
          const principal = await authenticateApiKey(
            ctx,
            app.db,
            app.clock,
            app.lookups.keys,
            (ctx.params as Record<string, string>).workspace,
          );
          ctx.state.principal = principal;
          authorize(principal, op.abilities, op.permissions);
        } else {
          if (op.security === 'adminToken') authenticateAdmin(ctx, app.config.adminToken);
          if (op.readsClock) await app.clock.refresh();
          if (op.hostedAuth) await openAuthWorkspace(app, ctx);
        }
        if (requestLimits.length) await app.rateLimits.consumeRules(requestLimits, subject(ctx));
        await next();
      },
    ];
    if (op.jsonBodyPointer) chain.push(jsonBody(op));
    chain.push(async (ctx) => {
      const req = {
        params: { ...(ctx.params as Record<string, string>) },
        query: { ...ctx.query },
        body: ctx.state.body as unknown,
        principal: ctx.state.principal as ApiKeyPrincipal | undefined,
        koa: ctx,
      };
      const bodyLimited = bodyLimits.length
        ? (valid: { body: unknown }) => app.rateLimits.consumeRules(bodyLimits, subject(ctx, valid.body))
        : undefined;
      const run = () => operations.handle(op, req, app, bodyLimited);
      const { responses } = app;
      if (op.cachedResponse && responses) {
        // Only a whole 200 JSON answer is kept; anything else is sent as it is.
        let other: OperationReply | undefined;
        // Kept per workspace: a change drops only its workspace's answers.
        const workspace = String((ctx.state.principal as ApiKeyPrincipal).workspace.id);
        const answer = await responses.get(
          answerKey(op.operationId, ctx),
          async () => {
            const reply = await run();
            if (reply.status === 200 && (reply.json || isJsonValue(reply.body)))
              return keepable(reply.status, reply.headers, holedText(reply));
            other = reply;
            return undefined;
          },
          workspace,
        );
        if (!answer) return send(ctx, other!, () => app.clock.now());
        return sendJson(ctx, answer.status, answer.headers, answerBytes(ctx, answer.json, app.clock.now()));
      }
      const reply = await run();
      await Promise.all([op.changesLookups && app.lookups.keys.confirmDropped(), op.changesContent && app.contentChanges.confirmDropped()]);
      send(ctx, reply, () => app.clock.now());
    });
    router.register(koaPath(op.path), [op.method.toUpperCase()], chain, { name: op.operationId });
  }
  return router;
}
