// Rendering with relations expanded breadth first, whatever they hold (core/content/render.ts
// chooses it when the content model does not bound an expansion, render-nested.ts otherwise).
//
// `tree`, a recursive query, expands the relations level by level, each node with its entry row
// and document, keyed by its path (root, then per level the locale's, the field's and the
// reference's position, as bytes that sort in that order): within a level, the order in which
// breadth first meets the nodes, so a window over the key spends each root's budget in that
// order. Every node then gives the pieces of text it owns (its head and tail, the runs of its own
// fields, the brackets of its relation and attachment fields) keyed within its own key, so that
// one ordered aggregate per root writes the whole answer in document order: a related entry's
// text falls between its field's brackets. A single field whose reference shows nothing has a
// node of its own that reads `null`. Its nodes are `p` (ROW.node) and the entries their references
// name `r` (ROW.child): render-aliases.ts.
import { cat, jsonKey, literal } from '../sql';
import { fileHole, fileJoin } from '../file-records';
import type { ContentTypeDef, FieldDef } from './content-types';
import {
  MAX_DEPTH,
  RELATION_WINDOW,
  ROOT_BUDGET,
  compactText,
  envelopeHead,
  envelopeTail,
  idList,
  isSpecial,
  itemsOf,
  nameAmong,
  ownFields,
  relatedSight,
  steppedTexts,
  targetsOf,
  type RenderOptions,
} from './render-text';
import { BASE_LOCALE } from './store';
import { PART, ROW } from './render-aliases';

/** A position in a key: 4 bytes, big-endian, so that keys sort as their positions. */
const at = (position: string | number) => `int4send((${position})::int)`;
/** The last position of a key's level (a closing piece). */
const LAST = 2147483647;
/** The types with a field of a kind (nodes of other types need no look for one). */
const typesWith = (o: RenderOptions, kind: (f: FieldDef) => boolean) => idList(o.types.filter((t) => t.fields.some(kind)));

/** One query per type (its rows only for nodes `p` of that type), all in one. */
function perType(o: RenderOptions, query: (t: ContentTypeDef) => string | null, empty: string): string {
  const branches = o.types.map((t) => [t.id, query(t)] as const).filter((b): b is readonly [number, string] => b[1] !== null);
  return branches.length
    ? `(${branches.map(([id, q]) => `SELECT * FROM (${q}) q WHERE p.type_id = ${id}`).join(' UNION ALL ')})`
    : `(${empty} WHERE false)`;
}

/** The columns a node carries: its entry row's and its document (the locale's, or for `*` an object of every locale's). */
function nodeColumns(o: RenderOptions, r: string): string {
  const doc =
    o.locale === '*'
      ? `(SELECT jsonb_object_agg(c.locale, c.data) FROM entry_contents c WHERE c.entry_pk = ${r}.id)`
      : `(SELECT c.data FROM entry_contents c WHERE c.entry_pk = ${r}.id AND c.locale = ${literal(o.locale)})`;
  return `${r}.id AS pk, ${r}.entry_id, ${r}.content_type_id AS type_id, ${r}.bucket_id AS bucket, ${r}.entry_id_json, ${r}.status, ${r}.publish_at_json, ${r}.tags_json,
    ${r}.locales, ${r}.locales_json, ${r}.created_at_json, ${r}.updated_at_json, ${r}.lock_version, ${doc} AS doc`;
}

/** The locales a node renders (`lo.locale`, `lo.n`) with its document there (`lo.d`). */
const localesOf = (o: RenderOptions) =>
  o.locale === '*'
    ? `(SELECT u.locale, u.n, p.doc -> u.locale AS d FROM unnest(coalesce(p.locales, '{}')) WITH ORDINALITY u(locale, n)) lo`
    : `(SELECT ${literal(o.locale)}::text AS locale, 1::bigint AS n, p.doc AS d) lo`;

/**
 * The stored references of a node's fields of `kind` in its locale's document (`lo.d`), as `x`:
 * each item (`v`, at `n`), with the field's index (`idx`), whether it is multiple, and the ids of
 * the types it accepts (relations).
 */
