// Handler types derived from the generated `operations` of the spec: a handler gets its
// operation's typed path and query parameters and body, and must return one of the operation's
// documented success responses. Nobody writes these types twice.
import type { HoledJson } from '../lib/fresh-json';
import type { Context } from 'koa';
import type { operations } from '@workspace-api/sdk/openapi';
import type { AppContext } from '../context';
import type { ApiKeyPrincipal } from './auth';

export type OperationId = keyof operations;

type Params<Op extends OperationId> = operations[Op]['parameters'];
type PathOf<Op extends OperationId> =
  Params<Op> extends { path: infer P } ? (P extends object ? P : Record<string, never>) : Record<string, never>;
type QueryOf<Op extends OperationId> =
  Params<Op> extends { query?: infer Q } ? (Q extends object ? Q : Record<string, never>) : Record<string, never>;
type BodyOf<Op extends OperationId> = operations[Op] extends { requestBody?: { content: { 'multipart/form-data': unknown } } }
  ? undefined // streamed by the handler itself (`x-streaming-body`)
  : operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B
    : undefined;

// 503: `GET /health` reports itself unavailable with its own body.
type SuccessStatus = 200 | 201 | 202 | 204 | 307 | 503;
type Responses<Op extends OperationId> = operations[Op]['responses'];
// JSON bodies are typed, and text ones (HTML, TypeScript); other media (file bytes) are set on the
// Koa context by the handler.
type ContentOf<R> = R extends { content: infer C }
  ? C extends { 'application/json': infer J }
    ? J
    : C extends { 'text/html': infer H }
      ? H
      : C extends { 'text/plain': infer T }
        ? T
        : unknown
  : undefined;

export type Reply<Op extends OperationId> = {
  [S in keyof Responses<Op> & SuccessStatus]: ContentOf<Responses<Op>[S]> extends undefined
    ? { status: S; body?: undefined; headers?: Record<string, string> }
    : | {
          status: S;
          body: ContentOf<Responses<Op>[S]>;
          headers?: Record<string, string>;
          /** The body holds exact numbers (lib/exact-json.ts) and is written by lossless-json. */
          exactJson?: boolean;
        }
      /** A JSON body built as text already (by PostgreSQL), its fresh values as holes. */
      | { status: S; json: HoledJson; headers?: Record<string, string> };
}[keyof Responses<Op> & SuccessStatus];

export interface HandlerRequest<Op extends OperationId> {
  params: PathOf<Op>;
  query: QueryOf<Op>;
  body: BodyOf<Op>;
  /** The calling API key, on routes secured by `apiKey`. */
  principal: ApiKeyPrincipal | undefined;
  /** The raw Koa context, for headers and streaming. */
  koa: Context;
}

export type Handler<Op extends OperationId> = (req: HandlerRequest<Op>, app: AppContext) => Promise<Reply<Op>>;

/** Operations of the spec's `webhooks` section: requests the server sends, not routes. */
type OutgoingOperationId = 'receiveEvent';

/** A complete set: TypeScript fails the build when a route of the spec has no handler. */
export type HandlerSet = { [Op in Exclude<OperationId, OutgoingOperationId>]: Handler<Op> };

/** Declares a group of handlers with their types checked against the spec. */
export const handlers = <Ops extends OperationId>(set: { [Op in Ops]: Handler<Op> }) => set;
