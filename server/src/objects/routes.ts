// The Objects API: thin handlers over the entry core (parse, call an operation, shape the answer).
// Domain errors of the core become this document's wire errors in `toHttp`, the one place.
import type { AppContext } from '../context';
import type { ApiKeyPrincipal } from '../http/auth';
import { handlers } from '../http/handlers';
import { fieldErrors, notFound, validationFailed } from '../http/errors';
import { idCursorPage, mapCoreErrors, pageLinks, readLocale } from '../http/entry-http';
import { decodeCursor, encodeCursor, pageBase, pageUrl } from '../http/pagination';
import { apiKeyActor } from '../events/audit';
import { createJsonEntry, deleteJsonEntry, restoreJsonEntry, updateJsonEntry, type WriteContext } from '../core/entries/json-entries';
import { documentsIn, findEntries, refUnderPrefix, scope, type ContentChoice } from '../core/entries/store';
import { getRevision, listRevisions } from '../core/entries/revisions';
import { diff } from '../core/entries/diff';
import { parseFields, parseFilter, parseSort } from '../core/query/parse';
import { visibleOn, type Visibility } from '../core/query/candidates';
import { project, runQuery } from '../core/query/run';
import { raw, sql, type Sql } from '../core/sql';
import { presentObject, presentRevision, presentTrashRow, readEnvelope } from '../core/entries/object-envelope';
import { openRunner } from '../core/transaction';
import { isConfiguredLocale, unconfiguredLocale } from '../core/entries/locales';

const COMPARE_LIMIT = 500;

/** The calling key's workspace, when Objects are on globally and for it (`404` otherwise). */
function objectsWorkspace(app: AppContext, principal: ApiKeyPrincipal | undefined) {
  const p = principal!;
  if (!app.config.objectsEnabled || !p.workspace.objectsEnabled) throw notFound();
  return p.workspace;
}

const contentFor = (view: 'full' | 'summary', locale: string): ContentChoice =>
  view === 'summary' ? { kind: 'none' } : documentsIn(locale);

function writer(app: AppContext, principal: ApiKeyPrincipal | undefined): WriteContext {
  const workspace = objectsWorkspace(app, principal);
  return {
    app,
    workspace: { id: workspace.id, locales: workspace.locales },
    author: { actor: apiKeyActor(principal!.keyId), source: principal!.pipelineStep ? 'pipeline' : 'api' },
  };
}

/** Where a listing or query looks: the workspace's JSON entries, narrowed by bucket, ref, prefix. */
function placeVisibility(workspaceId: number, q: { bucket?: string; bucket_id?: number; ref?: string; prefix?: string }): Visibility {
  const bucketIds: (number | Sql)[] = [];
  if (q.bucket !== undefined) bucketIds.push(sql`(SELECT id FROM buckets WHERE workspace_id = ${workspaceId}::int AND name = ${q.bucket})`);
  if (q.bucket_id !== undefined) bucketIds.push(q.bucket_id);
  const also: Sql[] = [];
  if (q.ref !== undefined) also.push(sql`e.ref = ${q.ref}`);
  if (q.prefix !== undefined) also.push(refUnderPrefix(raw('e.ref'), q.prefix));
  return { workspaceId, kinds: ['json'], bucketIds, also };
}

/** A live JSON entry of the workspace, or one in Trash within its retention (history reads). */
async function requireObjectWithHistory(app: AppContext, workspaceId: number, id: number) {
  const now = app.clock.sqlNow();
  const [entry] = await findEntries(app.db, scope.and(sql`e.id = ${id}`, scope.workspace(workspaceId), scope.kinds('json'), sql`(${scope.live} OR (${scope.inTrash(now)}))`), {
    content: { kind: 'none' },
  });
  if (!entry) throw notFound();
  return entry;
}

