// Field errors as data: messages keyed by request path (`fields.title`, `operations.2.id`). Shared
// by the core, which finds them, and the HTTP layer, which answers them as a `422`.

export type FieldErrors = Record<string, string[]>;

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
