// Fixtures of the typed Entries API tests: a workspace with content types, entry paths, entry and
// file builders that insist on success, and walkers over rendered relation trees.
import type { TestServer } from './server';
import type { TestResponse } from './http';
import { ENTRY_PERMISSIONS, adminOk, objectsWorkspace, type Api, type ObjectsWorkspace } from './objects';

export const FILE_PERMISSIONS = ['create-file', 'view-file', 'delete-file'];

/** A field definition of the management API. */
export type FieldDef = Record<string, unknown> & { name: string; type: string };

export interface EntriesWorkspace extends ObjectsWorkspace {
  /** `/api/v1/<ws>/entries` */
  entries: string;
  /** `/api/v1/<ws>/entries?contentBucket=<bucket>&contentType=<type><extra>` */
  typed: (type: string, extra?: string, bucket?: string) => string;
  /** `/api/v2/<ws>/entries?contentBucket=<bucket>&contentType=<type><extra>` */
  typedV2: (type: string, extra?: string, bucket?: string) => string;
  /** `/api/v1/<ws>/entries/<id><extra>` */
  entry: (id: string, extra?: string) => string;
}

export async function createContentType(
  s: TestServer,
  ws: string,
  bucket: string,
  body: { name: string; fields: FieldDef[]; name_field?: string },
): Promise<any> {
  return adminOk(s, 'post', `/admin/v1/workspaces/${ws}/buckets/${bucket}/content-types`, body);
}

/** A workspace (de-DE and fr-FR configured besides en-US) whose `*` key's creator may do everything with entries and files. */
export async function entriesWorkspace(
  s: TestServer,
  opts: { locales?: string[]; permissions?: string[]; abilities?: string[] } = {},
): Promise<EntriesWorkspace> {
  const w = await objectsWorkspace(s, {
    locales: opts.locales ?? ['de-DE', 'fr-FR'],
    permissions: opts.permissions ?? [...ENTRY_PERMISSIONS, ...FILE_PERMISSIONS],
    abilities: opts.abilities,
  });
  const entries = `/api/v1/${w.ws}/entries`;
  return {
    ...w,
    entries,
    typed: (type, extra = '', bucket = 'general') => `${entries}?contentBucket=${bucket}&contentType=${type}${extra}`,
    typedV2: (type, extra = '', bucket = 'general') => `/api/v2/${w.ws}/entries?contentBucket=${bucket}&contentType=${type}${extra}`,
    entry: (id, extra = '') => `${entries}/${id}${extra}`,
  };
}

/** POSTs a typed entry and insists on `201`. */
export async function createEntry(
  w: EntriesWorkspace,
  type: string,
  body: Record<string, unknown>,
  extra = '',
  bucket = 'general',
): Promise<any> {
  const res = await w.api.post(w.typed(type, extra, bucket), body);
  if (res.status !== 201) throw new Error(`create entry: ${res.status} ${res.text}`);
  return res.body;
}

/** PATCHes a typed entry and insists on `200`. */
export async function updateEntry(w: EntriesWorkspace, id: string, body: Record<string, unknown>, extra = ''): Promise<any> {
  const res = await w.api.patch(w.entry(id, extra), body);
  if (res.status !== 200) throw new Error(`update entry: ${res.status} ${res.text}`);
  return res.body;
}

/** GETs a published entry and insists on `200`. */
export async function readEntry(w: EntriesWorkspace, id: string, extra = ''): Promise<any> {
  const res = await w.api.get(w.entry(id, extra));
  if (res.status !== 200) throw new Error(`read entry: ${res.status} ${res.text}`);
  return res.body;
}

/** The ids of the plain v1 list (published entries of the type). */
export async function listedIds(w: EntriesWorkspace, type: string, bucket = 'general'): Promise<string[]> {
  const res = await w.api.get(w.typed(type, '', bucket));
  if (res.status !== 200 || !Array.isArray(res.body)) throw new Error(`list: ${res.status} ${res.text}`);
  return res.body.map((e: { id: string }) => e.id);
}

/** Uploads a small text file with the JSON upload body; insists on `201`. */
export async function uploadFile(api: Api, ws: string, name = 'a.txt', content = 'hello'): Promise<any> {
  const res = await api.post(`/api/v1/${ws}/files`, {
    file: { name, type: 'text/plain', content: Buffer.from(content).toString('base64') },
  });
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.text}`);
  return res.body;
}

/** The error keys of a 422 body, sorted. */
export const errorKeys = (res: TestResponse): string[] => Object.keys(res.body?.errors ?? {}).sort();

/** Every value of a rendered relation tree below `root` (not the root itself): full entries and compact references. */
export function relatedOf(root: any): { full: any[]; compact: any[] } {
  const full: any[] = [];
  const compact: any[] = [];
  const visit = (value: any) => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    if ('_relation' in value) compact.push(value);
    else if ('fields' in value && 'lock_version' in value) {
      full.push(value);
      Object.values(value.fields).forEach(visit);
    }
  };
  Object.values(root.fields).forEach(visit);
  return { full, compact };
}
