// The entry store: one table of entries (Objects, typed entries, legacy submissions), their
// per-locale jsonb documents and their revisions. Every read of an entry goes through `ENTRY_SELECT`,
// which also resolves the effective contract in the same statement (reads never run validation),
// and formats timestamps in SQL so that microseconds survive.
import type { SqlRunner } from '../../db/database';
import { parseExact } from '../../lib/exact-json';
import { effectiveContractJoin, type ValidationIssue } from './contracts';
import { isoTimestamp, join, literal, raw, rows, sql, type Sql } from '../sql';

export const BASE_LOCALE = 'en-US';
/** How long an entry stays recoverable in Trash. */
export const TRASH_DAYS = 30;

export type EntryKind = 'json' | 'typed' | 'submission';
export type EntryStatus = 'draft' | 'published';

export interface EntryRecord {
  id: number;
  entry_id: string;
  workspace_id: number;
  bucket_id: number;
  bucket: string;
  /** The content type of a typed (or converted) entry. */
  content_type_id: number | null;
  ref: string;
  kind: EntryKind;
  migrated: boolean;
  status: EntryStatus;
  publish_at: string | null;
  /** When it last became published (null while a draft). */
  published_at: string | null;
  lock_version: number;
  locales: string[];
  contract_choice: 'auto' | 'none' | 'named';
  contract_name: string | null;
  /** The effective contract (name and mode), resolved at read time. */
  contract: string | null;
  contract_mode: 'enforce' | 'report' | null;
  validation_issues: ValidationIssue[];
  validation_checked_at: string | null;
  validation_pending: boolean;
  validation_failed: boolean;
  tags: string[];
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  expires_at: string | null;
  /** Documents by locale, as asked for (`content` option); absent locales are missing keys. */
  documents: Map<string, unknown>;
  /** A document holds a number a double cannot represent (see lib/exact-json.ts). */
  exact: boolean;
}

/** Which documents a read loads: none (summary views), one locale, or every locale. */
export type ContentChoice =
  | { kind: 'none' }
  | { kind: 'locale'; locale: string }
  | { kind: 'all' }
  /** The document of `c`, a join on entry_contents that the caller adds (queries filter on it). */
  | { kind: 'joined'; locale: string };

/** The documents of one locale, or of every locale for `*`. */
export const documentsIn = (locale: string): ContentChoice => (locale === '*' ? { kind: 'all' } : { kind: 'locale', locale });

const e = raw('e');

function contentColumn(content: ContentChoice): Sql {
  if (content.kind === 'none') return raw('NULL::text AS documents');
  if (content.kind === 'joined')
    return sql`CASE WHEN c.data IS NULL THEN NULL ELSE jsonb_build_object(${content.locale}::text, c.data)::text END AS documents`;
  const filter = content.kind === 'locale' ? sql` AND ec.locale = ${content.locale}` : raw('');
  // jsonb as text: parsed by lib/exact-json so that large and precise numbers keep their value.
  return sql`(SELECT jsonb_object_agg(ec.locale, ec.data)::text FROM entry_contents ec WHERE ec.entry_pk = e.id${filter}) AS documents`;
}

/**
 * The select list and FROM clause of every entry read; the caller adds WHERE, ORDER BY, LIMIT.
 * `source` replaces `entries e` (a page of ids joined to the entries), `from` adds joins.
 */
export function entrySelect(content: ContentChoice, more: { source?: Sql; from?: Sql; columns?: Sql[]; typedOnly?: boolean } = {}): Sql {
  const extraColumns = more.columns?.length ? sql`, ${join(more.columns, ', ')}` : raw('');
  return sql`SELECT e.id, e.entry_id, e.workspace_id, e.bucket_id, b.name AS bucket, e.content_type_id, e.ref, e.kind, e.migrated, e.status,
      ${isoTimestamp(sql`e.publish_at`)} AS publish_at, ${isoTimestamp(sql`e.published_at`)} AS published_at, e.lock_version, coalesce(e.locales, '{}') AS locales,
      e.contract_choice, e.contract_name, ${more.typedOnly ? raw('NULL AS contract, NULL AS contract_mode') : raw('ct.name AS contract, ct.mode AS contract_mode')},
      e.validation_issues, ${isoTimestamp(sql`e.validation_checked_at`)} AS validation_checked_at,
      e.validation_pending, e.validation_failed, coalesce(e.tags, '{}') AS tags,
      ${isoTimestamp(sql`e.created_at`)} AS created_at, ${isoTimestamp(sql`e.updated_at`)} AS updated_at,
      ${isoTimestamp(sql`e.deleted_at`)} AS deleted_at,
      ${isoTimestamp(sql`e.deleted_at + make_interval(days => ${TRASH_DAYS}::int)`)} AS expires_at,
      ${contentColumn(content)}${extraColumns}
    FROM ${more.source ?? raw('entries e')} JOIN buckets b ON b.id = e.bucket_id ${more.from ?? raw('')}
    ${more.typedOnly ? raw('') : effectiveContractJoin(e)}`;
}

