// Runs one step with its resolved `with`: an operation step through the very operation of its
// route (rights, validation, handler; http/operations.ts), on behalf of the key that started the
// execution as it is now; an `http.request` step through the allowlisted client. Refusals become
// StepFailed with the route's answer as the message.
import type { AppContext } from '../../context';
import { HttpError } from '../../http/errors';
import type { ApiKeyPrincipal } from '../../http/auth';
import { sendHttpRequest } from './http-request';
import { StepFailed } from './step-failed';
import { HTTP_WITH_POINTER, STEP_TYPES, operationParts, type HttpRequestWith, type PipelineStep } from './step-types';

export interface StepRun {
  executionId: string;
  step: PipelineStep;
  /** `with` after placeholders. */
  resolved: Record<string, unknown>;
  principal: ApiKeyPrincipal;
}

const MAX_MESSAGE = 4000;

/** A route's refusal as a step's error: its message, and its field errors when it has some. */
function refusal(err: HttpError): StepFailed {
  const { message, errors } = err.body;
  const text = `${err.status} ${message}${errors ? ` ${JSON.stringify(errors)}` : ''}`;
  return new StepFailed(text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text);
}

/** The step's output; throws StepFailed for a refusal, anything else for a failure worth another attempt. */
export async function runStep(app: AppContext, run: StepRun): Promise<unknown> {
  const { step, resolved, principal } = run;
  const type = STEP_TYPES[step.type];
  if (type.kind === 'http') {
    const errors = app.operations.validator.errorsAt(HTTP_WITH_POINTER, resolved);
    if (Object.keys(errors).length) throw new StepFailed(`The resolved with is invalid: ${JSON.stringify(errors)}`);
    return sendHttpRequest(app.config.pipelines, resolved as unknown as HttpRequestWith, { execution: run.executionId, step: step.id });
  }
  if (type.bucket && typeof resolved.bucket !== 'string') throw new StepFailed('The with.bucket field must be a bucket name.');
  let operation;
  try {
    operation = app.operations.spec(type.operationId);
  } catch {
    throw new StepFailed(`${step.type} steps are not available on this server.`);
  }
  const { params, body } = operationParts(type, principal.workspace.name, resolved);
  // A re-run after a crash replays the batch committed before it instead of writing again.
  const headers = step.type === 'entries.batch' ? { 'Idempotency-Key': `pipeline:${run.executionId}:${step.id}` } : undefined;
  try {
    const reply = await app.operations.call(app, operation.operationId, { ...principal, writeSource: 'pipeline' }, { params, body, headers });
    return reply.status === 204 ? { queued: true } : reply.body;
  } catch (err) {
    if (err instanceof HttpError && err.status < 500) throw refusal(err);
    throw err;
  }
}
