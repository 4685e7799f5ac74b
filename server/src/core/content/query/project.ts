// The projection of a structured query's page, written by PostgreSQL as JSON text in the statement
// that finds the page: selected fields and metadata of each root, and through relations the
// selected fields of the visible related entries (live typed entries of the bucket of an accepted
// type, in stored order; a single reference to nothing visible is null, a multiple one []).
// Node neither parses nor serializes a row: it passes the text through.
//
// The selection becomes one expression per row: a relation is a subquery over its stored
// references (index lookups), nested as deep as the selection. Referenced entries and files count
// against one budget per response (REFERENCE_BUDGET, shared by the members of a batch): each
// level's distinct related entries are found first (`spent<n>`, at most the budget left + 1, and a
// level is only looked for while the ones above fit), so going over it is a `422`, never a
// truncated result, and never a fan-out read to its end. Files are holes (`\x01<file row as JSON>\x02`)
// that Node fills: with the picked properties of a file object (its temporary URLs fresh at the
// time of the answer), or its id; their distinct ids count against the same budget.
import type { Config } from '../../../config';
import type { ByteBudget } from '../../../lib/byte-budget';
import type { SqlRunner } from '../../../db/database';
import type { HoledJson } from '../../../lib/fresh-json';
import { invalidAt } from '../../errors';
import { fileHole, fileHolesIn, fileJoin } from '../../file-records';
import { cat, inline, isoJson, jsonKey, literal, raw, rows, sql, type Sql } from '../../sql';
import { documentJoin, sightOn, keptJson } from '../store';
import type { FieldDef } from '../content-types';
import type { JsonTree, Selected, Selection } from './parse';

export const REFERENCE_BUDGET = 1000;

/** The references left (the statement's `budget` CTE). */
const LEFT = '(SELECT refs FROM budget)';

export interface ProjectOptions {
  config: Config;
  workspace: { id: number; name: string };
  bucketId: number;
  locale: string;
  now: Date;
  /** Request path of the budget's error (`fields`, `queries.<name>.fields`). */
  errorPath: string;
  /** Referenced entries and files so far (shared by the members of a batch). */
  budget: { used: number; limit: number };
  /** The answer's bytes so far (shared by the members of a batch). */
  bytes: ByteBudget;
}

/** The page a projection reads: a statement of `page_id` (an `entries.id`) and `page_pos` rows with the sort's flags. */
export interface PageSource {
  statement: Sql;
  /** Refuses the page from its first matching row's columns (the sort's flags), before any budget is counted. */
  check: (first: Record<string, unknown> | null) => void;
  /** Rows before the page (`page_pos` counts from the first matching row). */
  offset: number;
  limit: number;
}

export interface ProjectedPage {
  /** The page's rows as JSON text, comma-separated, with their files as holes. */
  items: HoledJson;
  /** Matching rows from the page's first on (more than `limit`: there is more). */
  count: number;
}

/** How each metadata column is written as JSON text. */
const META: Record<string, (a: string) => string> = {
  entry_id: (a) => keptJson(a, 'entry_id'),
  status: (a) => `to_json(${a}.status)::text`,
  lock_version: (a) => `${a}.lock_version::text`,
  locales: (a) => keptJson(a, 'locales'),
  created_at: (a) => keptJson(a, 'created_at'),
  updated_at: (a) => keptJson(a, 'updated_at'),
  publish_at: (a) => keptJson(a, 'publish_at'),
  published_at: (a) => `coalesce(${isoJson(`${a}.published_at`)}, 'null')`,
};

/** A stored value's references: the items of an array, else the value (none when null or missing). */
const references = (value: string) =>
  `jsonb_array_elements(CASE jsonb_typeof(${value}) WHEN 'array' THEN ${value} WHEN 'null' THEN '[]'::jsonb ELSE coalesce(jsonb_build_array(${value}), '[]'::jsonb) END)`;

