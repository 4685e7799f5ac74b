// The URLs of cursor pages (core/cursors.ts): each keeps every other query parameter of the request.
import type { Context } from 'koa';

/** The request's URL (on BASE_URL) without its query string. */
export const pageBase = (baseUrl: string, koa: Context) => `${baseUrl}${koa.path}`;

/** The URL of another page: the request's query with `cursor` replaced. */
export function pageUrl(baseUrl: string, koa: Context, cursor: string | null): string | null {
  if (cursor === null) return null;
  const query = new URLSearchParams(koa.querystring);
  query.set('cursor', cursor);
  return `${pageBase(baseUrl, koa)}?${query.toString()}`;
}

/** The URLs of the pages around a page with `next` and `prev` cursors. */
export const pageLinks = (baseUrl: string, koa: Context, p: { next: string | null; prev: string | null }) => ({
  next_page_url: pageUrl(baseUrl, koa, p.next),
  prev_page_url: pageUrl(baseUrl, koa, p.prev),
});
