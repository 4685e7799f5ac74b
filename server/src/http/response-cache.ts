// Answers of delivery reads kept per process (`x-cached-response` operations: entry lists, the
// entry read, the structured query), as JSON text. Correct across processes the way the lookup
// caches are (core/lookup-cache.ts): every change to what they read (entries and their documents,
// files, workspaces, buckets, content types, field definitions) notifies `content_changed` (see the
// content_changed_notify migration), every process drops all its answers on it, and every
// operation that may write answers only once every process has done so (`Listener.confirm`), so
// that its client's next read sees the write wherever it lands. While this process is not
// listening, nothing is kept. Values that depend on the time of the answer (a file's temporary
// URLs) are holes filled for each answer (lib/fresh-json.ts). The file rows that delivery reads
// render follow the same notifications (AppContext.fileRows, a follower of this cache). Off with
// the test clock (its time is the database's) and with RESPONSE_CACHE_MB=0.
import type { Context } from 'koa';
import type { Database } from '../db/database';
import { LookupCache } from '../core/lookup-cache';
import { fillHoles, withHoles, type HoledJson } from '../lib/fresh-json';

export const CONTENT_CHANGED_CHANNEL = 'content_changed';

export interface CachedAnswer {
  status: number;
  headers?: Record<string, string>;
  json: HoledJson;
  bytes: number;
}

export type ResponseCache = LookupCache<CachedAnswer>;

/** A cache of `maxBytes` of answers, following `content_changed` on `db`. */
export function responseCache(db: Database, maxBytes: number): ResponseCache {
  // Entries are capped by their bytes; the time-to-live is a backstop only.
  const cache = new LookupCache<CachedAnswer>(100_000, 10 * 60_000, { weigh: (a) => a.bytes, max: maxBytes });
  cache.listen(db, CONTENT_CHANGED_CHANNEL);
  return cache;
}

/**
 * What an answer depends on besides the data: the operation, the URL as sent (workspace, path
 * parameters, query) and the body as sent. Who asks does not matter to these operations once the
 * key is authorized (the router checks that first, on every request).
 */
export const answerKey = (operationId: string, ctx: Context) => `${operationId}\n${ctx.url}\n${(ctx.state.rawBody as string | undefined) ?? ''}`;

/** An answer made to be kept: its JSON text with holes (`serialize` is the router's serializer). */
export function keepable(status: number, headers: Record<string, string> | undefined, serialize: () => string): CachedAnswer {
  const json = withHoles(serialize);
  return { status, headers, json, bytes: json.parts.reduce((n, p) => n + p.length, 0) };
}

/** The answer's text at `now`. */
export const answerText = (answer: CachedAnswer, now: Date) => fillHoles(answer.json, now);
