// Aggregation and grouping of a structured query as one statement: the matching roots (`r`, with
// their group keys), per numeric path the contributions (`p<i>`: the value at the root, or each
// distinct terminal entry a relation path reaches from a root, counted once per root), checked
// against the DECIMAL(38,12) contract, then per group the count and sums. Checks that reject the
// whole query (a bad contributor, an oversized key, a date outside the conversion range) are
// computed over every matching row, not only the page, in the same statement.
import Decimal from 'decimal.js';
import type { SqlRunner } from '../../../db/database';
import { sqlState } from '../../../lib/sql-state';
import { DomainError } from '../../errors';
import { fieldDetail, fieldError, fieldErrors, oneFieldError } from '../../../lib/field-errors';
import type { FilterNode, RelationScope, Target } from '../../query/ast';
import { candidates, type Visibility } from '../../query/candidates';
import { compileFilter, jsonAt, overTwelvePlaces, relatedFrom, ROOT, text, textAt, type Scope } from '../../query/compile';
import { isoTimestamp, join, raw, rows, sql, type Sql } from '../../sql';
import { ENTRY_QUERY_LIMITS, type AggregatePlan, type GroupPlan } from './parse';
import { columnOf, typedColumnOf, typedTable, type TypedColumn } from '../../query/typed';
import type { FieldDef } from '../content-types';

/** Exact decimal arithmetic for `avg` (the sum has at most 26 + 12 digits plus the count's). */
const Exact = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -1000, toExpPos: 1000 });

/** A decimal string without trailing fractional zeros (and without a sign on zero). */
const plain = (value: string | null) => (value === null ? null : new Exact(value).isZero() ? '0' : new Exact(value).toFixed());

/** Invalid datetime format, field overflow: a stored date the cast cannot read. */
const UNREADABLE_DATE = new Set(['22007', '22008']);

const NUMERIC_TEXT = '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$';

const trimmed = (v: Sql) => sql`btrim(${text(v)}, ' ')`;
/** A string contributor that reads as a number (at most 128 characters, exponent -100 to 100): safe to cast. */
const numericString = (v: Sql) =>
  sql`(char_length(${trimmed(v)}) BETWEEN 1 AND 128 AND ${trimmed(v)} ~ ${NUMERIC_TEXT}
       AND coalesce(substring(${trimmed(v)} from '[eE]([+-]?[0-9]{1,3})$')::int, 0) BETWEEN -100 AND 100)`;

/** A contributor's number (null for null, missing and invalid ones), evaluated in a safe order. */
const contributorValue = (v: Sql) =>
  sql`CASE jsonb_typeof(${v}) WHEN 'number' THEN (${v})::numeric WHEN 'string' THEN CASE WHEN ${numericString(v)} THEN ${trimmed(v)}::numeric END END`;

/**
 * Whether any of a set of contributors breaks the DECIMAL(38,12) contract: an aggregate over its
 * rows, from each one's jsonb `v` and number `num` (contributorValue: null for strings that do
 * not read as numbers). Null and missing values are valid and ignored. The range is checked on
 * the set's min and max, and the rest per row only where the scale exceeds 12: with at most 26
 * integer digits, a number of scale 12 or less is far shorter than 128 characters, so a valid
 * row costs one cheap read (numeric strings had their length checked by numericString).
 */
function contributorsBad(v: Sql, num: Sql): Sql {
  const invalid = sql`CASE coalesce(jsonb_typeof(${v}), 'null')
      WHEN 'number' THEN ${overTwelvePlaces(num)} OR (scale(${num}) > 12 AND char_length((${v})::text) > 128)
      WHEN 'string' THEN ${num} IS NULL OR ${overTwelvePlaces(num)}
      WHEN 'null' THEN false
      ELSE true END`;
  return sql`(coalesce(bool_or(${invalid}), false) OR coalesce(max(${num}) >= 1e26 OR min(${num}) <= -1e26, false))`;
}

/** `contributorsBad` for a typed number column (a numeric already: no type to test, nothing to parse). */
function typedContributorsBad(num: Sql): Sql {
  const invalid = sql`(${overTwelvePlaces(num)} OR (scale(${num}) > 12 AND char_length((${num})::text) > 128))`;
  return sql`(coalesce(bool_or(${invalid}), false) OR ${outOfRange(num)})`;
}

