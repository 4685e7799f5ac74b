// Request validation driven by the bundled spec: each operation's parameter and body schemas are
// compiled once with Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) straight from the
// document, never written a second time. Ajv errors become the documented 422 `errors` map.
// Responses are validated the same way by the contract test (`validateResponse`).
import type Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import { allErrorsAjv } from '../lib/ajv';
import { toFieldErrors } from '../lib/schema-errors';
import { fieldDetail } from '../lib/field-errors';
import { arrayBounds, cutToBounds, type ArrayBounds } from './array-bounds';
import { fieldErrors, forbidden, invalid, MAX_ERROR_PATHS, validationFailed, notFound, type FieldErrors } from './errors';
import { deref, escapePointer, resolvePointer, type OpenApiDocument, type OperationSpec } from './spec';

const DOC_ID = 'openapi.json';

function newAjv(coerce: boolean): Ajv2020 {
  // strict: false because OpenAPI schemas carry keywords Ajv does not know (example, x-*).
  return allErrorsAjv({ strict: false, coerceTypes: coerce, useDefaults: true, validateSchema: false });
}

/** How deep JSON bodies may nest (objects and arrays), checked once right after parsing. */
export const MAX_JSON_DEPTH = 32;

/**
 * The one nesting limit of every JSON body (`422` on `body`), before any code walks it: a
 * request's text (`string`, http/router.ts) or a body built in memory (a pipeline step's).
 */
export function assertDepth(body: unknown, text?: string): void {
  if (text !== undefined ? textDeeperThan(text, MAX_JSON_DEPTH) : deeperThan(body, MAX_JSON_DEPTH))
    throw invalid('body', 'The :attribute must not be nested more than :depth levels deep.', { depth: MAX_JSON_DEPTH });
}

/**
 * Whether `value` nests objects and arrays deeper than `limit`. Iterative, so a body nested
 * 100,000 deep costs a loop, not the stack; every later walker over a body can then recurse.
 */
export function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/**
 * `deeperThan` of a request's JSON text, which has parsed: one pass over its characters, strings
 * skipped. A 2 MB body of 700,000 empty objects costs a few milliseconds here, where walking the
 * parsed objects took 0.25 s and its garbage more (every request body is checked).
 */
export function textDeeperThan(json: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22) {
      // A string, to its closing quote; a backslash escapes the next character.
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Why PostgreSQL text could not hold `value`, or undefined: U+0000, or an unpaired UTF-16
 * surrogate (JSON's `"\ud800"`), which has no UTF-8 form. Such strings are refused before they
 * reach the database.
 */
export function textProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text (no unpaired surrogates)';
  return undefined;
}
export const unstorable = (value: string) => textProblem(value) !== undefined;

/** Strings PostgreSQL could not store, anywhere in `value` (keys included), as errors keyed by their path. Iterative. */
function textErrors(value: unknown, path: string[], out: FieldErrors, root: string): void {
  const stack: [unknown, string[]][] = [[value, path]];
  // Stops once the report is full: a `422` lists MAX_ERROR_PATHS paths at most.
  let room = MAX_ERROR_PATHS - Object.keys(out).length;
  const put = (p: string[], problem: string) => {
    const key = p.length ? p.join('.') : root;
    if (!(key in out)) room--;
    out[key] = [fieldDetail('text', problem)];
  };
  while (stack.length && room > 0) {
    const [v, p] = stack.pop()!;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) put(p, problem);
    } else if (Array.isArray(v)) v.forEach((item, i) => stack.push([item, [...p, String(i)]]));
    else if (v && typeof v === 'object')
      for (const [k, item] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) put([...p, k], problem);
        else stack.push([item, [...p, k]]);
      }
  }
}

/** Strings (and keys) anywhere in `value` that PostgreSQL could not store, keyed by path (`root` for `value` itself). */
export function unstorableErrors(value: unknown, root: string): FieldErrors {
  const errors = fieldErrors();
  textErrors(value, [], errors, root);
  return errors;
}

interface CompiledOperation {
  params?: ValidateFunction;
  pathParams: Set<string>;
  body?: ValidateFunction;
  bodyBounds?: ArrayBounds;
}

export interface RequestParts {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

export class SpecValidator {
  private readonly bodies = newAjv(false);
  private readonly params = newAjv(true);
  private readonly compiled = new Map<string, CompiledOperation>();
  /** Validators of schemas addressed by pointer (responses, pipeline steps), compiled on first use. */
  private readonly byPointer = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    this.bodies.addSchema(doc, DOC_ID);
    this.params.addSchema(doc, DOC_ID);
  }

  private ref(pointer: string) {
    return { $ref: `${DOC_ID}#${pointer}` };
  }

