// The fuzz test's world: real resources for every kind of path parameter, so that an invalid
// body or query reaches validation instead of stopping at a 404. Two workspaces (the second one
// provides "a resource of another workspace"), creators and keys, a bucket, a content type, a
// contract, a webhook (to a receiver of the test) and an image file, whose issued URLs give the
// signed and tokenized routes their real parameters. Resources of other kinds (operations added
// later) are created through the spec itself: the POST of their collection with the schema's
// example or a minimal body, or else the first item the collection's GET lists.
import { readOperations, loadDocument, resolvePointer, type OperationSpec } from '../../../src/http/spec';
import { client, request } from '../http';
import { ADMIN_TOKEN } from '../server';
import { uniqueName } from '../fixtures';
import { matchOperation } from '../contract';
import { allowedTypes, bodyInfo, doc, minimal, node, PROPERTY_HINTS, serialize, validateAt, type JTree } from './schema';

type Admin = ReturnType<typeof client>;

/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** Path parameter values keyed by the collection they follow (`users/{id}`) or their name. */
export type ParamValues = Record<string, string>;

export interface Tenant {
  workspace: string;
  key: string;
  keyId: number;
  userId: number;
  values: ParamValues;
  /** A key of the workspace without abilities, whose creator has no permissions. */
  weakKey: string;
  /** Path and query parameters of URLs the API handed out (downloads, signed links), by operation. */
  issued: Map<string, { params: Record<string, string>; query: string }>;
  builtAt: number;
  /** Setup requests sent to build it. */
  requests: number;
}

/** Workspace A is the one the cases address; B provides resources and a key of another workspace. */
export interface World {
  a: Tenant;
  b: Tenant;
  webhookUrl: string;
}

const ok = (what: string, res: { status: number; text: string }, expected: number) => {
  if (res.status !== expected) throw new Error(`fuzz world: ${what} answered ${res.status} ${res.text.slice(0, 500)}`);
};

function enumOf(schemaName: string): string[] {
  const s = (doc.components?.schemas as Record<string, { enum?: string[] }> | undefined)?.[schemaName];
  return s?.enum ?? [];
}

/**
 * A workspace with a creator holding every permission and a `*` key (the right credential), a
 * weak creator and key, a bucket, a content type, a contract, a webhook and an image (whose URLs
 * the download routes use). The resources the cases address by ID and may delete or change (a
 * creator, a key, a file, objects, ...) are found by `discover`, apart from the credentials.
 */
export async function buildTenant(baseUrl: string, admin: Admin, webhookUrl: string): Promise<Tenant> {
  let requests = 0;
  const call = async <T>(p: Promise<T>) => {
    requests++;
    return p;
  };
  const ws = await call(admin.post('/admin/v1/workspaces', { name: uniqueName('fuzz') }));
  ok('workspace', ws, 201);
  const name = ws.body.name as string;
  const user = await call(
    admin.post(`/admin/v1/workspaces/${name}/users`, { email: `${uniqueName('u')}@example.com`, permissions: enumOf('Permission') }),
  );
  ok('user', user, 201);
  const key = await call(
    admin.post(`/admin/v1/workspaces/${name}/api-keys`, { name: 'fuzz key', user_id: user.body.id, abilities: ['*'] }),
  );
  ok('key', key, 201);
  const weakUser = await call(
    admin.post(`/admin/v1/workspaces/${name}/users`, { email: `${uniqueName('weak')}@example.com`, permissions: [] }),
  );
  ok('weak user', weakUser, 201);
  const weakKey = await call(
    admin.post(`/admin/v1/workspaces/${name}/api-keys`, { name: 'weak key', user_id: weakUser.body.id, abilities: [] }),
  );
  ok('weak key', weakKey, 201);
  const bucket = await call(admin.post(`/admin/v1/workspaces/${name}/buckets`, { name: 'fuzzbucket' }));
  ok('bucket', bucket, 201);
  const type = await call(
    admin.post(`/admin/v1/workspaces/${name}/buckets/fuzzbucket/content-types`, {
      name: 'fuzztype',
      fields: [{ name: 'title', type: 'text' }],
    }),
  );
  ok('content type', type, 201);
  const contract = await call(admin.post(`/admin/v1/workspaces/${name}/contracts`, { name: 'fuzzcontract', schema: { type: 'object' } }));
  ok('contract', contract, 201);
  const hook = await call(
    admin.post(`/admin/v1/workspaces/${name}/webhooks`, { url: webhookUrl, events: ['ping'], secret: 'fuzz-secret-value' }),
  );
  ok('webhook', hook, 201);
  // Hosted authentication on, so that its routes reach validation instead of stopping at a 404.
  const settings = await call(
    admin.patch(`/admin/v1/workspaces/${name}`, { auth_enabled: true, auth_redirect_uris: ['https://app.example.com/callback'] }),
  );
  ok('workspace settings', settings, 200);
  const file = await call(
    request(baseUrl, 'POST', `/api/v1/${name}/files`, {
      token: key.body.key,
      body: { file: { name: 'fuzz.png', type: 'image/png', content: PNG } },
    }),
  );
  ok('file', file, 201);
  const values: ParamValues = {
    workspace: name,
    webhooks: String(hook.body.id),
    buckets: 'fuzzbucket',
    'content-types': 'fuzztype',
    contracts: 'fuzzcontract',
  };
  const issued = new Map<string, { params: Record<string, string>; query: string }>();
  for (const k of ['download_url', 'temporary_url', 'image_url', 'temporary_image_url']) {
    if (!file.body[k]) continue;
    const url = new URL(file.body[k] as string);
    const op = matchOperation('GET', url.pathname);
    if (!op) continue;
    const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const re = new RegExp('^' + op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '([^/]+)') + '$');
    const m = re.exec(url.pathname);
    if (m) issued.set(op.operationId, { params: Object.fromEntries(names.map((n, i) => [n, m[i + 1]])), query: url.search.slice(1) });
  }
  const tenant: Tenant = {
    workspace: name,
    key: key.body.key,
    keyId: key.body.id,
    userId: user.body.id,
    values,
    weakKey: weakKey.body.key,
    issued,
    builtAt: Date.now(),
    requests,
  };
  tenant.requests += await discover(baseUrl, tenant, webhookUrl);
  return tenant;
}

