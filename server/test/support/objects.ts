// Fixtures of the Objects API tests: a workspace whose creator may do everything with entries,
// a client on its key, object builders (JSON or raw JSON text), and the shapes the document fixes.
import type { TestServer } from './server';
import { client, type TestResponse } from './http';
import { createKey, createUser, createWorkspace, TIMESTAMP } from './fixtures';

export type Api = ReturnType<typeof client>;

export const ENTRY_PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry'];

/** A ULID: 26 characters of Crockford base32. */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export const NOT_PERMITTED = { message: 'This API key is not permitted to perform this action' };

export const objectsPath = (ws: string) => `/api/v1/${ws}/objects`;

export interface ObjectsWorkspace {
  ws: string;
  locales: string[];
  userId: number;
  keyId: number;
  key: string;
  api: Api;
  /** The path of an object route: `at()` is `/api/v1/<ws>/objects`, `at(17, 'revisions')` ... */
  at: (...rest: (string | number)[]) => string;
}

/** A workspace (de-DE configured besides en-US by default), a creator with every entry permission and a `*` key. */
export async function objectsWorkspace(
  s: TestServer,
  opts: { locales?: string[]; permissions?: string[]; abilities?: string[]; objects_enabled?: boolean } = {},
): Promise<ObjectsWorkspace> {
  const workspace = await createWorkspace(s.admin, {
    locales: opts.locales ?? ['de-DE'],
    ...(opts.objects_enabled === undefined ? {} : { objects_enabled: opts.objects_enabled }),
  });
  const user = await createUser(s.admin, workspace.name, opts.permissions ?? ENTRY_PERMISSIONS);
  const key = await createKey(s.admin, workspace.name, user.id, opts.abilities ?? ['*']);
  const ws = workspace.name;
  return {
    ws,
    locales: workspace.locales,
    userId: user.id,
    keyId: key.id,
    key: key.key,
    api: client(s.url, key.key),
    at: (...rest) => [objectsPath(ws), ...rest.map(String)].join('/'),
  };
}

/** Another key on the same workspace (a new creator with `permissions`). */
export async function keyFor(s: TestServer, ws: string, abilities: string[], permissions: string[] = ENTRY_PERMISSIONS): Promise<Api> {
  const user = await createUser(s.admin, ws, permissions);
  const key = await createKey(s.admin, ws, user.id, abilities);
  return client(s.url, key.key);
}

/** POSTs a new object and insists on `201`. */
export async function createObject(w: ObjectsWorkspace, body: Record<string, unknown>): Promise<any> {
  const res = await w.api.post(w.at(), body);
  if (res.status !== 201) throw new Error(`create object: ${res.status} ${res.text}`);
  return res.body;
}

/** Sends a raw JSON text (numbers a double cannot hold, `__proto__`, `1.0`). */
export function rawJson(api: Api, method: 'POST' | 'PATCH' | 'DELETE', path: string, text: string): Promise<TestResponse> {
  const opts = { raw: text, headers: { 'Content-Type': 'application/json' } };
  if (method === 'POST') return api.post(path, undefined, opts);
  if (method === 'PATCH') return api.patch(path, undefined, opts);
  return api.delete(path, opts);
}

/** Creates an object from raw JSON text of its `data`; insists on `201`. */
export async function createRaw(w: ObjectsWorkspace, ref: string, dataText: string, extra: Record<string, unknown> = {}): Promise<any> {
  const body = JSON.stringify({ ref, ...extra }).slice(0, -1) + `,"data":${dataText}}`;
  const res = await rawJson(w.api, 'POST', w.at(), body);
  if (res.status !== 201) throw new Error(`create raw object: ${res.status} ${res.text}`);
  return res.body;
}

/** PATCH with the object's current lock_version read from `current`. */
export async function updateObject(
  w: ObjectsWorkspace,
  current: { id: number; lock_version: number; ref: string },
  body: Record<string, unknown>,
): Promise<any> {
  const res = await w.api.patch(w.at(current.id), { lock_version: current.lock_version, ref: current.ref, ...body });
  if (res.status !== 200) throw new Error(`update object: ${res.status} ${res.text}`);
  return res.body;
}

