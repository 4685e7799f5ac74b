// The typed tree as SQL, with the specification's semantics written in SQL:
//   - types with jsonb_typeof; `eq` between same-type scalars (jsonb equality: 1 equals 1.0);
//   - `eq null` matches a missing property or null; `ne null` needs a present non-null value;
//     other `ne` operands exclude missing, null and other types;
//   - numbers compared as exact `numeric`, strings byte by byte (`COLLATE "C"`);
//   - `startsWith`/`endsWith`/`contains` as literal string functions (no LIKE, so `%` and `_`
//     are never wildcards);
//   - sorts with missing and null last in both directions, untyped sorts by type (boolean, number,
//     string) then value, and the id tie-break.
// Data paths read `c.data` (the document of the query's locale), metadata reads `e`. An `eq` on a
// data path is also written as jsonb containment, which the GIN index on documents serves.
import { LosslessNumber, stringifyExact } from '../../lib/exact-json';
import { join, raw, sql, type Sql } from '../sql';
import { META_FIELDS, type Condition, type FilterNode, type SortKey, type Target } from './ast';

/** The jsonb value at a data path (`->` with text keys never indexes into arrays). */
function jsonAt(path: string[]): Sql {
  return path.reduce<Sql>((acc, key) => sql`${acc} -> ${key}::text`, raw('c.data'));
}

/** `{"a": {"b": value}}` for a containment test. */
function nested(path: string[], value: unknown): string {
  return stringifyExact(path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value));
}

/** Operands keep their exact value (a number a double cannot hold arrives as a LosslessNumber). */
const isNumber = (value: unknown) => typeof value === 'number' || value instanceof LosslessNumber;
const jsonType = (value: unknown) => (typeof value === 'string' ? 'string' : isNumber(value) ? 'number' : 'boolean');
/** A JSON value cast to numeric only where it is a number (CASE fixes the order of evaluation). */
const numericOf = (v: Sql) => sql`CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END`;
const isMissing = (v: Sql) => sql`(${v} IS NULL OR jsonb_typeof(${v}) = 'null')`;
const text = (v: Sql) => sql`(${v} #>> '{}')`;

const COMPARE = { lt: '<', lte: '<=', gt: '>', gte: '>=' } as const;

function dataCondition(c: Condition, path: string[]): Sql {
  const v = jsonAt(path);
  switch (c.op) {
    case 'eq':
      return c.value === null ? isMissing(v) : sql`(c.data @> ${nested(path, c.value)}::jsonb)`;
    case 'ne':
      return c.value === null
        ? sql`NOT ${isMissing(v)}`
        : sql`(jsonb_typeof(${v}) = ${jsonType(c.value)} AND ${v} <> ${stringifyExact(c.value)}::jsonb)`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte': {
      const op = raw(COMPARE[c.op]);
      return isNumber(c.value)
        ? sql`(${numericOf(v)} ${op} ${String(c.value)}::numeric)`
        : sql`(jsonb_typeof(${v}) = 'string' AND ${text(v)} COLLATE "C" ${op} ${c.value}::text COLLATE "C")`;
    }
    case 'in': {
      const scalars = c.values.filter((x) => x !== null).map((x) => stringifyExact(x));
      const parts = [];
      if (scalars.length) parts.push(sql`${v} = ANY(${scalars}::jsonb[])`);
      if (c.values.includes(null)) parts.push(isMissing(v));
      return sql`(${join(parts, ' OR ')})`;
    }
    case 'startsWith':
      return sql`(jsonb_typeof(${v}) = 'string' AND starts_with(${text(v)}, ${c.value}::text))`;
    case 'endsWith':
      // Characters as PostgreSQL counts them (code points), not UTF-16 units.
      return sql`(jsonb_typeof(${v}) = 'string' AND right(${text(v)}, char_length(${c.value}::text)) = ${c.value}::text)`;
    case 'contains':
      return sql`(jsonb_typeof(${v}) = 'string' AND strpos(${text(v)}, ${c.value}::text) > 0)`;
  }
}

/** A metadata column with the parameter cast its operands need. */
function metaColumn(name: keyof typeof META_FIELDS): { column: Sql; cast: Sql } {
  const { column, type } = META_FIELDS[name];
  const cast = raw(type === 'integer' ? '::int' : type === 'timestamp' ? '::timestamptz' : '::text');
  return { column: raw(type === 'string' || type === 'status' ? `e.${column} COLLATE "C"` : `e.${column}`), cast };
}