function referencesOf(o: RenderOptions, kind: 'relation' | 'attachment'): string {
  return perType(
    o,
    (t) => {
      const queries = t.fields.flatMap((f, idx) => {
        if (f.type !== kind) return [];
        const items = itemsOf(`lo.d -> ${literal(f.key)}`, f.multiple);
        return [
          `SELECT ${idx} AS idx, ${f.multiple} AS many, ${idList(targetsOf(o, t, f))} AS targets, y.v, y.n FROM jsonb_array_elements(${items}) WITH ORDINALITY y(v, n)`,
        ];
      });
      return queries.length ? queries.join(' UNION ALL ') : null;
    },
    `SELECT NULL::int AS idx, NULL::boolean AS many, NULL::int[] AS targets, NULL::jsonb AS v, NULL::bigint AS n`,
  );
}

/**
 * Every node of the expansion: the roots (depth 0), then level by level the entries the relation
 * fields of full nodes show (what the answer may see of related entries; of the bucket,
 * of a type the field accepts), each with `sib`, its place among its field's items, and the reason
 * it is only a reference (a cycle, past the depth, past its root's budget; `none`: a single
 * field's reference that shows nothing). `total`: the root's budget spent by its level and those
 * above.
 */
function tree(o: RenderOptions): string {
  const child = `p.key || ${at('lo.n')} || ${at('x.idx + 1')} || ${at('x.n')}`;
  // The order of `child` (keys of one level are of one length and sort as their positions), as
  // columns: the budget's window then sorts as `sib`'s, and PostgreSQL sorts the level once.
  const order = 'p.key, lo.n, x.idx, x.n';
  const eligible = `r.id IS NOT NULL AND r.entry_id <> ALL(p.anc) AND p.depth < ${MAX_DEPTH}`;
  // The root: its row of `roots` at the walk's next step, and its entry row.
  const [rt, e, s] = [ROW.treeRoot, ROW.entry, ROW.step];
  return `${PART.tree} AS (
    SELECT 0 AS depth, ${rt}.root, ${at(`${rt}.root`)} AS key, 1::bigint AS sib, ${nodeColumns(o, e)},
           ARRAY[${e}.entry_id] AS anc, NULL::text AS reason, 0::bigint AS total
      FROM ${PART.roots} ${rt} JOIN entries ${e} ON ${e}.id = ${rt}.pk WHERE ${rt}.step = ${s}.step + 1
    UNION ALL
    SELECT p.depth + 1, p.root, ${child}, row_number() OVER (PARTITION BY p.root, p.key, lo.n, x.idx ORDER BY x.n), ${nodeColumns(o, ROW.child)},
           p.anc || r.entry_id,
           CASE WHEN r.id IS NULL THEN 'none' WHEN r.entry_id = ANY(p.anc) THEN 'cycle' WHEN p.depth >= ${MAX_DEPTH} THEN 'depth'
                WHEN p.total + count(*) FILTER (WHERE ${eligible}) OVER (PARTITION BY p.root ORDER BY ${order} ROWS UNBOUNDED PRECEDING) > ${ROOT_BUDGET} THEN 'budget' END,
           p.total + count(*) FILTER (WHERE ${eligible}) OVER (PARTITION BY p.root)
      FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${referencesOf(o, 'relation')} x
      LEFT JOIN entries r ON jsonb_typeof(x.v) = 'string' AND r.entry_id = x.v #>> '{}' AND r.bucket_id = p.bucket AND ${relatedSight(o, ROW.child)} AND r.content_type_id = ANY(x.targets)
     WHERE p.reason IS NULL AND p.depth <= ${MAX_DEPTH} AND p.type_id = ANY(${typesWith(o, (f) => f.type === 'relation')})
       AND x.n <= ${RELATION_WINDOW} AND (r.id IS NOT NULL OR NOT x.many))`;
}

