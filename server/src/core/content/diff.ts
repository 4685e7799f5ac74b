// The differences between two JSON documents: objects compared property by property, arrays and
// scalars as whole values, an absent property distinct from an explicit null. Paths are JSON
// Pointers (RFC 6901, `~0` and `~1` escapes). Iterative, and it stops at `limit` changes.
import { LosslessNumber, stringifyExact } from '../../lib/exact-json';
import { escapePointer } from '../../lib/json-pointer';

export interface Change {
  path: string;
  operation: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/** Marks a property missing on one side (distinct from an explicit null). */
const ABSENT = Symbol('absent');

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof LosslessNumber);

/** Equal JSON values (numbers by value, objects regardless of key order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return (a instanceof LosslessNumber || typeof a === 'number') && (b instanceof LosslessNumber || typeof b === 'number')
      ? Number(a) === Number(b) && String(a) === String(b)
      : false;
  }
  return stringifyExact(canonical(a)) === stringifyExact(canonical(b));
}

/** A copy with object keys sorted, for comparing whole values. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value))
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    );
  return value;
}

export function diff(before: unknown, after: unknown, limit: number): { changes: Change[]; truncated: boolean } {
  const changes: Change[] = [];
  const stack: { path: string; before: unknown; after: unknown }[] = [{ path: '', before, after }];
  while (stack.length) {
    const item = stack.pop()!;
    if (isObject(item.before) && isObject(item.after)) {
      const keys = [...new Set([...Object.keys(item.before), ...Object.keys(item.after)])].sort().reverse();
      for (const key of keys) {
        const path = `${item.path}/${escapePointer(key)}`;
        const inBefore = Object.prototype.hasOwnProperty.call(item.before, key);
        const inAfter = Object.prototype.hasOwnProperty.call(item.after, key);
        if (!inAfter) stack.push({ path, before: item.before[key], after: ABSENT });
        else if (!inBefore) stack.push({ path, before: ABSENT, after: item.after[key] });
        else stack.push({ path, before: item.before[key], after: item.after[key] });
      }
      continue;
    }
    let change: Change | undefined;
    if (item.before === ABSENT) change = { path: item.path, operation: 'added', after: item.after };
    else if (item.after === ABSENT) change = { path: item.path, operation: 'removed', before: item.before };
    else if (!sameValue(item.before, item.after))
      change = { path: item.path, operation: 'changed', before: item.before, after: item.after };
    if (!change) continue;
    if (changes.length === limit) return { changes, truncated: true };
    changes.push(change);
  }
  return { changes, truncated: false };
}
