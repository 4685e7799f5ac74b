// The five step types: which operation of the spec each one runs (the route's rights, validation
// and handler, see http/operations.ts) and what its `with` holds besides that operation's body.
import type { components } from '@workspace-api/sdk/openapi';

export type PipelineStep = components['schemas']['PipelineStep'];
export type StepType = PipelineStep['type'];
export type HttpRequestWith = components['schemas']['PipelineHttpRequest'];

export interface OperationStep {
  kind: 'operation';
  operationId: string;
  /** `with.bucket` is the route's `{bucket}`; the rest of `with` is the body. */
  bucket: boolean;
}

export const STEP_TYPES: Record<StepType, OperationStep | { kind: 'http' }> = {
  'entries.query': { kind: 'operation', operationId: 'queryEntries', bucket: true },
  'entries.batch': { kind: 'operation', operationId: 'batchEntries', bucket: true },
  'objects.create': { kind: 'operation', operationId: 'createObject', bucket: false },
  'email.send': { kind: 'operation', operationId: 'sendEmail', bucket: false },
  'http.request': { kind: 'http' },
};

/** The bundled spec's schema of an `http.request` step's `with`. */
export const HTTP_WITH_POINTER = '/components/schemas/PipelineHttpRequest';

export const PIPELINE_LIMITS = {
  /** A step's `with` as JSON, as saved. */
  withBytes: 64 * 1024,
  /** A step's `with` after its placeholders are resolved. */
  resolvedBytes: 1024 * 1024,
  /** An `http.request` step's answer body. */
  responseBytes: 1024 * 1024,
  /** Redirects an `http.request` step follows (each to an allowlisted origin). */
  redirects: 5,
};

/** Splits an operation step's `with` into the route's path parameters and its body. */
export function operationParts(
  type: OperationStep,
  workspace: string,
  w: Record<string, unknown>,
): { params: Record<string, string>; body: Record<string, unknown> } {
  if (!type.bucket) return { params: { workspace }, body: w };
  const { bucket, ...body } = w;
  return { params: { workspace, bucket: bucket as string }, body };
}