/** A JSON field's picked properties (`tree`, output keys in order) of `value`, missing ones null. */
function picked(value: string, tree: JsonTree): string {
  const parts = Object.entries(tree).flatMap(([key, sub], i) => {
    const inner = `CASE WHEN jsonb_typeof(${value}) = 'object' AND ${value} ? ${literal(key)} THEN ${value} -> ${literal(key)} END`;
    return [jsonKey(key, i === 0), sub === true ? `coalesce((${inner})::text, 'null')` : picked(`(${inner})`, sub)];
  });
  return cat([`'{'`, ...parts, `'}'`]);
}

interface Built {
  /** Per relation level (1 ...), the related entries it finds (`SELECT id`), over the entries of the level above. */
  levels: string[][];
  /** File properties picked, by selection number (a hole names its own); undefined: the file's id. */
  picks: (string[] | undefined)[];
}

/**
 * Writes the projection of `selection` for the entry `a` (its row and `a.doc`, the query's
 * locale's document) as a text expression, and records what its relations and files count.
 * `parents`: a statement of the entries `a` ranges over (the level's), for the counting queries.
 */
function projection(
  selection: Selection,
  a: string,
  depth: number,
  parents: string,
  o: Pick<ProjectOptions, 'workspace' | 'bucketId' | 'locale'>,
  built: Built,
): string {
  // What the store lets a query see of related entries (live typed entries of the workspace, drafts included), of the bucket and an accepted type.
  const related = { workspaceId: o.workspace.id, kinds: ['typed' as const], state: 'live' as const };
  const visible = (r: string, typeIds: number[]) =>
    `${inline(sightOn(related, r))} AND ${r}.bucket_id = ${o.bucketId} AND ${r}.content_type_id = ANY('{${typeIds.join(',')}}'::int[])`;
  const withDoc = (r: string) => `SELECT ${r}.*, ${r}d.data AS doc FROM entries ${r} ${documentJoin(r, o.locale)}`;
  // A selected key's value as text.
  const valueOf = (s: Selected): string => {
    if (s.kind === 'meta') return META[s.column](a);
    if (s.kind === 'value') return `coalesce((${a}.doc -> ${literal(s.def.key)})::text, 'null')`;
    if (s.kind === 'json') return picked(`(${a}.doc -> ${literal(s.def.key)})`, s.tree);
    const def: FieldDef = s.def;
    const refs = `${references(`${a}.doc -> ${literal(def.key)}`)} WITH ORDINALITY x(v, n)`;
    const gather = (item: string, from: string) =>
      def.multiple
        ? `coalesce((SELECT '[' || string_agg(${item}, ',' ORDER BY x.n) || ']' FROM ${from}), '[]')`
        : `coalesce((SELECT ${item} FROM ${from} ORDER BY x.n LIMIT 1), 'null')`;
    if (s.kind === 'files' || (s.kind === 'ids' && def.type === 'attachment')) {
      const pick = built.picks.push(s.kind === 'files' ? s.properties : undefined) - 1;
      return gather(fileHole(pick), `${refs} JOIN ${fileJoin(o.workspace.id, 'x.v')}`);
    }
    // A relation: its entries' IDs, or their projection.
    const r = `r${depth + 1}`;
    const typeIds = s.kind === 'relation' ? s.hop.typeIds : s.hop!.typeIds;
    const from = `${refs} JOIN LATERAL (${withDoc(r)} WHERE jsonb_typeof(x.v) = 'string' AND ${r}.entry_id = x.v #>> '{}' AND ${visible(r, typeIds)}) ${r} ON true`;
    (built.levels[depth] ??= []).push(`SELECT ${r}.id FROM (${parents}) ${a} CROSS JOIN LATERAL ${from}`);
    if (s.kind === 'ids') return gather(keptJson(r, 'entry_id'), from);
    // The entries below are those this relation shows (a single one: the first visible).
    const below = `SELECT ${r}.* FROM (${parents}) ${a} CROSS JOIN LATERAL (SELECT ${r}.*, x.n FROM ${from}${def.multiple ? '' : ' ORDER BY x.n LIMIT 1'}) ${r}`;
    return gather(projection(s.children, r, depth + 1, below, o, built), from);
  };
  return cat([`'{'`, ...[...selection].flatMap(([key, s], i) => [jsonKey(key, i === 0), valueOf(s)]), `'}'`]);
}

