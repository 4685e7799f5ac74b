// Aggregation and grouping of a structured query as one statement: the matching roots (`r`, with
// their group keys), per numeric path the contributions (`p<i>`: the value at the root, or each
// distinct terminal entry a relation path reaches from a root, counted once per root), checked
// against the DECIMAL(38,12) contract, then per group the count and sums. Checks that reject the
// whole query (a bad contributor, an oversized key, a date outside the conversion range) are
// computed over every matching row, not only the page, in the same statement.
import Decimal from 'decimal.js';
import type { SqlRunner } from '../../../db/database';
import { EntryError } from '../errors';
import type { FilterNode, RelationScope, Target } from '../../query/ast';
import { compileFilter, isMissing, jsonAt, relatedFrom, ROOT, text, type Scope } from '../../query/compile';
import { isoTimestamp, join, raw, rows, sql, type Sql } from '../../sql';
import { ENTRY_QUERY_LIMITS, type AggregatePlan, type GroupPlan } from './parse';

/** Exact decimal arithmetic for `avg` (the sum has at most 26 + 12 digits plus the count's). */
const Exact = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -1000, toExpPos: 1000 });

/** A decimal string without trailing fractional zeros (and without a sign on zero). */
const plain = (value: string | null) => (value === null ? null : new Exact(value).isZero() ? '0' : new Exact(value).toFixed());

const NUMERIC_TEXT = '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?$';

/** Whether a jsonb contributor is valid (null and missing are, and are ignored), evaluated in a safe order. */
function contributorOk(v: Sql): Sql {
  const t = sql`btrim(${text(v)}, ' ')`;
  const fits = (n: Sql) => sql`(abs(${n}) < 1e26 AND scale(trim_scale(${n})) <= 12)`;
  return sql`CASE coalesce(jsonb_typeof(${v}), 'null')
      WHEN 'number' THEN char_length((${v})::text) <= 128 AND ${fits(sql`(${v})::numeric`)}
      WHEN 'string' THEN CASE WHEN char_length(${t}) BETWEEN 1 AND 128 AND ${t} ~ ${NUMERIC_TEXT}
        AND coalesce(substring(${t} from '[eE]([+-]?[0-9]{1,3})$')::int, 0) BETWEEN -100 AND 100
        THEN ${fits(sql`${t}::numeric`)} ELSE false END
      WHEN 'null' THEN true
      ELSE false END`;
}
const contributorValue = (v: Sql) => sql`CASE jsonb_typeof(${v}) WHEN 'number' THEN (${v})::numeric WHEN 'string' THEN btrim(${text(v)}, ' ')::numeric END`;

/** A group's value as SQL text or boolean (through single relations by subquery). */
function groupValue(target: Target, scope: Scope, leaf: (target: Target, scope: Scope) => Sql): Sql {
  if (target.kind !== 'related') return leaf(target, scope);
  const { from, inner } = relatedFrom(target.hop, scope);
  return sql`(SELECT ${groupValue(target.target, inner, leaf)} FROM ${from} LIMIT 1)`;
}

interface GroupColumns {
  value: Sql;
  /** Sorts as text (byte order) rather than as its own type. */
  textual: boolean;
  /** Rows that reject the query: an oversized key, a date outside the conversion range. */
  problem?: { condition: Sql; message: string };
}

