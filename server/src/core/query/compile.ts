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
import { Sql, join, raw, sql } from '../sql';
import type { Condition, FilterNode, Hop, MetaColumn, RelationScope, SortKey, Target } from './ast';
import { COMPARE, columnCondition, columnOf, typedApplies, typedCondition, typedTable } from './typed';

/**
 * Where a condition reads: the entry row (`e`) and its document in the query's locale (`c`) at the
 * root; `e1`/`c1`, `e2`/`c2`, ... in the entries relations lead to (typed entries).
 */
export interface Scope {
  entry: string;
  doc: string;
  depth: number;
  relations?: RelationScope;
  /** The typed storage row of the entry (typed entries at the root), whose columns fields read. */
  row?: string;
}
export const ROOT: Scope = { entry: 'e', doc: 'c', depth: 0 };

/** The jsonb value at a data path (`->` with text keys never indexes into arrays). */
export function jsonAt(path: string[], doc = 'c'): Sql {
  return path.reduce<Sql>((acc, key) => sql`${acc} -> ${key}::text`, raw(`${doc}.data`));
}

/** The text at a data path (`->>` on the last key: one call, where `#>> '{}'` on `->` takes two). */
export function textAt(path: string[], doc = 'c'): Sql {
  return sql`(${jsonAt(path.slice(0, -1), doc)} ->> ${path[path.length - 1]}::text)`;
}

/** `{"a": {"b": value}}` for a containment test. */
function nested(path: string[], value: unknown): string {
  return stringifyExact(path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value));
}

/** Operands keep their exact value (a number a double cannot hold arrives as a LosslessNumber). */
const isNumber = (value: unknown) => typeof value === 'number' || value instanceof LosslessNumber;
const jsonType = (value: unknown) => (typeof value === 'string' ? 'string' : isNumber(value) ? 'number' : 'boolean');
/** A JSON value cast to numeric only where it is a number (CASE fixes the order of evaluation). */
export const numericOf = (v: Sql) => sql`CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END`;
export const isMissing = (v: Sql) => sql`(${v} IS NULL OR jsonb_typeof(${v}) = 'null')`;
export const text = (v: Sql) => sql`(${v} #>> '{}')`;

function dataCondition(c: Condition, path: string[], doc: string): Sql {
  const v = jsonAt(path, doc);
  const d = raw(`${doc}.data`);
  switch (c.op) {
    case 'eq':
      return c.value === null ? isMissing(v) : sql`(${d} @> ${nested(path, c.value)}::jsonb)`;
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
    case 'includes':
      return sql`(${d} @> ${nested(path, [c.value])}::jsonb)`;
  }
}

/** A metadata column with the type its operands are cast to. */
export function metaColumn(m: MetaColumn, entry = 'e'): { column: Sql; type: string } {
  const type = m.type === 'integer' ? 'int' : m.type === 'timestamp' ? 'timestamptz' : 'text';
  return { column: raw(m.type === 'string' || m.type === 'status' ? `${entry}.${m.column} COLLATE "C"` : `${entry}.${m.column}`), type };
}

function metaCondition(c: Condition, m: MetaColumn, entry: string): Sql {
  const { column, type } = metaColumn(m, entry);
  const isNull = raw(m.nullable ? `${entry}.${m.column} IS NULL` : 'false');
  return columnCondition(c, { column, type, isNull, list: raw(`${entry}.${m.column}`) });
}

/** The references a relation field holds (one ID or a list), as a jsonb array. */
const referencesOf = (v: Sql) =>
  sql`CASE jsonb_typeof(${v}) WHEN 'array' THEN ${v} WHEN 'string' THEN jsonb_build_array(${v}) ELSE '[]'::jsonb END`;

/**
 * The visible entries a relation of `scope` refers to: FROM clause and the scope inside it. The
 * references are read from the typed column where the scope has its typed row, and the entries
 * reached have theirs (`t<n>`, NULL columns without a document in the locale) when the relation
 * accepts one type whose typed storage is complete; the joins nothing reads are removed.
 */
