// The write path every kind of entry shares (JSON entries, typed entries, legacy submissions):
// who writes, the entry row, its per-locale documents, the row lock, the version check, pending
// reviews and the event published with the transaction.
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { fieldError, oneFieldError } from '../../lib/field-errors';
import { publishEvents, type EventName } from '../../events/outbox';
import { stringifyExact } from '../../lib/exact-json';
import { join, rows, sql, type Sql } from '../sql';
import type { ContractChoice } from './contracts';
import { DomainError, invalidAt } from '../errors';
import type { Author } from './revisions';
import { BASE_LOCALE, findEntries, type EntryKind, type EntryRecord, type EntryStatus, type Sight } from './store';

/** Who writes, for which workspace. */
export interface WriteContext {
  core: CoreContext;
  workspace: { id: number; locales: string[] };
  author: Author;
  skipWebhooks?: boolean;
}

/** The languages of an entry in a stable order (the base one, then by code), so equal saves snapshot equally. */
export const sortLocales = (locales: Iterable<string>) =>
  [...locales].sort((a, b) => (a === BASE_LOCALE ? -1 : b === BASE_LOCALE ? 1 : a < b ? -1 : a > b ? 1 : 0));

/** Replaces the documents of an entry (one per locale); a new entry's go through insertDocuments. */
export async function writeDocuments(tx: SqlRunner, entryPk: number, documents: Map<string, unknown>): Promise<void> {
  await rows(tx, sql`DELETE FROM entry_contents WHERE entry_pk = ${entryPk}`);
  await insertDocuments(tx, [{ entryPk, documents }]);
}

/** Inserts the documents of entries that have none yet, in one statement whatever their number. */
export async function insertDocuments(tx: SqlRunner, entries: { entryPk: number; documents: Map<string, unknown> }[]): Promise<void> {
  const pks: number[] = [];
  const locales: string[] = [];
  const texts: string[] = [];
  for (const { entryPk, documents } of entries) {
    for (const [locale, doc] of documents) {
      pks.push(entryPk);
      locales.push(locale);
      texts.push(stringifyExact(doc));
    }
  }
  if (!pks.length) return;
  await rows(
    tx,
    sql`INSERT INTO entry_contents (entry_pk, locale, data) SELECT p, l, d::jsonb FROM unnest(${pks}::int[], ${locales}::text[], ${texts}::text[]) AS t(p, l, d)`,
  );
}

export interface NewEntry {
  entryId: string;
  workspaceId: number;
  bucketId: number;
  kind: EntryKind;
  contentTypeId?: number;
  ref: string;
  status: EntryStatus;
  publishAt?: Sql;
  locales?: string[];
  tags?: string[];
  choice: ContractChoice;
  /** The contract check's outcome (JSON entries), see json-entries.ts. */
  validationIssues?: unknown[];
  checkedAt?: Sql;
  now: Sql;
}

/** The refusal of a ref already held by a live entry of the bucket (`at`: the field that named it). */
/** A live ref taken in the bucket; at `path`, the clash still names the ref the path made. */
export const refTaken = (at = 'ref') =>
  invalidAt(at, at === 'ref' ? 'The :attribute has already been taken.' : 'The ref has already been taken.', undefined, 'taken');

/** Inserts the entry row; a ref already held in the bucket is a 422 on `ref`. */
export async function insertEntry(tx: SqlRunner, n: NewEntry): Promise<number> {
  const [id] = await insertEntries(tx, [n]);
  if (id === undefined) throw refTaken();
  return id;
}

/** Inserts entry rows in one statement; the id of each, or undefined where its ref is already held in the bucket. */
export async function insertEntries(tx: SqlRunner, list: NewEntry[]): Promise<(number | undefined)[]> {
  const values = list.map(
    (
      n,
    ) => sql`(${n.entryId}, ${n.workspaceId}::int, ${n.bucketId}::int, ${n.contentTypeId ?? null}::int, ${n.kind}, ${n.ref}, ${n.ref}, ${n.status},
                ${n.publishAt ?? sql`NULL::timestamptz`}, 0, ${n.locales ?? [BASE_LOCALE]}::text[], ${n.tags ?? []}::text[],
                ${n.choice.choice}, ${n.choice.choice === 'named' ? n.choice.name : null}, ${JSON.stringify(n.validationIssues ?? [])}::jsonb,
                ${n.checkedAt ?? sql`NULL::timestamptz`}, ${n.now}, ${n.now})`,
  );
  const created = await rows<{ id: number; entry_id: string }>(
    tx,
    sql`INSERT INTO entries (entry_id, workspace_id, bucket_id, content_type_id, kind, ref, live_ref, status, publish_at, lock_version, locales, tags,
                             contract_choice, contract_name, validation_issues, validation_checked_at, created_at, updated_at)
        VALUES ${join(values, ', ')}
        ON CONFLICT (bucket_id, live_ref) DO NOTHING
        RETURNING id, entry_id`,
  );
  const ids = new Map(created.map((r) => [r.entry_id, r.id]));
  return list.map((n) => ids.get(n.entryId));
}

