// Field values of typed entries, checked against their definitions and stored normalized: dates
// as UTC strings with seconds, relations as entry ULIDs, attachments as file IDs. Checks that need
// the database (relation targets, files, unique values) run as one query per kind, not per value.
import type { SqlRunner } from '../../db/database';
import { addFieldError, fieldDetail, fieldError, type FieldErrors } from '../../lib/field-errors';
import { LosslessNumber, stringifyExact } from '../../lib/exact-json';
import { rows, sql } from '../sql';
import type { ContentTypeDef, FieldDef } from './content-types';
import { emptyRecord } from '../../lib/records';

/** An entry ULID (Crockford base32, 26 characters). */
export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;
/** Stored values of one multiple field at most (a bound on the lookups of a write). */
export const MAX_VALUES = 1000;
const MAX_TEXT = 65_535;

type Check = { value: unknown } | { error: string };

const isNumber = (v: unknown) => (typeof v === 'number' && Number.isFinite(v)) || v instanceof LosslessNumber;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function validCalendarDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1];
}

const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?$/;

/** A numeric offset (`+HH:mm`, `-HH:mm`; `Z` or none is 0) in minutes, or undefined beyond 14:00 either side. */
export function offsetMinutes(offset: string | undefined): number | undefined {
  if (!offset || offset === 'Z') return 0;
  const [h, m] = offset.slice(1).split(':').map(Number);
  if (m > 59 || h * 60 + m > 14 * 60) return undefined;
  return (offset[0] === '-' ? -1 : 1) * (h * 60 + m);
}
export const OFFSET_RULE = 'must have an offset of at most 14:00 either side';

/** Whether a time is in the years every stored timestamp keeps to (0001 to 9999, in UTC). */
export const inStoredYears = (at: Date) => at.getUTCFullYear() >= 1 && at.getUTCFullYear() <= 9999;
export const YEARS_RULE = 'must be between the years 0001 and 9999';

/** A datetime in one of the accepted forms as `YYYY-MM-DDTHH:mm:ssZ` (UTC), or why not. */
export function normalizeDatetime(text: string): Check {
  if (/[T ]\d{2}:\d{2}:\d{2}[.,]\d/.test(text)) return { error: 'must not have fractional seconds' };
  const m = DATETIME.exec(text);
  if (!m) return { error: 'must be a datetime in the form YYYY-MM-DD HH:mm[:ss] with an optional T, Z or offset' };
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (!validCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return { error: 'must be a valid calendar date and time' };
  const offset = offsetMinutes(m[7]);
  if (offset === undefined) return { error: OFFSET_RULE };
  // setUTCFullYear: Date.UTC reads the years 0 to 99 as 1900 to 1999.
  const local = new Date(0);
  local.setUTCFullYear(y, mo - 1, d);
  local.setUTCHours(h, mi, s, 0);
  const utc = new Date(local.getTime() - offset * 60_000);
  if (!inStoredYears(utc)) return { error: YEARS_RULE };
  const date = `${pad(utc.getUTCFullYear(), 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}`;
  return { value: `${date}T${pad(utc.getUTCHours())}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}Z` };
}

/** One value of a field (an element, for multiple fields), normalized as stored, or why not. */
export function checkScalar(def: FieldDef, v: unknown): Check {
  switch (def.type) {
    case 'text':
      if (typeof v !== 'string') return { error: 'must be a string' };
      return v.length > MAX_TEXT ? { error: `must not be greater than ${MAX_TEXT} characters` } : { value: v };
    case 'number':
      return isNumber(v) ? { value: v } : { error: 'must be a number' };
    case 'boolean':
      return typeof v === 'boolean' ? { value: v } : { error: 'must be true or false' };
    case 'json':
      return { value: v };
    case 'relation':
      return typeof v === 'string' && ULID.test(v) ? { value: v.toUpperCase() } : { error: 'must be an entry ID' };
    case 'attachment':
      return Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 2147483647 ? { value: v } : { error: 'must be a file ID' };
    case 'date': {
      if (typeof v !== 'string') return { error: 'must be a string' };
      if (def.format === 'datetime') return normalizeDatetime(v);
      if (def.format === 'time') {
        const t = /^(\d{2}):(\d{2})$/.exec(v);
        return t && Number(t[1]) <= 23 && Number(t[2]) <= 59 ? { value: v } : { error: 'must be a time in the form HH:mm' };
      }
      const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
      if (d && Number(d[1]) === 0) return { error: YEARS_RULE };
      return d && validCalendarDate(Number(d[1]), Number(d[2]), Number(d[3]))
        ? { value: v }
        : { error: 'must be a valid date in the form YYYY-MM-DD' };
    }
  }
}

const isEmpty = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0) || v === '';

