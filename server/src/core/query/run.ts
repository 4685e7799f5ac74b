// Runs a compiled query: one statement that filters and sorts in the database before paging
// (`limit + 1` rows tell whether there is more; only the page's rows are read in full), and
// reports in the same statement whether any matched row holds a value a sort key cannot order:
// such rows sort first, so the page's first row tells, and the sort stays a top-N sort.
import type { SqlRunner } from '../../db/database';
import { invalidAt } from '../errors';
import { pagedSelect, pageStatement, toRecord, type EntryRecord } from '../content/store';
import { join, raw, rows, sql } from '../sql';
import type { QueryPlan } from './ast';
import { candidates, type Visibility } from './candidates';
import { compileFilter, compileSort, ROOT } from './compile';
import { emptyRecord } from '../../lib/records';

/** A query's page: where its rows come from, their condition, order and page, and the sort's flags. */
function pageParts(visibility: Visibility, plan: QueryPlan) {
  const from = candidates(visibility, plan.locale, plan.filter);
  const sort = compileSort(plan.sort, plan.relations, from.entryId, from.row);
  const flags = sort.violations.map((v, i) => sql`(${v.condition}) IS TRUE AS sort_violation_${raw(String(i))}`);
  const firstViolations = sort.violations.map((_, i) => raw(`sort_violation_${i} DESC`));
  const where = sql`${from.where} AND ${compileFilter(plan.filter, { ...ROOT, relations: plan.relations, row: from.row })}`;
  const page = {
    orderBy: join([...firstViolations, sort.orderBy], ', '),
    values: sort.values,
    limit: plan.limit + 1,
    offset: plan.offset,
    candidates: from,
    join: sql`LEFT JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = ${plan.locale}::text`,
    flags,
  };
  return { where, page, sort };
}

/** The one statement of a query, its rows read in full (also used by the bench to EXPLAIN exactly what the server runs). */
export function queryStatement(visibility: Visibility, plan: QueryPlan) {
  const { where, page, sort } = pageParts(visibility, plan);
  return { statement: pagedSelect({ kind: 'joined', locale: plan.locale }, where, page, plan.relations !== undefined), sort };
}

/** A query's page as `page_id` and `page_pos` rows with the sort's flags, for a statement that renders it (typed entries). */
export function queryPageStatement(visibility: Visibility, plan: QueryPlan) {
  const { where, page, sort } = pageParts(visibility, plan);
  return { statement: pageStatement(where, page), sort };
}

/** Refuses a sort that the first matching row (`first`, its flags) says some row cannot be ordered by. */
export function checkSortable(sort: ReturnType<typeof compileSort>, first: Record<string, unknown> | null | undefined): void {
  sort.violations.forEach((v, i) => {
    if (first?.[`sort_violation_${i}`]) throw invalidAt(`sort.${v.index}.field`, 'The :attribute field :detail.', { detail: v.message });
  });
}

export async function runQuery(
  db: SqlRunner,
  visibility: Visibility,
  plan: QueryPlan,
): Promise<{ records: EntryRecord[]; hasMore: boolean }> {
  const { statement, sort } = queryStatement(visibility, plan);
  // A filter and sort of the same shape is the same statement: kept prepared, within a bound.
  const found = await rows<Record<string, unknown>>(db, statement, 'bounded');
  checkSortable(sort, found[0]);
  const page = found.filter((r) => Number(r.page_pos) > plan.offset);
  const records = page.slice(0, plan.limit).map((r) => toRecord(r as Parameters<typeof toRecord>[0]));
  return { records, hasMore: page.length > plan.limit };
}

/** The projection of a document: only the selected paths, a missing one as null. */
export function project(data: unknown, fields: string[][]): Record<string, unknown> {
  const out = emptyRecord();
  for (const path of fields) {
    let value: unknown = data;
    for (const key of path)
      value =
        value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : null;
    let node = out;
    path.slice(0, -1).forEach((key) => (node = (node[key] ??= emptyRecord()) as Record<string, unknown>));
    node[path[path.length - 1]] = value;
  }
  return out;
}