function groupColumns(g: GroupPlan, scope: Scope): GroupColumns {
  const end = g.path.end;
  const isBoolean = end.kind === 'field' && end.def.type === 'boolean';
  if (g.bucket) {
    const { interval, timezone } = g.bucket;
    const local = (target: Target, s: Scope): Sql => {
      if (target.kind === 'meta') return sql`(${raw(`${s.entry}.${target.column}`)} AT TIME ZONE ${timezone}::text)`;
      const v = text(jsonAt((target as { path: string[] }).path, s.doc));
      const dateOnly = end.kind === 'field' && end.def.format !== 'datetime';
      return dateOnly
        ? sql`CASE WHEN ${v} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN (${v})::date::timestamp END`
        : sql`CASE WHEN ${v} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2})?Z?$' THEN ((${v})::timestamptz AT TIME ZONE ${timezone}::text) END`;
    };
    const lt = groupValue(g.target, scope, local);
    const inRange = sql`extract(year from ${lt}) BETWEEN 1 AND 9999`;
    return {
      value: sql`CASE WHEN ${inRange} THEN to_char(date_trunc(${interval}::text, ${lt}), 'YYYY-MM-DD') END`,
      textual: true,
      problem: { condition: sql`(${lt}) IS NOT NULL AND NOT ${inRange}`, message: 'holds dates outside the range the time zone conversion supports' },
    };
  }
  const leaf = (target: Target, s: Scope): Sql => {
    if (target.kind === 'meta') return target.type === 'timestamp' ? isoTimestamp(raw(`${s.entry}.${target.column}`)) : raw(`${s.entry}.${target.column}::text`);
    const v = jsonAt((target as { path: string[] }).path, s.doc);
    return isBoolean ? sql`CASE WHEN jsonb_typeof(${v}) = 'boolean' THEN (${v})::boolean END` : sql`CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${text(v)} END`;
  };
  const value = groupValue(g.target, scope, leaf);
  if (isBoolean) return { value, textual: false };
  return { value, textual: true, problem: { condition: sql`octet_length(${value}) > ${ENTRY_QUERY_LIMITS.groupKeyBytes}`, message: `holds a value longer than ${ENTRY_QUERY_LIMITS.groupKeyBytes} bytes` } };
}

/** The contributions of one numeric path: one row per root (root path) or per root and distinct terminal entry. */
function contributions(plan: AggregatePlan, index: number, relations: RelationScope): Sql {
  const path = plan.paths[index];
  const field = (path.end as { def: { name: string } }).def.name;
  let scope: Scope = { entry: 'r', doc: 'r', depth: 0, relations };
  if (!path.hops.length) return sql`SELECT r.id AS root, r.data -> ${field}::text AS v FROM r`;
  const froms: Sql[] = [];
  for (const hop of path.hops) {
    const { from, inner } = relatedFrom(hop, scope);
    froms.push(from);
    scope = inner;
  }
  return sql`SELECT DISTINCT ON (r.id, ${raw(`${scope.entry}.id`)}) r.id AS root, ${jsonAt([field], scope.doc)} AS v FROM r, ${join(froms, ', ')}`;
}

export interface AggregateRequest {
  /** Conditions on `e` that scope the roots (workspace, type, live). */
  where: Sql;
  filter: FilterNode;
  plan: AggregatePlan;
  relations: RelationScope;
  offset: number;
  limit: number;
  /** Request path prefix of errors (`''` or `queries.<name>.`). */
  errorPrefix: string;
}

