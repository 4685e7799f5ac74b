// The Objects API's operations (JSON entries): each takes who asks and a typed input, runs in the
// unit of work of the entry core, and returns what the answer holds, or throws a DomainError.
// Pagination URLs and status codes are the HTTP edge's (objects/routes.ts).
import type { components } from '@workspace-api/sdk/openapi';
import { DomainError, throwIfInvalid } from '../errors';
import { fieldErrors } from '../../lib/field-errors';
import { createJsonEntry, deleteJsonEntry, restoreJsonEntry, updateJsonEntry } from '../content/json-entries';
import { documentsIn, findEntries, refUnderPrefix, scope, type ContentChoice, type Sight } from '../content/store';
import { getRevision, listRevisions } from '../content/revisions';
import { diff } from '../content/diff';
import { parseFields, parseFilter, parseSort } from '../query/parse';
import { narrowedOn, type Visibility } from '../query/candidates';
import { project, runQuery } from '../query/run';
import { raw, sql, type Sql } from '../sql';
import { presentObject, presentRevision, presentTrashRow, readEnvelope } from '../content/object-envelope';
import { openRunner } from '../transaction';
import { isConfiguredLocale, readLocale, unconfiguredLocale } from '../content/locales';
import { idCursorPage } from '../content/pages';
import { decodeCursor, encodeCursor } from '../cursors';
import { writeContext, type BodyOf, type OperationContext, type QueryOf } from './context';

type S = components['schemas'];
/** An answer's body, and whether it holds exact numbers (lib/exact-json.ts). */
export interface Exactly<T> {
  body: T;
  exact: boolean;
}

const COMPARE_LIMIT = 500;

/** The caller's workspace, when Objects are on globally and for it (`not_found` otherwise). */
function objectsWorkspace(cx: OperationContext) {
  if (!cx.core.config.objectsEnabled || !cx.workspace.objectsEnabled) throw new DomainError('not_found');
  return cx.workspace;
}

const contentFor = (view: 'full' | 'summary', locale: string): ContentChoice =>
  view === 'summary' ? { kind: 'none' } : documentsIn(locale);

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

/** What delivery reads of objects see. */
const published = (workspaceId: number): Sight => ({ workspaceId, kinds: ['json'], state: 'published' });

/** A live JSON entry of the workspace, or one in Trash within its retention (history reads). */
async function requireObjectWithHistory(cx: OperationContext, id: number) {
  const workspace = objectsWorkspace(cx);
  const sight: Sight = { workspaceId: workspace.id, kinds: ['json'], state: 'history', now: cx.core.clock.sqlNow() };
  const [entry] = await findEntries(cx.core.db, sight, sql`e.id = ${id}`, { content: { kind: 'none' } });
  if (!entry) throw new DomainError('not_found');
  return entry;
}

/** The envelope of an entry just written (base language), in the caller's unit of work when there is one. */
async function readBack(cx: OperationContext, id: number): Promise<Exactly<S['ObjectEnvelope']>> {
  const found = await readEnvelope(openRunner(cx.core), { workspaceId: cx.workspace.id, kinds: ['json'], state: 'live' }, id);
  if (!found) throw new DomainError('not_found');
  return { body: found.envelope, exact: found.exact };
}

/** A page of published objects in id order, with the cursors around it. */
export async function listObjects(cx: OperationContext, query: QueryOf<'listObjects'>) {
  const workspace = objectsWorkspace(cx);
  const locale = readLocale(query.locale, workspace.locales);
  const view = query.view ?? 'summary';
  const perPage = query.per_page ?? 50;
  const place = placeVisibility(workspace.id, query);
  const where = narrowedOn('e', place);
  const sight = published(workspace.id);
  // A bucket's page is read from the (bucket_id, id) index: in id order alone a generic plan walked
  // the primary key past every other bucket's objects (400 ms for 2 objects after 300,000 others).
  const leading = place.bucketIds?.length ? 'e.bucket_id' : undefined;
  const { page, next, prev } = await idCursorPage(
    (after, p) => findEntries(cx.core.db, sight, scope.and(where, after), { content: contentFor(view, locale), page: p }),
    query.cursor,
    perPage,
    leading,
  );
  return { data: page.map((r) => presentObject(r, { locale, view })), exact: page.some((r) => r.exact), perPage, next, prev };
}

export async function getObject(cx: OperationContext, id: number, query: QueryOf<'getObject'>): Promise<Exactly<S['ObjectEnvelope']>> {
  const workspace = objectsWorkspace(cx);
  const locale = readLocale(query.locale, workspace.locales);
  const [entry] = await findEntries(cx.core.db, published(workspace.id), sql`e.id = ${id}`, { content: contentFor('full', locale) });
  if (!entry) throw new DomainError('not_found');
  return { body: presentObject(entry, { locale, view: 'full' }), exact: entry.exact };
}