export function relatedFrom(hop: Hop, scope: Scope): { from: Sql; inner: Scope } {
  const rel = scope.relations;
  if (!rel) throw new Error('relations are followed in typed entry queries only');
  const n = scope.depth + 1;
  const [k, e, c, t] = [`k${n}`, `e${n}`, `c${n}`, `t${n}`];
  const column = hop.column && scope.row ? columnOf(hop.column, scope.row) : undefined;
  const references = column
    ? sql`unnest(${hop.column!.multiple ? column : sql`ARRAY[${column}]`})`
    : sql`jsonb_array_elements_text(${referencesOf(jsonAt([hop.field], scope.doc))})`;
  const typed = hop.typedTarget !== undefined;
  const from = sql`${references} ${raw(k)}(ref)
      JOIN entries ${raw(e)} ON ${raw(e)}.entry_id = ${raw(k)}.ref AND ${raw(e)}.bucket_id = ${rel.bucketId}::int AND ${raw(e)}.kind = 'typed'
        AND ${raw(e)}.deleted_at IS NULL AND ${raw(e)}.content_type_id = ANY(${hop.typeIds}::int[])
      LEFT JOIN entry_contents ${raw(c)} ON ${raw(c)}.entry_pk = ${raw(e)}.id AND ${raw(c)}.locale = ${rel.locale}::text${
        typed
          ? sql`
      LEFT JOIN ${raw(typedTable(hop.typedTarget!))} ${raw(t)} ON ${raw(t)}.entry_pk = ${raw(e)}.id AND ${raw(t)}.locale = ${rel.locale}::text`
          : raw('')
      }`;
  return { from, inner: { entry: e, doc: c, depth: n, relations: rel, ...(typed ? { row: t } : {}) } };
}

/** The document's relation field holds `id`, stored as one ID or in a list (either, as a field
 * may have changed multiplicity since it was saved); both forms are answered by the GIN index. */
const holdsReference = (hop: Hop, id: string, scope: Scope) => {
  const data = raw(`${scope.doc}.data`);
  return sql`(${data} @> ${nested([hop.field], id)}::jsonb OR ${data} @> ${nested([hop.field], [id])}::jsonb)`;
};

/** The ID a condition compares `@id` with by `eq`, if it is one. */
const idEquals = (c: Condition): string | undefined =>
  c.op === 'eq' && c.target.kind === 'meta' && c.target.column === 'entry_id' && typeof c.value === 'string' ? c.value : undefined;

const exists = (hop: Hop, scope: Scope, where: (inner: Scope) => Sql) => {
  const { from, inner } = relatedFrom(hop, scope);
  return sql`EXISTS (SELECT 1 FROM ${from} WHERE ${where(inner)})`;
};

/** Whether a target has no value (missing, null, or a relation to no visible entry). */
/** The typed column a data target reads in `scope`, if it has one there. */
const columnIn = (target: Target, scope: Scope) => (target.kind === 'data' && target.column && scope.row ? target.column : undefined);

function missing(target: Target, scope: Scope): Sql {
  const column = columnIn(target, scope);
  if (column) return sql`${columnOf(column, scope.row!)} IS NULL`;
  if (target.kind === 'data') return isMissing(jsonAt(target.path, scope.doc));
  if (target.kind === 'meta') return raw(target.nullable ? `${scope.entry}.${target.column} IS NULL` : 'false');
  return sql`NOT ${exists(target.hop, scope, (inner) => sql`NOT ${missing(target.target, inner)}`)}`;
}

function condition(c: Condition, scope: Scope): Sql {
  const target = c.target;
  const column = columnIn(target, scope);
  if (column && typedApplies(c, column)) return typedCondition(c, column, scope.row!);
  if (target.kind === 'data') return dataCondition(c, target.path, scope.doc);
  if (target.kind === 'meta') return metaCondition(c, target, scope.entry);
  // Through a single relation: `eq null` holds when there is no value at its end; every other
  // comparison needs a visible related entry with a matching value.
  const through = (inner: Condition) => exists(target.hop, scope, (s) => condition(inner, s));
  if (c.op === 'eq' && c.value === null) return missing(target, scope);
  if (c.op === 'ne' && c.value === null) return sql`NOT ${missing(target, scope)}`;
  if (c.op === 'in' && c.values.includes(null)) {
    const values = c.values.filter((v) => v !== null);
    const present = values.length ? through({ ...c, target: target.target, values }) : raw('false');
    return sql`(${present} OR ${missing(target, scope)})`;
  }
  const inner = { ...c, target: target.target };
  const related = through(inner);
  // A relation compared with one ID: the stored reference must hold it, which the GIN index on
  // documents answers; the EXISTS then only checks that the entry is visible.
  const id = idEquals(inner);
  return id === undefined ? related : sql`(${holdsReference(target.hop, id, scope)} AND ${related})`;
}

/**
 * What a node asks of the entries one hop leads to, when it is exactly "some entry there matches"
 * (`EXISTS` over the hop): a condition through a relation (not about a missing value, not an
 * `@id eq`, which tests the stored reference first) or a `some`.
 */
