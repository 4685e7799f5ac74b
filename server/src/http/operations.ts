// The spec's operations with their validation and handlers, as one table. The router runs an
// operation for an HTTP request; a pipeline step runs the same operation on behalf of the key that
// started its execution: the same rights, the same validation, the same handler, no second copy.
import type { ErrorObject } from 'ajv/dist/2020';
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { authorize, type ApiKeyPrincipal } from './auth';
import { fieldErrors, notFound, validationFailed, type FieldErrors } from './errors';
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
  async handle(op: OperationSpec, req: OperationRequest, app: AppContext, validated?: (req: OperationRequest) => Promise<void>): Promise<OperationReply> {
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
   * The checks `call` makes before the handler, for a caller that then does the operation's work
   * itself in a transaction of its own (a pipeline step queueing an email with its step's result):
   * rights, nesting, and the route's validation of `body` (`422` keyed by field).
   */
  check(operationId: string, principal: ApiKeyPrincipal, body: unknown): void {
    const op = this.spec(operationId);
    authorize(principal, op.abilities, op.permissions);
    assertDepth(body);
    const errors = this.bodyErrors(operationId, body);
    if (Object.keys(errors).length) throw validationFailed(errors);
  }

  /**
   * Runs an operation outside HTTP on behalf of `principal`: the key's abilities and its creator's
   * permissions as the route checks them, the body's nesting limit, the route's validation, then
   * its handler. Such a call has no socket: handlers may read only headers (`headers`) and state
   * from `koa`. Request logs are the HTTP edge's; rate limits are the caller's to count (a
   * pipeline step counts those of its route: `countStep`).
   */
  async call(app: AppContext, operationId: string, principal: ApiKeyPrincipal, parts: { params: Record<string, string>; body: unknown; headers?: Record<string, string> }): Promise<OperationReply> {
    const op = this.spec(operationId);
    authorize(principal, op.abilities, op.permissions);
    // As the router: a path PostgreSQL could not even compare names no resource.
    if (Object.values(parts.params).some(unstorable)) throw notFound();
    assertDepth(parts.body);
    const headers = new Map(Object.entries(parts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const koa = { state: {}, get: (name: string) => headers.get(name.toLowerCase()) ?? '' } as unknown as Context;
    return this.handle(op, { params: { ...parts.params }, query: {}, body: parts.body, principal, koa }, app);
  }
}
