// Ajv's errors as the documented field-error map and messages (Laravel's wording, as the
// documents show it): request validation (http/validation.ts) and contracts (core) both answer so.
import type { ErrorObject } from 'ajv/dist/2020';
import { addFieldError, fieldError, fieldErrors, MAX_ERROR_PATHS, type FieldError, type FieldErrors } from './field-errors';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** Ajv's error as a field error: its keyword is the rule, its parameters the message's. */
function describe(err: ErrorObject): FieldError {
  const p = err.params as Record<string, string | number>;
  const rule = err.keyword;
  switch (err.keyword) {
    case 'required':
      return fieldError(rule, 'The :attribute field is required.');
    case 'additionalProperties':
      return fieldError(rule, 'The :attribute field is not allowed.');
    case 'type':
      return fieldError(rule, 'The :attribute field must be :types.', {
        types: String(p.type)
          .split(',')
          .map((t) => TYPE_WORDS[t] ?? t)
          .join(' or '),
      });
    case 'enum':
      return fieldError(rule, 'The selected :attribute is invalid.');
    case 'const':
      return fieldError(rule, 'The :attribute field must be :value.', { value: JSON.stringify(p.allowedValue) });
    case 'pattern':
      return fieldError(rule, 'The :attribute field format is invalid.');
    case 'format':
      return p.format === 'email'
        ? fieldError(rule, 'The :attribute field must be a valid email address.')
        : fieldError(rule, 'The :attribute field must be a valid :format.', { format: p.format });
    case 'minLength':
      return p.limit === 1
        ? fieldError(rule, 'The :attribute field must not be empty.')
        : fieldError(rule, 'The :attribute field must be at least :limit characters.', { limit: p.limit });
    case 'maxLength':
      return fieldError(rule, 'The :attribute field must not be greater than :limit characters.', { limit: p.limit });
    case 'minimum':
      return fieldError(rule, 'The :attribute field must be at least :limit.', { limit: p.limit });
    case 'maximum':
      return fieldError(rule, 'The :attribute field must not be greater than :limit.', { limit: p.limit });
    case 'minItems':
      return fieldError(
        rule,
        p.limit === 1 ? 'The :attribute field must have at least :limit item.' : 'The :attribute field must have at least :limit items.',
        { limit: p.limit },
      );
    case 'maxItems':
      return fieldError(rule, 'The :attribute field must not have more than :limit items.', { limit: p.limit });
    case 'uniqueItems':
      return fieldError(rule, 'The :attribute field has a duplicate value.');
    case 'minProperties':
      return p.limit === 1
        ? fieldError(rule, 'The :attribute must not be empty.')
        : fieldError(rule, 'The :attribute must have at least :limit properties.', { limit: p.limit });
    case 'maxProperties':
      return fieldError(
        rule,
        p.limit === 1
          ? 'The :attribute must not have more than :limit property.'
          : 'The :attribute must not have more than :limit properties.',
        { limit: p.limit },
      );
    default:
      return fieldError(rule, 'The :attribute field is invalid.');
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
    const segments = [
      ...prefix,
      ...err.instancePath
        .split('/')
        .slice(1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
    ];
    const p = err.params as Record<string, string | number>;
    if (err.keyword === 'required') segments.push(String(p.missingProperty));
    if (err.keyword === 'additionalProperties') segments.push(String(p.additionalProperty));
    // A property name refused by `propertyNames` (a batch query's name) is keyed by itself.
    const named = err.propertyName ?? (err.keyword === 'propertyNames' ? (p.propertyName as string | undefined) : undefined);
    if (named !== undefined) segments.push(named);
    const key = segments.length ? segments.join('.') : root;
    if (!(key in out) && paths++ === MAX_ERROR_PATHS) break;
    addFieldError(out, key, named !== undefined ? fieldError('propertyNames', 'The name of :attribute is invalid.') : describe(err));
  }
  return out;
}
