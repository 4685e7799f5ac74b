// Revisions: a snapshot of an entry after each real change. A snapshot keeps the documents of every
// language, the language list, bucket and ref, the contract selection, publication status and
// schedule (not contracts, file bytes or tags). The first change to an entry without history first
// records a `baseline` (the state when history began); a save that changes nothing records nothing.
import type { SqlRunner } from '../../db/database';
import { parseExact, stringifyExact } from '../../lib/exact-json';
import { isoTimestamp, rows, sql, type Sql } from '../sql';
import { BASE_LOCALE, type EntryRecord, type EntryStatus } from './store';
import { emptyRecord } from '../../lib/records';

export type RevisionEvent = 'baseline' | 'created' | 'updated' | 'restored' | 'recovered';
export type RevisionSource = 'api' | 'user' | 'system' | 'job' | 'pipeline' | 'ai';

export interface Snapshot {
  data: unknown;
  translations: Record<string, unknown>;
  locales: string[];
  bucket_id: number;
  ref: string;
  /** The selection: a name, `false` (none) or null (Automatic). */
  contract: string | false | null;
  status: EntryStatus;
  publish_at: string | null;
}

/** Who made a change, as revisions and audit records keep it (never a secret). */
export interface Author {
  actor: string | null;
  source: RevisionSource;
}

export function snapshotOf(entry: EntryRecord): Snapshot {
  const translations = emptyRecord();
  for (const [locale, data] of entry.documents) if (locale !== BASE_LOCALE) translations[locale] = data;
  return {
    data: entry.documents.get(BASE_LOCALE) ?? null,
    translations,
    locales: entry.locales,
    bucket_id: entry.bucket_id,
    ref: entry.ref,
    contract: entry.contract_choice === 'auto' ? null : entry.contract_choice === 'none' ? false : entry.contract_name,
    status: entry.status,
    publish_at: entry.publish_at,
  };
}

interface RecordOptions {
  event: RevisionEvent;
  author: Author;
  now: Sql;
  /** The state before the change: recorded as the baseline when the entry has no history yet. */
  before?: Snapshot;
  restoredFrom?: number | null;
  /** Skip the revision when nothing changed since the latest one (plain saves). */
  skipUnchanged?: boolean;
}

/** Records `after` as a revision of entry `entryPk`; returns whether one was written. */
export async function recordRevision(tx: SqlRunner, entryPk: number, after: Snapshot, o: RecordOptions): Promise<boolean> {
  if (o.before) {
    await rows(
      tx,
      sql`INSERT INTO entry_revisions (entry_pk, event, actor, source, created_at, snapshot)
          SELECT ${entryPk}::int, 'baseline', NULL, 'system', ${o.now}, ${stringifyExact(o.before)}::jsonb
           WHERE NOT EXISTS (SELECT 1 FROM entry_revisions WHERE entry_pk = ${entryPk})`,
    );
  }
  const snapshot = stringifyExact(after);
  // jsonb equality ignores key order and compares numbers by value: a no-op save matches.
  const unchanged = o.skipUnchanged
    ? sql` WHERE (SELECT r.snapshot FROM entry_revisions r WHERE r.entry_pk = ${entryPk} ORDER BY r.id DESC LIMIT 1) IS DISTINCT FROM ${snapshot}::jsonb`
    : sql``;
  const written = await rows(
    tx,
    sql`INSERT INTO entry_revisions (entry_pk, event, restored_from, actor, source, created_at, snapshot)
        SELECT ${entryPk}::int, ${o.event}::text, ${o.restoredFrom ?? null}::int, ${o.author.actor}::text, ${o.author.source}::text, ${o.now}, ${snapshot}::jsonb${unchanged}
        RETURNING id`,
  );
  return written.length > 0;
}

/** The first revisions of new entries (`created`), in one statement whatever their number. */
export async function recordCreated(
  tx: SqlRunner,
  items: { entryPk: number; after: Snapshot }[],
  o: Pick<RecordOptions, 'author' | 'now'>,
): Promise<void> {
  if (!items.length) return;
  await rows(
    tx,
    sql`INSERT INTO entry_revisions (entry_pk, event, actor, source, created_at, snapshot)
        SELECT p, 'created', ${o.author.actor}::text, ${o.author.source}::text, ${o.now}, s::jsonb
          FROM unnest(${items.map((i) => i.entryPk)}::int[], ${items.map((i) => stringifyExact(i.after))}::text[]) WITH ORDINALITY AS t(p, s, n)
         ORDER BY n`,
  );
}

export interface RevisionRow {
  id: number;
  object_id: number;
  entry_id: string;
  event: RevisionEvent;
  restored_from: number | null;
  actor: string | null;
  source: RevisionSource;
  created_at: string;
}

const REVISION_COLUMNS = sql`r.id, r.entry_pk AS object_id, e.entry_id, r.event, r.restored_from, r.actor, r.source, ${isoTimestamp(sql`r.created_at`)} AS created_at`;

/** A page of an entry's revisions, newest first, after the revision `before` (cursor). */
export function listRevisions(db: SqlRunner, entryPk: number, limit: number, before?: number): Promise<RevisionRow[]> {
  const after = before === undefined ? sql`` : sql` AND r.id < ${before}`;
  return rows<RevisionRow>(
    db,
    sql`SELECT ${REVISION_COLUMNS} FROM entry_revisions r JOIN entries e ON e.id = r.entry_pk
         WHERE r.entry_pk = ${entryPk}${after} ORDER BY r.id DESC LIMIT ${limit}`,
  );
}

/** One revision of the entry with its snapshot, or undefined. */
export async function getRevision(
  db: SqlRunner,
  entryPk: number,
  id: number,
): Promise<(RevisionRow & { snapshot: Snapshot; exact: boolean }) | undefined> {
  const [row] = await rows<RevisionRow & { snapshot: string }>(
    db,
    sql`SELECT ${REVISION_COLUMNS}, r.snapshot::text AS snapshot FROM entry_revisions r JOIN entries e ON e.id = r.entry_pk
         WHERE r.entry_pk = ${entryPk} AND r.id = ${id}`,
  );
  if (!row) return undefined;
  const { value, exact } = parseExact(row.snapshot);
  return { ...row, snapshot: value as Snapshot, exact };
}
