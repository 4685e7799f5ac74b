// The structured query of typed entries, single and batched (core/content/query: parse, compile,
// project, aggregate).
import { DomainError, throwIfInvalid } from '../errors';
import { fieldError, fieldErrors, oneFieldError } from '../../lib/field-errors';
import { concatJson, type HoledJson } from '../../lib/fresh-json';
import { answerBudget } from '../answer-budget';
import { bucketIdByName, cachedTypesOfBucketName } from '../content/content-types';
import type { EntryQueryBody } from '../content/query/parse';
import { REFERENCE_BUDGET } from '../content/query/project';
import { executeQuery, pageRows, prepareQuery, type PreparedQuery, type QueryContext } from '../content/query/run';
import type { BodyOf, OperationContext } from './context';

/** Rows all members of a batch may return together, and the size of its serialized result. */
export const BATCH_QUERY_LIMITS = { rows: 500, resultBytes: 2 * 1024 * 1024 };

async function queryContext(cx: OperationContext, bucket: string): Promise<QueryContext> {
  const { core, workspace } = cx;
  return {
    db: core.db,
    config: core.config,
    workspace: { id: workspace.id, name: workspace.name, locales: workspace.locales },
    types: await cachedTypesOfBucketName(core.db, core.lookups.contentTypes, workspace.id, bucket),
    now: core.clock.now(),
  };
}

/** A query's refusal before it reads anything. */
function refuse(problem: Exclude<ReturnType<typeof prepareQuery>, PreparedQuery>): never {
  if (problem.kind === 'not_found') throw new DomainError('not_found');
  if (problem.kind === 'locale') throw new DomainError('invalid_locale');
  throw new DomainError('invalid', problem.errors);
}

/** A structured query's answer as JSON text. */
export async function queryEntries(cx: OperationContext, bucket: string, body: BodyOf<'queryEntries'>): Promise<HoledJson> {
  const ctx = await queryContext(cx, bucket);
  const prepared = prepareQuery(body, ctx);
  if ('kind' in prepared) refuse(prepared);
  return (await executeQuery(prepared, ctx, answerBudget(cx.core.config.deliveryAnswerBytes, 'limit', 'ask for fewer rows or fields')))
    .json;
}

/** Member names must be unique as the request wrote them, JSON escapes decoded. */
export function checkMemberNames(names: string[]): void {
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined)
    throw new DomainError(
      'invalid',
      oneFieldError('queries', fieldError('repeated', 'The :attribute field names the query :name more than once.', { name: repeated })),
    );
}

/**
 * Named queries run one after the other, without a shared snapshot; the row, reference and byte
 * budgets span the whole answer. `names`: the members' names as the request wrote them, repeats
 * included (a JSON object keeps only the last of equal names).
 */
export async function queryEntriesBatch(
  cx: OperationContext,
  bucket: string,
  body: BodyOf<'queryEntriesBatch'>,
  names: string[] = Object.keys(body.queries),
) {
  const members = Object.entries(body.queries) as [string, EntryQueryBody][];
  checkMemberNames(names);
  const ctx = await queryContext(cx, bucket);
  // A bucket with no content types may not exist at all: that is a 404 of its own.
  if (!ctx.types.size && (await bucketIdByName(cx.core.db, ctx.workspace.id, bucket)) === undefined) throw new DomainError('not_found');
  for (const [name, query] of members) {
    if (!ctx.types.has(query.type))
      throw new DomainError('not_found', undefined, { message: `The content type of the query ${name} was not found.` });
  }
  const prepared: [string, PreparedQuery][] = [];
  const errors = fieldErrors();
  let locale = false;
  for (const [name, query] of members) {
    const p = prepareQuery(query, ctx, `queries.${name}.`);
    if (!('kind' in p)) prepared.push([name, p]);
    else if (p.kind === 'locale') locale = true;
    else if (p.kind === 'invalid') Object.assign(errors, p.errors);
  }
  if (locale) throw new DomainError('invalid_locale');
  const rowsAsked = prepared.reduce((n, [, p]) => n + pageRows(p), 0);
  if (!Object.keys(errors).length && rowsAsked > BATCH_QUERY_LIMITS.rows) {
    errors.queries = [
      fieldError('rows', 'The :attribute field asks for :rows rows; the members of a batch may return at most :limit together.', {
        rows: rowsAsked,
        limit: BATCH_QUERY_LIMITS.rows,
      }),
    ];
  }
  throwIfInvalid(errors);
  const budget = { used: 0, limit: REFERENCE_BUDGET };
  const bytes = answerBudget(BATCH_QUERY_LIMITS.resultBytes, 'queries', 'ask for fewer rows or fields');
  // The whole answer counts: `{"results":{}}`, each `"name":` and the commas between; each
  // member counts its result.
  const pieces: (string | HoledJson)[] = ['{"results":{'];
  bytes.spend('{"results":{}}'.length);
  for (const [i, [name, p]] of prepared.entries()) {
    const key = `${i > 0 ? ',' : ''}${JSON.stringify(name)}:`;
    bytes.spend(Buffer.byteLength(key));
    pieces.push(key, (await executeQuery(p, ctx, bytes, budget)).json);
  }
  pieces.push('}}');
  return concatJson(pieces);
}
