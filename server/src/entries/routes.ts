// The typed Entries API: thin handlers over the entry core (content type lookup, the typed write
// path in core/entries/typed-entries.ts, rendering in core/entries/render.ts).
import type { AppContext } from '../context';
import type { ApiKeyPrincipal } from '../http/auth';
import { handlers } from '../http/handlers';
import { notFound, validationFailed, fieldErrors } from '../http/errors';
import { answerBudget, idCursorPage, mapCoreErrors, pageLinks, readLocale, writeLocale } from '../http/entry-http';
import { apiKeyActor } from '../events/audit';
import { cachedTypesOfBucket, cachedTypesOfBucketName, type ContentTypeDef } from '../core/entries/content-types';
import { ULID } from '../core/entries/field-values';
import { findWithRelated, renderEntries, summariesOf } from '../core/entries/render';
import { createTypedEntry, deleteTypedEntry, updateTypedEntry } from '../core/entries/typed-entries';
import { documentsIn, findEntries, scope, type ContentChoice, type EntryRecord } from '../core/entries/store';
import type { WriteContext } from '../core/entries/write';
import { sql, type Sql } from '../core/sql';

/** The plain (unpaged) v1 list holds at most this many entries; pages reach the rest. */
export const PLAIN_LIST_LIMIT = 1000;

async function requireType(app: AppContext, workspaceId: number, bucket: string, type: string): Promise<ContentTypeDef> {
  const found = (await cachedTypesOfBucketName(app.db, app.lookups.contentTypes, workspaceId, bucket)).get(type);
  if (!found) throw notFound();
  return found;
}

function writer(app: AppContext, principal: ApiKeyPrincipal | undefined, skipWebhooks: boolean | undefined): WriteContext {
  const p = principal!;
  return { app, workspace: { id: p.workspace.id, locales: p.workspace.locales }, author: { actor: apiKeyActor(p.keyId), source: 'api' }, skipWebhooks };
}


const renderOptions = (app: AppContext, principal: ApiKeyPrincipal | undefined, locale: string, publishedOnly: boolean) => ({
  config: app.config,
  workspace: { id: principal!.workspace.id, name: principal!.workspace.name },
  locale,
  publishedOnly,
  now: app.clock.now(),
  contentTypes: (bucketId: number) => cachedTypesOfBucket(app.db, app.lookups.contentTypes, bucketId),
  // Delivery reads only: a write renders its entry with the file rows of the moment.
  fileRows: publishedOnly ? app.fileRows : undefined,
});

/** Where a published typed entry of the workspace has this ULID (a malformed one names nothing: 404). */
function publishedWhere(workspaceId: number, entryId: string): Sql {
  if (!ULID.test(entryId)) throw notFound();
  return scope.and(sql`e.entry_id = ${entryId.toUpperCase()}`, scope.workspace(workspaceId), scope.kinds('typed'), scope.live, scope.published);
}

/** The entry as a write answers it: as its transaction left it, rendered in the written locale, drafts included. */
async function written(app: AppContext, principal: ApiKeyPrincipal | undefined, entry: EntryRecord, locale: string) {
  const { entries, exact } = await renderEntries(app.db, [entry], renderOptions(app, principal, locale, false));
  return { body: entries[0], exact };
}

type ListQuery = { contentBucket: string; contentType: string; locale?: string; per_page?: number; cursor?: string; view?: 'summary' | 'full' };