/**
 * The statement that finds a query's page and projects it (the budgets left bound), and the file
 * properties its holes pick (also used by the bench to EXPLAIN exactly what the server runs).
 */
export function projectionStatement(
  page: Omit<PageSource, 'check'>,
  selection: Selection,
  o: Omit<ProjectOptions, 'now' | 'errorPath'>,
): { statement: Sql; picks: Built['picks'] } {
  const built: Built = { levels: [], picks: [] };
  const roots = `SELECT e.*, ed.data AS doc, f.page_pos
      FROM found f JOIN entries e ON e.id = f.page_id ${documentJoin('e', o.locale)} WHERE f.page_pos > ${page.offset} AND f.page_pos <= ${page.offset + page.limit}`;
  const row = projection(selection, 'e', 0, roots, o, built);
  // Related entries so far, level by level (each level's distinct ones, at most the budget left +
  // 1; a level is looked for only while those above fit).
  const spent = built.levels.map((queries, i) => {
    const above = i ? `(SELECT n FROM spent${i})` : '0';
    return `spent${i + 1} AS MATERIALIZED (SELECT ${above} + count(*) AS n FROM (SELECT DISTINCT id FROM (${queries.join(' UNION ALL ')}) q WHERE ${above} <= ${LEFT} LIMIT ${LEFT} + 1) d),\n`;
  });
  const total = spent.length ? `(SELECT n FROM spent${spent.length})` : '0';
  // The rows' text, built once the references fit, and returned only within the bytes left.
  const text = `${spent.join('')}rooted AS (${roots}),
    texts AS (SELECT CASE WHEN ${total} <= ${LEFT} THEN (SELECT string_agg(${row}, ',' ORDER BY e.page_pos) FROM rooted e) END AS t)
    SELECT ${total} AS refs,
           (SELECT to_jsonb(f) FROM found f ORDER BY f.page_pos LIMIT 1) AS first,
           (SELECT count(*) FROM found f WHERE f.page_pos > ${page.offset}) AS count,
           (SELECT coalesce(octet_length(t), 0) FROM texts) AS bytes,
           (SELECT t FROM texts WHERE coalesce(octet_length(t), 0) <= (SELECT bytes FROM budget)) AS items`;
  // What is left of the references' and the bytes' budgets.
  const budget = sql`budget(refs, bytes) AS (SELECT ${o.budget.limit - o.budget.used}::bigint, ${o.bytes.limit - o.bytes.spent}::bigint)`;
  return { statement: sql`WITH ${budget}, found AS MATERIALIZED (${page.statement}), ${raw(text)}`, picks: built.picks };
}

/**
 * Projects a query's page in the statement that finds it. Throws the reference budget's `422`;
 * counts the answer's bytes (`o.bytes`: the rows' text and their files) before handing it on.
 */
export async function projectPage(db: SqlRunner, page: PageSource, selection: Selection, o: ProjectOptions): Promise<ProjectedPage> {
  const { statement, picks } = projectionStatement(page, selection, o);
  const [result] = await rows<{ refs: number; first: Record<string, unknown> | null; count: number; bytes: number; items: string | null }>(
    db,
    statement,
    'bounded',
  );
  page.check(result.first);
  o.budget.used += Number(result.refs);
  if (o.budget.used > o.budget.limit) throw overBudget(o);
  // Past the bytes left the text did not come back: its size says so.
  if (result.items === null) o.bytes.spend(Number(result.bytes));
  const filled = fileHolesIn(result.items === null ? [] : [result.items], o.config, o.workspace.name, o.now, picks);
  o.budget.used += filled.files;
  if (o.budget.used > o.budget.limit) throw overBudget(o);
  return { items: filled.json, count: Number(result.count) };
}

export const overBudget = (o: ProjectOptions) =>
  invalidAt(
    o.errorPath,
    'The :attribute field references more than :limit entries and files in one response; narrow the selection or the page.',
    { limit: o.budget.limit },
  );
