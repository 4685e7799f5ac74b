// The typed Entries API's reads and single writes: delivery lists and reads of published entries,
// and create, update and delete (core/content/typed-entries.ts), each answered with the entry as
// PostgreSQL renders it (core/content/render.ts): JSON text, passed through.
import { DomainError, invalidAt } from '../errors';
import { answerBudget } from '../answer-budget';
import { cachedTypesOfBucketName, cachedTypesOfWorkspace, type ContentTypeDef } from '../content/content-types';
import { ULID } from '../content/field-values';
import { readsAtOnce, renderEntries } from '../content/render';
import { jsonTextBytes } from '../../lib/fresh-json';
import { createTypedEntry, deleteTypedEntry, updateTypedEntry } from '../content/typed-entries';
import { pageIds, scope, sightOn, type EntryRecord, type Sight } from '../content/store';
import { readLocale, writeLocale } from '../content/locales';
import { idCursor, idOrder } from '../content/pages';
import { raw, rows, sql, type Sql } from '../sql';
import type { ByteBudget } from '../../lib/byte-budget';
import { transaction } from '../transaction';
import { writeContext, type BodyOf, type OperationContext, type QueryOf } from './context';

/** The plain (unpaged) v1 list holds at most this many entries; pages reach the rest. */
export const PLAIN_LIST_LIMIT = 1000;

async function requireType(cx: OperationContext, bucket: string, type: string): Promise<ContentTypeDef> {
  const found = (await cachedTypesOfBucketName(cx.core.db, cx.core.lookups.contentTypes, cx.workspace.id, bucket)).get(type);
  if (!found) throw new DomainError('not_found');
  return found;
}

/** An entry ULID of a path, upper-cased (a malformed one names nothing). */
function entryIdOf(entryId: string): string {
  if (!ULID.test(entryId)) throw new DomainError('not_found');
  return entryId.toUpperCase();
}

/** The options of a rendering by PostgreSQL (core/content/render.ts) for this caller. */
async function renderOptions(
  cx: OperationContext,
  locale: string,
  view: 'full' | 'summary',
  published: boolean,
  maxBytes: number,
  rootType?: ContentTypeDef,
  keepMissed = false,
) {
  const types = await cachedTypesOfWorkspace(cx.core.db, cx.core.lookups.contentTypes, cx.workspace.id);
  // The workspace list's own definition of the type (all types if that list does not have it yet).
  const listed = rootType && types.filter((t) => t.id === rootType.id);
  const rootTypes = listed?.length ? listed : undefined;
  return {
    config: cx.core.config,
    workspace: cx.workspace,
    types,
    rootTypes,
    locale,
    publishedOnly: published,
    view,
    now: cx.core.clock.now(),
    maxBytes,
    kept: published && cx.core.keeper ? { keeper: cx.core.keeper, keepMissed } : undefined,
  };
}

/** The entry `id` as a write answers it: in its unit of work, as it left it, in the written locale, drafts included. */
async function written(cx: OperationContext, write: () => Promise<EntryRecord>, locale: string) {
  const o = await renderOptions(cx, locale, 'full', false, Number.MAX_SAFE_INTEGER);
  return transaction(cx.core, async (tx) => {
    const entry = await write();
    const rootTypes = o.types.filter((t) => t.id === entry.content_type_id);
    return (
      await renderEntries(
        tx,
        sql`SELECT ${entry.id}::int AS pk, 1 AS pos`,
        { ...o, rootTypes: rootTypes.length ? rootTypes : undefined },
        { limit: 1 },
      )
    ).items;
  });
}

type ListQuery = QueryOf<'listEntries'> | QueryOf<'listEntriesV2'>;

/**
 * Delivery answers (published entries) within `budget`. Lists keep the texts they missed (kept-texts.ts); a
 * read uses those: reads spread over many entries would render most of them twice, once more to keep.
 */
async function rendered(
  cx: OperationContext,
  found: Sql,
  locale: string,
  view: 'full' | 'summary',
  budget: ByteBudget,
  show: { limit: number; reverse?: boolean },
  rootType?: ContentTypeDef,
  keepMissed = rootType !== undefined,
) {
  // Lists name their type and keep what they missed; a read does neither.
  const o = await renderOptions(cx, locale, view, true, budget.limit, rootType, keepMissed);
  const shown = await renderEntries(cx.core.db, found, o, show);
  // Past the budget no text came back; within it, the file objects still count.
  budget.spend(shown.over ? budget.limit + 1 : jsonTextBytes(shown.items, o.now) + 1);
  return shown;
}

/**
 * v1 and v2 lists of published entries of one content type: a plain v1 list (`paged: false`) or
 * a page with the cursors around it. `items`: the entries as JSON text (comma-separated).
 */
