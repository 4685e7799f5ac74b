// The structured query of typed entries, single and batched: thin handlers over
// core/entries/query (parse, compile, project, aggregate).
import type { AppContext } from '../context';
import type { ApiKeyPrincipal } from '../http/auth';
import { handlers } from '../http/handlers';
import { jsonBytes } from '../lib/byte-budget';
import { keysAt } from '../lib/json-keys';
import { fieldErrors, HttpError, notFound, validationFailed } from '../http/errors';
import { answerBudget, invalidLocale, mapCoreErrors } from '../http/entry-http';
import { bucketIdByName, cachedTypesOfBucketName } from '../core/entries/content-types';
import type { EntryQueryBody } from '../core/entries/query/parse';
import { REFERENCE_BUDGET } from '../core/entries/query/project';
import { executeQuery, pageRows, prepareQuery, type PreparedQuery, type QueryContext } from '../core/entries/query/run';
import { emptyRecord } from '../lib/records';

/** Rows all members of a batch may return together, and the size of its serialized result. */
export const BATCH_QUERY_LIMITS = { rows: 500, resultBytes: 2 * 1024 * 1024 };

async function queryContext(app: AppContext, principal: ApiKeyPrincipal | undefined, bucket: string): Promise<QueryContext> {
  const workspace = principal!.workspace;
  return {
    db: app.db,
    config: app.config,
    workspace: { id: workspace.id, name: workspace.name, locales: workspace.locales },
    types: await cachedTypesOfBucketName(app.db, app.lookups.contentTypes, workspace.id, bucket),
    now: app.clock.now(),
  };
}

export const entryQueryHandlers = mapCoreErrors(
  handlers({
    async queryEntries({ params, body, principal }, app) {
      const ctx = await queryContext(app, principal, params.bucket);
      const prepared = prepareQuery(body, ctx);
      if ('kind' in prepared) {
        if (prepared.kind === 'not_found') throw notFound();
        if (prepared.kind === 'locale') throw invalidLocale();
        throw validationFailed(prepared.errors);
      }
      const result = await executeQuery(prepared, ctx, answerBudget(app.config.deliveryAnswerBytes, 'limit', 'ask for fewer rows or fields'));
      return { status: 200, exactJson: result.exact, body: result.body };
    },

    async queryEntriesBatch({ params, body, principal, koa }, app) {
      const members = Object.entries(body.queries) as [string, EntryQueryBody][];
      // Names must be unique as read, JSON escapes decoded (the parse kept the last of equals).
      const names = keysAt(koa.state.rawBody as string, ['queries']) ?? [];
      const repeated = names.find((n, i) => names.indexOf(n) !== i);
      if (repeated !== undefined) throw validationFailed(Object.assign(fieldErrors(), { queries: [`The queries field names the query ${repeated} more than once.`] }));
      // One unit per member, reserved before anything runs (the router counted the first).
      if (members.length > 1) await app.rateLimits.consume('entries', `key:${principal!.keyId}`, members.length - 1);
      const ctx = await queryContext(app, principal, params.bucket);
      const prepared: [string, PreparedQuery][] = [];
      const errors = fieldErrors();
      // A bucket with no content types may not exist at all: that is a 404 of its own.
      if (!ctx.types.size && (await bucketIdByName(app.db, ctx.workspace.id, params.bucket)) === undefined) throw notFound();
      for (const [name] of members) {
        const query = body.queries[name] as EntryQueryBody;
        if (!ctx.types.has(query.type)) throw new HttpError(404, { message: `The content type of the query ${name} was not found.` });
      }
      let locale = false;
      for (const [name, query] of members) {
        const p = prepareQuery(query, ctx, `queries.${name}.`);
        if (!('kind' in p)) prepared.push([name, p]);
        else if (p.kind === 'locale') locale = true;
        else if (p.kind === 'invalid') Object.assign(errors, p.errors);
      }
      if (locale) throw invalidLocale();
      const rowsAsked = prepared.reduce((n, [, p]) => n + pageRows(p), 0);
      if (!Object.keys(errors).length && rowsAsked > BATCH_QUERY_LIMITS.rows) {
        errors.queries = [`The queries field asks for ${rowsAsked} rows; the members of a batch may return at most ${BATCH_QUERY_LIMITS.rows} together.`];
      }
      if (Object.keys(errors).length) throw validationFailed(errors);
      // Sequential, without a shared snapshot; the budgets span the whole response.
      const budget = { used: 0, limit: REFERENCE_BUDGET };
      const bytes = answerBudget(BATCH_QUERY_LIMITS.resultBytes, 'queries', 'ask for fewer rows or fields');
      const results = emptyRecord();
      let exact = false;
      // The whole answer counts: `{"results":{}}`, each `"name":` and the commas between; each
      // member counts its result as it builds it.
      bytes.spend('{"results":{}}'.length);
      for (const [i, [name, p]] of prepared.entries()) {
        bytes.spend((i > 0 ? 1 : 0) + jsonBytes(name) + 1);
        const result = await executeQuery(p, ctx, bytes, budget);
        results[name] = result.body;
        exact ||= result.exact;
      }
      return { status: 200, exactJson: exact, body: { results } as never };
    },
  }),
  'entry',
);