/**
 * Checks `input` (field name to value) against the content type and merges it into `current`
 * (the stored document of the locale). Errors are keyed `fields.<name>`; `creating` applies
 * `required` to every field, an update to the fields it sets.
 */
export function mergeFieldValues(
  type: ContentTypeDef,
  input: Record<string, unknown>,
  current: Record<string, unknown>,
  creating: boolean,
  errors: FieldErrors,
): Record<string, unknown> {
  const out = emptyRecord();
  for (const def of type.fields) if (Object.hasOwn(current, def.name)) out[def.name] = current[def.name];
  const add = (name: string, detail: string) => addFieldError(errors, `fields.${name}`, fieldDetail('value', detail));
  for (const name of Object.keys(input)) {
    const def = type.byName.get(name);
    if (!def) {
      add(name, `is not a field of the content type ${type.name}`);
      continue;
    }
    const v = input[name];
    if (v === null) {
      out[name] = def.multiple ? [] : null;
      continue;
    }
    if (def.multiple) {
      if (!Array.isArray(v)) add(name, 'must be an array');
      else if (v.length > MAX_VALUES) add(name, `must not have more than ${MAX_VALUES} items`);
      else {
        const values: unknown[] = [];
        v.forEach((item, i) => {
          const c = checkScalar(def, item);
          if ('error' in c) addFieldError(errors, `fields.${name}.${i}`, fieldDetail('value', c.error));
          else values.push(c.value);
        });
        out[name] = values;
      }
    } else {
      const c = checkScalar(def, v);
      if ('error' in c) add(name, c.error);
      else out[name] = c.value;
    }
  }
  for (const def of type.fields) {
    if (def.required && (creating || Object.hasOwn(input, def.name)) && isEmpty(out[def.name]) && !errors[`fields.${def.name}`])
      add(def.name, 'is required');
  }
  return out;
}

const valuesOf = (doc: Record<string, unknown>, def: FieldDef): unknown[] => {
  const v = doc[def.name];
  return v === null || v === undefined ? [] : Array.isArray(v) && def.multiple ? v : [v];
};

/**
 * The checks that read the database, for the fields `changed` of `doc`: relation targets (live
 * typed entries of an accepted type in the same bucket), attachments (files of the workspace),
 * unique values (no other live entry of the type holds the value in this locale).
 */
export async function checkReferences(
  db: SqlRunner,
  type: ContentTypeDef,
  doc: Record<string, unknown>,
  changed: string[],
  ctx: { locale: string; entryPk?: number },
  errors: FieldErrors,
): Promise<void> {
  await checkAllReferences(db, [{ type, doc, changed, locale: ctx.locale, entryPk: ctx.entryPk, errors }]);
}

export interface ReferenceCheck {
  type: ContentTypeDef;
  doc: Record<string, unknown>;
  /** The fields the write supplied (only those are checked). */
  changed: string[];
  locale: string;
  /** The entry written, when it exists already (its own unique values do not clash). */
  entryPk?: number;
  errors: FieldErrors;
}

/** Entries created earlier in the same group of writes, not yet in the database: ID → bucket and type name. */
export type PendingEntries = Map<string, { bucketId: number; type: string }>;

/**
 * The database checks of several writes at once (a batch's creates), each as if written after
 * the ones before it: relation targets (live typed entries of the bucket, or `pending` ones),
 * attachments (files of the workspace), unique values (against stored entries and earlier writes
 * of the group). A few queries in all, whatever the number of writes and values.
 */
