// The bundled OpenAPI document (server/src/generated/openapi.json) read as a table of operations.
// A route exists when it is in the spec: the router, request validation, authentication, body
// limits and the contract test all read this one table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generatedDir } from '../paths';
import { escapePointer } from '../lib/json-pointer';

export { escapePointer };

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

/** `appToken`: a hosted-authentication access token, checked by the handler itself. */
export type Security = 'apiKey' | 'adminToken' | 'appToken' | 'none';

/**
 * What a rate limit counts per (`x-rate-limit`): the API key, the client's IP address, or a
 * property of the validated JSON body (`body.email`). Not a bearer credential: every random one
 * sent would get a counter of its own, so `/auth/session` counts the tokens that exist itself.
 */
export type RateLimitScope = 'key' | 'ip' | `body.${string}`;

export interface RateLimitRule {
  group: string;
  per: RateLimitScope;
}

export interface ParameterSpec {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  /** JSON pointer (within the document) to the parameter's schema. */
  schemaPointer: string;
}

export interface OperationSpec {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI template, e.g. `/admin/v1/workspaces/{workspace}`. */
  path: string;
  security: Security;
  parameters: ParameterSpec[];
  /** Pointer to the JSON request body schema, when the operation takes one. */
  jsonBodyPointer?: string;
  bodyRequired: boolean;
  /** Largest accepted body in bytes (`x-body-limit`), 64 KiB by default. */
  bodyLimit: number;
  /** Abilities the API key needs (`x-abilities`), all of them. */
  abilities: string[];
  /** Creator permissions the key's creator needs (`x-permissions`), all of them. */
  permissions: string[];
  /** The handler reads the body itself as a stream (`x-streaming-body`: uploads). */
  streamingBody: boolean;
  /** Numbers in the JSON body keep their exact value (`x-exact-numbers`: documents stored as jsonb). */
  exactNumbers: boolean;
  /** Status of a malformed JSON body (`x-malformed-json-status`), 400 by default. */
  malformedJsonStatus: 400 | 422;
  /** The handler reads the server clock (false with `x-clock: false`: health, the document, the docs page). */
  readsClock: boolean;
  /**
   * The operation changes what cached lookups read (`x-changes-lookups`: keys, users, workspaces,
   * buckets, content types): its answer waits until
   * this process has heard the change notification, which every process hears at the same time.
   */
  changesLookups: boolean;
  /**
   * A delivery read whose answers this process may keep (`x-cached-response`, http/response-cache.ts).
   */
  cachedResponse: boolean;
  /**
   * The operation may change what kept answers read: every operation but GET and the read-only
   * POSTs (`x-read-only`: queries). Its answer waits until every process has dropped them.
   */
  changesContent: boolean;
  /**
   * Rate limits of the operation (`x-rate-limit`: a group counted per API key, or a list of
   * `{group, per}`), see http/rate-limit.ts.
   */
  rateLimits: RateLimitRule[];
  /**
   * A hosted-authentication route (`x-hosted-auth`): before anything else its workspace must
   * exist, not be suspended and have hosted authentication enabled (http/auth-workspace.ts).
   */
  hostedAuth: boolean;
  /** Pointer to `responses` of the operation, for the contract test. */
  responsesPointer: string;
  /** The response statuses the operation documents (`200`, `4XX`, ...). */
  statuses: string[];
}

export type OpenApiDocument = {
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
};

let bundled: OpenApiDocument | undefined;

/** The bundled document, read once. */
export function loadDocument(): OpenApiDocument {
  bundled ??= JSON.parse(readFileSync(path.join(generatedDir, 'openapi.json'), 'utf8')) as OpenApiDocument;
  return bundled;
}

/** The node at a JSON pointer (`/paths/~1health/get`). */
export function resolvePointer(doc: OpenApiDocument, pointer: string): Record<string, unknown> {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc) as Record<
    string,
    unknown
  >;
}

/** Follows local `$ref`s (`#/components/...`) to the object and the pointer it names. */
export function deref(doc: OpenApiDocument, value: unknown, pointer: string): { value: Record<string, unknown>; pointer: string } {
  let v = value as Record<string, unknown>;
  let p = pointer;
  while (v && typeof v.$ref === 'string') {
    p = v.$ref.slice(1);
    v = resolvePointer(doc, p);
  }
  return { value: v, pointer: p };
}

function securityOf(op: Record<string, unknown>): Security {
  const sec = op.security as Record<string, unknown>[] | undefined;
  if (!sec || sec.length === 0) return 'none';
  const names = Object.keys(sec[0]);
  if (names.includes('adminToken')) return 'adminToken';
  if (names.includes('apiKey')) return 'apiKey';
  if (names.includes('appToken')) return 'appToken';
  throw new Error(`unknown security scheme ${names.join(',')}`);
}

function rateLimitRules(value: unknown): RateLimitRule[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [{ group: value, per: 'key' }];
  const rules = value as RateLimitRule[];
  for (const r of rules) if (!/^(key|ip|body\.\w+)$/.test(r.per)) throw new Error(`x-rate-limit: unknown scope ${r.per}`);
  return rules;
}

export function readOperations(doc: OpenApiDocument): OperationSpec[] {
  const ops: OperationSpec[] = [];
  for (const [route, item] of Object.entries(doc.paths)) {
    const itemPointer = `/paths/${escapePointer(route)}`;
    const shared = (item.parameters as unknown[] | undefined) ?? [];
    for (const method of METHODS) {
      const op = item[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const opPointer = `${itemPointer}/${method}`;
      const params = new Map<string, ParameterSpec>();
      const collect = (list: unknown[], base: string) =>
        list.forEach((raw, i) => {
          const { value, pointer } = deref(doc, raw, `${base}/parameters/${i}`);
          params.set(`${String(value.in)}:${String(value.name)}`, {
            name: value.name as string,
            in: value.in as ParameterSpec['in'],
            required: value.required === true,
            schemaPointer: `${pointer}/schema`,
          });
        });
      collect(shared, itemPointer);
      collect((op.parameters as unknown[] | undefined) ?? [], opPointer);
      const body = op.requestBody ? deref(doc, op.requestBody, `${opPointer}/requestBody`) : undefined;
      const content = body?.value.content as Record<string, unknown> | undefined;
      ops.push({
        operationId: op.operationId as string,
        method,
        path: route,
        security: securityOf(op),
        parameters: [...params.values()],
        streamingBody: op['x-streaming-body'] === true,
        jsonBodyPointer:
          content?.['application/json'] && op['x-streaming-body'] !== true
            ? `${body!.pointer}/content/application~1json/schema`
            : undefined,
        bodyRequired: body?.value.required === true,
        bodyLimit: (op['x-body-limit'] as number | undefined) ?? 65_536,
        abilities: (op['x-abilities'] as string[] | undefined) ?? [],
        permissions: (op['x-permissions'] as string[] | undefined) ?? [],
        readsClock: op['x-clock'] !== false,
        changesLookups: op['x-changes-lookups'] === true,
        cachedResponse: op['x-cached-response'] === true,
        changesContent: method !== 'get' && op['x-read-only'] !== true,
        exactNumbers: op['x-exact-numbers'] === true,
        malformedJsonStatus: op['x-malformed-json-status'] === 422 ? 422 : 400,
        rateLimits: rateLimitRules(op['x-rate-limit']),
        hostedAuth: op['x-hosted-auth'] === true,
        responsesPointer: `${opPointer}/responses`,
        statuses: Object.keys((op.responses as Record<string, unknown> | undefined) ?? {}),
      });
    }
  }
  return ops;
}
