// A structured query from body to response, in two steps so that a batch can validate every
// member before reading anything: `prepareQuery` (the type, the locale, the parsed plan, with
// errors at their request paths) and `executeQuery` (one statement for the page and its
// projection, or for the aggregate).
import type { Config } from '../../../config';
import type { ByteBudget } from '../../../lib/byte-budget';
import { jsonTextBytes, wrapJson, type HoledJson } from '../../../lib/fresh-json';
import type { SqlRunner } from '../../../db/database';
import { fieldError, fieldErrors, moveUnder, type FieldErrors } from '../../../lib/field-errors';
import { checkSortable, queryPageStatement } from '../../query/run';
import { rows, sql, type Sql } from '../../sql';
import type { ContentTypeDef } from '../content-types';
import { DomainError } from '../../errors';
import { runAggregate } from './aggregate';
import { parseEntryQuery, type EntryQueryBody, type EntryQueryPlan } from './parse';
import { projectionStatement, projectPage, REFERENCE_BUDGET } from './project';
import { isConfiguredLocale } from '../locales';

export interface QueryContext {
  db: SqlRunner;
  config: Config;
  workspace: { id: number; name: string; locales: string[] };
  /** The bucket's content types by name (empty: the bucket is unknown or has none). */
  types: Map<string, ContentTypeDef>;
  now: Date;
}

export interface PreparedQuery {
  type: ContentTypeDef;
  locale: string;
  plan: EntryQueryPlan;
  /** `''`, or `queries.<name>.` in a batch. */
  prefix: string;
}

/** Why a query cannot run before any read: an unknown type (`404`), an invalid locale (`400`), or `422` errors. */
export type QueryProblem = { kind: 'not_found' } | { kind: 'locale' } | { kind: 'invalid'; errors: FieldErrors };

export function prepareQuery(body: EntryQueryBody, ctx: QueryContext, prefix = ''): PreparedQuery | QueryProblem {
  const type = ctx.types.get(body.type);
  if (!type) return { kind: 'not_found' };
  const locale = body.locale ?? 'en-US';
  if (!isConfiguredLocale(locale, ctx.workspace.locales)) return { kind: 'locale' };
  const errors = fieldErrors();
  const plan = parseEntryQuery(body, type, ctx.types, errors);
  if (Object.keys(errors).length) return { kind: 'invalid', errors: moveUnder(errors, prefix) };
  return { type, locale, plan, prefix };
}

/** Rows a query's page can hold (an ungrouped aggregate is one), for the batch's budget. */
export const pageRows = (q: PreparedQuery) => (q.plan.aggregate && !q.plan.aggregate.groupBy.length ? 1 : q.plan.limit);

const validZones = new Map<string, boolean>();

/** Named time zones the database knows (cached per process; UTC needs no lookup). */
async function unknownTimeZones(db: SqlRunner, q: PreparedQuery): Promise<FieldErrors> {
  const errors = fieldErrors();
  const groups = q.plan.aggregate?.groupBy ?? [];
  const names = [
    ...new Set(groups.map((g) => g.bucket?.timezone).filter((z): z is string => z !== undefined && z !== 'UTC' && !validZones.has(z))),
  ];
  if (names.length) {
    const known = new Set(
      (await rows<{ name: string }>(db, sql`SELECT name FROM pg_timezone_names WHERE name = ANY(${names}::text[])`)).map((r) => r.name),
    );
    if (validZones.size > 1000) validZones.clear();
    for (const name of names) validZones.set(name, known.has(name));
  }
  groups.forEach((g, i) => {
    const zone = g.bucket?.timezone;
    if (zone !== undefined && zone !== 'UTC' && !validZones.get(zone)) {
      const key = `${q.prefix}groupBy.${i}.timezone`;
      errors[key] = [fieldError('timezone', 'The :attribute field is not a time zone the database knows.')];
    }
  });
  return errors;
}

/** The statement of a query's page (its rows' ids and the sort's flags). */
function pageOf(q: PreparedQuery, ctx: Pick<QueryContext, 'workspace'>) {
  const { plan, type, locale } = q;
  const visibility = { workspaceId: ctx.workspace.id, kinds: ['typed' as const], contentTypeId: type.id, typed: type.typedReady };
  return queryPageStatement(visibility, {
    filter: plan.filter,
    sort: plan.sort,
    locale,
    offset: plan.offset,
    limit: plan.limit,
    relations: { bucketId: type.bucketId, locale },
  });
}

/** The one statement a (non-aggregate) query runs, with a whole budget (for the bench to EXPLAIN exactly what the server runs). */
export function entryQueryStatement(q: PreparedQuery, ctx: Pick<QueryContext, 'workspace' | 'config'>, bytes: ByteBudget): Sql {
  const page = { statement: pageOf(q, ctx).statement, offset: q.plan.offset, limit: q.plan.limit };
  const o = {
    config: ctx.config,
    workspace: ctx.workspace,
    bucketId: q.type.bucketId,
    locale: q.locale,
    budget: { used: 0, limit: REFERENCE_BUDGET },
    bytes,
  };
  return projectionStatement(page, q.plan.selection, o).statement;
}

export interface QueryResult {
  /** The answer's body as JSON text (`{"data":[...],"pagination":{...}}`), its files as holes. */
  json: HoledJson;
}

/**
 * Runs a prepared query. `bytes` counts its body, every byte of it; it and `budget` (referenced
 * entries and files) are shared across a batch.
 */
export async function executeQuery(
  q: PreparedQuery,
  ctx: QueryContext,
  bytes: ByteBudget,
  budget = { used: 0, limit: REFERENCE_BUDGET },
): Promise<QueryResult> {
  const { plan, type, locale } = q;
  const relations = { bucketId: type.bucketId, locale };
  const visibility = { workspaceId: ctx.workspace.id, kinds: ['typed' as const], contentTypeId: type.id, typed: type.typedReady };
  if (plan.aggregate) {
    const zones = await unknownTimeZones(ctx.db, q);
    if (Object.keys(zones).length) throw new DomainError('invalid', zones);
    const grouped = plan.aggregate.groupBy.length > 0;
    const result = await runAggregate(ctx.db, {
      visibility,
      filter: plan.filter,
      plan: plan.aggregate,
      relations,
      offset: plan.offset,
      limit: plan.limit,
      errorPrefix: q.prefix,
    });
    const pagination = grouped
      ? { offset: plan.offset, limit: plan.limit, hasMore: result.hasMore }
      : { offset: 0, limit: 1, hasMore: false };
    const text = JSON.stringify({ data: result.rows, pagination });
    bytes.spend(Buffer.byteLength(text));
    return { json: { parts: [text], holes: [] } };
  }
  const { statement, sort } = pageOf(q, ctx);
  const options = {
    config: ctx.config,
    workspace: ctx.workspace,
    bucketId: type.bucketId,
    locale,
    now: ctx.now,
    errorPath: `${q.prefix}fields`,
    budget,
    bytes,
  };
  const page = await projectPage(
    ctx.db,
    { statement, offset: plan.offset, limit: plan.limit, check: (first) => checkSortable(sort, first) },
    plan.selection,
    options,
  );
  const pagination = { offset: plan.offset, limit: plan.limit, hasMore: page.count > plan.limit };
  const json = wrapJson('{"data":[', page.items, `],"pagination":${JSON.stringify(pagination)}}`);
  bytes.spend(jsonTextBytes(json, ctx.now));
  return { json };
}
