// The spec's operations with their validation and handlers, as one table. The router runs an
// operation's handler for an HTTP request; a pipeline step, acting for the key that started its
// execution, gets the same rights and validation (`checkCall`) and calls the same operation of
// core/operations/ that the handler calls.
import type { HoledJson } from '../lib/fresh-json';
import type { ErrorObject } from 'ajv/dist/2020';
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { authorize, type ApiKeyPrincipal } from './auth';
import { fieldErrors, notFound, type FieldErrors } from './errors';
import type { HandlerSet } from './handlers';
import type { OperationSpec } from './spec';
import { assertDepth, unstorable, type SpecValidator } from './validation';
import { countStep } from './step-limits';

export interface OperationRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  principal: ApiKeyPrincipal | undefined;
  koa: Context;
}

export interface OperationReply {
  status: number;
  body?: unknown;
  /** The body as JSON text already (with fresh values as holes), sent as it is. */
  json?: HoledJson;
  headers?: Record<string, string>;
  exactJson?: boolean;
}

type AnyHandler = (req: OperationRequest, app: AppContext) => Promise<OperationReply>;

export class Operations {
  private readonly byId: Map<string, { op: OperationSpec; handler: AnyHandler }>;

  constructor(
    readonly list: OperationSpec[],
    readonly validator: SpecValidator,
    set: HandlerSet,
  ) {
    this.byId = new Map(
      list.map((op) => {
        const handler = (set as unknown as Record<string, AnyHandler>)[op.operationId];
        if (!handler) throw new Error(`no handler for operation ${op.operationId}`);
        return [op.operationId, { op, handler }];
      }),
    );
  }

  spec(operationId: string): OperationSpec {
    const found = this.byId.get(operationId);
    if (!found) throw new Error(`unknown operation ${operationId}`);
    return found.op;
  }

  /**
   * The end of every route's chain: validates the request (coercing parameters), runs `validated`
   * (the router's rate limits counted per a body property), then the handler.
   */
  async handle(
    op: OperationSpec,
    req: OperationRequest,
    app: AppContext,
    validated?: (req: OperationRequest) => Promise<void>,
  ): Promise<OperationReply> {
    this.validator.validateRequest(op, req);
    await validated?.(req);
    // Documents stored as jsonb keep numbers a double cannot hold (router.ts).
    if (req.koa.state.exactBody !== undefined) req.body = req.koa.state.exactBody;
    return this.byId.get(op.operationId)!.handler(req, app);
  }

  /** The route's validation of `body` as operation `operationId`'s JSON body (none when it takes none). */
  bodyErrors(operationId: string, body: unknown, skip?: (err: ErrorObject) => boolean): FieldErrors {
    const op = this.spec(operationId);
    return op.jsonBodyPointer ? this.validator.errorsAt(op.jsonBodyPointer, body, skip) : fieldErrors();
  }

  /** A pipeline step's work counted against its route's rate limits (http/step-limits.ts). */
  countStep(app: AppContext, operationId: string, principal: ApiKeyPrincipal, body: unknown): Promise<void> {
    return countStep(app, this.spec(operationId), principal, body);
  }

  /**
   * A call outside HTTP (a pipeline step acting for `principal`) checked as the route checks a
   * request: the key's abilities and its creator's permissions, a path PostgreSQL could not even
   * compare names no resource, the body's nesting limit, then the route's validation (defaults
   * filled in). The caller then runs the operation itself (core/operations/). Request logs are
   * the HTTP edge's; rate limits are the caller's to count (`countStep`).
   */
  checkCall<P extends Record<string, string>, B>(
    operationId: string,
    principal: ApiKeyPrincipal,
    parts: { params: P; body: B },
  ): { params: P; body: B } {
    const op = this.spec(operationId);
    authorize(principal, op.abilities, op.permissions);
    if (Object.values(parts.params).some(unstorable)) throw notFound();
    assertDepth(parts.body);
    const req = { params: { ...parts.params } as Record<string, string>, query: {}, body: parts.body as unknown };
    this.validator.validateRequest(op, req);
    return { params: req.params as P, body: req.body as B };
  }
}
