// Writes of typed entries (the Entries API): create, partial update, delete with cascades, the
// scheduled publication task, and the conversion to a JSON-backed (migrated) entry. They share
// the entry store, write path, revisions and events with JSON entries (write.ts); only the
// field-value rules (field-values.ts) are their own. A refused write changes nothing.
import { newEntryId } from './ids';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { fieldDetail, fieldErrors, type FieldErrors } from '../../lib/field-errors';
import { recordAudit } from '../../events/audit';
import { transaction } from '../transaction';
import { deleteWorkspaceFiles } from '../file-records';
import { rows, sql, type Sql } from '../sql';
import { contentTypesById, type ContentTypeDef } from './content-types';
import { DomainError, invalidAt, throwIfInvalid } from '../errors';
import {
  checkAllReferences,
  checkReferences,
  inStoredYears,
  mergeFieldValues,
  OFFSET_RULE,
  offsetMinutes,
  referencesOf,
  YEARS_RULE,
  type PendingEntries,
} from './field-values';
import { recordCreated, recordRevision, snapshotOf } from './revisions';
import { BASE_LOCALE, findEntries, type EntryRecord, type EntryStatus } from './store';
import {
  hasPendingReview,
  insertDocuments,
  insertEntries,
  liveIn,
  openForWrite,
  refTaken,
  reviewPending,
  publishEntryEvent,
  publishEntryEvents,
  sortLocales,
  writeDocuments,
  type WriteContext,
} from './write';
import { emptyRecord } from '../../lib/records';
import { namedDocument, storedDocument } from './field-keys';
import { isConfiguredLocale, unconfiguredLocale } from './locales';

export interface TypedInput {
  fields?: Record<string, unknown>;
  status?: EntryStatus;
  /** An ISO 8601 time; null clears the schedule. */
  publishAt?: string | null;
  locales?: string[];
  tags?: string[];
}

/** Locales of an entry: en-US always; every other one configured for the workspace (422 on `locales.<n>`). */
function enabledLocales(ctx: WriteContext, requested: string[], errors: FieldErrors): string[] {
  requested.forEach((l, i) => {
    if (!isConfiguredLocale(l, ctx.workspace.locales)) errors[`locales.${i}`] = [unconfiguredLocale(l)];
  });
  return sortLocales(new Set([BASE_LOCALE, ...requested]));
}

/** A `publish_at` (RFC 3339, checked by the schema) whose offset is a real one (14:00 at most either side) and whose UTC year is 0001 to 9999, as for datetime fields. */
function publishAtOf(value: string | null | undefined, errors: FieldErrors): Date | null | undefined {
  if (value === undefined || value === null) return value;
  const at = new Date(value);
  const problem = Number.isNaN(at.getTime())
    ? 'must be a valid date-time'
    : offsetMinutes(/[+-]\d{2}:\d{2}$/.exec(value)?.[0]) === undefined
      ? OFFSET_RULE
      : !inStoredYears(at)
        ? `${YEARS_RULE} (in UTC)`
        : undefined;
  if (problem) errors.publish_at = [fieldDetail('date', problem)];
  return at;
}

const documentOf = (entry: EntryRecord | undefined, locale: string) =>
  (entry?.documents.get(locale) ?? emptyRecord()) as Record<string, unknown>;

/** Creates a typed entry of `type` with its fields in `locale`; returns it as the transaction wrote it. */
export async function createTypedEntry(
  ctx: WriteContext,
  type: ContentTypeDef,
  locale: string,
  input: TypedInput,
  entryId = newEntryId(),
): Promise<EntryRecord> {
  try {
    const [entry] = await createTypedEntries(ctx, locale, [{ type, input, entryId }]);
    return entry;
  } catch (err) {
    throw err instanceof CreateRefused ? err.error : err;
  }
}

export interface TypedCreate {
  type: ContentTypeDef;
  input: TypedInput;
  entryId: string;
}

/** The refusal of one create of a group (`index` in it). */
export class CreateRefused extends Error {
  constructor(
    readonly index: number,
    readonly error: DomainError,
  ) {
    super(`create ${index} refused`);
  }
}

