// Cursor pages: `for await` over every item (or every page) of a cursor-paged list, following
// `next_cursor` (or the cursor of `next_page_url`) until it is null. Typed by the generated paths:
// only GET routes that can answer with a cursor page are accepted, and items have the route's item
// type. (The v1 entries list answers a plain array of at most 1,000 entries unless paged, so the
// helpers always ask it for pages.)
import type { PublicClient, PublicPaths } from './index.js';

type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type Page = { data: unknown[] } & ({ next_cursor: string | null } | { next_page_url: string | null });

/** GET paths of the public API that answer with a cursor page (`{data, next_cursor, ...}`). */
export type CursorPath = {
  [P in keyof PublicPaths]: PublicPaths[P] extends { get: infer Op } ? ([Extract<JsonOk<Op>, Page>] extends [never] ? never : P) : never;
}[keyof PublicPaths];

type OperationOf<P extends CursorPath> = PublicPaths[P] extends { get: infer Op } ? Op : never;
/** One page of `P`. */
export type PageOf<P extends CursorPath> = Extract<JsonOk<OperationOf<P>>, Page>;
/** One item of `P`'s pages. */
export type ItemOf<P extends CursorPath> = PageOf<P> extends { data: (infer T)[] } ? T : never;
/** The request parameters of `P` (path and query), without `cursor`. */
export type PageParams<P extends CursorPath> =
  OperationOf<P> extends { parameters: infer Params }
    ? {
        path?: Params extends { path?: infer X } ? X : never;
        query?: Params extends { query?: infer Q } ? Omit<NonNullable<Q>, 'cursor'> : never;
      }
    : never;

/** An error answer while paging: the status and the API's error body. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`page request failed with ${status}: ${typeof body === 'object' && body && 'message' in body ? String(body.message) : ''}`);
  }
}

/** Every page of a cursor-paged list, starting at the first (or at `cursor`). */
export async function* pages<P extends CursorPath>(
  client: PublicClient,
  path: P,
  params: PageParams<P>,
  cursor?: string,
): AsyncGenerator<PageOf<P>> {
  let next: string | null | undefined = cursor;
  do {
    const asked = (params.query ?? {}) as Record<string, unknown>;
    const plain = path === '/api/v1/{workspace}/entries' && !['per_page', 'cursor', 'view'].some((k) => asked[k] !== undefined);
    const query = { ...asked, ...(plain ? { per_page: 100 } : {}), ...(next ? { cursor: next } : {}) };
    // The path is one of the cursor paths; openapi-fetch's overloads cannot follow a generic path.
    const { data, error, response } = await (
      client.GET as unknown as (p: string, init: unknown) => Promise<{ data?: Page | unknown[]; error?: unknown; response: Response }>
    )(path, {
      params: { path: params.path, query },
    });
    if (!data) throw new PageError(response.status, error);
    if (Array.isArray(data)) {
      yield { data, next_page_url: null } as unknown as PageOf<P>;
      return;
    }
    yield data as PageOf<P>;
    next = 'next_cursor' in data ? data.next_cursor : data.next_page_url ? new URL(data.next_page_url).searchParams.get('cursor') : null;
  } while (next);
}

/** Every item of a cursor-paged list, page after page (`for await (const o of paginate(...))`). */
export async function* paginate<P extends CursorPath>(client: PublicClient, path: P, params: PageParams<P>): AsyncGenerator<ItemOf<P>> {
  for await (const page of pages(client, path, params)) yield* (page as { data: ItemOf<P>[] }).data;
}
