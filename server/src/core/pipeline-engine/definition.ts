// Checks a pipeline definition before it is saved, step by step, with errors keyed
// `steps.<n>...`: unique step ids, the size of `with`, its placeholders, and `with` against the
// very schema of the operation the step runs (the route's request body), where a placeholder
// defers the type checks of the value it stands in to the run.
import type { ErrorObject } from 'ajv/dist/2020';
import type { Config } from '../../config';
import { addFieldError, fieldDetail, fieldErrors, moveUnder, type FieldErrors } from '../../lib/field-errors';
import { containsPlaceholder, placeholderErrors } from './placeholders';
import { savedUrlProblem } from './http-request';
import { operationParts, PIPELINE_LIMITS, STEP_TYPES, type HttpRequestWith, type PipelineStep } from './step-types';

/** The value at an Ajv instance path (`/filter/title/eq`). */
function valueAt(root: unknown, instancePath: string): unknown {
  let v = root;
  for (const raw of instancePath.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Ajv errors a placeholder may cure: about a value that is or holds one (not missing or extra properties). */
const deferredBy = (body: unknown) => (err: ErrorObject) =>
  err.keyword !== 'required' && err.keyword !== 'additionalProperties' && containsPlaceholder(valueAt(body, err.instancePath));

const put = (errors: FieldErrors, key: string, detail: string) => addFieldError(errors, key, fieldDetail('step', detail));

/** What checking a step's body needs of the API's operations (http/operations.ts has it). */
export interface StepBodyCheck {
  bodyErrors(operationId: string, body: unknown, skip?: (err: ErrorObject) => boolean): FieldErrors;
}

function withErrors(config: Config, operations: StepBodyCheck, step: PipelineStep, at: string, errors: FieldErrors): void {
  const w = step.with as Record<string, unknown>;
  const type = STEP_TYPES[step.type];
  if (type.kind === 'http') {
    // Its shape is checked by the spec itself (PipelineStep); the URL and the body here.
    const http = w as unknown as HttpRequestWith;
    const problem = savedUrlProblem(config.pipelines, http.url);
    if (problem) put(errors, `${at}url`, problem);
    if (http.body !== undefined && (http.method === 'GET' || http.method === 'HEAD'))
      put(errors, `${at}body`, `is not allowed with ${http.method}`);
    return;
  }
  // The same split as the run's (operationParts); the bucket must be a name when saved.
  const { body } = operationParts(type, '', w);
  if (type.bucket) {
    if (w.bucket === undefined) put(errors, `${at}bucket`, 'is required');
    else if (typeof w.bucket !== 'string' || w.bucket === '') put(errors, `${at}bucket`, 'must be a bucket name');
  }
  Object.assign(errors, prefixed(operations.bodyErrors(type.operationId, body, deferredBy(body)), at));
}

function prefixed(errors: FieldErrors, prefix: string): FieldErrors {
  // Errors on the body as a whole are errors on `with`.
  const { body, ...rest } = errors;
  const out = moveUnder(rest, prefix);
  if (body) out[prefix.slice(0, -1)] = body;
  return out;
}

/** Errors of a definition's steps (the spec's schema already holds: ids, types, `with` objects). */
export function definitionErrors(config: Config, operations: StepBodyCheck, steps: PipelineStep[]): FieldErrors {
  const errors = fieldErrors();
  const earlier = new Set<string>();
  const firstOf = new Map<string, number>();
  steps.forEach((step, n) => {
    const at = `steps.${n}.with.`;
    if (firstOf.has(step.id)) put(errors, `steps.${n}.id`, `repeats the id of step ${firstOf.get(step.id)}`);
    else firstOf.set(step.id, n);
    const size = Buffer.byteLength(JSON.stringify(step.with));
    if (size > PIPELINE_LIMITS.withBytes)
      put(errors, `steps.${n}.with`, `must not be larger than ${PIPELINE_LIMITS.withBytes} bytes as JSON`);
    else {
      Object.assign(errors, placeholderErrors(step.with, earlier, at));
      withErrors(config, operations, step, at, errors);
    }
    earlier.add(step.id);
  });
  return errors;
}