export async function runAggregate(db: SqlRunner, q: AggregateRequest): Promise<{ rows: Record<string, unknown>[]; hasMore: boolean }> {
  const { plan, relations } = q;
  const rootScope: Scope = { ...ROOT, relations };
  const groups = plan.groupBy.map((g) => groupColumns(g, rootScope));
  const keys = groups.map((_, i) => raw(`g${i}`));
  const grouped = groups.length > 0;
  const groupBy = grouped ? sql` GROUP BY ${join(keys.map((k) => sql`r.${k}`), ', ')}` : raw('');
  const ctes: Sql[] = [
    sql`r AS MATERIALIZED (SELECT e.id, c.data${grouped ? sql`, ${join(groups.map((g, i) => sql`${g.value} AS g${raw(String(i))}`), ', ')}` : raw('')}${join(
      groups.map((g, i) => (g.problem ? sql`, (${g.problem.condition}) IS TRUE AS gp${raw(String(i))}` : raw(''))),
      '',
    )}
        FROM entries e LEFT JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = ${relations.locale}::text
        WHERE ${q.where} AND ${compileFilter(q.filter, rootScope)})`,
    sql`g AS (SELECT ${grouped ? sql`${join(keys.map((k) => sql`r.${k}`), ', ')}, ` : raw('')}count(*) AS count FROM r${groupBy})`,
  ];
  const flags: Sql[] = [];
  groups.forEach((g, i) => g.problem && flags.push(sql`(SELECT bool_or(gp${raw(String(i))}) FROM r) AS group_problem_${raw(String(i))}`));
  const selects: Sql[] = [];
  const joins: Sql[] = [];
  plan.paths.forEach((_, i) => {
    const p = raw(`p${i}`);
    ctes.push(sql`${p} AS MATERIALIZED (SELECT root, v, ${contributorOk(raw('v'))} AS ok FROM (${contributions(plan, i, relations)}) x)`);
    ctes.push(
      sql`a${raw(String(i))} AS (SELECT ${grouped ? sql`${join(keys.map((k) => sql`r.${k}`), ', ')}, ` : raw('')}sum(n)::text AS s, min(n)::text AS mn, max(n)::text AS mx, count(n) AS c
          FROM (SELECT root, CASE WHEN ok THEN ${contributorValue(raw('v'))} END AS n FROM ${p} WHERE ok AND NOT ${isMissing(raw('v'))}) y JOIN r ON r.id = y.root${groupBy})`,
    );
    flags.push(sql`(SELECT bool_or(ok IS FALSE) FROM ${p}) AS bad_${raw(String(i))}`);
    const a = raw(`a${i}`);
    selects.push(sql`${a}.s AS s_${raw(String(i))}, ${a}.mn AS mn_${raw(String(i))}, ${a}.mx AS mx_${raw(String(i))}, ${a}.c AS c_${raw(String(i))}`);
    joins.push(sql`LEFT JOIN ${a} ON ${grouped ? join(keys.map((k) => sql`${a}.${k} IS NOT DISTINCT FROM g.${k}`), ' AND ') : raw('true')}`);
  });
  const orderBy = grouped ? join(groups.map((g, i) => sql`g.${keys[i]}${raw(g.textual ? ' COLLATE "C"' : '')} ASC NULLS LAST`), ', ') : raw('g.count');
  const page = sql`SELECT ${grouped ? sql`${join(keys.map((k) => sql`g.${k}`), ', ')}, ` : raw('')}g.count${selects.length ? sql`, ${join(selects, ', ')}` : raw('')},
      row_number() OVER (ORDER BY ${orderBy}) AS pos
      FROM g ${join(joins, ' ')} ORDER BY ${orderBy} LIMIT ${grouped ? q.limit + 1 : 1} OFFSET ${grouped ? q.offset : 0}`;
  const statement = sql`WITH ${join(ctes, ', ')}, page AS (${page})
    SELECT f.*, page.* FROM (SELECT ${flags.length ? join(flags, ', ') : raw('1 AS none')}) f LEFT JOIN page ON true ORDER BY page.pos`;
  const found = await rows<Record<string, unknown>>(db, statement);
  const first = found[0] ?? {};
  if (process.env.DEBUG_AGG) console.error(JSON.stringify(found));
  const errors: Record<string, string[]> = Object.create(null);
  groups.forEach((g, i) => {
    if (g.problem && first[`group_problem_${i}`]) errors[`${q.errorPrefix}groupBy.${i}`] = [`The ${q.errorPrefix}groupBy.${i} field ${g.problem.message}.`];
  });
  for (const { op, paths } of plan.ops) {
    const bad = paths.findIndex((p) => first[`bad_${p.index}`]);
    if (bad >= 0) {
      const key = `${q.errorPrefix}aggregate.${op}.${bad}`;
      errors[key] = [`The ${key} field has contributing values that are not decimals within DECIMAL(38,12).`];
      break;
    }
  }
  if (Object.keys(errors).length) throw new EntryError('invalid', errors);
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
  if (!grouped && !out.length) out.push({ ...(plan.count ? { count: 0 } : {}), ...Object.fromEntries(plan.ops.map(({ op, paths }) => [op, Object.fromEntries(paths.map((p) => [p.text, null]))])) });
  return { rows: out, hasMore: grouped && data.length > q.limit };
}
