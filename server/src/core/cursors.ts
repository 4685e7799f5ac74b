// Opaque page cursors: base64url of a small JSON array of keys. A cursor comes back from the
// client, so its shape is checked before any key reaches a query.
import { invalidAt } from './errors';

export function encodeCursor(keys: (string | number)[]): string {
  return Buffer.from(JSON.stringify(keys)).toString('base64url');
}

/** The keys of a cursor of the expected shape (`kinds`: the type of each key), or `invalid` on `cursor`. */
export function decodeCursor<T extends (string | number)[]>(cursor: string, kinds: ('string' | 'integer')[]): T {
  let keys: unknown;
  try {
    keys = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    keys = undefined;
  }
  const ok =
    Array.isArray(keys) &&
    keys.length === kinds.length &&
    keys.every((k, i) =>
      kinds[i] === 'integer'
        ? Number.isSafeInteger(k) && (k as number) >= 0 && (k as number) <= 2147483647
        : typeof k === 'string' && k.length <= 64,
    );
  if (!ok) throw invalidAt('cursor', 'The :attribute is invalid.');
  return keys as T;
}
