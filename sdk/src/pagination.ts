// Cursor pages: `for await` over every item (or every page) of a cursor-paged list, following
// `next_cursor` until it is null. Typed by the generated paths: only GET routes whose answer is a
// cursor page are accepted, and items have the route's item type.
import type { PublicClient, PublicPaths } from './index.js';

type JsonOk<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type Page = { data: unknown[]; next_cursor: string | null };

/** GET paths of the public API that answer with a cursor page (`{data, next_cursor, ...}`). */
export type CursorPath = {
  [P in keyof PublicPaths]: PublicPaths[P] extends { get: infer Op } ? (JsonOk<Op> extends Page ? P : never) : never;
}[keyof PublicPaths];

type OperationOf<P extends CursorPath> = PublicPaths[P] extends { get: infer Op } ? Op : never;
/** One page of `P`. */
export type PageOf<P extends CursorPath> = JsonOk<OperationOf<P>>;
/** One item of `P`'s pages. */
export type ItemOf<P extends CursorPath> = PageOf<P> extends { data: (infer T)[] } ? T : never;
/** The request parameters of `P` (path and query), without `cursor`. */
export type PageParams<P extends CursorPath> = OperationOf<P> extends { parameters: infer Params }
  ? { path?: Params extends { path?: infer X } ? X : never; query?: Params extends { query?: infer Q } ? Omit<NonNullable<Q>, 'cursor'> : never }
  : never;

/** An error answer while paging: the status and the API's error body. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`page request failed with ${status}: ${typeof body === 'object' && body && 'message' in body ? String((body as { message: unknown }).message) : ''}`);
  }
}

/** Every page of a cursor-paged list, starting at the first (or at `cursor`). */
export async function* pages<P extends CursorPath>(client: PublicClient, path: P, params: PageParams<P>, cursor?: string): AsyncGenerator<PageOf<P>> {
  let next: string | null | undefined = cursor;
  do {
    const query = { ...(params.query ?? {}), ...(next ? { cursor: next } : {}) };
    // The path is one of the cursor paths; openapi-fetch's overloads cannot follow a generic path.
    const { data, error, response } = await (client.GET as unknown as (p: string, init: unknown) => Promise<{ data?: Page; error?: unknown; response: Response }>)(path, {
      params: { path: params.path, query },
    });
    if (!data) throw new PageError(response.status, error);
    yield data as PageOf<P>;
    next = data.next_cursor;
  } while (next);
}

/** Every item of a cursor-paged list, page after page (`for await (const o of paginate(...))`). */
export async function* paginate<P extends CursorPath>(client: PublicClient, path: P, params: PageParams<P>): AsyncGenerator<ItemOf<P>> {
  for await (const page of pages(client, path, params)) yield* (page as { data: ItemOf<P>[] }).data;
}