/** v1 and v2 lists of published entries of one content type. */
async function list(app: AppContext, principal: ApiKeyPrincipal | undefined, koa: Parameters<typeof pageLinks>[1], query: ListQuery, v2: boolean) {
  const workspace = principal!.workspace;
  const type = await requireType(app, workspace.id, query.contentBucket, query.contentType);
  const locale = readLocale(query.locale, workspace.locales);
  const paged = v2 || query.per_page !== undefined || query.cursor !== undefined || query.view !== undefined;
  const view = query.view ?? (v2 ? 'summary' : 'full');
  const where = scope.and(scope.workspace(workspace.id), scope.kinds('typed'), scope.live, scope.published, sql`e.content_type_id = ${type.id}`);
  // Summaries name entries from the base document when every locale is asked for.
  const content: ContentChoice = view === 'summary' && locale === '*' ? { kind: 'locale', locale: 'en-US' } : documentsIn(locale);
  const advice = paged ? 'ask for fewer entries per page' : 'ask for pages of fewer entries (per_page)';
  const options = { ...renderOptions(app, principal, locale, true), bytes: answerBudget(app.config.deliveryAnswerBytes, 'per_page', advice) };
  // Summaries hold no document values; rendered entries say whether theirs need exact JSON.
  const present = async (entries: EntryRecord[]) =>
    view === 'summary' ? { entries: summariesOf(entries, type, options), exact: false } : renderEntries(app.db, entries, options);
  if (!paged) {
    const shown = await present(await findEntries(app.db, where, { content, typedOnly: true, page: { orderBy: sql`e.id ASC`, limit: PLAIN_LIST_LIMIT } }));
    return { status: 200 as const, exactJson: shown.exact, body: shown.entries as never };
  }
  const page = await idCursorPage((after, p) => findEntries(app.db, scope.and(where, after), { content, typedOnly: true, page: p }), query.cursor, query.per_page ?? 50);
  const shown = await present(page.page);
  return {
    status: 200 as const,
    exactJson: shown.exact,
    body: { data: shown.entries as never, ...pageLinks(app.config.baseUrl, koa, page) },
  };
}

export const entryHandlers = mapCoreErrors(
  handlers({
    listEntries: ({ query, principal, koa }, app) => list(app, principal, koa, query, false),
    listEntriesV2: ({ query, principal, koa }, app) => list(app, principal, koa, query, true),

    async getEntry({ params, query, principal }, app) {
      const locale = readLocale(query.locale, principal!.workspace.locales);
      const bytes = answerBudget(app.config.deliveryAnswerBytes, 'entry', 'select fewer fields with a structured query');
      const options = { ...renderOptions(app, principal, locale, true), bytes };
      // The delivery read: the entry and its first level of relations in one round trip.
      const { entry, prefetched } = await findWithRelated(app.db, publishedWhere(principal!.workspace.id, params.entry), options);
      if (!entry) throw notFound();
      const { entries, exact } = await renderEntries(app.db, [entry], options, prefetched);
      return { status: 200, exactJson: exact, body: entries[0] };
    },

    async createEntry({ query, body, principal }, app) {
      const workspace = principal!.workspace;
      const locale = writeLocale(query.locale, workspace.locales);
      const type = await requireType(app, workspace.id, query.contentBucket, query.contentType);
      const entry = await createTypedEntry(writer(app, principal, body.skipWebhooks), type, locale, {
        fields: body.fields,
        status: body.status,
        publishAt: body.publish_at,
        locales: body.locales,
        tags: body.tags,
      });
      const out = await written(app, principal, entry, locale);
      return { status: 201, exactJson: out.exact, body: out.body };
    },

    async updateEntry({ params, query, body, principal }, app) {
      const workspace = principal!.workspace;
      const locale = writeLocale(query.locale, workspace.locales);
      if (!ULID.test(params.entry)) throw notFound();
      // `check` is another name for expected_version on a single update.
      if (body.check !== undefined && body.expected_version !== undefined && body.check !== body.expected_version) {
        throw validationFailed(Object.assign(fieldErrors(), { check: ['The check field must match expected_version when both are given.'] }));
      }
      const entry = await updateTypedEntry(writer(app, principal, body.skipWebhooks), params.entry.toUpperCase(), locale, {
        fields: body.fields,
        status: body.status,
        publishAt: body.publish_at,
        locales: body.locales,
        tags: body.tags,
        expectedVersion: body.expected_version ?? body.check,
        versionField: body.expected_version !== undefined ? 'expected_version' : 'check',
      });
      const out = await written(app, principal, entry, locale);
      return { status: 200, exactJson: out.exact, body: out.body };
    },

    async deleteEntry({ params, query, principal }, app) {
      if (!ULID.test(params.entry)) throw notFound();
      await deleteTypedEntry(writer(app, principal, query.skipWebhooks), params.entry.toUpperCase());
      return { status: 204 };
    },
  }),
  'entry',
);
