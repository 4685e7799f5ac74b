// Idempotency records of batch writes: the response of a successful batch, kept 24 hours under
// (API key, bucket, Idempotency-Key) with the hash of the canonical request, written in the
// batch's own transaction (a failed batch reserves nothing). A transaction-level advisory lock on
// the key makes a second request with the same key wait for the first, then replay its result.
import type { CoreContext } from './context';
import type { SqlRunner } from '../db/database';
import { rows, sql } from './sql';

export const IDEMPOTENCY_HOURS = 24;

export interface IdempotencyScope {
  apiKeyId: number;
  bucketId: number;
  key: string;
}

export interface IdempotentResult {
  request_hash: string;
  status: number;
  response: unknown;
}

/** Holds the key until the transaction ends (concurrent requests with it queue here). */
export async function lockIdempotencyKey(tx: SqlRunner, s: IdempotencyScope): Promise<void> {
  await rows(tx, sql`SELECT pg_advisory_xact_lock(hashtextextended(${`idempotency:${s.apiKeyId}:${s.bucketId}:${s.key}`}::text, 0))`);
}

/** The kept result under the key, if any and not expired. */
export async function findIdempotent(db: SqlRunner, s: IdempotencyScope, now: Date): Promise<IdempotentResult | undefined> {
  const [found] = await rows<IdempotentResult>(
    db,
    sql`SELECT request_hash, status, response FROM idempotency_records
         WHERE api_key_id = ${s.apiKeyId}::int AND bucket_id = ${s.bucketId}::int AND key = ${s.key}::text
           AND created_at > ${now.toISOString()}::timestamptz - make_interval(hours => ${IDEMPOTENCY_HOURS}::int)`,
  );
  return found;
}

export async function saveIdempotent(
  tx: SqlRunner,
  s: IdempotencyScope,
  hash: string,
  status: number,
  response: unknown,
  now: Date,
): Promise<void> {
  // An expired record under the key is replaced.
  await rows(
    tx,
    sql`INSERT INTO idempotency_records (api_key_id, bucket_id, key, request_hash, status, response, created_at)
        VALUES (${s.apiKeyId}::int, ${s.bucketId}::int, ${s.key}::text, ${hash}, ${status}::int, ${JSON.stringify(response)}::json, ${now.toISOString()}::timestamptz)
        ON CONFLICT (api_key_id, bucket_id, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
          response = EXCLUDED.response, created_at = EXCLUDED.created_at`,
  );
}

/** The `idempotency:prune` task: records older than 24 hours go. */
export async function pruneIdempotency(core: CoreContext): Promise<number> {
  const gone = await rows(
    core.db,
    sql`DELETE FROM idempotency_records WHERE created_at <= ${core.clock.now().toISOString()}::timestamptz - make_interval(hours => ${IDEMPOTENCY_HOURS}::int) RETURNING 1`,
  );
  return gone.length;
}