export async function listEntries(cx: OperationContext, query: ListQuery, v2: boolean) {
  const type = await requireType(cx, query.contentBucket, query.contentType);
  const locale = readLocale(query.locale, cx.workspace.locales);
  const paged = v2 || query.per_page !== undefined || query.cursor !== undefined || query.view !== undefined;
  const view = query.view ?? (v2 ? 'summary' : 'full');
  // One type's entries are found on the (content_type_id, id) index whatever the plan: as `= ANY`
  // the type is no constant the order could drop, so the order needs that index. With `=`, a
  // generic plan walked the primary key and, past a type's last entry, read every later row of
  // the table (58 ms at 100,000 entries for a small type's last page; 0.03 ms on the index).
  const where = sql`e.content_type_id = ANY(ARRAY[${type.id}]::int[])`;
  const order = 'e.content_type_id';
  const advice = paged ? 'ask for fewer entries per page' : 'ask for pages of fewer entries (per_page)';
  const budget = answerBudget(cx.core.config.deliveryAnswerBytes, 'per_page', advice);
  if (!paged) {
    const page = { orderBy: idOrder(true, order), limit: PLAIN_LIST_LIMIT };
    const shown = await rendered(cx, pageIds(published(cx), where, page), locale, view, budget, page, type);
    return { paged: false as const, items: shown.items };
  }
  const cursor = idCursor(query.cursor, query.per_page ?? 50, order);
  const found = pageIds(published(cx), scope.and(where, cursor.where), cursor.page);
  const shown = await rendered(cx, found, locale, view, budget, { limit: query.per_page ?? 50, reverse: cursor.reverse }, type);
  return { paged: true as const, items: shown.items, ...cursor.links(shown.ids) };
}

/** What delivery reads of entries see. */
const published = (cx: OperationContext): Sight => ({ workspaceId: cx.workspace.id, kinds: ['typed'], state: 'published' });

/** The delivery read: the entry with its relations, rendered in one statement. */
export async function getEntry(cx: OperationContext, entryId: string, query: QueryOf<'getEntry'>) {
  const locale = readLocale(query.locale, cx.workspace.locales);
  const budget = answerBudget(cx.core.config.deliveryAnswerBytes, 'entry', 'select fewer fields with a structured query');
  const id = entryIdOf(entryId);
  const where = sql`e.entry_id = ${id}`;
  // A small model's read is one statement for every type; a larger one's finds its entry's type
  // first, and is written for what that type reaches (render.ts reachable).
  const types = await cachedTypesOfWorkspace(cx.core.db, cx.core.lookups.contentTypes, cx.workspace.id);
  let rootType: ContentTypeDef | undefined;
  if (!readsAtOnce(types)) {
    // Kept per process: an entry's type never changes (a deleted entry's reads as not found below).
    const typeId = await cx.core.lookups.entryTypes.get(`${cx.workspace.id}:${id}`, async () => {
      const [entry] = await rows<{ type: number }>(
        cx.core.db,
        sql`SELECT e.content_type_id AS type FROM entries e WHERE ${scope.and(sightOn(published(cx)), where)}`,
        true,
      );
      return entry?.type;
    });
    rootType = types.find((t) => t.id === typeId);
    if (!rootType) throw new DomainError('not_found');
  }
  const found = pageIds(published(cx), where, { orderBy: raw('e.id'), limit: 1 });
  const shown = await rendered(cx, found, locale, 'full', budget, { limit: 1 }, rootType, false);
  if (!shown.ids.length) throw new DomainError('not_found');
  return shown.items;
}

export async function createEntry(cx: OperationContext, query: QueryOf<'createEntry'>, body: BodyOf<'createEntry'>) {
  const locale = writeLocale(query.locale, cx.workspace.locales);
  const type = await requireType(cx, query.contentBucket, query.contentType);
  const input = { fields: body.fields, status: body.status, publishAt: body.publish_at, locales: body.locales, tags: body.tags };
  return written(cx, () => createTypedEntry(writeContext(cx, body.skipWebhooks), type, locale, input), locale);
}

export async function updateEntry(cx: OperationContext, entryId: string, query: QueryOf<'updateEntry'>, body: BodyOf<'updateEntry'>) {
  const locale = writeLocale(query.locale, cx.workspace.locales);
  const id = entryIdOf(entryId);
  // `check` is another name for expected_version on a single update.
  if (body.check !== undefined && body.expected_version !== undefined && body.check !== body.expected_version) {
    throw invalidAt('check', 'The :attribute field must match expected_version when both are given.');
  }
  const input = {
    fields: body.fields,
    status: body.status,
    publishAt: body.publish_at,
    locales: body.locales,
    tags: body.tags,
    expectedVersion: body.expected_version ?? body.check,
    versionField: body.expected_version !== undefined ? ('expected_version' as const) : ('check' as const),
  };
  return written(cx, () => updateTypedEntry(writeContext(cx, body.skipWebhooks), id, locale, input), locale);
}

export async function deleteEntry(cx: OperationContext, entryId: string, query: QueryOf<'deleteEntry'>): Promise<void> {
  await deleteTypedEntry(writeContext(cx, query.skipWebhooks), entryIdOf(entryId));
}
