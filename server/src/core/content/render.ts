// Rendered typed entries as JSON text built by PostgreSQL, in the statement that finds them:
// every field of the document, relations expanded breadth first (each field examines its first
// RELATION_WINDOW stored references and skips the invalid ones among them: gone, another type, a
// draft on delivery reads; at most MAX_DEPTH levels and ROOT_BUDGET related entries per root;
// beyond that, and for cycles, compact references), attachments as file objects with fresh
// temporary URLs. Node neither parses nor serializes an entry: it passes the text through.
//
// How: the statement is written for the workspace's content types (their fields become
// expressions; nothing is read per field), once per shape. Where the content model bounds every
// expansion within the budget, each entry's text is one nested expression (render-nested.ts);
// otherwise a recursive query expands level by level and spends the budget breadth first
// (render-tree.ts). Both give the same text; render-text.ts writes the parts they share. A file
// is left as a hole for Node to fill with its object (its temporary URLs carry the time of the
// answer: lib/fresh-json.ts).
import type { SqlRunner } from '../../db/database';
import type { HoledJson } from '../../lib/fresh-json';
import { fileHolesIn } from '../file-records';
import { cat, literal, raw, rows, sql, type Sql } from '../sql';
import type { ContentTypeDef } from './content-types';
import { KEEP_MAX, depsOf, variantOf } from './kept-texts';
import { MAX_DEPTH, headParts, nameAmong, rootOf, targetsOf, type RenderOptions } from './render-text';
import { nestable, nestedTexts } from './render-nested';
import { runningTotal, treeTexts } from './render-tree';
import { BASE_LOCALE, docRow, documentJoin, keptJson } from './store';

export type { RenderOptions } from './render-text';

/** What was found and its text. */
export interface RenderedText {
  /** The ids (`entries.id`) of every row `found` gave, in its order (a page and the row after it). */
  ids: number[];
  /** The rendered entries of the shown rows, comma-separated (no brackets), with the file holes (each entry's text a part of its own). */
  items: HoledJson;
  /** The entries' text passed `maxBytes` (`items` is then empty). */
  over: boolean;
}

/** A summary of each root (`view=summary`): its head and when it was last updated. */
function summaries(o: RenderOptions, show: { limit: number; reverse?: boolean }): string {
  const pos = rootOf(show);
  const name = nameAmong(o.types, 'e.content_type_id', `${docRow('e')}.data`);
  return `texts AS (SELECT ${pos}::int AS root, ${cat([...headParts(o, 'e', name, false), `',"updated_at":'`, keptJson('e', 'updated_at'), `'}'`])} AS j
      FROM found f JOIN entries e ON e.id = f.pk ${documentJoin('e', o.locale === '*' ? BASE_LOCALE : o.locale)}
     WHERE f.pos <= ${Math.trunc(show.limit)}), ${runningTotal('texts')}`;
}

/** The types an answer can reach, per content type list and roots: each list's reach is written once. */
const reachOf = new WeakMap<readonly ContentTypeDef[], Map<string, readonly ContentTypeDef[]>>();

/**
 * The content types whose entries an answer of `o` can show: its roots' and, through relation
 * fields' targets, those of the entries below them, to MAX_DEPTH levels, and one level more whose
 * entries show only as compact references (their names). The statement is written for these, so
 * that its size follows the request, not the workspace's model (a read of an author in a
 * workspace of 100 types is written for the author's type alone).
 */