function metaCondition(c: Condition, name: keyof typeof META_FIELDS): Sql {
  const { column, cast } = metaColumn(name);
  switch (c.op) {
    case 'eq':
      return c.value === null ? raw('false') : sql`${column} = ${c.value}${cast}`;
    case 'ne':
      return c.value === null ? raw('true') : sql`${column} <> ${c.value}${cast}`;
    case 'lt':
    case 'lte':
    case 'gt':
    case 'gte':
      return sql`${column} ${raw(COMPARE[c.op])} ${c.value}${cast}`;
    case 'in': {
      const values = c.values.filter((x) => x !== null);
      return values.length ? sql`${column} = ANY(${values}${raw(`${cast.strings[0]}[]`)})` : raw('false');
    }
    case 'startsWith':
      return sql`starts_with(${column}, ${c.value}::text)`;
    case 'endsWith':
      return sql`right(${column}, char_length(${c.value}::text)) = ${c.value}::text`;
    case 'contains':
      return sql`strpos(${column}, ${c.value}::text) > 0`;
  }
}

export function compileFilter(node: FilterNode): Sql {
  if (node.kind === 'and' || node.kind === 'or') {
    if (node.items.length === 0) return raw(node.kind === 'and' ? 'true' : 'false');
    return sql`(${join(node.items.map(compileFilter), node.kind === 'and' ? ' AND ' : ' OR ')})`;
  }
  const c = node as Condition;
  const target: Target = c.target;
  return target.kind === 'meta' ? metaCondition(c, target.name) : dataCondition(c, target.path);
}

/** A number a numeric sort can order exactly: DECIMAL(38,12). */
const exactDecimal = (v: Sql) => sql`(round(${numericOf(v)}, 12) = ${numericOf(v)} AND abs(${numericOf(v)}) < 1e26)`;

export interface CompiledSort {
  /**
   * The value of each sort key, read once per matching row (`AS s0`, `s1`, ...): a document can be
   * large, and every `->` on it would read it again. `orderBy` and the violations read them as `m.sN`.
   */
  values: Sql[];
  orderBy: Sql;
  /** Per sort key on data: rows whose value that key cannot order (a `422` when any match). */
  violations: { index: number; condition: Sql; message: string }[];
}

export function compileSort(keys: SortKey[]): CompiledSort {
  const values: Sql[] = [];
  const order: Sql[] = [];
  const violations: CompiledSort['violations'] = [];
  keys.forEach((key, index) => {
    const name = `s${index}`;
    const v = raw(`m.${name}`);
    const dir = raw(key.direction === 'desc' ? 'DESC' : 'ASC');
    if (key.target.kind === 'meta') {
      values.push(sql`${metaColumn(key.target.name).column} AS ${raw(name)}`);
      order.push(sql`${v} ${dir}`);
      return;
    }
    values.push(sql`${jsonAt(key.target.path)} AS ${raw(name)}`);
    const by = (expr: Sql) => sql`${expr} ${dir} NULLS LAST`;
    // Missing and null last, whatever the direction.
    order.push(sql`${isMissing(v)} ASC`);
    if (key.type === 'number') {
      order.push(by(numericOf(v)));
      violations.push({ index, condition: sql`NOT ${isMissing(v)} AND (jsonb_typeof(${v}) <> 'number' OR NOT ${exactDecimal(v)})`, message: 'holds values that are not numbers within DECIMAL(38,12)' });
    } else if (key.type === 'string') {
      order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END COLLATE "C"`));
      violations.push({ index, condition: sql`NOT ${isMissing(v)} AND jsonb_typeof(${v}) <> 'string'`, message: 'holds values that are not strings' });
    } else if (key.type === 'boolean') {
      order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END`));
      violations.push({ index, condition: sql`NOT ${isMissing(v)} AND jsonb_typeof(${v}) <> 'boolean'`, message: 'holds values that are not booleans' });
    } else {
      order.push(by(sql`CASE jsonb_typeof(${v}) WHEN 'boolean' THEN 0 WHEN 'number' THEN 1 WHEN 'string' THEN 2 END`));
      order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END`));
      order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END`));
      order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END COLLATE "C"`));
      violations.push({ index, condition: sql`jsonb_typeof(${v}) IN ('object', 'array')`, message: 'holds arrays or objects, which cannot be sorted' });
    }
  });
  order.push(raw('m.page_id ASC'));
  return { values, orderBy: join(order, ', '), violations };
}
