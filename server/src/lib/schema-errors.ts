// Ajv's errors as the documented field-error map and messages (Laravel's wording, as the
// documents show it): request validation (http/validation.ts) and contracts (core) both answer so.
import type { ErrorObject } from 'ajv/dist/2020';
import { fieldErrors, MAX_ERROR_PATHS, type FieldErrors } from './field-errors';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function describe(err: ErrorObject, label: string): string {
  const p = err.params as Record<string, string | number>;
  switch (err.keyword) {
    case 'required':
      return `The ${label} field is required.`;
    case 'additionalProperties':
      return `The ${label} field is not allowed.`;
    case 'type': {
      const types = String(p.type).split(',').map((t) => TYPE_WORDS[t] ?? t);
      return `The ${label} field must be ${types.join(' or ')}.`;
    }
    case 'enum':
      return `The selected ${label} is invalid.`;
    case 'const':
      return `The ${label} field must be ${JSON.stringify(p.allowedValue)}.`;
    case 'pattern':
      return `The ${label} field format is invalid.`;
    case 'format':
      return p.format === 'email' ? `The ${label} field must be a valid email address.` : `The ${label} field must be a valid ${p.format}.`;
    case 'minLength':
      return p.limit === 1 ? `The ${label} field must not be empty.` : `The ${label} field must be at least ${p.limit} characters.`;
    case 'maxLength':
      return `The ${label} field must not be greater than ${p.limit} characters.`;
    case 'minimum':
      return `The ${label} field must be at least ${p.limit}.`;
    case 'maximum':
      return `The ${label} field must not be greater than ${p.limit}.`;
    case 'minItems':
      return `The ${label} field must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}.`;
    case 'maxItems':
      return `The ${label} field must not have more than ${p.limit} items.`;
    case 'uniqueItems':
      return `The ${label} field has a duplicate value.`;
    case 'minProperties':
      return p.limit === 1 ? `The ${label} must not be empty.` : `The ${label} must have at least ${p.limit} properties.`;
    case 'maxProperties':
      return `The ${label} must not have more than ${p.limit} propert${p.limit === 1 ? 'y' : 'ies'}.`;
    default:
      return `The ${label} field is invalid.`;
  }
}

/**
 * Ajv errors as the documented map: dot paths with numeric indexes, no `body.` prefix. Errors on
 * the body as a whole are keyed `body`. `prefix` is used for parameters (keyed by their name).
 */
export function toFieldErrors(errors: ErrorObject[], root = 'body', prefix: string[] = []): FieldErrors {
  const out = fieldErrors();
  let paths = 0;
  for (const err of errors) {
    // Branch failures of anyOf/oneOf/if are reported by the branch errors themselves.
    if (['anyOf', 'oneOf', 'if', 'not', 'propertyNames'].includes(err.keyword) && errors.length > 1) continue;
    const segments = [...prefix, ...err.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))];
    const p = err.params as Record<string, string | number>;
    if (err.keyword === 'required') segments.push(String(p.missingProperty));
    if (err.keyword === 'additionalProperties') segments.push(String(p.additionalProperty));
    // A property name refused by `propertyNames` (a batch query's name) is keyed by itself.
    const named = err.propertyName ?? (err.keyword === 'propertyNames' ? (p.propertyName as string | undefined) : undefined);
    if (named !== undefined) segments.push(named);
    const key = segments.length ? segments.join('.') : root;
    if (!(key in out) && paths++ === MAX_ERROR_PATHS) break;
    const message = named !== undefined ? `The name of ${key} is invalid.` : describe(err, key);
    (out[key] ??= []).includes(message) || out[key].push(message);
  }
  return out;
}