export function reachable(o: Pick<RenderOptions, 'types' | 'rootTypes'>): readonly ContentTypeDef[] {
  const roots = o.rootTypes ?? o.types;
  if (roots === o.types) return o.types;
  let byRoots = reachOf.get(o.types);
  if (!byRoots) reachOf.set(o.types, (byRoots = new Map<string, readonly ContentTypeDef[]>()));
  const key = roots.map((t) => t.id).join(',');
  const kept = byRoots.get(key);
  if (kept) return kept;
  const seen = new Set<ContentTypeDef>(roots);
  let level: readonly ContentTypeDef[] = roots;
  for (let depth = 0; depth <= MAX_DEPTH && level.length; depth++) {
    const next: ContentTypeDef[] = [];
    for (const t of level) {
      for (const f of t.fields) {
        if (f.type !== 'relation') continue;
        for (const u of targetsOf(o, t, f)) {
          if (seen.has(u)) continue;
          seen.add(u);
          next.push(u);
        }
      }
    }
    level = next;
  }
  // In the workspace's order, so that equal reaches write equal statements.
  const types = o.types.filter((t) => seen.has(t));
  if (byRoots.size < 1000) byRoots.set(key, types);
  return types;
}

/**
 * Whether a read of any entry of the workspace is written in one statement for all its types:
 * only for a small model, where that statement is small too. Otherwise the read finds its entry's
 * type first (operations/entries.ts), and its statement is written for what that type reaches.
 */
export const readsAtOnce = (types: readonly ContentTypeDef[]) =>
  types.length <= READ_AT_ONCE.types && types.reduce((n, t) => n + t.fields.length, 0) <= READ_AT_ONCE.fields;
const READ_AT_ONCE = { types: 8, fields: 80 };

/** Statements written, per content type list (a change of types makes a new list), by the rest of their shape. */
const writtenFor = new WeakMap<readonly ContentTypeDef[], Map<string, Sql>>();

/**
 * The statement's part after `found` and `budget` (`steps`: each root's text and the answer's
 * bytes so far, render-nested.ts), written once per shape: a request of a shape written before
 * costs no writing.
 */
function written(o: RenderOptions, show: { limit: number; reverse?: boolean }): Sql {
  let byShape = writtenFor.get(o.types);
  if (!byShape) writtenFor.set(o.types, (byShape = new Map<string, Sql>()));
  const key = JSON.stringify([
    o.rootTypes?.map((t) => t.id),
    o.locale,
    o.view,
    o.publishedOnly,
    o.workspace.id,
    o.workspace.name,
    o.config.baseUrl,
    show.limit,
    show.reverse === true,
  ]);
  const kept = byShape.get(key);
  if (kept) return kept;
  const reached = { ...o, types: reachable(o) };
  const texts = raw(
    o.view === 'summary' ? summaries(reached, show) : nestable(reached) ? nestedTexts(reached, show) : treeTexts(reached, show),
  );
  if (byShape.size < 200) byShape.set(key, texts);
  return texts;
}

/**
 * Renders the entries `found` gives (a statement with columns `pk`, an `entries.id`, and `pos`,
 * their order), the first `show.limit` of them, in reverse order if asked, in one statement.
 */
export async function renderEntries(
  db: SqlRunner,
  found: Sql,
  o: RenderOptions,
  show: { limit: number; reverse?: boolean },
): Promise<RenderedText> {
  const statement = deliveryStatement(found, o, show);
  const result = await rows<{ root: number; j: string | null; ids: number[] | null; bytes: string | null; missed: number[] | null }>(
    db,
    statement,
    'bounded',
  );
  const head = result.find((r) => r.root === 0)!;
  const over = Number(head.bytes) > o.maxBytes;
  // A refused answer keeps nothing.
  if (head.missed && !over) o.kept!.keeper.keep(o, head.missed);
  const shown = result
    .filter((r) => r.root !== 0)
    .sort((a, b) => a.root - b.root)
    .map((r) => r.j!);
  // The text counts each file as its row (shorter than the object it becomes): past the budget there, past it in the answer.
  return { ids: head.ids!, items: fileHolesIn(shown, o.config, o.workspace.name, o.now).json, over };
}

/**
 * The delivery statement: the entries `found` gives, rendered as `o` asks, within its byte budget.
 * Its first row (root 0): the ids found, the bytes written, the entries to keep; then a row per
 * rendered entry (`root`, `j`). Built from the model and the request alone (snapshot tests print
 * it for a fixture model: render-statement.test.ts); the caches wrap it.
 */
