// Records keyed by what users choose (field names, paths, locales): no prototype, so a key named
// `__proto__` or `constructor` is an ordinary key and finds no inherited member.
export const emptyRecord = <T = unknown>(): Record<string, T> => Object.create(null) as Record<string, T>;