type RawRecord = Omit<EntryRecord, 'documents' | 'exact'> & { documents: string | null };

/** The row itself becomes the record (a page renders hundreds: no copy of each). */
export function toRecord(row: RawRecord): EntryRecord {
  const parsed = row.documents === null ? { value: {}, exact: false } : parseExact(row.documents);
  const record = row as unknown as EntryRecord;
  record.documents = new Map(Object.entries(parsed.value as Record<string, unknown>));
  record.exact = parsed.exact;
  return record;
}

export interface PageOptions {
  orderBy: Sql;
  limit: number;
  offset?: number;
  /** Joins the page's rows need (the query's document, `c`). */
  join?: Sql;
  /**
   * Where matching rows come from, with the entry's id there (default `entries e` and `join`):
   * a query's candidates (core/query/candidates.ts).
   */
  candidates?: { from: Sql; id: Sql };
  /**
   * Columns that `orderBy` may name (the query's sort violations). With an offset, the first
   * matching row also comes back, before the page (`page_pos` 1; the page's rows count from
   * offset + 1), for the caller to read its flags.
   */
  flags?: Sql[];
  /**
   * Values read once per matching row (`expr AS name`), which `orderBy` and `flags` then read as
   * `m.name` (and the id as `m.page_id`): the query's sort keys, out of documents of any size.
   */
  values?: Sql[];
}

/**
 * A page of entries in two steps within one statement: the page's ids are found on light rows
 * (filter, order, limit), then only those rows are read in full (documents, formatted timestamps,
 * the effective contract). The cost of a page does not grow with the rows the filter matches.
 */
export function pagedSelect(content: ContentChoice, where: Sql, o: PageOptions, typedOnly = false): Sql {
  return sql`${entrySelect(content, { source: sql`(${pageOf(where, o)}) page JOIN entries e ON e.id = page.page_id`, from: o.join, columns: [raw('page.*')], typedOnly })}
    ORDER BY page.page_pos`;
}

/**
 * The ids of a page (`page_id`) with their positions (`page_pos`) and the `flags` asked for.
 * `inline`: the limit and offset written in the text, for a statement that must be planned for
 * them (a generic plan's guess of a limit's rows can turn a lookup of a page into a table scan).
 */
function pageOf(where: Sql, o: PageOptions, inline = false): Sql {
  const count = (n: number) => (inline ? raw(String(Math.trunc(n))) : sql`${n}`);
  const flags = o.flags?.length ? sql`, ${join(o.flags, ', ')}` : raw('');
  // Conditions are on the entry and its documents; the bucket's name is read for the page only.
  const id = o.candidates?.id ?? raw('e.id');
  const matching = sql`${o.candidates?.from ?? sql`entries e ${o.join ?? raw('')}`} WHERE ${where}`;
  // OFFSET 0 keeps the values a subquery of their own, computed once per row (not inlined).
  const source = o.values
    ? sql`SELECT m.page_id${flags} FROM (SELECT ${join([sql`${id} AS page_id`, ...o.values], ', ')} FROM ${matching} OFFSET 0) m`
    : sql`SELECT ${id} AS page_id${flags} FROM ${matching}`;
  // Positions are numbered after the limit (a window over the ordered rows, no second sort).
  const skip = o.offset ?? 0;
  // Positions count from the first matching row: the page's rows are offset + 1, offset + 2, ...
  if (o.flags?.length && skip > 0) {
    // The flags of the first matching row are wanted too: the top-N sort keeps offset + limit
    // rows (as OFFSET would), and the first row comes back before the page (`page_pos` 1).
    return sql`SELECT * FROM (SELECT p.*, row_number() OVER () AS page_pos
        FROM (${source} ORDER BY ${o.orderBy} LIMIT ${count(o.limit + skip)}) p) n WHERE page_pos = 1 OR page_pos > ${count(skip)}`;
  }
  return sql`SELECT p.*, row_number() OVER () + ${count(skip)}::int AS page_pos
      FROM (${source} ORDER BY ${o.orderBy} LIMIT ${count(o.limit)} OFFSET ${count(skip)}) p`;
}

/**
 * A page of ids (`page_id`, `page_pos` and the `flags`) of the rows matching `where` (its
 * visibility included). Its limit and offset inline: a query page's statement renders the page
 * too (query/project.ts), and with them as parameters PostgreSQL planned it again for every
 * request (every execution a custom plan: about 2.5 ms of planning for 1.2 ms of work).
 */
export const pageStatement = (where: Sql, o: PageOptions): Sql => pageOf(where, o, true);

/** The page of ids of the entries `sight` sees that match `where`, as `pk` and `pos` (from 1), for a statement to read. */
export const pageIds = (sight: Sight, where: Sql, o: PageOptions): Sql =>
  sql`SELECT page_id AS pk, page_pos AS pos FROM (${pageOf(scope.and(sightOn(sight), where), o, true)}) page`;