/**
 * Creates typed entries in `locale`, each as if created after the ones before it (a relation may
 * name an earlier one; a unique value may not repeat one), with a fixed number of statements
 * whatever their number: the write of a batch's run of creates. The first refused create throws
 * CreateRefused and nothing is written. Joins the caller's unit of work (a batch's).
 */
export function createTypedEntries(ctx: WriteContext, locale: string, creates: TypedCreate[]): Promise<EntryRecord[]> {
  return transaction(ctx.core, async (tx) => {
    const { core, workspace } = ctx;
    const prepared = creates.map(({ type, input, entryId }) => {
      const errors = fieldErrors();
      const doc = mergeFieldValues(type, input.fields ?? {}, emptyRecord(), true, errors);
      const locales = enabledLocales(ctx, [...(input.locales ?? []), locale], errors);
      const publishAt = publishAtOf(input.publishAt, errors);
      return { type, input, entryId, errors, doc, locales, publishAt };
    });
    const refuse = () => {
      const i = prepared.findIndex((p) => Object.keys(p.errors).length);
      if (i >= 0) throw new CreateRefused(i, new DomainError('invalid', prepared[i].errors));
    };
    refuse();
    const pending: PendingEntries = new Map(prepared.map((p) => [p.entryId, { bucketId: p.type.bucketId, type: p.type.name }]));
    // IDs of the group are new (a batch's `$ref` names earlier creates only), so none can name a later one.
    await checkAllReferences(
      tx,
      prepared.map((p) => ({ type: p.type, doc: p.doc, changed: Object.keys(p.doc), locale, errors: p.errors })),
      pending,
    );
    refuse();
    const now = core.clock.sqlNow();
    const ids = await insertEntries(
      tx,
      prepared.map((p) => {
        const status = p.input.status ?? 'draft';
        return {
          entryId: p.entryId,
          workspaceId: workspace.id,
          bucketId: p.type.bucketId,
          kind: 'typed' as const,
          contentTypeId: p.type.id,
          ref: `${p.type.name}/${p.entryId}`,
          status,
          // A published entry has no schedule.
          publishAt: p.publishAt && status === 'draft' ? sql`${p.publishAt.toISOString()}::timestamptz` : undefined,
          locales: p.locales,
          tags: p.input.tags,
          choice: { choice: 'none' as const },
          now,
        };
      }),
    );
    const clash = ids.indexOf(undefined);
    if (clash >= 0) throw new CreateRefused(clash, refTaken());
    const pks = ids as number[];
    await insertDocuments(
      tx,
      prepared.map((p, i) => ({ entryPk: pks[i], documents: new Map([[locale, storedDocument(p.type, p.doc)]]) })),
    );
    const found = new Map(
      (await findEntries(tx, liveIn(ctx, 'typed'), sql`e.id = ANY(${pks}::int[])`, { content: { kind: 'all' } })).map((e) => [e.id, e]),
    );
    const entries = pks.map((pk) => found.get(pk)!);
    await recordCreated(
      tx,
      entries.map((e) => ({ entryPk: e.id, after: snapshotOf(e) })),
      { author: ctx.author, now },
    );
    await publishEntryEvents(
      ctx,
      tx,
      'entry.created',
      entries.map((e, i) => ({ entry: e, extra: { content_type: prepared[i].type.name } })),
      'entry',
    );
    return entries;
  });
}

export interface TypedUpdate extends TypedInput {
  expectedVersion?: number;
  /** The request field that carried the version (`expected_version` or `check`), for the error. */
  versionField?: string;
}

/**
 * Applies a partial update to the typed entry `entryId` (fields of `locale`); returns it as this
 * transaction left it (not as a later write may have: concurrent answers each show their own).
 * `bucketId` limits the entries it may reach.
 */
