// Entry helpers: typed structured queries and batch writes that survive an uncertain outcome.
import type { components } from './generated/openapi.js';
import { wait } from './wait.js';
import type { PublicClient } from './index.js';

export type EntryQuery = components['schemas']['EntryQuery'];
export type EntryFilter = components['schemas']['EntryFilter'];
export type EntryQueryResponse = components['schemas']['EntryQueryResponse'];
export type EntryBatchRequest = components['schemas']['EntryBatchRequest'];
export type EntryBatchOperation = components['schemas']['EntryBatchOperation'];
export type EntryBatchResponse = components['schemas']['EntryBatchResponse'];
export type EntryQueryRow = components['schemas']['EntryQueryRow'];
export type EntryAggregateRow = components['schemas']['EntryAggregateRow'];
export type EntryQueryBatchResponse = components['schemas']['EntryQueryBatchResponse'];

/** The answer of a query: rows of projected entries, or of aggregates when it has `aggregate`. */
export type EntryQueryResult<Q extends EntryQuery> = Omit<EntryQueryResponse, 'data'> & {
  data: (Q extends { aggregate: object } ? EntryAggregateRow : EntryQueryRow)[];
};
type Answer<T> = { data?: T; error?: components['schemas']['Error'] | components['schemas']['ValidationError']; response: Response };

/**
 * Runs a structured query (`POST /api/v1/{workspace}/{bucket}/entries/query`). The body is checked
 * against the spec's schema (an unknown property or operator does not compile); the rows are
 * aggregate rows exactly when the query has `aggregate`.
 */
export function queryEntries<Q extends EntryQuery>(
  client: PublicClient,
  workspace: string,
  bucket: string,
  query: Q & Exact<EntryQuery, Q>,
) {
  return client.POST('/api/v1/{workspace}/{bucket}/entries/query', { params: { path: { workspace, bucket } }, body: query }) as Promise<
    Answer<EntryQueryResult<Q>>
  >;
}

/**
 * Runs named queries in one request (`POST /api/v1/{workspace}/{bucket}/entries/query/batch`):
 * 1 to 10, each an ordinary query; `results` holds each answer under its name.
 */
export function queryEntriesBatch<Qs extends Record<string, EntryQuery>>(
  client: PublicClient,
  workspace: string,
  bucket: string,
  queries: Qs & { [K in keyof Qs]: Exact<EntryQuery, Qs[K]> },
) {
  return client.POST('/api/v1/{workspace}/{bucket}/entries/query/batch', {
    params: { path: { workspace, bucket } },
    body: { queries },
  }) as Promise<Answer<Omit<EntryQueryBatchResponse, 'results'> & { results: { [K in keyof Qs]: EntryQueryResult<Qs[K]> } }>>;
}

/**
 * `Actual` with no property that `Shape` lacks, at any depth of objects and arrays: a misspelled
 * key is a compile error. (`[...]` wrappers: a union `Shape` is one shape, not distributed.)
 */
type Exact<Shape, Actual> = Actual extends readonly (infer A)[]
  ? [NonNullable<Shape>] extends [readonly (infer S)[]]
    ? readonly Exact<S, A>[]
    : Actual
  : Actual extends object
    ? [NonNullable<Shape>] extends [object]
      ? { [K in keyof Actual]: K extends KeysOf<NonNullable<Shape>> ? Exact<ValueAt<NonNullable<Shape>, K>, Actual[K]> : never }
      : Actual
    : Actual;
type KeysOf<T> = T extends unknown ? keyof T : never;
type ValueAt<T, K> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;

export interface BatchOptions {
  /** The batch's Idempotency-Key; default: a new random UUID per call (the same for its retries). */
  idempotencyKey?: string;
  /** Further attempts after an uncertain outcome (network error, `5xx`) or lock contention (`409` with `Retry-After`); default 3. */
  retries?: number;
  /** Wait before the first retry, doubled each time (a `Retry-After` is honoured when longer); default 250 ms. */
  retryDelayMs?: number;
  /** Gives up on an attempt that has no answer after this long, as an uncertain outcome (retried); default none. */
  timeoutMs?: number;
}

/**
 * Sends a batch write with an Idempotency-Key and retries it with the same key when the outcome
 * is uncertain: the server then either replays the committed result or runs the batch once.
 * Resolves with openapi-fetch's `{ data, error, response }` of the last attempt and the key used;
 * when no attempt got an answer, rejects with the last error, which carries the key as
 * `idempotencyKey` (retry with it later: the outcome is still uncertain).
 */
export async function batchEntries(
  client: PublicClient,
  workspace: string,
  bucket: string,
  body: EntryBatchRequest,
  options: BatchOptions = {},
) {
  const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
  const retries = options.retries ?? 3;
  let delay = options.retryDelayMs ?? 250;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await client.POST('/api/v1/{workspace}/{bucket}/entries/batch', {
        params: { path: { workspace, bucket }, header: { 'Idempotency-Key': idempotencyKey } },
        body,
        ...(options.timeoutMs !== undefined ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
      });
      const status = result.response.status;
      const retryAfter = Number(result.response.headers.get('Retry-After') ?? NaN);
      const contention = status === 409 && !Number.isNaN(retryAfter);
      if (attempt >= retries || !(status >= 500 || contention)) return { ...result, idempotencyKey };
      await wait(Math.max(delay, Number.isNaN(retryAfter) ? 0 : retryAfter * 1000));
    } catch (err) {
      // No answer at all: the batch may or may not have committed; the same key tells.
      if (attempt >= retries) throw err !== null && typeof err === 'object' ? Object.assign(err, { idempotencyKey }) : err;
      await wait(delay);
    }
    delay *= 2;
  }
}
