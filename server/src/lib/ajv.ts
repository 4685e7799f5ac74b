// The one way the server makes an Ajv that reports every error (request validation, contracts).
// With `allErrors`, Ajv's generated code merges a referenced schema's errors into its caller's
// list with `vErrors.concat(callee.errors)`: a copy of the whole list at every failing `$ref`.
// An array of 100,000 invalid items behind a `$ref` then costs 100,000 copies of a list growing
// to 100,000 errors (about 50 s of one core for a 200 KB body, every other request waiting).
// `code.process` rewrites that merge to append in place, so the cost is linear in the errors.
import Ajv2020, { type Options } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const MERGE = /vErrors === null \? ([\w$.]+)\.errors : vErrors\.concat\(\1\.errors\)/g;

/** Generated validator code with every error-list merge appending in place. */
export function appendErrorsInPlace(code: string): string {
  const rewritten = code.replace(
    MERGE,
    (_, callee: string) => `vErrors === null ? ${callee}.errors : (${callee}.errors.forEach((e) => vErrors.push(e)), vErrors)`,
  );
  // A future Ajv that merges some other way must not silently bring the quadratic merge back.
  if (/vErrors\.concat\(/.test(rewritten)) throw new Error('Ajv generated an error merge this server does not recognise (lib/ajv.ts)');
  return rewritten;
}

/** An Ajv (JSON Schema 2020-12, formats) that reports all errors at a cost linear in their number. */
export function allErrorsAjv(options: Options = {}): Ajv2020 {
  const ajv = new Ajv2020({ ...options, allErrors: true, code: { ...options.code, process: appendErrorsInPlace } });
  addFormats(ajv);
  return ajv;
}