function throughHop(node: FilterNode): { hop: Hop; inner: FilterNode } | undefined {
  if (node.kind === 'some')
    return node.filter.kind === 'condition' && idEquals(node.filter) !== undefined ? undefined : { hop: node.hop, inner: node.filter };
  if (node.kind !== 'condition' || node.target.kind !== 'related') return undefined;
  const c = node;
  if ((c.op === 'eq' || c.op === 'ne') && c.value === null) return undefined;
  if (c.op === 'in' && c.values.includes(null)) return undefined;
  const inner = { ...c, target: (c.target as { target: Target }).target } as FilterNode;
  return idEquals(inner as Condition) === undefined ? { hop: (c.target as { hop: Hop }).hop, inner } : undefined;
}

/** A hop's identity: two hops of one key lead to the same entries. */
const hopKey = (hop: Hop) => JSON.stringify([hop.field, hop.typeIds, hop.column ?? null, hop.typedTarget ?? null]);

/**
 * `$or` items: those that ask "some entry one hop away matches" of the same hop are one `EXISTS`
 * over that hop with their conditions ORed (some entry matches a or some matches b = some matches
 * a or b), merged again at the next hop. A `$or` of 99 conditions three relations deep is then
 * one subquery per level to plan, not 99 nested three deep (a plan of about 21 MB each).
 */
function orItems(items: FilterNode[], scope: Scope): Sql[] {
  const groups = new Map<string, { hop: Hop; inners: FilterNode[] }>();
  const out: (Sql | { hop: Hop; inners: FilterNode[] })[] = [];
  for (const item of items) {
    const through = throughHop(item);
    if (!through) {
      out.push(compileFilter(item, scope));
      continue;
    }
    const key = hopKey(through.hop);
    const group = groups.get(key);
    if (group) group.inners.push(through.inner);
    else {
      const created = { hop: through.hop, inners: [through.inner] };
      groups.set(key, created);
      out.push(created);
    }
  }
  return out.map((o) =>
    o instanceof Sql
      ? o
      : exists(o.hop, scope, (inner) => compileFilter(o.inners.length === 1 ? o.inners[0] : { kind: 'or', items: o.inners }, inner)),
  );
}

export function compileFilter(node: FilterNode, scope: Scope = ROOT): Sql {
  if (node.kind === 'and' || node.kind === 'or') {
    if (node.items.length === 0) return raw(node.kind === 'and' ? 'true' : 'false');
    const items = node.kind === 'or' ? orItems(node.items, scope) : node.items.map((n) => compileFilter(n, scope));
    return sql`(${join(items, node.kind === 'and' ? ' AND ' : ' OR ')})`;
  }
  if (node.kind === 'some') {
    const some = exists(node.hop, scope, (inner) => compileFilter(node.filter, inner));
    // `includes` of one ID (a `some` on `@id eq`): containment first, as for a single relation.
    const id = node.filter.kind === 'condition' ? idEquals(node.filter) : undefined;
    return id === undefined ? some : sql`(${holdsReference(node.hop, id, scope)} AND ${some})`;
  }
  return condition(node as Condition, scope);
}

/** The jsonb value (data) or column (metadata) of a target, through single relations by subquery. */
export function valueOf(target: Target, scope: Scope = ROOT): Sql {
  const column = columnIn(target, scope);
  if (column) return columnOf(column, scope.row!);
  if (target.kind === 'data') return jsonAt(target.path, scope.doc);
  if (target.kind === 'meta') return metaColumn(target, scope.entry).column;
  const { from, inner } = relatedFrom(target.hop, scope);
  return sql`(SELECT ${valueOf(target.target, inner)} FROM ${from} LIMIT 1)`;
}

/**
 * Whether a numeric has more than the 12 places of DECIMAL(38,12) (sorts and aggregates share
 * the rule). The stored scale is read first: the exact minimum scale costs more and is rarely
 * needed (1.50000000000000 has scale 14 and 1 place that counts).
 */
export const overTwelvePlaces = (n: Sql) => sql`(scale(${n}) > 12 AND min_scale(${n}) > 12)`;

/** A number a numeric sort can order exactly: DECIMAL(38,12). */
const exactDecimal = (n: Sql) => sql`(NOT ${overTwelvePlaces(n)} AND ${n} < 1e26 AND ${n} > -1e26)`;