export type FindOptions = {
  content: ContentChoice;
  /** Only typed entries can match (`where` says so): they have no contract, so none is resolved. */
  typedOnly?: boolean;
} & (
  | { page: PageOptions }
  | {
      page?: undefined;
      /** Locks the entry rows for the rest of the transaction. */
      forUpdate?: boolean;
    }
);

/**
 * What a read may see: entries of the workspace, of these kinds, in this state. Every read of the
 * store takes one and applies it itself, so that no read can be written without it (a handler
 * that forgot `published` would leak drafts).
 * - `published`: live and published (delivery reads);
 * - `live`: live, drafts included (writes, and what a write answers);
 * - `history`: live, or in Trash within its retention at `now` (revisions, a recovery);
 * - `trash`: in Trash within its retention at `now`.
 */
export type Sight = { workspaceId: number; kinds: EntryKind[] } & (
  { state: 'published' | 'live' } | { state: 'history' | 'trash'; now: Sql }
);

/** A sight's conditions on the entry row `e` (or the row named `alias`: a related entry). */
export function sightOn(v: Sight, alias = 'e'): Sql {
  const scope = scopeOn(alias);
  const base = [scope.workspace(v.workspaceId), scope.kinds(...v.kinds)];
  switch (v.state) {
    case 'published':
      return scope.and(...base, scope.live, scope.published);
    case 'live':
      return scope.and(...base, scope.live);
    case 'trash':
      return scope.and(...base, scope.inTrash(v.now));
    case 'history':
      return scope.and(...base, sql`${scope.live} OR (${scope.inTrash(v.now)})`);
  }
}

/**
 * For statements written as text (render.ts, query/project.ts): the document in `locale` of the
 * entry `a`, joined as `<a>d` (a column, read once per row; a scalar subquery would be read again
 * at every use of it).
 */
export const documentJoin = (a: string, locale: string) => {
  const d = docRow(a);
  return `LEFT JOIN entry_contents ${d} ON ${d}.entry_pk = ${a}.id AND ${d}.locale = ${literal(locale)}`;
};

/** The alias of the document row documentJoin joins to the entry row `a`. */
export const docRow = (a: string) => `${a}d`;

/**
 * For statements written as text: a column of the entry `a` as JSON text (times in the wire
 * format, `null` for no publish_at, `[]` for no tags), as the row keeps it (generated columns,
 * built when the row is written, not at each read).
 */
export const keptJson = (a: string, column: 'entry_id' | 'tags' | 'locales' | 'publish_at' | 'created_at' | 'updated_at') =>
  column === 'publish_at' ? `coalesce(${a}.publish_at_json, 'null')` : `${a}.${column}_json`;

/**
 * Entries `sight` sees that match `where` (a condition on `e`): the few rows of a lookup, or a
 * page. Prepared: `where` is one of a few shapes per caller (the query compiler's statements use
 * `pagedSelect`).
 */
export async function findEntries(db: SqlRunner, sight: Sight, where: Sql, opts: FindOptions): Promise<EntryRecord[]> {
  where = scope.and(sightOn(sight), where);
  const statement = opts.page
    ? pagedSelect(opts.content, where, opts.page, opts.typedOnly)
    : sql`${entrySelect(opts.content, { typedOnly: opts.typedOnly })} WHERE ${where}${opts.forUpdate ? raw(' FOR UPDATE OF e') : raw('')}`;
  return (await rows<RawRecord>(db, statement, true)).map(toRecord);
}

/** Conditions that scope every read to what an API sees, on the entry row named `a`. */
const scopeOn = (a: string) => ({
  workspace: (workspaceId: number) => sql`${raw(a)}.workspace_id = ${workspaceId}`,
  kinds: (...kinds: EntryKind[]) => sql`${raw(a)}.kind = ANY(${kinds}::text[])`,
  live: raw(`${a}.deleted_at IS NULL`),
  published: raw(`${a}.status = 'published'`),
  /** In Trash and not yet expired (expired entries are gone even before the prune task runs). */
  inTrash: (now: Sql) =>
    sql`${raw(a)}.deleted_at IS NOT NULL AND ${raw(a)}.deleted_at > ${now} - make_interval(days => ${TRASH_DAYS}::int)`,
  and: (...conditions: Sql[]) =>
    join(
      conditions.map((c) => sql`(${c})`),
      ' AND ',
    ),
});

/** The conditions on `e`. */
export const scope = scopeOn('e');

/**
 * Folder semantics of a `prefix`: the exact ref and its descendants; `%` and `_` are literal
 * (no LIKE involved). An empty prefix (after trimming slashes) matches everything.
 */
export function refUnderPrefix(column: Sql, prefix: string): Sql {
  const folder = prefix.replace(/^\/+|\/+$/g, '');
  if (folder === '') return raw('true');
  return sql`(${column} = ${folder} OR starts_with(${column}, ${`${folder}/`}))`;
}