/** The files of the attachment fields of full nodes, keyed as their items, as holes (`hole` NULL: a single field's value that is no file of the workspace). */
function held(o: RenderOptions): string {
  return `held AS (SELECT p.root, p.key || ${at('lo.n')} || ${at('x.idx + 1')} || ${at('x.n')} AS key, row_number() OVER (PARTITION BY p.key, lo.n, x.idx ORDER BY x.n) AS sib,
        CASE WHEN fi.id IS NOT NULL THEN ${fileHole()} END AS hole
      FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${referencesOf(o, 'attachment')} x
      LEFT JOIN ${fileJoin(o.workspace.id, 'x.v')}
     WHERE p.reason IS NULL AND p.type_id = ANY(${typesWith(o, (f) => f.type === 'attachment')}) AND (fi.id IS NOT NULL OR NOT x.many))`;
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
        const before = ownFields(t, from, idx, 'lo.d');
        if (before.length) rows.push(`(${at(from + 1)} || ${at(0)}, ${cat(before)})`);
        rows.push(`(${at(idx + 1)} || ${at(0)}, ${jsonKey(f.name, idx === 0, f.multiple ? '[' : '')})`);
        if (f.multiple) rows.push(`(${at(idx + 1)} || ${at(LAST)}, ']')`);
        from = idx + 1;
      });
      const after = ownFields(t, from, t.fields.length, 'lo.d');
      if (after.length) rows.push(`(${at(from + 1)} || ${at(0)}, ${cat(after)})`);
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
  const name = nameAmong(o.types, 'p.type_id', star ? `(p.doc -> ${literal(BASE_LOCALE)})` : 'p.doc');
  const fullHead = cat([...envelopeHead(o, 'p', name), ...(star ? [`'{'`] : [])]);
  const tail = cat([...(star ? [`'}'`] : []), ...envelopeTail('p')]);
  // An entry of a type without relation or attachment fields is one piece, in one locale.
  const plainTypes = star ? [] : o.types.filter((t) => !t.fields.some(isSpecial));
  const plain = idList(plainTypes);
  const whole = plainTypes.length
    ? `CASE p.type_id ${plainTypes.map((t) => `WHEN ${t.id} THEN ${cat([`'{'`, ...ownFields(t, 0, t.fields.length, 'p.doc'), `'}'`])}`).join(' ')} END`
    : `NULL::text`;
  return [
    `SELECT p.root, p.key || ${at(0)} AS k, ${comma}${compactText(o, 'p', name, 'p.reason')} AS t FROM tree p WHERE p.reason IN ('cycle', 'depth', 'budget')`,
    `SELECT p.root, p.key || ${at(0)}, 'null' FROM tree p WHERE p.reason = 'none'`,
    `SELECT p.root, p.key || ${at(0)}, ${comma}${fullHead} || ${whole} || ${tail} FROM tree p WHERE p.reason IS NULL AND p.type_id = ANY(${plain})`,
    `SELECT p.root, p.key || ${at(0)}, ${comma}${fullHead} FROM tree p WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key || ${at(LAST)}, ${tail} FROM tree p WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key || ${at('lo.n')} || v.k, v.t FROM tree p CROSS JOIN LATERAL ${localesOf(o)} CROSS JOIN LATERAL ${fieldPieces(o)} v
      WHERE p.reason IS NULL AND p.type_id <> ALL(${plain})`,
    `SELECT p.root, p.key, CASE WHEN p.hole IS NULL THEN 'null' ELSE ${comma}p.hole END FROM held p`,
  ].join('\nUNION ALL ');
}

/**
 * `roots` and `steps` (render-text.ts steppedTexts) of the first `show.limit` entries `found`
 * gives: each root expanded and written on its own step (its budget of related entries is its
 * own), so that no root is expanded once the answer passed its byte budget.
 */
export const treeTexts = (o: RenderOptions, show: { limit: number; reverse?: boolean }) =>
  steppedTexts(
    show,
    `WITH RECURSIVE ${tree(o)},\n${held(o)}\nSELECT root, string_agg(t, '' ORDER BY k) AS j FROM (${pieces(o)}) x GROUP BY root`,
  );

/**
 * `steps` of a CTE of texts (`root`, `j`) written whole (summaries: a head each): their running
 * total (budget.spent first, and a comma per text), compared once all are written.
 */
export const runningTotal = (texts: string) =>
  `steps AS (SELECT row_number() OVER w AS step, root, j, (SELECT spent FROM budget) + sum(octet_length(j) + 1) OVER w AS total FROM ${texts} WINDOW w AS (ORDER BY root))`;