export const objectHandlers = mapCoreErrors(
  handlers({
    async listObjects({ query, principal, koa }, app) {
      const workspace = objectsWorkspace(app, principal);
      const locale = readLocale(query.locale, workspace.locales);
      const view = query.view ?? 'summary';
      const perPage = query.per_page ?? 50;
      const where = scope.and(visibleOn('e', placeVisibility(workspace.id, query)), scope.published);
      const paged = await idCursorPage((after, page) => findEntries(app.db, scope.and(where, after), { content: contentFor(view, locale), page }), query.cursor, perPage);
      const { page, next, prev } = paged;
      const base = app.config.baseUrl;
      return {
        status: 200,
        exactJson: page.some((r) => r.exact),
        body: {
          data: page.map((r) => presentObject(r, { locale, view })),
          path: pageBase(base, koa),
          per_page: perPage,
          next_cursor: next,
          prev_cursor: prev,
          ...pageLinks(base, koa, paged),
        },
      };
    },

    async getObject({ params, query, principal }, app) {
      const workspace = objectsWorkspace(app, principal);
      const locale = readLocale(query.locale, workspace.locales);
      const where = scope.and(sql`e.id = ${params.objectRef}`, scope.workspace(workspace.id), scope.kinds('json'), scope.live, scope.published);
      const [entry] = await findEntries(app.db, where, { content: contentFor('full', locale) });
      if (!entry) throw notFound();
      return { status: 200, body: presentObject(entry, { locale, view: 'full' }), exactJson: entry.exact };
    },

    async queryObjects({ body, principal }, app) {
      const workspace = objectsWorkspace(app, principal);
      const errors = fieldErrors();
      const locale = body.locale ?? 'en-US';
      if (!isConfiguredLocale(locale, workspace.locales)) errors.locale = [unconfiguredLocale(locale)];
      const filter = parseFilter(body.filter, errors);
      const sort = parseSort(body.sort, errors);
      const fields = parseFields(body.fields, errors);
      if (Object.keys(errors).length) throw validationFailed(errors);
      const plan = { filter, sort, fields, locale, offset: body.offset ?? 0, limit: body.limit ?? 20 };
      const { records, hasMore } = await runQuery(app.db, placeVisibility(workspace.id, body), plan);
      const projection = fields ? (stored: unknown) => project(stored, fields) : undefined;
      return {
        status: 200,
        exactJson: records.some((r) => r.exact),
        body: {
          data: records.map((r) => presentObject(r, { locale, view: 'full', data: projection })),
          pagination: { offset: plan.offset, limit: plan.limit, hasMore },
        },
      };
    },

    async createObject({ body, principal, koa }, app) {
      const ctx = writer(app, principal);
      const id = await createJsonEntry(ctx, {
        data: body.data,
        ref: body.ref,
        path: body.path,
        bucketId: body.bucket_id,
        status: body.status,
        contract: body.contract,
        exact: koa.state.exactNumbers === true,
      });
      return readBack(app, id, 201);
    },

    async updateObject({ params, body, principal, koa }, app) {
      const ctx = writer(app, principal);
      const id = await updateJsonEntry(ctx, params.objectRef, {
        lockVersion: body.lock_version,
        data: body.data,
        ref: body.ref,
        path: body.path,
        bucketId: body.bucket_id,
        status: body.status,
        contract: body.contract,
        translations: body.translations,
        exact: koa.state.exactNumbers === true,
      });
      return readBack(app, id, 200);
    },

    async deleteObject({ params, body, principal }, app) {
      await deleteJsonEntry(writer(app, principal), params.objectRef, body.lock_version);
      return { status: 204 };
    },

    async listObjectTrash({ query, principal, koa }, app) {
      const workspace = objectsWorkspace(app, principal);
      const perPage = query.per_page ?? 25;
      const now = app.clock.sqlNow();
      // Cursor: [deleted_at of the last row (wire format), its id]; newest deletion first.
      const after = query.cursor ? decodeCursor<[string, number]>(query.cursor, ['string', 'integer']) : undefined;
      const where = scope.and(
        scope.workspace(workspace.id),
        scope.kinds('json'),
        scope.inTrash(now),
        after ? sql`(e.deleted_at, e.id) < (${after[0]}::timestamptz, ${after[1]}::int)` : raw('true'),
      );
      const found = await findEntries(app.db, where, { content: { kind: 'none' }, page: { orderBy: raw('e.deleted_at DESC, e.id DESC'), limit: perPage + 1 } });
      const page = found.slice(0, perPage);
      const next = found.length > perPage ? encodeCursor([page[page.length - 1].deleted_at!, page[page.length - 1].id]) : null;
      return { status: 200, body: { data: page.map(presentTrashRow), next_cursor: next, next_page_url: pageUrl(app.config.baseUrl, koa, next) } };
    },

    async listObjectRevisions({ params, query, principal, koa }, app) {
      const workspace = objectsWorkspace(app, principal);
      const entry = await requireObjectWithHistory(app, workspace.id, params.objectRef);
      const perPage = query.per_page ?? 25;
      const before = query.cursor ? decodeCursor<[number]>(query.cursor, ['integer'])[0] : undefined;
      const found = await listRevisions(app.db, entry.id, perPage + 1, before);
      const page = found.slice(0, perPage);
      const next = found.length > perPage ? encodeCursor([page[page.length - 1].id]) : null;
      return { status: 200, body: { data: page.map(presentRevision), next_cursor: next, next_page_url: pageUrl(app.config.baseUrl, koa, next) } };
    },

    async getObjectRevision({ params, principal }, app) {
      const workspace = objectsWorkspace(app, principal);
      const entry = await requireObjectWithHistory(app, workspace.id, params.objectRef);
      const revision = await getRevision(app.db, entry.id, params.revisionId);
      if (!revision) throw notFound();
      const { exact, snapshot, ...row } = revision;
      return { status: 200, exactJson: exact, body: { ...presentRevision(row), snapshot: snapshot as never } };
    },

    async compareObjectRevisions({ params, query, principal }, app) {
      const workspace = objectsWorkspace(app, principal);
      const entry = await requireObjectWithHistory(app, workspace.id, params.objectRef);
      const [from, to] = await Promise.all([getRevision(app.db, entry.id, query.from), getRevision(app.db, entry.id, query.to)]);
      if (!from || !to) throw notFound();
      const { changes, truncated } = diff(from.snapshot, to.snapshot, COMPARE_LIMIT);
      return { status: 200, exactJson: from.exact || to.exact, body: { from: from.id, to: to.id, changes: changes, truncated } };
    },

    async restoreObject({ params, body, principal }, app) {
      const result = await restoreJsonEntry(writer(app, principal), params.objectRef, body.lock_version, body.revision_id);
      return { status: 200, body: result };
    },
  }),
  'object',
);

/** The envelope of an entry just written (base language). */
async function readBack<S extends 200 | 201>(app: AppContext, id: number, status: S) {
  // In the caller's unit of work when there is one (a pipeline step records the write with it).
  const found = await readEnvelope(openRunner(app), id);
  if (!found) throw notFound();
  return { status, exactJson: found.exact, body: found.envelope };
}