/** Typed sort keys: the value as its type orders it (NULL otherwise), and which values violate the type. */
const TYPED_SORTS = {
  number: {
    value: numericOf,
    // Missing and null are no violation: `NOT IN` is NULL for them.
    violation: (v: Sql) =>
      sql`(jsonb_typeof(${v}) NOT IN ('number', 'null') OR CASE WHEN jsonb_typeof(${v}) = 'number' THEN NOT ${exactDecimal(sql`(${v})::numeric`)} END)`,
    message: 'holds values that are not numbers within DECIMAL(38,12)',
  },
  numeric: {
    value: numericOf,
    violation: (v: Sql) => sql`jsonb_typeof(${v}) NOT IN ('number', 'null')`,
    message: 'holds values that are not numbers',
  },
  string: {
    value: (v: Sql) => sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END COLLATE "C"`,
    violation: (v: Sql) => sql`jsonb_typeof(${v}) NOT IN ('string', 'null')`,
    message: 'holds values that are not strings',
  },
  boolean: {
    value: (v: Sql) => sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END`,
    violation: (v: Sql) => sql`jsonb_typeof(${v}) NOT IN ('boolean', 'null')`,
    message: 'holds values that are not booleans',
  },
} as const;

const innermost = (t: Target): Target => (t.kind === 'related' ? innermost(t.target) : t);

/** Whether valueOf reads a typed column for `target` (through relations whose entries have their typed row). */
const readsColumn = (t: Target, hasRow: boolean): boolean =>
  t.kind === 'related' ? readsColumn(t.target, t.hop.typedTarget !== undefined) : t.kind === 'data' && !!t.column && hasRow;

export interface CompiledSort {
  /**


   */
  values?: Sql[];
  orderBy: Sql;
  /** Per sort key on data: rows whose value that key cannot order (a `422` when any match). */
  violations: { index: number; condition: Sql; message: string }[];
}

/**
 * `relations`: sorts of typed entries, which follow single relations and break ties by entry ULID
 * (`entryId`, the column the query's candidates read it from).
 */
export function compileSort(keys: SortKey[], relations?: RelationScope, entryId: Sql = raw('e.entry_id'), row?: string): CompiledSort {
  const scope: Scope = { ...ROOT, relations, row };
  const isMeta = (t: Target) => t.kind === 'meta' || (t.kind === 'related' && innermost(t).kind === 'meta');
  // Keys that nothing can violate (metadata, typed columns) order by their expression itself, in
  // the statement that filters: an index on the column then serves the sort and its limit. A
  // key read from documents is read once per row instead (`m.sN`) and checked for violations.
  const direct = relations !== undefined && keys.every((k) => isMeta(k.target) || columnIn(k.target, scope));
  const values: Sql[] = [];
  const order: Sql[] = [];
  const violations: CompiledSort['violations'] = [];
  keys.forEach((key, index) => {
    const name = `s${index}`;
    const dir = raw(key.direction === 'desc' ? 'DESC' : 'ASC');
    const by = (expr: Sql) => sql`${expr} ${dir} NULLS LAST`;
    if (direct) return void order.push(by(valueOf(key.target, scope)));
    const v = raw(`m.${name}`);
    values.push(sql`${valueOf(key.target, scope)} AS ${raw(name)}`);
    // A meta column, or a typed column: its type is the sort's, nothing can violate it.
    if (isMeta(key.target) || readsColumn(key.target, !!scope.row)) return void order.push(by(v));
    if (key.type) {
      // A value of the type, or NULL: missing and null last whatever the direction. Values of
      // other types are violations, which sort first (and make the query a 422).
      const typed = TYPED_SORTS[key.type];
      order.push(by(typed.value(v)));
      violations.push({ index, condition: typed.violation(v), message: typed.message });
      return;
    }
    // Untyped: missing and null last, then by type (boolean, number, string), then by value.
    order.push(sql`${isMissing(v)} ASC`);
    order.push(by(sql`CASE jsonb_typeof(${v}) WHEN 'boolean' THEN 0 WHEN 'number' THEN 1 WHEN 'string' THEN 2 END`));
    order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END`));
    order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric END`));
    order.push(by(sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END COLLATE "C"`));
    violations.push({
      index,
      condition: sql`jsonb_typeof(${v}) IN ('object', 'array')`,
      message: 'holds arrays or objects, which cannot be sorted',
    });
  });
  if (direct) order.push(sql`${entryId} COLLATE "C" ASC`);
  else if (relations) {
    values.push(sql`${entryId} COLLATE "C" AS tie`);
    order.push(raw('m.tie ASC'));
  } else order.push(raw('m.page_id ASC'));
  return { values: direct ? undefined : values, orderBy: join(order, ', '), violations };
}