export async function deleteObject(w: ObjectsWorkspace, id: number, lockVersion: number): Promise<void> {
  const res = await w.api.delete(w.at(id), { body: { lock_version: lockVersion } });
  if (res.status !== 204) throw new Error(`delete object: ${res.status} ${res.text}`);
}

/** Every object the query route sees (drafts included), by id, with full documents. */
export async function queryAll(w: ObjectsWorkspace, body: Record<string, unknown> = {}): Promise<any[]> {
  const res = await w.api.post(w.at('query'), { limit: 100, ...body });
  if (res.status !== 200) throw new Error(`query: ${res.status} ${res.text}`);
  return res.body.data;
}

/** The object as the query route (drafts included) sees it, or undefined. */
export async function readAny(w: ObjectsWorkspace, id: number, locale?: string): Promise<any> {
  const [found] = await queryAll(w, { filter: { '@id': { eq: id } }, ...(locale ? { locale } : {}) });
  return found;
}

/** The envelope of a fresh object without contract, as the document fixes it. */
export function envelope(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: expect.any(Number),
    entry_id: expect.stringMatching(ULID),
    bucket_id: expect.any(Number),
    bucket: 'general',
    ref: expect.any(String),
    kind: 'entry',
    contract: null,
    locale: 'en-US',
    locales: ['en-US'],
    status: 'draft',
    lock_version: 0,
    created_at: expect.stringMatching(TIMESTAMP),
    updated_at: expect.stringMatching(TIMESTAMP),
    validation: { mode: 'none', issues: [], checked_at: null, pending: false, failed: false },
    ...fields,
  };
}

/** A management request that must succeed. */
export async function adminOk(s: TestServer, method: 'post' | 'patch' | 'get', path: string, body?: unknown): Promise<any> {
  const res = method === 'get' ? await s.admin.get(path) : await s.admin[method](path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

export const createBucket = (s: TestServer, ws: string, name: string): Promise<{ id: number; name: string }> =>
  adminOk(s, 'post', `/admin/v1/workspaces/${ws}/buckets`, { name });

export const createSubmission = (
  s: TestServer,
  ws: string,
  ref: string,
  data: object = { name: 'Ada' },
): Promise<{ id: number; entry_id: string; ref: string }> =>
  adminOk(s, 'post', `/admin/v1/workspaces/${ws}/buckets/general/submissions`, { ref, data });

export const openReview = (s: TestServer, ws: string, entryId: string): Promise<{ id: number; status: string }> =>
  adminOk(s, 'post', `/admin/v1/workspaces/${ws}/reviews`, { entry_id: entryId });

export const resolveReview = (s: TestServer, ws: string, id: number): Promise<{ id: number; status: string }> =>
  adminOk(s, 'post', `/admin/v1/workspaces/${ws}/reviews/${id}/resolve`);

/** A path on the test server from an absolute URL of one of its responses. */
export function relative(s: TestServer, url: string): string {
  if (!url.startsWith(s.url)) throw new Error(`${url} is not on ${s.url}`);
  return url.slice(s.url.length);
}

/** Documents whose copies of their entry's visibility columns differ from the entry (kept by triggers: 0). */
export async function visibilityDrift(s: TestServer): Promise<number> {
  const { rows } = await s.server.app.db.query<{
    n: number;
  }>(`SELECT count(*)::int AS n FROM entry_contents c JOIN entries e ON e.id = c.entry_pk
    WHERE (c.workspace_id, c.bucket_id, c.content_type_id, c.kind, c.live, c.entry_id)
          IS DISTINCT FROM (e.workspace_id, e.bucket_id, e.content_type_id, e.kind, e.deleted_at IS NULL, e.entry_id)`);
  return rows[0].n;
}
