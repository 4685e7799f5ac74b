// Batch writes of typed entries (`POST /{bucket}/entries/batch`) over HTTP: the operation is
// core/operations/entry-batch.ts; its timing becomes the Server-Timing header.
import { handlers } from '../http/handlers';
import { operationContext } from '../http/auth';
import { batchEntries, type BatchTiming } from '../core/operations/entry-batch';

const serverTiming = (t: BatchTiming) =>
  `batch;dur=${t.batch.toFixed(1)}, batch_work;dur=${t.work.toFixed(1)}, batch_finish;dur=${t.finish.toFixed(1)}, batch_sql;dur=${t.sql.toFixed(1)}`;

export const entryBatchHandlers = handlers({
  async batchEntries({ params, body, principal, koa }, app) {
    const answer = await batchEntries(operationContext(app, principal), params.bucket, body, koa.get('Idempotency-Key'));
    const headers: Record<string, string> = { 'Server-Timing': serverTiming(answer.timing) };
    if (answer.replayed) headers['Idempotent-Replayed'] = 'true';
    return { status: 200, body: answer.body as never, headers };
  },
});
