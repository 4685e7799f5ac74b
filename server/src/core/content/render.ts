// Rendered typed entries as JSON text built by PostgreSQL, in the statement that finds them:
// every field of the document, relations expanded breadth first (each field examines its first
// RELATION_WINDOW stored references and skips the invalid ones among them: gone, another type, a
// draft on delivery reads; at most MAX_DEPTH levels and ROOT_BUDGET related entries per root;
// beyond that, and for cycles, compact references), attachments as file objects with fresh
// temporary URLs. Node neither parses nor serializes an entry: it passes the text through.
//
// How: the statement is written for the workspace's content types (their fields become
// expressions; nothing is read per field). `tree`, a recursive query, expands the relations level
// by level, each node with its entry row and document, keyed by its path (root, then per level the
// locale's, the field's and the reference's position, as bytes that sort in that order): within a
// level, the order in which breadth first meets the nodes, so a window over the key spends each
// root's budget in that order. Every node then gives the pieces of text it owns (its head and
// tail, the runs of its own fields, the brackets of its relation and attachment fields) keyed
// within its own key, so that one ordered aggregate per root writes the whole answer in document
// order: a related entry's text falls between its field's brackets. A single field whose
// reference shows nothing has a node of its own that reads `null`.
// A file is left as a hole (`\x01<id>\x02`, which no JSON text of a value can hold: PostgreSQL
// escapes control characters) for Node to fill with its object: its temporary URLs carry the
// time of the answer (lib/fresh-json.ts).
import type { Config } from '../../config';
import type { SqlRunner } from '../../db/database';
import { holesIn, type HoledJson } from '../../lib/fresh-json';
import { freshFile } from '../file-urls';
import { fileJson, fileOfJson } from '../file-records';
import { bindText, isoJson, jsonKey, literal, raw, rows, sql, type Sql } from '../sql';
import type { ContentTypeDef, FieldDef } from './content-types';
import { BASE_LOCALE, sightOn } from './store';

export const RELATION_WINDOW = 25;
export const MAX_DEPTH = 3;
export const ROOT_BUDGET = 100;

export interface RenderOptions {
  config: Config;
  workspace: { id: number; name: string };
  /** Every content type of the workspace (the entries rendered and their relations are of these); the same list while they are unchanged. */
  types: readonly ContentTypeDef[];
  /** A locale code, or `*` for every enabled locale of each entry. */
  locale: string;
  /** Delivery reads: drafts are not valid related entries either. */
  publishedOnly: boolean;
  view: 'full' | 'summary';
  now: Date;
  /** The answer's budget in bytes: past it, no text is returned (`over`). */
  maxBytes: number;
}

/** What was found and its text. */
export interface RenderedText {
  /** The ids (`entries.id`) of every row `found` gave, in its order (a page and the row after it). */
  ids: number[];
  /** The rendered entries of the shown rows, comma-separated (no brackets), with the file holes. */
  items: HoledJson;
  /** The entries' text passed `maxBytes` (`items` is then empty). */
  over: boolean;
  /** Bytes of `items` without its holes. */
  bytes: number;
}

const isSpecial = (f: FieldDef) => f.type === 'relation' || f.type === 'attachment';
/** A position in a key: 4 bytes, big-endian, so that keys sort as their positions. */
const at = (position: string | number) => `int4send((${position})::int)`;
/** The last position of a key's level (a closing piece). */
const LAST = 2147483647;
/** Content type ids as an int[] literal. */
const idList = (types: readonly ContentTypeDef[]) => `'{${types.map((t) => t.id).join(',')}}'::int[]`;
/** The types with a field of a kind (nodes of other types need no look for one). */
const typesWith = (o: RenderOptions, kind: (f: FieldDef) => boolean) => idList(o.types.filter((t) => t.fields.some(kind)));

/** One query per type (its rows only for nodes `p` of that type), all in one. */
function perType(o: RenderOptions, query: (t: ContentTypeDef) => string | null, empty: string): string {
  const branches = o.types.map((t) => [t.id, query(t)] as const).filter((b): b is readonly [number, string] => b[1] !== null);
  return branches.length ? `(${branches.map(([id, q]) => `SELECT * FROM (${q}) q WHERE p.type_id = ${id}`).join(' UNION ALL ')})` : `(${empty} WHERE false)`;
}

