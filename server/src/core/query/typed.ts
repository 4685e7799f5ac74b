// Typed storage as the query compiler reads it: a content type's field values in `typed_<type id>`
// (one row per entry and locale, a column `f<field id>` per field, kept in step with the documents
// by triggers: prisma/migrations/20261127100000_typed_storage). A condition, sort or aggregate on
// a field of the queried type reads its column: the column's type guarantees the value's, so no
// per-row type test or cast is left, and the indexes of number and date fields serve sorts.
import { LosslessNumber } from '../../lib/exact-json';
import { join, raw, sql, type Sql } from '../sql';
import type { FieldDef } from '../content/content-types';
import type { Condition } from './ast';

/** The SQL type of a typed column's values (an element's, for a multiple field). */
export type ColumnType = 'text' | 'numeric' | 'boolean' | 'date' | 'timestamptz' | 'time' | 'integer';

/** A field's column in its type's table. */
export interface TypedColumn {
  name: string;
  type: ColumnType;
  multiple: boolean;
  /** Whether the column has sort indexes `(locale, column, entry_id)` both ways (typed_indexed in the migration). */
  indexed: boolean;
}

/** The table of a content type's typed storage. */
export const typedTable = (contentTypeId: number) => `typed_${contentTypeId}`;

const TYPES: Record<string, ColumnType> = { text: 'text', relation: 'text', number: 'numeric', boolean: 'boolean', attachment: 'integer' };

/** Whether a field's column is indexed: single number and date fields by default, single text fields when asked. */
export const indexedField = (def: Pick<FieldDef, 'type' | 'multiple' | 'indexed'>) =>
  !def.multiple && (def.type === 'number' || def.type === 'date' ? def.indexed !== false : def.type === 'text' && def.indexed === true);

/** The column of a field (JSON fields have none: their values stay read from the document). */
export function typedColumnOf(def: FieldDef): TypedColumn | undefined {
  if (def.type === 'json') return undefined;
  const type =
    def.type === 'date' ? (def.format === 'datetime' ? 'timestamptz' : def.format === 'time' ? 'time' : 'date') : TYPES[def.type];
  return { name: `f${def.id}`, type, multiple: def.multiple, indexed: indexedField(def) };
}

/** The column as SQL on the row alias `row`; text columns are `COLLATE "C"` already (byte order). */
export const columnOf = (c: TypedColumn, row: string) => raw(`${row}.${c.name}`);

// Operands are cast to the column's type. They were normalized as the values are stored (dates
// in UTC with seconds, times `HH:mm`), so the cast reads them as the triggers read the values.

/** A number a double cannot hold arrives as a LosslessNumber: its text goes as the parameter. */
const plain = (value: unknown) => (value instanceof LosslessNumber ? value.toString() : value);

export const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

/**
 * Whether a condition reads the same on the column as on the document: comparisons of a
 * single-value field, string operators on text, `includes` and `eq`/`ne null` on multiple ones.
 * Anything else (an `eq` of a scalar on a list, a string operator on a date) keeps the
 * document's reading, whose type tests answer it.
 */
export function typedApplies(cond: Condition, c: TypedColumn): boolean {
  if (cond.op === 'startsWith' || cond.op === 'endsWith' || cond.op === 'contains') return c.type === 'text' && !c.multiple;
  if (c.multiple) return cond.op === 'includes' || ((cond.op === 'eq' || cond.op === 'ne') && cond.value === null);
  return cond.op !== 'includes';
}

/** A condition on a typed column (where `typedApplies`): the document path's meaning, without its type tests. */
export function typedCondition(cond: Condition, c: TypedColumn, row: string): Sql {
  const col = columnOf(c, row);
  return columnCondition(cond, { column: col, type: c.type, isNull: sql`${col} IS NULL`, list: col });
}

/**
 * A condition on a plain column (a typed column, an entry's metadata): `type` casts the operands,
 * `isNull` says when there is no value, `list` is the array `includes` tests.
 */
export function columnCondition(cond: Condition, on: { column: Sql; type: string; isNull: Sql; list: Sql }): Sql {
  const { column, isNull } = on;
  const cast = (v: unknown) => sql`${plain(v)}::${raw(on.type)}`;
  switch (cond.op) {
    case 'eq':
      return cond.value === null ? isNull : sql`${column} = ${cast(cond.value)}`;
    case 'ne':
      return cond.value === null ? sql`NOT ${isNull}` : sql`${column} <> ${cast(cond.value)}`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return sql`${column} ${raw(COMPARE[cond.op])} ${cast(cond.value)}`;
    case 'in': {
      const values = cond.values.filter((v) => v !== null).map(plain);
      const parts: Sql[] = [];
      if (values.length) parts.push(sql`${column} = ANY(${values}::${raw(on.type)}[])`);
      if (cond.values.includes(null)) parts.push(isNull);
      return parts.length ? sql`(${join(parts, ' OR ')})` : raw('false');
    }
    case 'startsWith':
      return sql`starts_with(${column}, ${cond.value}::text)`;
    case 'endsWith':
      return sql`right(${column}, char_length(${cond.value}::text)) = ${cond.value}::text`;
    case 'contains':
      return sql`strpos(${column}, ${cond.value}::text) > 0`;
    case 'includes':
      return sql`${cast(cond.value)} = ANY(${on.list})`;
  }
}
