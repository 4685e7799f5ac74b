// JSON whose numbers keep their exact value. JavaScript numbers are doubles, so
// `12345678901234567890123` or `0.1000000000000000055511151231257827` would change on the way
// through JSON.parse; PostgreSQL's jsonb keeps them exactly. Documents (object data, snapshots)
// travel as `lossless-json` values: a number a double cannot hold becomes a LosslessNumber that
// keeps its text, every other number stays a plain number, so the common case costs nothing.
import { LosslessNumber, isSafeNumber, parse as losslessParse, stringify as losslessStringify } from 'lossless-json';

export { LosslessNumber };

/** String literals of JSON text (their digits and letters are not numbers). */
const STRINGS = /"(?:[^"\\]|\\.)*"/g;
/**
 * Number text that may not survive a double: an exponent, or 16 or more digits and dots (a number
 * of at most 15 significant digits always does).
 */
const MAYBE_UNSAFE = /\d[eE]|\d[\d.]{15}/;

const parseNumber = (text: string) => (isSafeNumber(text) ? parseFloat(text) : new LosslessNumber(text));

/**
 * Parses JSON text (already known to be valid and nested within the body limit) keeping every
 * number exact. Returns whether any number needed keeping (`exact`).
 */
export function parseExact(text: string): { value: unknown; exact: boolean } {
  // Only numbers matter. Most texts have no such run at all, strings included: no need to take
  // the string literals (entry IDs, prose) out first, which copies the text.
  if (!MAYBE_UNSAFE.test(text) || !MAYBE_UNSAFE.test(text.includes('"') ? text.replace(STRINGS, '""') : text))
    return { value: JSON.parse(text), exact: false };
  let exact = false;
  const value = losslessParse(text, null, (t: string) => {
    const n = parseNumber(t);
    if (n instanceof LosslessNumber) exact = true;
    return n;
  });
  return { value, exact };
}

/** JSON text of a value that may hold LosslessNumbers. */
export const stringifyExact = (value: unknown): string => losslessStringify(value) ?? 'null';

/** For code that needs plain numbers (JSON Schema validation): LosslessNumbers become the nearest double. */
export function approximate<T>(value: T, exact: boolean): T {
  return exact ? (JSON.parse(stringifyExact(value)) as T) : value;
}