  private atPointer(pointer: string): ValidateFunction {
    let validate = this.byPointer.get(pointer);
    if (!validate) {
      validate = this.bodies.compile(this.ref(pointer));
      this.byPointer.set(pointer, validate);
    }
    return validate;
  }

  /**
   * The 422 map of `value` against the schema at `pointer` (a component, an operation's body),
   * strings PostgreSQL cannot store included, without changing `value` (validation fills in
   * defaults, so a copy is checked). `skip` drops Ajv errors first: a pipeline step's `with`
   * is checked before its placeholders are resolved.
   */
  errorsAt(pointer: string, value: unknown, skip?: (err: ErrorObject) => boolean): FieldErrors {
    const validate = this.atPointer(pointer);
    const errors = fieldErrors();
    if (!validate(structuredClone(value))) Object.assign(errors, toFieldErrors((validate.errors ?? []).filter((e) => !skip?.(e))));
    textErrors(value, [], errors, 'body');
    return errors;
  }

  private compile(op: OperationSpec): CompiledOperation {
    let c = this.compiled.get(op.operationId);
    if (c) return c;
    const own = op.parameters.filter((p) => p.in !== 'header');
    const paramsSchema = {
      type: 'object',
      properties: Object.fromEntries(own.map((p) => [p.name, this.ref(p.schemaPointer)])),
      required: own.filter((p) => p.required).map((p) => p.name),
    };
    c = {
      params: own.length ? this.params.compile(paramsSchema) : undefined,
      pathParams: new Set(own.filter((p) => p.in === 'path').map((p) => p.name)),
      body: op.jsonBodyPointer ? this.atPointer(op.jsonBodyPointer) : undefined,
      bodyBounds: op.jsonBodyPointer ? arrayBounds(this.doc, resolvePointer(this.doc, op.jsonBodyPointer), op.jsonBodyPointer) : undefined,
    };
    this.compiled.set(op.operationId, c);
    return c;
  }

  /**
   * Validates and coerces the request's parameters and JSON body in place. A path parameter that
   * does not fit its schema names no resource: `404`. Anything else invalid: `422`.
   */
  validateRequest(op: OperationSpec, req: RequestParts): void {
    const c = this.compile(op);
    const errors = fieldErrors();
    if (c.params) {
      const values: Record<string, unknown> = { ...req.query, ...req.params };
      if (!c.params(values)) {
        const failed = toFieldErrors(c.params.errors ?? [], 'query');
        if (Object.keys(failed).some((k) => c.pathParams.has(k.split('.')[0]))) throw notFound();
        Object.assign(errors, failed);
      }
      for (const p of op.parameters) {
        if (p.in === 'path') req.params[p.name] = values[p.name] as string;
        else if (p.in === 'query' && values[p.name] !== undefined) req.query[p.name] = values[p.name];
      }
    }
    // An array past its bound makes the body invalid: its errors are found on the array cut short
    // (array-bounds.ts). A body within its bounds is validated itself, defaults filled in.
    const body = cutToBounds(req.body, c.bodyBounds);
    if (c.body && !c.body(body)) Object.assign(errors, toFieldErrors(c.body.errors ?? []));
    // Only the parameters the operation reads: anything else in the query string is ignored.
    for (const p of op.parameters)
      if (p.in === 'query' && req.query[p.name] !== undefined) textErrors(req.query[p.name], [p.name], errors, p.name);
    textErrors(body, [], errors, 'body');
    if (Object.keys(errors).length === 0) return;
    // An operation that documents no 422 (a signed link's parameters) refuses the request as it
    // would refuse a tampered one.
    if (!op.statuses.includes('422')) throw op.statuses.includes('403') ? forbidden() : notFound();
    throw validationFailed(errors);
  }

  /** For the contract test: is `status` documented for the operation, and does `body` match it? */
  validateResponse(op: OperationSpec, status: number, contentType: string | undefined, body: unknown): string[] {
    const responses = resolvePointer(this.doc, op.responsesPointer);
    const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in responses);
    if (!key) return [`status ${status} is not documented for ${op.operationId}`];
    const { value: response, pointer } = deref(this.doc, responses[key], `${op.responsesPointer}/${escapePointer(key)}`);
    const content = response.content as Record<string, unknown> | undefined;
    if (!content) return body === undefined || body === '' ? [] : [`${op.operationId} ${status} documents no body`];
    const media = (contentType ?? '').split(';')[0].trim();
    const wildcard = `${media.split('/')[0]}/*`;
    if (!(media in content) && !(wildcard in content))
      return [`${op.operationId} ${status}: content type ${media || '(none)'} is not documented`];
    if (media !== 'application/json') return [];
    const validate = this.atPointer(`${pointer}/content/${escapePointer(media)}/schema`);
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${op.operationId} ${status}: ${e.instancePath || '/'} ${e.message}`);
  }
}
