// Cursor pages of the public API: opaque cursors (base64url of a small JSON array of keys) and the
// URLs to follow, which keep every other query parameter of the request.
import type { Context } from 'koa';
import { invalid } from './errors';

export function encodeCursor(keys: (string | number)[]): string {
  return Buffer.from(JSON.stringify(keys)).toString('base64url');
}

/** The keys of a cursor of the expected shape (`kinds`: the type of each key), or a 422 on `cursor`. */
export function decodeCursor<T extends (string | number)[]>(cursor: string, kinds: ('string' | 'integer')[]): T {
  let keys: unknown;
  try {
    keys = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    keys = undefined;
  }
  const ok =
    Array.isArray(keys) &&
    keys.length === kinds.length &&
    keys.every((k, i) => (kinds[i] === 'integer' ? Number.isSafeInteger(k) && (k as number) >= 0 && (k as number) <= 2147483647 : typeof k === 'string' && k.length <= 64));
  if (!ok) throw invalid('cursor', 'The cursor is invalid.');
  return keys as T;
}

/** The request's URL (on BASE_URL) without its query string. */
export const pageBase = (baseUrl: string, koa: Context) => `${baseUrl}${koa.path}`;

/** The URL of another page: the request's query with `cursor` replaced. */
export function pageUrl(baseUrl: string, koa: Context, cursor: string | null): string | null {
  if (cursor === null) return null;
  const query = new URLSearchParams(koa.querystring);
  query.set('cursor', cursor);
  return `${pageBase(baseUrl, koa)}?${query.toString()}`;
}