/** The columns a node carries: its entry row's and its document (the locale's, or for `*` an object of every locale's). */
function nodeColumns(o: RenderOptions, r: string): string {
  const doc =
    o.locale === '*'
      ? `(SELECT jsonb_object_agg(c.locale, c.data) FROM entry_contents c WHERE c.entry_pk = ${r}.id)`
      : `(SELECT c.data FROM entry_contents c WHERE c.entry_pk = ${r}.id AND c.locale = ${literal(o.locale)})`;
  return `${r}.id AS pk, ${r}.entry_id, ${r}.content_type_id AS type_id, ${r}.bucket_id AS bucket, ${r}.status, ${r}.publish_at, coalesce(${r}.tags, '{}') AS tags,
    coalesce(${r}.locales, '{}') AS locales, ${r}.created_at, ${r}.updated_at, ${r}.lock_version, ${doc} AS doc`;
}

/** The locales a node renders (`lo.locale`, `lo.n`) with its document there (`lo.d`). */
const localesOf = (o: RenderOptions) =>
  o.locale === '*'
    ? `(SELECT u.locale, u.n, p.doc -> u.locale AS d FROM unnest(p.locales) WITH ORDINALITY u(locale, n)) lo`
    : `(SELECT ${literal(o.locale)}::text AS locale, 1::bigint AS n, p.doc AS d) lo`;

/**
 * The stored references of a node's fields of `kind` in its locale's document (`lo.d`), as `x`:
 * each item of a multiple field's array, else the value (`v`, at `n`), with the field's index
 * (`idx`), whether it is multiple, and the ids of the types it accepts (relations).
 */
function referencesOf(o: RenderOptions, kind: 'relation' | 'attachment'): string {
  return perType(
    o,
    (t) => {
      const queries = t.fields.flatMap((f, idx) => {
        if (f.type !== kind) return [];
        const value = `lo.d -> ${literal(f.name)}`;
        const items = f.multiple ? `CASE WHEN jsonb_typeof(${value}) = 'array' THEN ${value} ELSE jsonb_build_array(${value}) END` : `jsonb_build_array(${value})`;
        const targets = o.types.filter((u) => u.bucketId === t.bucketId && f.targets.includes(u.name));
        return [`SELECT ${idx} AS idx, ${f.multiple} AS many, ${idList(targets)} AS targets, y.v, y.n FROM jsonb_array_elements(${items}) WITH ORDINALITY y(v, n)`];
      });
      return queries.length ? queries.join(' UNION ALL ') : null;
    },
    `SELECT NULL::int AS idx, NULL::boolean AS many, NULL::int[] AS targets, NULL::jsonb AS v, NULL::bigint AS n`,
  );
}

/**
 * Every node of the expansion: the roots (depth 0), then level by level the entries the relation
 * fields of full nodes show (live typed entries of the bucket, published on delivery reads, of a
 * type the field accepts), each with `sib`, its place among its field's items, and the reason it
 * is only a reference (a cycle, past the depth, past its root's budget; `none`: a single field's
 * reference that shows nothing). `total`: the root's budget spent by its level and those above.
 */