export function deliveryStatement(found: Sql, o: RenderOptions, show: { limit: number; reverse?: boolean }): Sql {
  const keeps = o.kept !== undefined && o.view === 'full';
  // Kept texts: `found` is then what `listed` gives and no text is kept of (kept-texts.ts).
  const limit = Math.trunc(show.limit);
  const kept = keeps
    ? sql`listed AS MATERIALIZED (${found}),
    kept AS MATERIALIZED (SELECT f.pk, ${raw(rootOf(show))} AS root, k.text AS j FROM listed f JOIN entry_texts k ON k.entry_pk = f.pk AND k.variant = ${raw(literal(variantOf(o)))} WHERE f.pos <= ${raw(String(limit))}),
    found AS MATERIALIZED (SELECT f.pk, f.pos FROM listed f WHERE f.pos <= ${raw(String(limit))} AND f.pk NOT IN (SELECT pk FROM kept)),`
    : sql`found AS MATERIALIZED (${found}),`;
  // The answer's byte budget, of which the kept texts spend theirs first (and a comma each).
  const budget = sql`budget(max, spent) AS (SELECT ${o.maxBytes}::bigint, ${raw(keeps ? '(SELECT coalesce(sum(octet_length(j) + 1), 0) FROM kept)' : '0')}::bigint),`;
  const texts = keeps ? '(SELECT root, j FROM steps WHERE step > 0 UNION ALL SELECT root, j FROM kept) t' : 'steps t WHERE t.step > 0';
  // Each text is a row of its own, after a first row (root 0) of what was found: one text of a
  // page's size cost PostgreSQL and Node a large allocation at each copy (string_agg, the row
  // message, pg's decode). Past the budget no text is returned, and (render-nested.ts) none
  // written after the one that passed it.
  const size = raw(`(SELECT coalesce(max(total), (SELECT spent FROM budget)) FROM steps)`);
  return sql`WITH RECURSIVE ${kept} ${budget} ${written(o, show)}
    SELECT 0 AS root, NULL::text AS j, (SELECT coalesce(array_agg(pk ORDER BY pos), '{}') FROM ${raw(keeps ? 'listed' : 'found')}) AS ids, ${size} AS bytes,
           ${raw(keeps && o.kept!.keepMissed ? `(SELECT array_agg(pk) FROM found)` : 'NULL::int[]')} AS missed
    UNION ALL SELECT t.root, t.j, NULL, NULL, NULL FROM ${raw(texts)} ${raw(keeps ? 'WHERE' : 'AND')} ${size} <= ${o.maxBytes}::bigint`;
}

/**
 * The statement that renders the entries `pks` (`entries.id`) as `o` does and keeps their texts
 * (kept-texts.ts), within `maxBytes` (the workspace's budget of kept texts: the texts past it are
 * not written).
 */
export function keepStatement(o: RenderOptions, pks: number[], maxBytes: number): Sql {
  return sql`WITH RECURSIVE found AS MATERIALIZED (SELECT u.pk, u.pos::int AS pos FROM unnest(${pks}::int[]) WITH ORDINALITY u(pk, pos)),
    budget(max, spent) AS (SELECT ${maxBytes}::bigint, 0::bigint),
    ${written(o, { limit: KEEP_MAX })}, ${raw(depsOf({ ...o, types: reachable(o) }))}
    INSERT INTO entry_texts (entry_pk, variant, workspace_id, text, deps, bytes)
    SELECT f.pk, ${variantOf(o)}, ${o.workspace.id}, t.j, d.deps, octet_length(t.j) FROM steps t JOIN found f ON f.pos = t.root JOIN deps d ON d.root = t.root
     WHERE t.step > 0 AND t.total <= ${maxBytes}::bigint
    ON CONFLICT (entry_pk, variant) DO UPDATE SET text = EXCLUDED.text, deps = EXCLUDED.deps, workspace_id = EXCLUDED.workspace_id, bytes = EXCLUDED.bytes, kept = DEFAULT`;
}