export async function checkAllReferences(db: SqlRunner, items: ReferenceCheck[], pending: PendingEntries = new Map()): Promise<void> {
  const defsOf = items.map((it) =>
    it.changed.map((n) => it.type.byName.get(n)).filter((d): d is FieldDef => d !== undefined && !it.errors[`fields.${d.name}`]),
  );
  const valuesOfType = (kind: 'relation' | 'attachment') => [
    ...new Set(items.flatMap((it, i) => defsOf[i].filter((d) => d.type === kind).flatMap((d) => valuesOf(it.doc, d)))),
  ];
  const relationIds = (valuesOfType('relation') as string[]).filter((id) => !pending.has(id));
  const fileIds = valuesOfType('attachment') as number[];
  const targets = new Map<string, { bucketId: number; type: string }>(pending);
  if (relationIds.length) {
    const found = await rows<{ entry_id: string; bucket_id: number; type: string }>(
      db,
      sql`SELECT e.entry_id, e.bucket_id, t.name AS type FROM entries e JOIN content_types t ON t.id = e.content_type_id
           WHERE e.entry_id = ANY(${relationIds}::text[]) AND e.bucket_id = ANY(${[...new Set(items.map((it) => it.type.bucketId))]}::int[]) AND e.kind = 'typed' AND e.deleted_at IS NULL`,
    );
    for (const r of found) targets.set(r.entry_id, { bucketId: r.bucket_id, type: r.type });
  }
  const files = new Set<string>();
  if (fileIds.length) {
    const found = await rows<{ id: number; workspace_id: number }>(
      db,
      sql`SELECT id, workspace_id FROM files WHERE id = ANY(${fileIds}::int[]) AND workspace_id = ANY(${[...new Set(items.map((it) => it.type.workspaceId))]}::int[]) AND user_id IS NULL`,
    );
    for (const r of found) files.add(`${r.workspace_id}:${r.id}`);
  }
  items.forEach((it, i) => {
    for (const def of defsOf[i]) {
      const at = (n: number) => (def.multiple ? `fields.${def.name}.${n}` : `fields.${def.name}`);
      valuesOf(it.doc, def).forEach((v, n) => {
        if (def.type === 'relation') {
          const t = targets.get(v as string);
          if (t === undefined || t.bucketId !== it.type.bucketId)
            addFieldError(it.errors, at(n), fieldError('relation', 'The :attribute field must be an entry of this bucket.'));
          else if (!def.targets.includes(t.type))
            addFieldError(
              it.errors,
              at(n),
              fieldError('relation', 'The :attribute field must be an entry of the type :types.', { types: def.targets.join(' or ') }),
            );
        } else if (def.type === 'attachment' && !files.has(`${it.type.workspaceId}:${v as number}`))
          addFieldError(it.errors, at(n), fieldError('attachment', 'The :attribute field must be a file of this workspace.'));
      });
    }
  });
  await checkUnique(db, items, defsOf);
}

/** Unique values: taken by a stored live entry of the type in the locale, or by an earlier write of the group. */
async function checkUnique(db: SqlRunner, items: ReferenceCheck[], defsOf: FieldDef[][]): Promise<void> {
  const claims = items.flatMap((it, i) =>
    defsOf[i].filter((d) => d.unique && !isEmpty(it.doc[d.name])).map((d) => ({ item: it, field: d.name, key: d.key })),
  );
  if (!claims.length) return;
  const column = <T>(f: (c: (typeof claims)[number]) => T) => claims.map(f);
  // Serialized per type and field (in one order), so that two concurrent writes cannot both take a value.
  await rows(
    db,
    sql`SELECT pg_advisory_xact_lock(t, hashtext(f)) FROM (SELECT DISTINCT t, f FROM unnest(${column((c) => c.item.type.id)}::int[], ${column((c) => c.key)}::text[]) AS x(t, f)) y ORDER BY t, f`,
  );
  const taken = await rows<{ n: number }>(
    db,
    sql`WITH x AS (SELECT * FROM unnest(${column((c) => c.item.type.id)}::int[], ${column((c) => c.item.locale)}::text[], ${column((c) => c.key)}::text[],
                                        ${column((c) => stringifyExact(c.item.doc[c.field]))}::text[], ${column((c) => c.item.entryPk ?? 0)}::int[])
                          WITH ORDINALITY AS u(t, l, f, v, pk, n))
        SELECT x.n::int AS n FROM x
         WHERE EXISTS (SELECT 1 FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = x.l
                        WHERE e.content_type_id = x.t AND e.kind = 'typed' AND e.deleted_at IS NULL AND e.id <> x.pk AND c.data -> x.f = x.v::jsonb)
            OR EXISTS (SELECT 1 FROM x y WHERE y.n < x.n AND y.t = x.t AND y.l = x.l AND y.f = x.f AND y.v::jsonb = x.v::jsonb)`,
  );
  for (const { n } of taken) {
    const { item, field } = claims[n - 1];
    addFieldError(item.errors, `fields.${field}`, fieldError('unique', 'The :attribute has already been taken.'));
  }
}

/** Relation and attachment references of a stored document, per field (rendering reads them). */
export function referencesOf(doc: Record<string, unknown>, def: FieldDef): unknown[] {
  return valuesOf(doc, def);
}