/**
 * Finds a value for every path parameter the setup above does not cover, through the spec (see
 * `create`). Best effort: what fails keeps the parameter's example.
 */
async function discover(baseUrl: string, t: Tenant, webhookUrl: string): Promise<number> {
  let requests = 0;
  const tried = new Set<string>();
  for (const op of operations()) {
    for (const p of op.parameters.filter((q) => q.in === 'path')) {
      const key = paramKey(op, p.name);
      if (Object.hasOwn(t.values, key) || tried.has(key)) continue;
      tried.add(key);
      requests += await create(baseUrl, t, webhookUrl, key);
    }
  }
  return requests;
}

let sortedOperations: OperationSpec[] | undefined;
const operations = () => (sortedOperations ??= readOperations(loadDocument()).sort((x, y) => x.path.length - y.path.length));

/**
 * A new resource of the kind a path parameter key names (`webhooks`, `objects`, ...), through the
 * spec: the POST of its collection, with the body schema's example (world values in place of
 * `user_id` and `url`) when it is valid, else a minimal body; or else the first item the
 * collection's GET lists. Sets `t.values[key]` on success; returns the requests it sent.
 */
export async function create(baseUrl: string, t: Tenant, webhookUrl: string, key: string): Promise<number> {
  let requests = 0;
  const ops = operations();
  const collectionOf = (op: OperationSpec, name: string) => op.path.slice(0, op.path.indexOf(`/{${name}}`));
  const owners = ops.flatMap((op) => op.parameters.filter((q) => q.in === 'path' && paramKey(op, q.name) === key).map((p) => ({ op, p })));
  // A collection the resource can be created in first (`/api/.../pipelines/{name}/executions` has none; the management one has).
  const owner = owners.find(({ op, p }) => ops.some((o) => o.method === 'post' && o.path === collectionOf(op, p.name))) ?? owners[0];
  if (!owner) return 0;
  const { op: ownerOp, p } = owner;
  const collection = collectionOf(ownerOp, p.name);
  let missing = false;
  const path = collection.replace(/\{(\w+)\}/g, (_m, n: string) => {
    const k = paramKey(collection, n);
    if (!Object.hasOwn(t.values, k)) missing = true;
    return encodeURIComponent(t.values[k] ?? '');
  });
  if (missing) return 0;
  const world = (k: string): JTree => (k === 'user_id' ? t.userId : k === 'webhook_url' ? webhookUrl : null);
  const call = async (op: OperationSpec, body?: string) => {
    requests++;
    const token = op.security === 'adminToken' ? ADMIN_TOKEN : op.security === 'apiKey' ? t.key : undefined;
    const res = await fetch(baseUrl + path, {
      method: op.method.toUpperCase(),
      headers: {
        Accept: 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'Content-Type': 'application/json' } : {}),
      },
      body,
    });
    const json = (await res.json().catch(() => undefined)) as Record<string, unknown> | undefined;
    return res.ok ? json : undefined;
  };
  const integer = allowedTypes(node(p.schemaPointer)).has('integer');
  // The item's id, name or ref, whichever the parameter takes (a pipeline has an id but is addressed by name).
  const pickValue = (item: Record<string, unknown> | undefined) =>
    [item?.id, item?.name, item?.ref]
      .filter((v) => typeof v === 'number' || (typeof v === 'string' && !integer))
      .map(String)
      .find((v) => integer || validateAt(p.schemaPointer, v).valid);
  let value: string | undefined;
  const creator = ops.find((o) => o.method === 'post' && o.path === collection);
  const pointer = creator ? bodyInfo(creator).jsonPointer : undefined;
  if (creator && pointer) {
    const example = node(pointer).schema.example;
    const hinted = example === undefined ? undefined : withHints(example as JTree);
    const candidates = [...(example !== undefined && validateAt(pointer, example).valid ? [hinted!] : []), minimal(node(pointer))];
    for (const candidate of candidates) {
      value = pickValue(await call(creator, serialize(candidate, world)));
      if (value) break;
    }
  }
  const lister = ops.find((o) => o.method === 'get' && o.path === collection);
  if (!value && lister) {
    const page = await call(lister);
    value = pickValue(Array.isArray(page?.data) ? (page.data[0] as Record<string, unknown>) : undefined);
  }
  if (value) t.values[key] = value;
  return requests;
}

