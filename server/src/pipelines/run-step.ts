// Runs one step with its resolved `with`, on behalf of the key that started the execution as it
// is now: an entries, objects or email step is checked as its route checks a request (rights,
// validation; http/operations.ts `checkCall`), then runs the same operation of core/operations/
// that the route's handler calls, with the source `pipeline` (an email's in the unit of work
// that stores the step's output); an `http.request` goes through the allowlisted client. An operation step first counts against its
// route's rate limits (`app.operations.countStep`). Refusals become StepFailed with the route's
// answer as the message. What keeps a re-run from writing twice: the batch's idempotency key, the email's
// shared transaction, the object's id recorded in its create's transaction.
import { parseExact } from '../lib/exact-json';
import { fillHoles } from '../lib/fresh-json';
import type { AppContext } from '../context';
import { asHttpError, HttpError } from '../http/errors';
import { renderFieldErrors } from '../lib/field-errors';
import { operationContext, type ApiKeyPrincipal } from '../http/auth';
import type { OperationContext } from '../core/operations/context';
import { createObject } from '../core/operations/objects';
import { queryEntries } from '../core/operations/entry-queries';
import { batchEntries } from '../core/operations/entry-batch';
import type { SqlRunner } from '../db/database';
import type { EmailMessage } from '../core/email-queue';
import { sendEmail } from '../core/operations/emails';
import { readEnvelope } from '../core/content/object-envelope';
import { transaction } from '../core/transaction';
import { sendHttpRequest } from '../core/pipeline-engine/http-request';
import { StepFailed } from '../core/pipeline-engine/step-failed';
import { HTTP_WITH_POINTER, STEP_TYPES, operationParts, type HttpRequestWith, type PipelineStep } from '../core/pipeline-engine/step-types';

export interface StepRun {
  executionId: string;
  step: PipelineStep;
  /** `with` after placeholders. */
  resolved: Record<string, unknown>;
  principal: ApiKeyPrincipal;
  /** Aborted when the process shuts down. */
  stop: AbortSignal;
  /** What this step's write committed in an earlier, interrupted attempt. */
  committed?: unknown;
  /** Records the step's write in its transaction (objects.create). */
  recordWrite: (tx: SqlRunner, written: unknown) => Promise<void>;
}

const MAX_MESSAGE = 4000;

/** A route's refusal as a step's error: its message, and its field errors when it has some. */
function refusal(err: HttpError): StepFailed {
  const { message, errors } = err.body;
  const text = `${err.status} ${message}${errors ? ` ${JSON.stringify(errors)}` : ''}`;
  return new StepFailed(text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);
}

export interface StepResult {
  output: unknown;
  /** The step's write, committed in one transaction with its stored output (so done exactly once). */
  commit?: () => Promise<void>;
}

/** The step's output; throws StepFailed for a refusal, anything else for a failure worth another attempt. */
export async function runStep(app: AppContext, run: StepRun): Promise<StepResult> {
  const { step, resolved, principal } = run;
  const type = STEP_TYPES[step.type];
  if (type.kind === 'http') {
    const errors = app.operations.validator.errorsAt(HTTP_WITH_POINTER, resolved);
    if (Object.keys(errors).length) throw new StepFailed(`The resolved with is invalid: ${JSON.stringify(renderFieldErrors(errors))}`);
    return {
      output: await sendHttpRequest(
        app.config.pipelines,
        resolved as unknown as HttpRequestWith,
        { execution: run.executionId, step: step.id },
        run.stop,
      ),
    };
  }
  if (step.type === 'email.send') {
    return refusing(async () => {
      await app.operations.countStep(app, type.operationId, principal, resolved);
      return emailStep(app, run);
    });
  }
  if (step.type === 'objects.create' && run.committed)
    return objectWrittenBefore(app, run.committed as { object_id: number }, run.principal.workspace.id);
  if (type.bucket && typeof resolved.bucket !== 'string') throw new StepFailed('The with.bucket field must be a bucket name.');
  const parts = operationParts(type, principal.workspace.name, resolved);
  return refusing(async () => {
    await app.operations.countStep(app, type.operationId, principal, parts.body);
    const { params, body } = app.operations.checkCall(type.operationId, principal, parts);
    return { output: await runOperation(app, run, operationContext(app, principal, 'pipeline'), params.bucket, body as never) };
  });
}

/** The operation of an entries or objects step, called as its route's handler calls it. */
async function runOperation(
  app: AppContext,
  run: StepRun,
  cx: OperationContext,
  bucket: string | undefined,
  body: never,
): Promise<unknown> {
  switch (run.step.type) {
    case 'entries.query':
      // A step's output is a value: the answer's text read back, numbers exact.
      return parseExact(fillHoles(await queryEntries(cx, bucket!, body), app.clock.now())).value;
    // A re-run after a crash replays the batch committed before it instead of writing again.
    case 'entries.batch':
      return (await batchEntries(cx, bucket!, body, `pipeline:${run.executionId}:${run.step.id}`)).body;
    // The create records itself in the step's unit of work, which it joins (a re-run reads it back, above).
    case 'objects.create':
      return transaction(app, async (tx) => {
        const created = await createObject(cx, body);
        await run.recordWrite(tx, { object_id: created.body.id });
        return created.body;
      });
    default:
      throw new Error(`no operation for step type ${run.step.type}`);
  }
}

/** The envelope of the object an interrupted objects.create step created (or why it is gone). */
async function objectWrittenBefore(app: AppContext, written: { object_id: number }, workspaceId: number): Promise<StepResult> {
  const found = await readEnvelope(app.db, { workspaceId, kinds: ['json'], state: 'history', now: app.clock.sqlNow() }, written.object_id);
  if (!found) throw new StepFailed(`The object ${written.object_id} this step created before an interruption no longer exists.`);
  return { output: found.envelope };
}

/** A route's refusal (a 4xx) fails the step; anything else is tried again. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (thrown) {
    // The core's refusals as the route answers them.
    const err = asHttpError(thrown);
    if (err instanceof HttpError && err.status < 500) throw refusal(err);
    throw thrown;
  }
}

/**
 * `email.send`: the email route's rights and validation, then the message is queued in the
 * unit of work that stores the step's output (`sendEmail` joins it), so a step run again after a
 * crash never queues it twice.
 */
function emailStep(app: AppContext, { resolved, principal }: StepRun): StepResult {
  const { body } = app.operations.checkCall('sendEmail', principal, {
    params: { workspace: principal.workspace.name },
    body: resolved as unknown as EmailMessage,
  });
  // The commit runs in the unit that stores the step's output; the queueing joins it.
  return { output: { queued: true }, commit: () => sendEmail(operationContext(app, principal, 'pipeline'), body) };
}
