// Field errors as data, keyed by request path (`fields.title`, `operations.2.id`): what failed (a
// rule), and the documented message as a template with `:attribute` where the field's path goes
// and `:name` for each parameter, Laravel's way (the documents' messages are Laravel's). Shared by
// the core, which finds them, and the HTTP layer, which renders them once into a `422`. So moving
// errors under a prefix (a batch's operation, a named query, a pipeline step) renames their paths
// and never edits a sentence.

export interface FieldError {
  /** What failed, for programs: `required`, `type`, `format`, `stale`, `taken`, `invalid`, ... */
  rule: string;
  /** The message, `:attribute` standing for the field's path and `:name` for `params.name`. */
  template: string;
  params?: Readonly<Record<string, string | number>>;
}

export type FieldErrors = Record<string, FieldError[]>;

/**
 * An empty error map. Its keys are request paths, which users choose (`constructor`,
 * `__proto__`): no prototype, so no key finds an inherited member.
 */
export const fieldErrors = (): FieldErrors => Object.create(null) as FieldErrors;

/**
 * How many paths a `422` lists at most: the first ones found. A body with a problem in each of
 * 100,000 array items is answered with a short report, not megabytes of it.
 */
export const MAX_ERROR_PATHS = 100;

export const fieldError = (rule: string, template: string, params?: Record<string, string | number>): FieldError =>
  params ? { rule, template, params } : { rule, template };

/** `The <path> field <detail>.`, the common form, with a detail worded by the rule that found it. */
export const fieldDetail = (rule: string, detail: string): FieldError => fieldError(rule, 'The :attribute field :detail.', { detail });

/** Adds `error` at `path` (once: an equal error there already is not repeated). */
export function addFieldError(errors: FieldErrors, path: string, error: FieldError): void {
  const at = (errors[path] ??= []);
  if (!at.some((e) => e.template === error.template && JSON.stringify(e.params) === JSON.stringify(error.params))) at.push(error);
}

/** A map of one error at `path`. */
export function oneFieldError(path: string, error: FieldError): FieldErrors {
  const errors = fieldErrors();
  errors[path] = [error];
  return errors;
}

/** Moves `errors` under `prefix` (`operations.3.`) into `into`: their paths change, their messages follow when rendered. */
export function moveUnder(errors: FieldErrors, prefix: string, into: FieldErrors = fieldErrors()): FieldErrors {
  for (const [path, list] of Object.entries(errors)) into[`${prefix}${path}`] = list;
  return into;
}

/**
 * The message of `error` at `path`. Placeholders are replaced in one pass over the template, so
 * neither a path nor a parameter (both may hold user text) is ever read as a placeholder.
 */
export function renderFieldError(path: string, error: FieldError): string {
  const params = error.params;
  return error.template.replace(/:([a-z_]+)/g, (whole, name: string) =>
    name === 'attribute' ? path : params && Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

/** Every error's message, keyed by path (the documented `errors` map). */
export function renderFieldErrors(errors: FieldErrors): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>;
  for (const [path, list] of Object.entries(errors)) out[path] = list.map((e) => renderFieldError(path, e));
  return out;
}
