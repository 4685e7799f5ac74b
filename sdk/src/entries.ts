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

/** Runs a structured query (`POST /api/v1/{workspace}/{bucket}/entries/query`). */
export function queryEntries(client: PublicClient, workspace: string, bucket: string, query: EntryQuery) {
  return client.POST('/api/v1/{workspace}/{bucket}/entries/query', { params: { path: { workspace, bucket } }, body: query });
}

export interface BatchOptions {
  /** The batch's Idempotency-Key; default: a new random UUID per call (the same for its retries). */
  idempotencyKey?: string;
  /** Further attempts after an uncertain outcome (network error, `5xx`) or lock contention (`409` with `Retry-After`); default 3. */
  retries?: number;
  /** Wait before the first retry, doubled each time (a `Retry-After` is honoured when longer); default 250 ms. */
  retryDelayMs?: number;
}


/**
 * Sends a batch write with an Idempotency-Key and retries it with the same key when the outcome
 * is uncertain: the server then either replays the committed result or runs the batch once.
 * Resolves with openapi-fetch's `{ data, error, response }` of the last attempt and the key used.
 */
export async function batchEntries(client: PublicClient, workspace: string, bucket: string, body: EntryBatchRequest, options: BatchOptions = {}) {
  const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
  const retries = options.retries ?? 3;
  let delay = options.retryDelayMs ?? 250;
  for (let attempt = 0; ; attempt++) {
    try {
      const result = await client.POST('/api/v1/{workspace}/{bucket}/entries/batch', {
        params: { path: { workspace, bucket }, header: { 'Idempotency-Key': idempotencyKey } },
        body,
      });
      const status = result.response.status;
      const retryAfter = Number(result.response.headers.get('Retry-After') ?? NaN);
      const contention = status === 409 && !Number.isNaN(retryAfter);
      if (attempt >= retries || !(status >= 500 || contention)) return { ...result, idempotencyKey };
      await wait(Math.max(delay, Number.isNaN(retryAfter) ? 0 : retryAfter * 1000));
    } catch (err) {
      // No answer at all: the batch may or may not have committed; the same key tells.
      if (attempt >= retries) throw err;
      await wait(delay);
    }
    delay *= 2;
  }
}