function tree(o: RenderOptions, show: { limit: number; reverse?: boolean }): string {
  const pos = show.reverse ? `(${Math.trunc(show.limit) + 1} - f.pos)` : 'f.pos';
  const child = `p.key || ${at('lo.n')} || ${at('x.idx + 1')} || ${at('x.n')}`;
  // The order of `child` (keys of one level are of one length and sort as their positions), as
  // columns: the budget's window then sorts as `sib`'s, and PostgreSQL sorts the level once.
  const order = 'p.key, lo.n, x.idx, x.n';
  const eligible = `r.id IS NOT NULL AND r.entry_id <> ALL(p.anc) AND p.depth < ${MAX_DEPTH}`;
  return `tree AS (
    SELECT 0 AS depth, ${pos}::int AS root, ${at(pos)} AS key, 1::bigint AS sib, ${nodeColumns(o, 'e')},
           ARRAY[e.entry_id] AS anc, NULL::text AS reason, 0::bigint AS total
      FROM found f JOIN entries e ON e.id = f.pk WHERE f.pos <= ${Math.trunc(show.limit)}
    UNION ALL
    SELECT p.depth + 1, p.root, ${child}, row_number() OVER (PARTITION BY p.root, p.key, lo.n, x.idx ORDER BY x.n), ${nodeColumns(o, 'r')},
           p.anc || r.entry_id,
           CASE WHEN r.id IS NULL THEN 'none' WHEN r.entry_id = ANY(p.anc) THEN 'cycle' WHEN p.depth >= ${MAX_DEPTH} THEN 'depth'
                WHEN p.total + count(*) FILTER (WHERE ${eligible}) OVER (PARTITION BY p.root ORDER BY ${order} ROWS UNBOUNDED PRECEDING) > ${ROOT_BUDGET} THEN 'budget' END,
           p.total + count(*) FILTER (WHERE ${eligible}) OVER (PARTITION BY p.root)
      FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${referencesOf(o, 'relation')} x
      LEFT JOIN entries r ON jsonb_typeof(x.v) = 'string' AND r.entry_id = x.v #>> '{}' AND r.bucket_id = p.bucket AND $sight AND r.content_type_id = ANY(x.targets)
     WHERE p.reason IS NULL AND p.depth <= ${MAX_DEPTH} AND p.type_id = ANY(${typesWith(o, (f) => f.type === 'relation')})
       AND x.n <= ${RELATION_WINDOW} AND (r.id IS NOT NULL OR NOT x.many))`;
}

/** The files of the attachment fields of full nodes, keyed as their items (`file` NULL: a single field's value that is no file of the workspace). */
function held(o: RenderOptions): string {
  const id = `CASE WHEN jsonb_typeof(x.v) = 'number' AND (x.v)::numeric BETWEEN 1 AND 2147483647 AND (x.v)::numeric = trunc((x.v)::numeric) THEN (x.v)::numeric::int END`;
  return `held AS (SELECT p.root, p.key || ${at('lo.n')} || ${at('x.idx + 1')} || ${at('x.n')} AS key, row_number() OVER (PARTITION BY p.key, lo.n, x.idx ORDER BY x.n) AS sib, fi.id AS file
      FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${referencesOf(o, 'attachment')} x
      LEFT JOIN files fi ON fi.id = ${id} AND fi.workspace_id = ${o.workspace.id} AND fi.user_id IS NULL
     WHERE p.reason IS NULL AND p.type_id = ANY(${typesWith(o, (f) => f.type === 'attachment')}) AND (fi.id IS NOT NULL OR NOT x.many))`;
}

/** The head of an entry's text, which a compact reference ends after (a summary, before its status label). */
function headOf(o: RenderOptions, labelled = true): string {
  const apiUrl = literal(`${o.config.baseUrl}/api/v1/${encodeURIComponent(o.workspace.name)}/entries/`);
  const naming = o.locale === '*' ? `(p.doc -> ${literal(BASE_LOCALE)})` : 'p.doc';
  const named = o.types.filter((t) => t.nameField);
  const name = named.length
    ? `CASE p.type_id ${named.map((t) => `WHEN ${t.id} THEN CASE WHEN jsonb_typeof(${naming} -> ${literal(t.nameField!)}) = 'string' AND ${naming} -> ${literal(t.nameField!)} <> '""' THEN (${naming} -> ${literal(t.nameField!)})::text END`).join(' ')} END`
    : 'NULL::text';
  return `'{"id":' || to_json(p.entry_id)::text || ',"api_url":' || to_json(${apiUrl} || p.entry_id)::text || ',"name":' || coalesce(${name}, to_json(p.entry_id)::text)
    || ',"status":' || to_json(p.status)::text${labelled ? ` || ',"status_label":' || CASE p.status WHEN 'published' THEN '"Published"' ELSE '"Draft"' END` : ''}`;
}

