// Fixtures of the Entries structured query, batch query and batch write tests: route paths,
// request helpers that insist on success, an exact 422 matcher, bulk creation and the
// Server-Timing parser.
import { randomUUID } from 'node:crypto';
import type { TestResponse } from './http';
import type { Api } from './objects';
import { createEntry, errorKeys, type EntriesWorkspace } from './entries';

/** `/api/v1/<ws>/<bucket>/entries/query` */
export const queryPath = (ws: string, bucket = 'general') => `/api/v1/${ws}/${bucket}/entries/query`;
/** `/api/v1/<ws>/<bucket>/entries/query/batch` */
export const queryBatchPath = (ws: string, bucket = 'general') => `/api/v1/${ws}/${bucket}/entries/query/batch`;
/** `/api/v1/<ws>/<bucket>/entries/batch` */
export const batchPath = (ws: string, bucket = 'general') => `/api/v1/${ws}/${bucket}/entries/batch`;

export const NOT_FOUND = { message: 'Not Found' };
export const INVALID_LOCALE = { message: 'Invalid locale.' };

/**
 * A response with `status` (422 by default) whose `errors` has exactly the given keys (a RegExp
 * matches one key), each with a nonempty list of message strings, and a string `message`.
 */
export function expectErrors(res: TestResponse, keys: (string | RegExp)[], status = 422): void {
  expect([res.status, typeof res.body?.message, res.body?.errors === undefined ? 'no errors' : 'errors']).toEqual([
    status,
    'string',
    'errors',
  ]);
  const got = errorKeys(res);
  const unmatched = [...got];
  for (const want of keys) {
    const i = unmatched.findIndex((k) => (typeof want === 'string' ? k === want : want.test(k)));
    if (i < 0) throw new Error(`expected an error key ${String(want)}, got ${JSON.stringify(got)} (${res.text})`);
    unmatched.splice(i, 1);
  }
  if (unmatched.length)
    throw new Error(`unexpected error keys ${JSON.stringify(unmatched)} besides ${keys.map(String).join(', ')} (${res.text})`);
  for (const k of got) {
    expect(Array.isArray(res.body.errors[k])).toBe(true);
    expect(res.body.errors[k].length).toBeGreaterThan(0);
    for (const m of res.body.errors[k]) expect(typeof m).toBe('string');
  }
}

/** POSTs a structured query and insists on `200`. */
export async function queryOk(
  api: Api,
  ws: string,
  body: unknown,
  bucket = 'general',
): Promise<{ data: any[]; pagination: { offset: number; limit: number; hasMore: boolean } }> {
  const res = await api.post(queryPath(ws, bucket), body);
  if (res.status !== 200) throw new Error(`query ${JSON.stringify(body).slice(0, 400)}: ${res.status} ${res.text.slice(0, 2000)}`);
  return res.body;
}

/** Runs `fn` over `items` with at most `width` at a time; results in input order. */
export async function inParallel<T, R>(items: T[], width: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/** Creates typed entries (each body as for `createEntry`), several at a time; results in order. */
export function createEntries(
  w: EntriesWorkspace,
  type: string,
  bodies: Record<string, unknown>[],
  bucket = 'general',
  width = 16,
): Promise<any[]> {
  return inParallel(bodies, width, (body) => createEntry(w, type, body, '', bucket));
}

/** A fresh idempotency key. */
export const idemKey = (): string => `k-${randomUUID()}`;

/**
 * POSTs a batch write. `key` undefined: a fresh Idempotency-Key; null: no header at all.
 */
export function postBatch(api: Api, ws: string, body: unknown, opts: { key?: string | null; bucket?: string } = {}): Promise<TestResponse> {
  const key = opts.key === undefined ? idemKey() : opts.key;
  const headers: Record<string, string> = key === null ? {} : { 'Idempotency-Key': key };
  return api.post(batchPath(ws, opts.bucket), body, { headers });
}

/** A batch write that must answer `200`; returns its `data`. */
export async function batchOk(api: Api, ws: string, body: unknown, opts: { key?: string | null; bucket?: string } = {}): Promise<any[]> {
  const res = await postBatch(api, ws, body, opts);
  if (res.status !== 200) throw new Error(`batch: ${res.status} ${res.text.slice(0, 2000)}`);
  return res.body.data;
}

/** The metrics of a `Server-Timing` header: name to `dur` (NaN when a metric has no dur). */
export function serverTiming(res: TestResponse): Record<string, number> {
  const header = res.headers.get('server-timing');
  if (!header) return {};
  const out: Record<string, number> = {};
  for (const part of header.split(',')) {
    const [name, ...params] = part
      .trim()
      .split(';')
      .map((x) => x.trim());
    const dur = params.find((p) => p.startsWith('dur='));
    out[name] = dur ? Number(dur.slice(4)) : NaN;
  }
  return out;
}