/** What a write sees: the live entries of its workspace of `kind`, drafts included. */
export const liveIn = (ctx: WriteContext, kind: EntryKind): Sight => ({ workspaceId: ctx.workspace.id, kinds: [kind], state: 'live' });

/** Which entry a write opens, and what the caller saw of it. */
export interface WriteOpening {
  /** A condition on `e` that matches at most one entry. */
  where: Sql;
  kinds: EntryKind[];
  /** The version the caller saw, in the field that carried it (no check when undefined). */
  version?: { expected: number | undefined; field?: string };
  /** Entries in Trash (not yet expired at this time) may be opened too (a recovery). */
  inTrashAt?: Sql;
}

/**
 * Opens an entry for a write, the same way for every write of every API: the entry locked for
 * the transaction (`not_found` unless it is live, of one of `kinds`, in the workspace), then, in
 * this order, a legacy submission refused (`forbidden`), the caller's version checked
 * (`stale_version`), and a pending review refusing the write (`review_pending`).
 */
export async function openForWrite(ctx: WriteContext, tx: SqlRunner, o: WriteOpening): Promise<EntryRecord> {
  const sight: Sight = o.inTrashAt
    ? { workspaceId: ctx.workspace.id, kinds: o.kinds, state: 'history', now: o.inTrashAt }
    : { workspaceId: ctx.workspace.id, kinds: o.kinds, state: 'live' };
  const [entry] = await findEntries(tx, sight, o.where, {
    content: { kind: 'all' },
    forUpdate: true,
  });
  if (!entry) throw new DomainError('not_found');
  if (entry.kind === 'submission') throw new DomainError('forbidden');
  if (o.version?.expected !== undefined) checkVersion(entry, o.version.expected, o.version.field);
  if (await hasPendingReview(tx, entry.id)) throw reviewPending(o.kinds.includes('json') ? 'object' : 'entry');
  return entry;
}

/** A pending review refuses the write, answered as a 422 on `review`. */
export const reviewPending = (noun: 'object' | 'entry') =>
  new DomainError('review_pending', oneFieldError('review', fieldError('review_pending', 'The :noun has a pending review.', { noun })));

/** A stale version: answered as a 422 on `field` naming the current one. */
function checkVersion(entry: EntryRecord, lockVersion: number, field = 'lock_version'): void {
  if (entry.lock_version !== lockVersion) {
    throw new DomainError(
      'stale_version',
      oneFieldError(
        field,
        fieldError('stale', 'The :attribute is stale: the current version is :version.', { version: entry.lock_version }),
      ),
    );
  }
}

/** Whether the entry (or any of the entries) has a pending review: one query whatever their number. */
export async function hasPendingReview(tx: SqlRunner, entryPks: number | number[]): Promise<boolean> {
  const ids = typeof entryPks === 'number' ? [entryPks] : entryPks;
  return (await rows(tx, sql`SELECT 1 FROM reviews WHERE entry_pk = ANY(${ids}::int[]) AND status = 'pending' LIMIT 1`)).length > 0;
}

type EventEntry = { id: number; entry_id: string; ref: string; bucket_id: number };

/** Publishes an entry event with the transaction; `kind` tells subscribers which API wrote it. */
export async function publishEntryEvent(
  ctx: WriteContext,
  tx: SqlRunner,
  event: EventName,
  entry: EventEntry,
  kind: 'object' | 'entry',
  extra: Record<string, unknown> = {},
) {
  await publishEntryEvents(ctx, tx, event, [{ entry, extra }], kind);
}

/** `publishEntryEvent` for several entries, in their order, in one statement. */
export async function publishEntryEvents(
  ctx: WriteContext,
  tx: SqlRunner,
  event: EventName,
  items: { entry: EventEntry; extra?: Record<string, unknown> }[],
  kind: 'object' | 'entry',
) {
  const events = items.map(({ entry, extra }) => ({
    workspaceId: ctx.workspace.id,
    event,
    data: { kind, id: entry.id, entry_id: entry.entry_id, bucket_id: entry.bucket_id, ref: entry.ref, ...extra },
    skipWebhooks: ctx.skipWebhooks,
  }));
  await publishEvents(tx, ctx.core.clock.now(), events);
}