/** An example body with the world's values where PROPERTY_HINTS names them (a real creator for `user_id`). */
function withHints(t: JTree): JTree {
  if (Array.isArray(t)) return t.map(withHints);
  if (t && typeof t === 'object' && t.constructor === Object) {
    const out: Record<string, JTree> = {};
    for (const [k, v] of Object.entries(t)) {
      const hint = Object.hasOwn(PROPERTY_HINTS, k) ? PROPERTY_HINTS[k] : undefined;
      out[k] = hint && typeof v === (hint.type === 'integer' ? 'number' : hint.type) ? hint.ref : withHints(v as JTree);
    }
    return out;
  }
  return t;
}

/** The key of a path parameter in ParamValues: its name, or the collection segment before it. */
export function paramKey(opOrPath: OperationSpec | string, param: string): string {
  if (param === 'workspace') return 'workspace';
  const segments = (typeof opOrPath === 'string' ? opOrPath : opOrPath.path).split('/');
  const i = segments.indexOf(`{${param}}`);
  const before = segments[i - 1];
  return before && !before.startsWith('{') ? before : param;
}

/**
 * The real value (raw URL text) of a path parameter in a tenant: from an issued URL of the
 * operation, the tenant's resources, the spec's example, or a minimal instance of its schema.
 */
export function realPathValue(tenant: Tenant, op: OperationSpec, param: string): string {
  const issued = tenant.issued.get(op.operationId)?.params[param];
  if (issued !== undefined) return issued;
  const key = paramKey(op, param);
  if (Object.prototype.hasOwnProperty.call(tenant.values, key)) return encodeURIComponent(tenant.values[key]);
  const spec = op.parameters.find((p) => p.in === 'path' && p.name === param);
  const example = spec ? resolvePointer(doc, spec.schemaPointer.replace(/\/schema$/, '')).example : undefined;
  if (example !== undefined) return encodeURIComponent(String(example));
  return encodeURIComponent(String(spec ? minimal(node(spec.schemaPointer)) : 'fuzz'));
}

/**
 * The query string a real request of the operation carries: a signed link's, plus a minimal
 * valid value for each required query parameter it lacks.
 */
export function baselineQuery(tenant: Tenant, op: OperationSpec): string {
  const issued = tenant.issued.get(op.operationId)?.query ?? '';
  const have = new Set(new URLSearchParams(issued).keys());
  const missing = op.parameters
    .filter((p) => p.in === 'query' && p.required && !have.has(p.name))
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(minimal(node(p.schemaPointer))))}`);
  return [issued, ...missing].filter(Boolean).join('&');
}