export function updateTypedEntry(
  ctx: WriteContext,
  entryId: string,
  locale: string,
  input: TypedUpdate,
  bucketId?: number,
): Promise<EntryRecord> {
  return transaction(ctx.core, async (tx) => {
    const { core } = ctx;
    const current = await openForWrite(ctx, tx, {
      where: inBucket(sql`e.entry_id = ${entryId}`, bucketId),
      kinds: ['typed'],
      version: { expected: input.expectedVersion, field: input.versionField },
    });
    const type = await typeOf(tx, current);
    const errors = fieldErrors();
    const fields = input.fields ?? {};
    const doc = mergeFieldValues(type, fields, namedDocument(type, documentOf(current, locale)), false, errors);
    const locales =
      input.locales === undefined
        ? sortLocales(new Set([...current.locales, locale]))
        : enabledLocales(ctx, [...input.locales, locale], errors);
    const publishAt = publishAtOf(input.publishAt, errors);
    throwIfInvalid(errors);
    await checkReferences(tx, type, doc, Object.keys(fields), { locale, entryPk: current.id }, errors);
    throwIfInvalid(errors);

    const documents = new Map(current.documents);
    documents.set(locale, storedDocument(type, doc));
    // Locales no longer enabled lose their translations for good.
    for (const l of [...documents.keys()]) if (!locales.includes(l)) documents.delete(l);
    const status = input.status ?? current.status;
    // Publishing clears the schedule; otherwise publish_at is set, replaced or cleared as given.
    const schedule =
      status === 'published'
        ? sql`NULL`
        : publishAt === undefined
          ? sql`publish_at`
          : publishAt === null
            ? sql`NULL`
            : sql`${publishAt.toISOString()}::timestamptz`;
    const now = core.clock.sqlNow();
    await rows(
      tx,
      sql`UPDATE entries SET status = ${status}, publish_at = ${schedule}, locales = ${locales}::text[],
                 tags = ${input.tags === undefined ? current.tags : input.tags}::text[], lock_version = lock_version + 1, updated_at = ${now}
           WHERE id = ${current.id}`,
    );
    await writeDocuments(tx, current.id, documents);
    const [entry] = await findEntries(tx, liveIn(ctx, 'typed'), sql`e.id = ${current.id}`, { content: { kind: 'all' } });
    await recordRevision(tx, current.id, snapshotOf(entry), {
      event: 'updated',
      author: ctx.author,
      now,
      before: snapshotOf(current),
      skipUnchanged: true,
    });
    await publishEntryEvent(ctx, tx, 'entry.updated', entry, 'entry', { content_type: type.name });
    return entry;
  });
}

const inBucket = (where: Sql, bucketId: number | undefined) =>
  bucketId === undefined ? where : sql`${where} AND e.bucket_id = ${bucketId}::int`;

async function typeOf(tx: SqlRunner, entry: EntryRecord): Promise<ContentTypeDef> {
  const type = (await contentTypesById(tx, [entry.content_type_id!])).get(entry.content_type_id!);
  if (!type) throw new DomainError('not_found');
  return type;
}

/**
 * Deletes a typed entry for good, and with it, through fields with `cascade_on_delete`, the
 * entries and files it references (entries in turn by their own cascading fields).
 * `refuseCascade` (batches): a delete that would take other entries or files with it is refused
 * (`invalid` on `id`) instead.
 */
export function deleteTypedEntry(
  ctx: WriteContext,
  entryId: string,
  opts: { bucketId?: number; refuseCascade?: boolean; expectedVersion?: number } = {},
): Promise<EntryRecord> {
  return transaction(ctx.core, async (tx) => {
    const root = await openForWrite(ctx, tx, {
      where: inBucket(sql`e.entry_id = ${entryId}`, opts.bucketId),
      kinds: ['typed'],
      version: { expected: opts.expectedVersion, field: 'expected_version' },
    });
    const doomed = new Map<number, EntryRecord>([[root.id, root]]);
    const files = new Set<number>();
    // Breadth first, one query per level: the entries the cascading fields of the last level name.
    let level = [root];
    while (level.length) {
      const types = await contentTypesById(
        tx,
        level.map((e) => e.content_type_id!),
      );
      const next = new Set<string>();
      for (const e of level) {
        const type = types.get(e.content_type_id!);
        for (const def of type?.fields.filter((f) => f.cascadeOnDelete) ?? []) {
          for (const doc of e.documents.values()) {
            for (const ref of referencesOf(namedDocument(type!, doc as Record<string, unknown>), def)) {
              if (def.type === 'attachment') files.add(ref as number);
              else next.add(ref as string);
            }
          }
        }
      }
      const found = next.size
        ? await findEntries(tx, liveIn(ctx, 'typed'), sql`e.entry_id = ANY(${[...next]}::text[])`, {
            content: { kind: 'all' },
            forUpdate: true,
          })
        : [];
      level = found.filter((e) => !doomed.has(e.id));
      for (const e of level) doomed.set(e.id, e);
    }
    if (opts.refuseCascade && (doomed.size > 1 || files.size > 0))
      throw invalidAt('id', 'The :attribute field names an entry whose deletion would cascade into other entries or files.');
    if (doomed.size > 1 && (await hasPendingReview(tx, [...doomed.keys()]))) throw reviewPending('entry');
    await rows(tx, sql`DELETE FROM entries WHERE id = ANY(${[...doomed.keys()]}::int[])`);
    await deleteWorkspaceFiles(tx, ctx.core.clock.now(), ctx.workspace.id, [...files]);
    for (const e of doomed.values()) {
      await publishEntryEvent(ctx, tx, 'entry.deleted', e, 'entry');
      await recordAudit(tx, ctx.core.clock.now(), {
        workspaceId: ctx.workspace.id,
        event: 'entry.deleted',
        actor: ctx.author.actor ?? 'system',
        entryId: e.entry_id,
        objectId: e.id,
      });
    }
    return root;
  });
}