/** A node's own fields in its document `doc`, from index `from` to `to` (excluded), as text (null: none). */
function run(t: ContentTypeDef, from: number, to: number, doc = 'lo.d'): string | null {
  const parts = t.fields.slice(from, to).map((f, i) => `${jsonKey(f.name, from + i === 0)} || coalesce((${doc} -> ${literal(f.name)})::text, ${f.multiple ? `'[]'` : `'null'`})`);
  return parts.length ? parts.join(' || ') : null;
}

/**
 * The pieces of a full node's fields object in one locale (`v.k`, within the locale's part of its
 * key; `v.t`): its opening (with the locale's name for `*`), the runs of its own fields, the
 * brackets (or key) around each relation and attachment field's items, its closing.
 */
function fieldPieces(o: RenderOptions): string {
  const label = o.locale === '*' ? `CASE WHEN lo.n > 1 THEN ',' ELSE '' END || to_json(lo.locale)::text || ':{'` : `'{'`;
  return perType(
    o,
    (t) => {
      const rows: string[] = [`(${at(0)}, ${label})`];
      let from = 0;
      t.fields.forEach((f, idx) => {
        if (!isSpecial(f)) return;
        const before = run(t, from, idx);
        if (before) rows.push(`(${at(from + 1)} || ${at(0)}, ${before})`);
        rows.push(`(${at(idx + 1)} || ${at(0)}, ${jsonKey(f.name, idx === 0, f.multiple ? '[' : '')})`);
        if (f.multiple) rows.push(`(${at(idx + 1)} || ${at(LAST)}, ']')`);
        from = idx + 1;
      });
      const after = run(t, from, t.fields.length);
      if (after) rows.push(`(${at(from + 1)} || ${at(0)}, ${after})`);
      rows.push(`(${at(LAST)}, '}')`);
      return `SELECT * FROM (VALUES ${rows.join(', ')}) v(k, t)`;
    },
    `SELECT NULL::bytea AS k, NULL::text AS t`,
  );
}

/** Every piece of the answer's text (`root`, `k`, `t`): one ordered aggregate per root writes it. */
function pieces(o: RenderOptions): string {
  const star = o.locale === '*';
  const comma = `CASE WHEN p.sib > 1 THEN ',' ELSE '' END || `;
  const head = headOf(o);
  const fullHead = `${head} || ',"publish_at":' || coalesce(${isoJson('p.publish_at')}, 'null') || ',"tags":' || to_json(p.tags)::text
      || ',"locales":' || to_json(p.locales)::text || ',"fields":'${star ? ` || '{'` : ''}`;
  const tail = `${star ? `'}' || ` : ''}',"created_at":' || ${isoJson('p.created_at')} || ',"updated_at":' || ${isoJson('p.updated_at')} || ',"lock_version":' || p.lock_version || '}'`;
  // An entry of a type without relation or attachment fields is one piece, in one locale.
  const plainTypes = star ? [] : o.types.filter((t) => !t.fields.some(isSpecial));
  const plain = idList(plainTypes);
  const whole = plainTypes.length
    ? `CASE p.type_id ${plainTypes.map((t) => `WHEN ${t.id} THEN '{' || ${(run(t, 0, t.fields.length, 'p.doc') ?? `''`)} || '}'`).join(' ')} END`
    : `NULL::text`;
  return [
    `SELECT p.root, p.key || ${at(0)} AS k, ${comma}${head} || ',"_relation":{"reason":"' || p.reason || '"}}' AS t FROM tree p WHERE p.reason IN ('cycle', 'depth', 'budget')`,
    `SELECT p.root, p.key || ${at(0)}, 'null' FROM tree p WHERE p.reason = 'none'`,
    `SELECT p.root, p.key || ${at(0)}, ${comma}${fullHead} || ${whole} || ${tail} FROM tree p WHERE p.reason IS NULL AND p.type_id = ANY(${plain})`,
    `SELECT p.root, p.key || ${at(0)}, ${comma}${fullHead} FROM tree p WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key || ${at(LAST)}, ${tail} FROM tree p WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key || ${at('lo.n')} || v.k, v.t FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${fieldPieces(o)} v
      WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key, CASE WHEN p.file IS NULL THEN 'null' ELSE ${comma}E'\\x01' || p.file || E'\\x02' END FROM held p`,
  ].join('\nUNION ALL ');
}