const outOfRange = (num: Sql) => sql`coalesce(max(${num}) >= 1e26 OR min(${num}) <= -1e26, false)`;

/**
 * Whether a typed number column's contributors may break the contract, from what the group's
 * sum costs anyway: a sum's scale is the largest of its terms', so none has more than 12
 * places when it has at most 12. A set the test cannot clear (trailing zeros past 12 places)
 * is checked again by `typedContributorsBad`. The range is read from the column's index, over
 * every row of the locale (two index probes), or per row without one.
 */
function typedContributorsMaybeBad(num: Sql, c: TypedColumn, table: string, locale: string): Sql {
  const scaled = sql`coalesce(scale(sum(${num})) > 12, false)`;
  if (!c.indexed) return sql`(${scaled} OR ${outOfRange(num)})`;
  const col = raw(c.name);
  const extreme = (fn: string) => sql`(SELECT ${raw(fn)}(${col}) FROM ${raw(table)} WHERE locale = ${locale}::text)`;
  return sql`(${scaled} OR coalesce(${extreme('max')} >= 1e26 OR ${extreme('min')} <= -1e26, false))`;
}

/** A typed column's value as the text its document holds (a group's key). */
function storedText(c: TypedColumn, col: Sql): Sql {
  switch (c.type) {
    case 'timestamptz':
      return sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`;
    case 'date':
      return sql`to_char(${col}, 'YYYY-MM-DD')`;
    case 'time':
      return sql`to_char(${col}, 'HH24:MI')`;
    default:
      return col;
  }
}

/** The typed column a group target reads in `scope`, if any. */
const groupColumn = (target: Target, s: Scope) => (target.kind === 'data' && target.column && s.row ? target.column : undefined);

/** A group's value as SQL text or boolean (through single relations by subquery). */
function groupValue(target: Target, scope: Scope, leaf: (target: Target, scope: Scope) => Sql): Sql {
  if (target.kind !== 'related') return leaf(target, scope);
  const { from, inner } = relatedFrom(target.hop, scope);
  return sql`(SELECT ${groupValue(target.target, inner, leaf)} FROM ${from} LIMIT 1)`;
}

interface GroupColumns {
  /** What a row holds for the group, read once per row (`b<i>`): the value, or a bucket's local time. */
  raw: Sql;
  /** The group key from that (`b` names the raw column). */
  key: (b: Sql) => Sql;
  /** The key as answered, computed per group rather than per row (default: the key itself). */
  output?: (k: Sql) => Sql;
  /** Sorts as text (byte order) rather than as its own type. */
  textual: boolean;
  /**
   * Whether a group's rows reject the query (an oversized key, a date outside the conversion
   * range): an aggregate over the raw column `b`, so that it costs no more than a min or max.
   * `maybe`, where given, tells from the group's key alone whether its rows may (a first pass
   * reads no raw value; a group it flags is checked again with `aggregate`).
   */
  problem?: { aggregate: (b: Sql) => Sql; maybe?: (k: Sql) => Sql; message: string };
}

function groupColumns(g: GroupPlan, scope: Scope): GroupColumns {
  const end = g.path.end;
  const isBoolean = end.kind === 'field' && end.def.type === 'boolean';
  if (g.bucket) {
    const { interval, timezone } = g.bucket;
    const local = (target: Target, s: Scope): Sql => {
      if (target.kind === 'meta') return sql`(${raw(`${s.entry}.${target.column}`)} AT TIME ZONE ${timezone}::text)`;
      const path = (target as { path: string[] }).path;
      const dateOnly = end.kind === 'field' && end.def.format !== 'datetime';
      // Values of date fields are stored in their canonical forms (field-values.ts), so their
      // shape is enough to pick them out (LIKE costs a tenth of a regex per row); a malformed
      // value written around the API fails the cast, which runAggregate answers with a 422.
      const fromDocument = (doc: string) => {
        const v = textAt(path, doc);
        return dateOnly
          ? sql`CASE WHEN ${v} LIKE '____-__-__' THEN (${v})::date::timestamp END`
          : sql`CASE WHEN ${v} LIKE '____-__-__T__:__%' OR ${v} LIKE '____-__-__ __:__%' THEN ((${v})::timestamptz AT TIME ZONE ${timezone}::text) END`;
      };
      const column = groupColumn(target, s);
      // A time of day has no calendar date (its text matched no shape above): no bucket.
      if (!column || column.type === 'time') return column ? raw('NULL::timestamp') : fromDocument(s.doc);
      const row = s.row!;
      const col = columnOf(column, row);
      // The typed value; where there is none the document is read as before (a subquery, run
      // only then), so that a value the API could not have written (typed storage holds none)
      // is still refused.
      const document = sql`(SELECT ${fromDocument('d')} FROM entry_contents d WHERE d.entry_pk = ${raw(row)}.entry_pk AND d.locale = ${raw(row)}.locale)`;
      return sql`coalesce(${column.type === 'timestamptz' ? sql`(${col} AT TIME ZONE ${timezone}::text)` : sql`(${col})::timestamp`}, ${document})`;
    };
    return {
      raw: groupValue(g.target, scope, local),
      // Grouped and ordered as timestamps, formatted once per group. A key outside years 1 to
      // 9999 is never answered: the query is refused (`problem`); within them, the order of
      // the timestamps is that of their text.
      key: (b) => sql`date_trunc(${interval}::text, ${b})`,
      output: (k) => sql`to_char(${k}, 'YYYY-MM-DD')`,
      textual: false,
      problem: {
        aggregate: (b) => sql`(min(${b}) < '0001-01-01'::timestamp OR max(${b}) >= '10000-01-01'::timestamp)`,
        // A bucket starts at most a week before its values: a key inside the range by more
        // than that has every value inside.
        maybe: (k) => sql`(${k} < '0001-01-01'::timestamp OR ${k} >= '9999-12-01'::timestamp)`,
        message: 'holds dates outside the range the time zone conversion supports',
      },
    };
  }
  const leaf = (target: Target, s: Scope): Sql => {
    if (target.kind === 'meta')
      return target.type === 'timestamp' ? isoTimestamp(raw(`${s.entry}.${target.column}`)) : raw(`${s.entry}.${target.column}::text`);
    const column = groupColumn(target, s);
    if (column) return storedText(column, columnOf(column, s.row!));
    const v = jsonAt((target as { path: string[] }).path, s.doc);
    return isBoolean
      ? sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END`
      : sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END`;
  };
  const value = groupValue(g.target, scope, leaf);
  if (isBoolean) return { raw: value, key: (b) => b, textual: false };
  const limit = ENTRY_QUERY_LIMITS.groupKeyBytes;
  return {
    raw: value,
    key: (b) => b,
    textual: true,
    problem: { aggregate: (b) => sql`max(octet_length(${b})) > ${limit}`, message: `holds a value longer than ${limit} bytes` },
  };
}

/**
 * The contributions of one numeric path through relations: one row per root and distinct
 * terminal entry, its value `v` the typed column's numeric where the terminal entries have their
 * typed row (`typed`), else the document's jsonb.
 */
function contributions(plan: AggregatePlan, index: number, relations: RelationScope): { sql: Sql; typed: boolean } {
  const path = plan.paths[index];
  const def = (path.end as { def: FieldDef }).def;
  let scope: Scope = { entry: 'r', doc: 'r', depth: 0, relations };
  const froms: Sql[] = [];
  for (const hop of path.hops) {
    const { from, inner } = relatedFrom(hop, scope);
    froms.push(from);
    scope = inner;
  }
  const column = scope.row ? typedColumnOf(def) : undefined;
  const v = column ? columnOf(column, scope.row!) : jsonAt([def.key], scope.doc);
  return {
    sql: sql`SELECT DISTINCT ON (r.id, ${raw(`${scope.entry}.id`)}) r.id AS root, ${v} AS v FROM r, ${join(froms, ', ')}`,
    typed: !!column,
  };
}

export interface AggregateRequest {
  /** Which entries are the roots (workspace, type, live). */
  visibility: Visibility;
  filter: FilterNode;
  plan: AggregatePlan;
  relations: RelationScope;
  offset: number;
  limit: number;
  /** Request path prefix of errors (`''` or `queries.<name>.`). */
  errorPrefix: string;
}

export async function runAggregate(db: SqlRunner, q: AggregateRequest): Promise<{ rows: Record<string, unknown>[]; hasMore: boolean }> {
  // A first pass checks the contract from what grouping computes anyway; only where that cannot
  // clear the rows does a second one check each row (aggregateStatement's `precise`).
  let built = aggregateStatement(q, false);
  let found = await run(db, q, built.statement);
  if (built.loose && flagged(found[0] ?? {})) found = await run(db, q, (built = aggregateStatement(q, true)).statement);
  return answer(q, built.groups, found);
}

/** Whether a pass's flag row refuses the query (or, for a loose pass, may). */
const flagged = (first: Record<string, unknown>) =>
  Object.keys(first).some((k) => (k.startsWith('group_problem_') || k.startsWith('bad_')) && first[k] === true);

function run(db: SqlRunner, q: AggregateRequest, statement: Sql): Promise<Record<string, unknown>[]> {
  return rows<Record<string, unknown>>(db, statement).catch((err: unknown) => {
    const bucket = q.plan.groupBy.findIndex((g) => g.bucket);
    if (bucket < 0 || !UNREADABLE_DATE.has(sqlState(err) ?? '')) throw err;
    const key = `${q.errorPrefix}groupBy.${bucket}`;
    throw new DomainError(
      'invalid',
      oneFieldError(key, fieldError('stored_dates', 'The :attribute field holds stored values that are not valid dates.')),
    );
  });
}

/**
 * The statement of an aggregate. Unless `precise`, typed number columns and date buckets are
 * checked loosely (`loose`: a flag may be raised where the precise check would not be).
 */
function aggregateStatement(q: AggregateRequest, precise: boolean): { statement: Sql; groups: GroupColumns[]; loose: boolean } {
  const { plan, relations } = q;
  let loose = false;
  const from = candidates(q.visibility, relations.locale, q.filter);
  const rootScope: Scope = { ...ROOT, relations, row: from.row };
  const groups = plan.groupBy.map((g) => groupColumns(g, rootScope));
  const n = (prefix: string, i: number) => raw(`${prefix}${i}`);
  const keys = groups.map((_, i) => n('g', i));
  const grouped = groups.length > 0;
  const keyList = (alias: string) =>
    join(
      keys.map((k) => sql`${raw(alias)}.${k}`),
      ', ',
    );
  const groupBy = grouped ? sql` GROUP BY ${keyList('r')}` : raw('');
  // Paths at the root are columns of `r`; paths through relations have contributions of their own.
  const rootPaths = plan.paths.flatMap((p, i) => (p.hops.length ? [] : [i]));
  const hopPaths = plan.paths.flatMap((p, i) => (p.hops.length ? [i] : []));

  // `base` reads each row's values once, `r` derives group keys and numbers from them (OFFSET 0
  // keeps each from being inlined into the next, which would evaluate its expressions again per
  // use); `g` groups, with the refusal flags of its rows, so that the rows are read once.
  const baseColumns: Sql[] = [sql`${from.id} AS id`];
  if (hopPaths.length) baseColumns.push(raw('c.data'));
  groups.forEach((g, i) => baseColumns.push(sql`${g.raw} AS ${n('b', i)}`));
  // A root path reads the field's typed column (a numeric), or its document value (jsonb).
  const rootColumn = (i: number) => (from.row ? typedColumnOf((plan.paths[i].end as { def: FieldDef }).def) : undefined);
  rootPaths.forEach((i) => {
    const column = rootColumn(i);
    baseColumns.push(
      column
        ? sql`${columnOf(column, from.row!)} AS ${n('v', i)}`
        : sql`c.data -> ${(plan.paths[i].end as { def: FieldDef }).def.key}::text AS ${n('v', i)}`,
    );
  });
  const rColumns: Sql[] = [raw('id')];
  if (hopPaths.length) rColumns.push(raw('data'));
  // The check of a group's problem from its key, where it has one and the pass is loose.
  const byKey = (g: GroupColumns) => (!precise && g.problem?.maybe ? g.problem.maybe : undefined);
  groups.forEach((g, i) => {
    rColumns.push(sql`${g.key(n('b', i))} AS ${n('g', i)}`);
    if (g.problem && !byKey(g)) rColumns.push(n('b', i));
  });
  rootPaths.forEach((i) => rColumns.push(n('v', i), sql`${rootColumn(i) ? n('v', i) : contributorValue(n('v', i))} AS ${n('n', i)}`));

  // Only what the operations ask for: sum and count serve sum and avg (and tell null results).
  const wants = (op: string, i: number) => plan.ops.some((o) => o.op === op && o.paths.some((p) => p.index === i));
  const resultColumns = (i: number) =>
    ['s_', 'c_', ...(wants('min', i) ? ['mn_'] : []), ...(wants('max', i) ? ['mx_'] : [])].map((c) => `${c}${i}`);
  const perPath = (i: number, from: string) => {
    const v = raw(`${from}.n${i}`);
    const parts = [sql`sum(${v})::text AS ${n('s_', i)}`, sql`count(${v}) AS ${n('c_', i)}`];
    if (wants('min', i)) parts.push(sql`min(${v})::text AS ${n('mn_', i)}`);
    if (wants('max', i)) parts.push(sql`max(${v})::text AS ${n('mx_', i)}`);
    return join(parts, ', ');
  };
  const gFlags: Sql[] = [];
  const flags: Sql[] = [];
  groups.forEach((g, i) => {
    if (!g.problem) return;
    const maybe = byKey(g);
    loose ||= !!maybe;
    gFlags.push(sql`(${maybe ? maybe(raw(`r.g${i}`)) : g.problem.aggregate(raw(`r.b${i}`))}) IS TRUE AS ${n('gp', i)}`);
    flags.push(sql`bool_or(${n('gp', i)}) AS ${n('group_problem_', i)}`);
  });
  const table = typedTable(q.visibility.contentTypeId ?? 0);
  rootPaths.forEach((i) => {
    const column = rootColumn(i);
    loose ||= !!column && !precise;
    const bad = !column
      ? contributorsBad(raw(`r.v${i}`), raw(`r.n${i}`))
      : precise
        ? typedContributorsBad(raw(`r.n${i}`))
        : typedContributorsMaybeBad(raw(`r.n${i}`), column, table, relations.locale);
    gFlags.push(sql`${bad} AS ${n('bad_', i)}`);
    flags.push(sql`bool_or(${n('bad_', i)}) AS ${n('bad_', i)}`);
  });
  // A loose pass over typed columns uses each value once (no per-row check reads it again):
  // nothing is evaluated twice when the steps are inlined, and each fence costs a copy per row.
  const once =
    !precise &&
    rootPaths.every((i) => rootColumn(i)) &&
    plan.groupBy.every((g) => g.target.kind === 'meta' || groupColumn(g.target, rootScope));
  const fence = raw(once ? '' : ' OFFSET 0');
  const gColumns: Sql[] = [
    ...(grouped ? [keyList('r')] : []),
    raw('count(*) AS count'),
    ...rootPaths.map((i) => perPath(i, 'r')),
    ...gFlags,
  ];
  const ctes: Sql[] = [
    sql`base AS (SELECT ${join(baseColumns, ', ')}
        FROM ${from.from} WHERE ${from.where} AND ${compileFilter(q.filter, rootScope)}${fence})`,
    // Referenced again by the relation paths' CTEs, it is then materialized once.
    sql`r AS (SELECT ${join(rColumns, ', ')} FROM base${fence})`,
    sql`g AS (SELECT ${join(gColumns, ', ')} FROM r${groupBy})`,
  ];
  const scalarFlags: Sql[] = [];
  const selects: Sql[] = rootPaths.map((i) =>
    join(
      resultColumns(i).map((c) => raw(`g.${c}`)),
      ', ',
    ),
  );
  const joins: Sql[] = [];
  hopPaths.forEach((i) => {
    const p = n('p', i);
    const a = n('a', i);
    const reached = contributions(plan, i, relations);
    ctes.push(
      sql`${p} AS MATERIALIZED (SELECT root, v, ${reached.typed ? raw('v') : contributorValue(raw('v'))} AS n${raw(String(i))} FROM (${reached.sql}) x OFFSET 0)`,
    );
    ctes.push(
      sql`${a} AS (SELECT ${grouped ? sql`${keyList('r')}, ` : raw('')}${perPath(i, 'y')} FROM ${p} y JOIN r ON r.id = y.root${groupBy})`,
    );
    scalarFlags.push(
      sql`(SELECT ${reached.typed ? typedContributorsBad(raw(`n${i}`)) : contributorsBad(raw('v'), raw(`n${i}`))} FROM ${p}) AS ${n('bad_', i)}`,
    );
    selects.push(
      join(
        resultColumns(i).map((c) => raw(`a${i}.${c}`)),
        ', ',
      ),
    );
    joins.push(
      sql`LEFT JOIN ${a} ON ${
        grouped
          ? join(
              keys.map((k) => sql`${a}.${k} IS NOT DISTINCT FROM g.${k}`),
              ' AND ',
            )
          : raw('true')
      }`,
    );
  });
  const orderBy = grouped
    ? join(
        groups.map((g, i) => sql`g.${keys[i]}${raw(g.textual ? ' COLLATE "C"' : '')} ASC NULLS LAST`),
        ', ',
      )
    : raw('g.count');
  const answered = join(
    groups.map((g, i) => sql`${g.output ? g.output(sql`g.${keys[i]}`) : sql`g.${keys[i]}`} AS ${keys[i]}`),
    ', ',
  );
  const page = sql`SELECT ${grouped ? sql`${answered}, ` : raw('')}g.count${selects.length ? sql`, ${join(selects, ', ')}` : raw('')},
      row_number() OVER (ORDER BY ${orderBy}) AS pos
      FROM g ${join(joins, ' ')} ORDER BY ${orderBy} LIMIT ${grouped ? q.limit + 1 : 1} OFFSET ${grouped ? q.offset : 0}`;
  // One row whatever happens: the groups' flags combined (or none at all).
  const flagRow = flags.length
    ? sql`SELECT ${join([...flags, ...scalarFlags], ', ')} FROM g`
    : sql`SELECT ${join([raw('true AS none'), ...scalarFlags], ', ')}`;
  const statement = sql`WITH ${join(ctes, ', ')}, page AS (${page})
    SELECT f.*, page.* FROM (${flagRow}) f LEFT JOIN page ON true ORDER BY page.pos`;
  return { statement, groups, loose };
}

/** The answer from a (precise, or loose and unflagged) pass's rows. */
function answer(
  q: AggregateRequest,
  groups: GroupColumns[],
  found: Record<string, unknown>[],
): { rows: Record<string, unknown>[]; hasMore: boolean } {
  const { plan } = q;
  const grouped = groups.length > 0;
  const first = found[0] ?? {};
  const errors = fieldErrors();
  groups.forEach((g, i) => {
    if (g.problem && first[`group_problem_${i}`])
      errors[`${q.errorPrefix}groupBy.${i}`] = [fieldDetail('stored_values', g.problem.message)];
  });
  for (const { op, paths } of plan.ops) {
    const bad = paths.findIndex((p) => first[`bad_${p.index}`]);
    if (bad >= 0) {
      const key = `${q.errorPrefix}aggregate.${op}.${bad}`;
      errors[key] = [
        fieldError('stored_decimals', 'The :attribute field has contributing values that are not decimals within DECIMAL(38,12).'),
      ];
      break;
    }
  }
  if (Object.keys(errors).length) throw new DomainError('invalid', errors);
  const data = found.filter((r) => r.pos !== null);
  const out = data.slice(0, grouped ? q.limit : 1).map((row) => {
    const result: Record<string, unknown> = {};
    if (grouped) result.group = Object.fromEntries(plan.groupBy.map((g, i) => [g.key, row[`g${i}`] ?? null]));
    if (plan.count) result.count = Number(row.count ?? 0);
    for (const { op, paths } of plan.ops) {
      result[op] = Object.fromEntries(
        paths.map((p) => {
          const i = p.index;
          const count = Number(row[`c_${i}`] ?? 0);
          const sum = (row[`s_${i}`] as string | null) ?? null;
          if (!count || sum === null) return [p.text, null];
          if (op === 'sum') return [p.text, plain(sum)];
          if (op === 'min') return [p.text, plain(row[`mn_${i}`] as string)];
          if (op === 'max') return [p.text, plain(row[`mx_${i}`] as string)];
          return [p.text, new Exact(sum).div(count).toFixed(12, Decimal.ROUND_HALF_UP)];
        }),
      );
    }
    return result;
  });
  // An ungrouped aggregate is one row, even over no match.
  if (!grouped && !out.length)
    out.push({
      ...(plan.count ? { count: 0 } : {}),
      ...Object.fromEntries(plan.ops.map(({ op, paths }) => [op, Object.fromEntries(paths.map((p) => [p.text, null]))])),
    });
  return { rows: out, hasMore: grouped && data.length > q.limit };
}
