// Batch writes of typed entries (`POST /{bucket}/entries/batch`): authorization per operation,
// the idempotency key, timing, and the mapping of the core's refusals to the documented answers.
// The batch itself is core/entries/batch-write.ts.
import { performance } from 'node:perf_hooks';
import type { SqlRunner } from '../db/database';
import { authorize } from '../http/auth';
import { handlers } from '../http/handlers';
import { fieldErrors, HttpError, notFound, validationFailed } from '../http/errors';
import { mapCoreErrors, writeLocale } from '../http/entry-http';
import { apiKeyActor } from '../events/audit';
import { sqlState } from '../lib/sql-state';
import { bucketIdByName, cachedTypesOfBucketName } from '../core/entries/content-types';
import { checkShapes, ConditionFailed, operationRights, requestHash, runBatch, type BatchOperation } from '../core/entries/batch-write';
import { findIdempotent, lockIdempotencyKey, saveIdempotent, type IdempotencyScope, type IdempotentResult } from '../core/idempotency';
import { transaction } from '../core/transaction';

const IDEMPOTENCY_KEY = /^[\x21-\x7E]{1,128}$/;
/** Lock waits over the limit (55P03) and deadlocks still failing after retries (40P01). */
const CONTENTION = new Set(['55P03', '40P01']);

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
  };
}

const serverTiming = (t: { batch: number; work: number; finish: number; sql: number }) =>
  `batch;dur=${t.batch.toFixed(1)}, batch_work;dur=${t.work.toFixed(1)}, batch_finish;dur=${t.finish.toFixed(1)}, batch_sql;dur=${t.sql.toFixed(1)}`;

function replay(found: IdempotentResult, hash: string, started: number, sqlMs: number) {
  if (found.request_hash !== hash) throw new HttpError(409, { message: 'The Idempotency-Key was already used for a different request.' });
  const total = performance.now() - started;
  return {
    status: 200 as const,
    body: found.response as never,
    headers: { 'Server-Timing': serverTiming({ batch: total, work: total, finish: 0, sql: sqlMs }), 'Idempotent-Replayed': 'true' },
  };
}

export const entryBatchHandlers = mapCoreErrors(
  handlers({
    async batchEntries({ params, body, principal, koa }, app) {
      const started = performance.now();
      const p = principal!;
      const operations = body.operations as BatchOperation[];
      // Every operation's rights before anything else (also before a replay).
      for (const op of operations) for (const r of operationRights(op)) authorize(p, r.abilities, r.permissions);
      const key = koa.get('Idempotency-Key');
      if (!IDEMPOTENCY_KEY.test(key)) {
        const message = key === '' ? 'The Idempotency-Key header is required.' : 'The Idempotency-Key header must be 1 to 128 visible ASCII characters without spaces.';
        throw validationFailed(Object.assign(fieldErrors(), { 'Idempotency-Key': [message] }));
      }
      const locale = writeLocale(body.locale, p.workspace.locales);
      const bucketId = await bucketIdByName(app.db, p.workspace.id, params.bucket);
      if (bucketId === undefined) throw notFound();
      const scope: IdempotencyScope = { apiKeyId: p.keyId, bucketId, key };
      const hash = requestHash(body.locale, operations);
      const spent = { ms: 0 };
      const kept = await findIdempotent(timed(app.db, spent), scope, app.clock.now());
      if (kept) return replay(kept, hash, started, spent.ms);
      const shapes = checkShapes(operations);
      if (Object.keys(shapes).length) throw validationFailed(shapes);
      const types = await cachedTypesOfBucketName(app.db, app.lookups.contentTypes, p.workspace.id, params.bucket);
      const ctx = { app, workspace: { id: p.workspace.id, locales: p.workspace.locales }, author: { actor: apiKeyActor(p.keyId), source: p.pipelineStep ? 'pipeline' : 'api' } } as const;

      let workEnded = 0;
      let outcome: { replayed: IdempotentResult } | { data: unknown[] };
      try {
        // Its operations' writes join this unit, on the same timed runner.
        outcome = await transaction(
          app,
          async (tx) => {
            await lockIdempotencyKey(tx, scope);
            // A concurrent request with this key committed while this one waited: replay it.
            const committed = await findIdempotent(tx, scope, app.clock.now());
            if (committed) return { replayed: committed };
            const data = await runBatch(tx, { ctx, bucketId, types, locale, operations });
            await saveIdempotent(tx, scope, hash, 200, { data }, app.clock.now());
            workEnded = performance.now();
            return { data };
          },
          (raw) => timed(raw, spent),
        );
      } catch (err) {
        if (err instanceof ConditionFailed) throw new HttpError(409, { message: err.message, code: 'condition_failed', index: err.index, committed: false });
        if (CONTENTION.has(sqlState(err) ?? '')) throw new HttpError(409, { message: 'The content type is being written by another request; retry shortly.' }, { 'Retry-After': '1' });
        throw err;
      }
      if ('replayed' in outcome) return replay(outcome.replayed, hash, started, spent.ms);
      const ended = performance.now();
      // The commit is database time too.
      const finish = ended - workEnded;
      return {
        status: 200,
        body: { data: outcome.data } as never,
        headers: { 'Server-Timing': serverTiming({ batch: ended - started, work: workEnded - started, finish, sql: spent.ms + finish }) },
      };
    },
  }),
  'entry',
);