/** A summary of each root (`view=summary`): its head and when it was last updated. */
function summaries(o: RenderOptions, show: { limit: number; reverse?: boolean }): string {
  const pos = show.reverse ? `(${Math.trunc(show.limit) + 1} - f.pos)` : 'f.pos';
  return `texts AS (SELECT ${pos}::int AS root, ${headOf(o, false)} || ',"updated_at":' || ${isoJson('p.updated_at')} || '}' AS j
      FROM found f JOIN LATERAL (SELECT ${nodeColumns(o, 'e')} FROM entries e WHERE e.id = f.pk) p ON true WHERE f.pos <= ${Math.trunc(show.limit)}),
    held AS (SELECT NULL::int AS file WHERE false)`;
}

/** Statements written, per content type list (a change of types makes a new list), by the rest of their shape. */
const writtenFor = new WeakMap<readonly ContentTypeDef[], Map<string, Sql>>();

/**
 * The statement's part after `found` (its texts, and `sized`: each root's and the running size),
 * written once per shape: a request of a shape written before costs no writing.
 */
function written(o: RenderOptions, show: { limit: number; reverse?: boolean }): Sql {
  let byShape = writtenFor.get(o.types);
  if (!byShape) writtenFor.set(o.types, (byShape = new Map<string, Sql>()));
  const key = JSON.stringify([o.locale, o.view, o.publishedOnly, o.workspace.id, o.workspace.name, o.config.baseUrl, show.limit, show.reverse === true]);
  const kept = byShape.get(key);
  if (kept) return kept;
  const texts =
    o.view === 'summary'
      ? summaries(o, show)
      : `${tree(o, show)},\n${held(o)},\ntexts AS (SELECT root, string_agg(t, '' ORDER BY k) AS j FROM (${pieces(o)}) x GROUP BY root)`;
  // What the store lets this answer see of related entries: typed ones, published on delivery reads.
  const related = { workspaceId: o.workspace.id, kinds: ['typed' as const], state: o.publishedOnly ? ('published' as const) : ('live' as const) };
  // Sizes add up root by root: past the budget nothing is returned.
  const text = sql`${bindText(texts, { $sight: sightOn(related, 'r') })},
    sized AS MATERIALIZED (SELECT root, j, sum(octet_length(j) + 1) OVER (ORDER BY root) AS upto FROM texts)`;
  if (byShape.size < 200) byShape.set(key, text);
  return text;
}

/**
 * Renders the entries `found` gives (a statement with columns `pk`, an `entries.id`, and `pos`,
 * their order), the first `show.limit` of them, in reverse order if asked, in one statement.
 */
export async function renderEntries(db: SqlRunner, found: Sql, o: RenderOptions, show: { limit: number; reverse?: boolean }): Promise<RenderedText> {
  const statement = sql`WITH RECURSIVE found AS MATERIALIZED (${found}), ${written(o, show)}
    SELECT (SELECT coalesce(array_agg(pk ORDER BY pos), '{}') FROM found) AS ids,
           (SELECT coalesce(max(upto), 0) FROM sized) AS bytes,
           (SELECT string_agg(j, ',' ORDER BY root) FROM sized WHERE NOT EXISTS (SELECT 1 FROM sized WHERE upto > ${o.maxBytes}::bigint)) AS items,
           (SELECT json_agg(${raw(fileJson())}) FROM files fi WHERE fi.id IN (SELECT file FROM held)) AS files`;
  const [row] = await rows<{ ids: number[]; bytes: string; items: string | null; files: Parameters<typeof fileOfJson>[0][] | null }>(db, statement, 'bounded');
  const bytes = Number(row.bytes);
  return { ids: row.ids, items: withFiles(row.items ?? '', row.files ?? [], o), over: bytes > o.maxBytes, bytes };
}

/** The text with each file hole as a `Fresh` file object. */
function withFiles(text: string, files: Parameters<typeof fileOfJson>[0][], o: RenderOptions): HoledJson {
  if (!files.length) return { parts: [text], holes: [] };
  const byId = new Map(files.map((f) => [String(f.id), freshFile(o.config, o.workspace.name, fileOfJson(f), o.now)]));
  return holesIn(text, (id) => byId.get(id)!);
}