export async function queryObjects(cx: OperationContext, body: BodyOf<'queryObjects'>) {
  const workspace = objectsWorkspace(cx);
  const errors = fieldErrors();
  const locale = body.locale ?? 'en-US';
  if (!isConfiguredLocale(locale, workspace.locales)) errors.locale = [unconfiguredLocale(locale)];
  const filter = parseFilter(body.filter, errors);
  const sort = parseSort(body.sort, errors);
  const fields = parseFields(body.fields, errors);
  throwIfInvalid(errors);
  const plan = { filter, sort, fields, locale, offset: body.offset ?? 0, limit: body.limit ?? 20 };
  const { records, hasMore } = await runQuery(cx.core.db, placeVisibility(workspace.id, body), plan);
  const projection = fields ? (stored: unknown) => project(stored, fields) : undefined;
  return {
    exact: records.some((r) => r.exact),
    body: {
      data: records.map((r) => presentObject(r, { locale, view: 'full', data: projection })),
      pagination: { offset: plan.offset, limit: plan.limit, hasMore },
    },
  };
}

/** What a create and an update both write, in the core's words; `exact`: the body's numbers were read exactly (the edge's lossless parse). */
const objectInput = (body: BodyOf<'createObject'> | BodyOf<'updateObject'>, exact: boolean) => ({
  data: body.data,
  ref: body.ref,
  path: body.path,
  bucketId: body.bucket_id,
  status: body.status,
  contract: body.contract,
  exact,
});

export async function createObject(cx: OperationContext, body: BodyOf<'createObject'>, exact = false) {
  objectsWorkspace(cx);
  const id = await createJsonEntry(writeContext(cx), { ...objectInput(body, exact), data: body.data });
  return readBack(cx, id);
}

export async function updateObject(cx: OperationContext, id: number, body: BodyOf<'updateObject'>, exact = false) {
  objectsWorkspace(cx);
  await updateJsonEntry(writeContext(cx), id, {
    ...objectInput(body, exact),
    lockVersion: body.lock_version,
    translations: body.translations,
  });
  return readBack(cx, id);
}

export async function deleteObject(cx: OperationContext, id: number, body: BodyOf<'deleteObject'>): Promise<void> {
  objectsWorkspace(cx);
  await deleteJsonEntry(writeContext(cx), id, body.lock_version);
}

export function restoreObject(cx: OperationContext, id: number, body: BodyOf<'restoreObject'>) {
  objectsWorkspace(cx);
  return restoreJsonEntry(writeContext(cx), id, body.lock_version, body.revision_id);
}

/** Objects in Trash, newest deletion first; cursor: [deleted_at of the last row (wire format), its id]. */
export async function listObjectTrash(cx: OperationContext, query: QueryOf<'listObjectTrash'>) {
  const workspace = objectsWorkspace(cx);
  const perPage = query.per_page ?? 25;
  const after = query.cursor ? decodeCursor<[string, number]>(query.cursor, ['string', 'integer']) : undefined;
  const where = after ? sql`(e.deleted_at, e.id) < (${after[0]}::timestamptz, ${after[1]}::int)` : raw('true');
  const found = await findEntries(
    cx.core.db,
    { workspaceId: workspace.id, kinds: ['json'], state: 'trash', now: cx.core.clock.sqlNow() },
    where,
    { content: { kind: 'none' }, page: { orderBy: raw('e.deleted_at DESC, e.id DESC'), limit: perPage + 1 } },
  );
  const page = found.slice(0, perPage);
  const next = found.length > perPage ? encodeCursor([page[page.length - 1].deleted_at!, page[page.length - 1].id]) : null;
  return { data: page.map(presentTrashRow), next };
}

export async function listObjectRevisions(cx: OperationContext, id: number, query: QueryOf<'listObjectRevisions'>) {
  const entry = await requireObjectWithHistory(cx, id);
  const perPage = query.per_page ?? 25;
  const before = query.cursor ? decodeCursor<[number]>(query.cursor, ['integer'])[0] : undefined;
  const found = await listRevisions(cx.core.db, entry.id, perPage + 1, before);
  const page = found.slice(0, perPage);
  const next = found.length > perPage ? encodeCursor([page[page.length - 1].id]) : null;
  return { data: page.map(presentRevision), next };
}

export async function getObjectRevision(cx: OperationContext, id: number, revisionId: number) {
  const entry = await requireObjectWithHistory(cx, id);
  const revision = await getRevision(cx.core.db, entry.id, revisionId);
  if (!revision) throw new DomainError('not_found');
  const { exact, snapshot, ...row } = revision;
  return { exact, body: { ...presentRevision(row), snapshot: snapshot as never } };
}

export async function compareObjectRevisions(cx: OperationContext, id: number, query: QueryOf<'compareObjectRevisions'>) {
  const entry = await requireObjectWithHistory(cx, id);
  const [from, to] = await Promise.all([getRevision(cx.core.db, entry.id, query.from), getRevision(cx.core.db, entry.id, query.to)]);
  if (!from || !to) throw new DomainError('not_found');
  const { changes, truncated } = diff(from.snapshot, to.snapshot, COMPARE_LIMIT);
  return { exact: from.exact || to.exact, body: { from: from.id, to: to.id, changes, truncated } };
}
