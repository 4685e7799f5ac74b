// Atomic batch writes of typed entries (`entries.batch`): every operation's rights, the
// idempotency key (a replay answers the first answer), one unit of work for all operations
// (core/content/batch-write.ts), and the time spent, for the answer's Server-Timing.
import { performance } from 'node:perf_hooks';
import type { SqlRunner } from '../../db/database';
import { LOCK_NOT_AVAILABLE, sqlState } from '../../lib/sql-state';
import { DomainError, invalidAt, throwIfInvalid } from '../errors';
import { bucketIdByName, cachedTypesOfBucketName } from '../content/content-types';
import { checkShapes, ConditionFailed, operationRights, requestHash, runBatch, type BatchOperation } from '../content/batch-write';
import { writeLocale } from '../content/locales';
import { findIdempotent, lockIdempotencyKey, saveIdempotent, type IdempotencyScope, type IdempotentResult } from '../idempotency';
import { transaction } from '../transaction';
import { requireRights, writeContext, type BodyOf, type OperationContext } from './context';

const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,128}$/;
/** Lock waits over the limit (55P03) and deadlocks still failing after retries (40P01). */
const CONTENTION = new Set([LOCK_NOT_AVAILABLE, '40P01']);

/** Milliseconds: the whole batch, its work, the commit, and the statements' database time. */
export interface BatchTiming {
  batch: number;
  work: number;
  finish: number;
  sql: number;
}

export interface BatchAnswer {
  body: unknown;
  /** An earlier request with this key committed it. */
  replayed: boolean;
  timing: BatchTiming;
}

/** A runner that adds the time of each statement to `spent.ms` (`batch_sql`). */
function timed(tx: SqlRunner, spent: { ms: number }): SqlRunner {
  const time = async <T>(work: () => Promise<T>) => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      spent.ms += performance.now() - started;
    }
  };
  return {
    query: (text, values, prepare) => time(() => tx.query(text, values, prepare)),
    exec: (text) => time(() => tx.exec(text)),
    execReturning: (text) => time(() => tx.execReturning(text)),
    copyIn: (copy, source) => time(() => tx.copyIn(copy, source)),
    copyOut: (copy, sink) => time(() => tx.copyOut(copy, sink)),
  };
}

function replay(found: IdempotentResult, hash: string, started: number, sqlMs: number): BatchAnswer {
  if (found.request_hash !== hash)
    throw new DomainError('conflict', undefined, { message: 'The Idempotency-Key was already used for a different request.' });
  const total = performance.now() - started;
  return { body: found.response, replayed: true, timing: { batch: total, work: total, finish: 0, sql: sqlMs } };
}

export async function batchEntries(
  cx: OperationContext,
  bucket: string,
  body: BodyOf<'batchEntries'>,
  idempotencyKey: string,
): Promise<BatchAnswer> {
  const started = performance.now();
  const { core, workspace } = cx;
  const operations = body.operations as BatchOperation[];
  // Every operation's rights before anything else (also before a replay).
  for (const op of operations) for (const r of operationRights(op)) requireRights(cx, r);
  if (!IDEMPOTENCY_KEY.test(idempotencyKey)) {
    throw invalidAt(
      'Idempotency-Key',
      idempotencyKey === ''
        ? 'The :attribute header is required.'
        : 'The :attribute header must be 1 to 128 visible ASCII characters without spaces.',
    );
  }
  const locale = writeLocale(body.locale, workspace.locales);
  const bucketId = await bucketIdByName(core.db, workspace.id, bucket);
  if (bucketId === undefined) throw new DomainError('not_found');
  const scope: IdempotencyScope = { apiKeyId: cx.keyId, bucketId, key: idempotencyKey };
  const hash = requestHash(body.locale, operations);
  const spent = { ms: 0 };
  const kept = await findIdempotent(timed(core.db, spent), scope, core.clock.now());
  if (kept) return replay(kept, hash, started, spent.ms);
  throwIfInvalid(checkShapes(operations));
  const types = await cachedTypesOfBucketName(core.db, core.lookups.contentTypes, workspace.id, bucket);
  const ctx = writeContext(cx);

  let workEnded = 0;
  let outcome: { replayed: IdempotentResult } | { data: unknown[] };
  try {
    // Its operations' writes join this unit, on the same timed runner.
    outcome = await transaction(
      core,
      async (tx) => {
        await lockIdempotencyKey(tx, scope);
        // A concurrent request with this key committed while this one waited: replay it.
        const committed = await findIdempotent(tx, scope, core.clock.now());
        if (committed) return { replayed: committed };
        const data = await runBatch(tx, { ctx, bucketId, types, locale, operations });
        await saveIdempotent(tx, scope, hash, 200, { data }, core.clock.now());
        workEnded = performance.now();
        return { data };
      },
      (raw) => timed(raw, spent),
    );
  } catch (err) {
    if (err instanceof ConditionFailed) throw new DomainError('condition_failed', undefined, { message: err.message, index: err.index });
    if (CONTENTION.has(sqlState(err) ?? ''))
      throw new DomainError('contention', undefined, { message: 'The content type is being written by another request; retry shortly.' });
    throw err;
  }
  if ('replayed' in outcome) return replay(outcome.replayed, hash, started, spent.ms);
  const ended = performance.now();
  // The commit is database time too.
  const finish = ended - workEnded;
  return {
    body: { data: outcome.data },
    replayed: false,
    timing: { batch: ended - started, work: workEnded - started, finish, sql: spent.ms + finish },
  };
}