/** The `entries:publish-scheduled` task: drafts whose publish_at has come are published. */
export async function publishScheduled(core: CoreContext): Promise<number> {
  const now = core.clock.sqlNow();
  return transaction(core, async (tx) => {
    const due = await rows<{ id: number; entry_id: string; ref: string; bucket_id: number; workspace_id: number }>(
      tx,
      sql`UPDATE entries SET status = 'published', publish_at = NULL, lock_version = lock_version + 1, updated_at = ${now}
           WHERE id IN (SELECT id FROM entries WHERE status = 'draft' AND publish_at IS NOT NULL AND publish_at <= ${now} AND deleted_at IS NULL
                         ORDER BY publish_at LIMIT 500 FOR UPDATE SKIP LOCKED)
          RETURNING id, entry_id, ref, bucket_id, workspace_id`,
    );
    for (const e of due) {
      const ctx: WriteContext = { core, workspace: { id: e.workspace_id, locales: [] }, author: { actor: null, source: 'system' } };
      await publishEntryEvent(ctx, tx, 'entry.updated', e, 'entry', { scheduled: true });
    }
    return due.length;
  });
}

/** Turns a typed entry into a JSON-backed (migrated) one: same IDs, its field values become its documents. */
export async function convertTypedEntry(core: CoreContext, workspaceId: number, entryId: string): Promise<number> {
  return transaction(core, async (tx) => {
    const [entry] = await rows<{ id: number; kind: string; migrated: boolean }>(
      tx,
      sql`SELECT id, kind, migrated FROM entries WHERE entry_id = ${entryId} AND workspace_id = ${workspaceId} AND deleted_at IS NULL FOR UPDATE`,
    );
    if (!entry || (entry.kind !== 'typed' && !entry.migrated)) throw new DomainError('not_found');
    if (entry.migrated) throw invalidAt('entry_id', 'The entry is already a JSON-backed (migrated) entry.');
    const now = core.clock.sqlNow();
    // Each locale's field values become its data, each at its field's name (documents keep them at
    // their keys, field-keys.ts); values of removed fields not yet cleaned up are left behind.
    await rows(
      tx,
      sql`UPDATE entry_contents c
             SET data = coalesce((SELECT jsonb_object_agg(coalesce(f.name, d.k), d.v) FROM jsonb_each(c.data) d(k, v)
                                   LEFT JOIN field_definitions f ON f.content_type_id = c.content_type_id AND f.key = d.k
                                  WHERE NOT EXISTS (SELECT 1 FROM field_removals r WHERE r.content_type_id = c.content_type_id AND r.key = d.k)), '{}')
           WHERE c.entry_pk = ${entry.id}
             AND EXISTS (SELECT 1 FROM field_definitions f WHERE f.content_type_id = c.content_type_id AND f.key <> f.name
                         UNION ALL SELECT 1 FROM field_removals r WHERE r.content_type_id = c.content_type_id)`,
    );
    await rows(
      tx,
      sql`UPDATE entries SET kind = 'json', migrated = true, contract_choice = 'auto', lock_version = lock_version + 1, updated_at = ${now} WHERE id = ${entry.id}`,
    );
    return entry.id;
  });
}
