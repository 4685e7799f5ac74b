// Answers of delivery reads kept per process (`x-cached-response` operations: entry lists, the
// entry read, the structured query), as JSON text, per workspace. Correct across processes the
// way the lookup caches are (core/lookup-cache.ts): every change to what they read (entries and
// their documents, files, workspaces, buckets, content types, field definitions) notifies
// `content_changed` with its workspace's id (see the content_changed_per_workspace migration),
// every process drops that workspace's answers on it, and every operation that may change content
// answers only once every process has done so (`Listener.confirm`), so that its client's next
// read sees the write wherever it lands. Every process follows the channel, its own answers kept
// or not (RESPONSE_CACHE_MB=0, the test clock): a write through it still waits for the others'
// drops. While this process is not listening, nothing is kept. Values that depend on the time of
// the answer (a file's temporary URLs) are holes filled for each answer (lib/fresh-json.ts). It
// holds at most RESPONSE_CACHE_MB, every byte a kept answer holds counted (its key, its text, a
// fixed overhead), so that many small answers to large bodies cannot grow it.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Database } from '../db/database';
import { CONTENT_CHANGED_CHANNEL, LookupCache } from '../core/lookup-cache';
import type { HoledJson } from '../lib/fresh-json';

export interface CachedAnswer {
  status: number;
  headers?: Record<string, string>;
  json: HoledJson;
  bytes: number;
}

export type ResponseCache = LookupCache<CachedAnswer>;

/** What a kept answer holds besides its text: the map's entry, its objects and arrays (an estimate on the safe side). */
const ENTRY_OVERHEAD = 512;
/** A hole's `Fresh` value and its closure. */
const HOLE_OVERHEAD = 128;

/** A cache of `maxBytes` of answers (none: it only follows), following `content_changed` on `db`. */
export function responseCache(db: Database, maxBytes: number): ResponseCache {
  // Entries are capped by every byte they hold, keys included; the time-to-live is a backstop only.
  const weigh = (a: CachedAnswer, key: string) => ENTRY_OVERHEAD + Buffer.byteLength(key) + a.bytes;
  const cache = new LookupCache<CachedAnswer>(100_000, 10 * 60_000, { weigh, max: maxBytes });
  cache.listen(db, CONTENT_CHANGED_CHANNEL);
  return cache;
}

/** JSON text without the whitespace between tokens (strings kept as they are). */
const compactJson = (text: string) => text.replace(/"(?:[^"\\]|\\.)*"|[ \t\n\r]+/g, (m) => (m[0] === '"' ? m : ''));

/**
 * What an answer depends on besides the data: the operation, the URL as sent (workspace, path
 * parameters, query) and the body. Who asks does not matter to these operations once the key is
 * authorized (the router checks that first, on every request). A digest, so that a key weighs the
 * same whatever the body's size; of the body without its insignificant whitespace, so that padding
 * does not make another answer. Not of a re-serialized parse: that would merge bodies whose
 * numbers differ beyond a double (exact numbers, lib/exact-json.ts) or that repeat a name.
 */
export function answerKey(operationId: string, ctx: Context): string {
  const body = ctx.state.rawBody as string | undefined;
  const digest = createHash('sha256')
    .update(`${ctx.url}\n`)
    .update(body === undefined ? '' : compactJson(body))
    .digest('base64url');
  return `${operationId}:${digest}`;
}

/** An answer made to be kept: its JSON text with holes, weighed by what it holds. */
export function keepable(status: number, headers: Record<string, string> | undefined, json: HoledJson): CachedAnswer {
  const text = json.parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
  const extra = Object.entries(headers ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return { status, headers, json, bytes: text + extra + json.holes.length * HOLE_OVERHEAD };
}
