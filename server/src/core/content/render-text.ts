// The SQL text of a rendered entry's parts, for both ways core/content/render.ts expands relations
// (render-tree.ts, render-nested.ts): an entry's head (what a compact reference shows), its
// envelope around the fields, its own fields. `a` names a row of `entries`,
// `doc` an expression of its document in the locale.
import type { Config } from '../../config';
import { cat, inline, jsonKey, literal } from '../sql';
import type { ContentTypeDef, FieldDef } from './content-types';
import type { TextKeeper } from './kept-texts';
import { keptJson, sightOn } from './store';
import { PART, ROW } from './render-aliases';

export const RELATION_WINDOW = 25;
export const MAX_DEPTH = 3;
export const ROOT_BUDGET = 100;

export interface RenderOptions {
  config: Config;
  workspace: { id: number; name: string };
  /** Every content type of the workspace (the entries rendered and their relations are of these); the same list while they are unchanged. */
  types: readonly ContentTypeDef[];
  /** The types of the entries rendered, when they are fewer than all (a list's type); related entries may be of any. */
  rootTypes?: readonly ContentTypeDef[];
  /** A locale code, or `*` for every enabled locale of each entry. */
  locale: string;
  /** Delivery reads: drafts are not valid related entries either. */
  publishedOnly: boolean;
  view: 'full' | 'summary';
  now: Date;
  /** The answer's budget in bytes: past it, no text is returned (`over`). */
  maxBytes: number;
  /**
   * Full texts are read from those kept (kept-texts.ts), and those missed kept for later answers
   * if `keepMissed`. Not inside a unit of work, whose writes are not committed.
   */
  kept?: { keeper: TextKeeper; keepMissed: boolean };
}

/** What the answer may see of a related entry `alias` (typed, live, and published on delivery reads), as text. */
export const relatedSight = (o: Pick<RenderOptions, 'workspace' | 'publishedOnly'>, alias: string) =>
  inline(sightOn({ workspaceId: o.workspace.id, kinds: ['typed'], state: o.publishedOnly ? 'published' : 'live' }, alias));

/** Where a row of `found` (`f`) stands among the roots: its `pos`, counted from the last shown one when reversed. */
export const rootOf = (show: { limit: number; reverse?: boolean }) =>
  show.reverse ? `(${Math.trunc(show.limit) + 1} - ${ROW.found}.pos)` : `${ROW.found}.pos`;

export const isSpecial = (f: FieldDef) => f.type === 'relation' || f.type === 'attachment';

/**
 * `roots` (the first `show.limit` rows of `found`: `pk`, `root`, `step`, one step per root in the
 * answer's order) and `steps` (`step`, `root`, `j`: its rendered entry, `total`: the answer's bytes
 * so far): each root's text written only while the answer is within `budget.max` (the bytes
 * `budget.spent` already, and a comma per text). The step that passes it is the last: no text is
 * written past the budget. `text`: a subquery of the root at step `s.step + 1` (`roots r WHERE
 * r.step = s.step + 1`) giving its `root` and `j`.
 */
export function steppedTexts(show: { limit: number; reverse?: boolean }, text: string): string {
  const pos = rootOf(show);
  const [f, s, w] = [ROW.found, ROW.step, ROW.written];
  return `${PART.roots} AS MATERIALIZED (SELECT ${f}.pk, ${pos}::int AS root, row_number() OVER (ORDER BY ${pos}) AS step FROM ${PART.found} ${f} WHERE ${f}.pos <= ${Math.trunc(show.limit)}),
    ${PART.steps}(step, root, j, total) AS (
      SELECT 0::bigint, 0, NULL::text, (SELECT spent FROM ${PART.budget})
      UNION ALL
      SELECT ${s}.step + 1, ${w}.root, ${w}.j, ${s}.total + octet_length(${w}.j) + 1 FROM ${PART.steps} ${s} CROSS JOIN LATERAL (${text}) ${w}
       WHERE ${s}.total <= (SELECT max FROM ${PART.budget}))`;
}

/** Content type ids as an int[] literal. */
export const idList = (types: readonly ContentTypeDef[]) => `'{${types.map((t) => t.id).join(',')}}'::int[]`;

/** The types a relation field of `t` accepts (of its bucket). */
export const targetsOf = (o: Pick<RenderOptions, 'types'>, t: ContentTypeDef, f: FieldDef) =>
  o.types.filter((u) => u.bucketId === t.bucketId && f.targets.includes(u.name));

/** A field's stored value as items: each item of a multiple field's array (a lone value as one), a single field's value as one. */
export const itemsOf = (value: string, multiple: boolean) =>
  multiple
    ? `CASE WHEN jsonb_typeof(${value}) = 'array' THEN ${value} ELSE jsonb_build_array(${value}) END`
    : `jsonb_build_array(${value})`;

/** An entry's name in its document `doc` as JSON text (NULL: none, the id stands for it). */
export function nameOf(t: ContentTypeDef, doc: string): string | null {
  const field = t.nameField === null ? undefined : t.byName.get(t.nameField);
  if (!field) return null;
  const value = `${doc} -> ${literal(field.key)}`;
  return `CASE WHEN jsonb_typeof(${value}) = 'string' AND ${value} <> '""' THEN (${value})::text END`;
}

/** The name of an entry of one of `types` (`type`: its type id). */
export function nameAmong(types: readonly ContentTypeDef[], type: string, doc: string): string {
  const named = types.flatMap((t) => {
    const name = nameOf(t, doc);
    return name ? [`WHEN ${t.id} THEN ${name}`] : [];
  });
  return named.length ? `CASE ${type} ${named.join(' ')} END` : 'NULL::text';
}

/** The head of an entry's text, which a compact reference ends after (a summary, before its status label). */
export function headParts(o: RenderOptions, a: string, name: string, labelled = true): string[] {
  const id = keptJson(a, 'entry_id');
  // The URL's JSON string up to the ID, which follows from its own JSON string after the quote.
  const apiUrl = literal(JSON.stringify(`${o.config.baseUrl}/api/v1/${encodeURIComponent(o.workspace.name)}/entries/`).slice(0, -1));
  return [
    `'{"id":'`,
    id,
    `',"api_url":'`,
    apiUrl,
    `substr(${id}, 2)`,
    `',"name":'`,
    `coalesce(${name}, ${id})`,
    `',"status":'`,
    // The status and its label as one text where it is the usual one (no to_json to call).
    labelled
      ? `CASE ${a}.status WHEN 'published' THEN '"published","status_label":"Published"' ELSE concat(to_json(${a}.status), ',"status_label":"Draft"') END`
      : `CASE ${a}.status WHEN 'published' THEN '"published"' ELSE to_json(${a}.status)::text END`,
  ];
}

/** A compact reference: the head and why the entry is not shown (`reason`, SQL text of a word). */
export const compactText = (o: RenderOptions, a: string, name: string, reason: string) =>
  cat([...headParts(o, a, name), `',"_relation":{"reason":"'`, reason, `'"}}'`]);

/** A full entry's text up to its fields' value. */
export const envelopeHead = (o: RenderOptions, a: string, name: string): string[] => [
  ...headParts(o, a, name),
  `',"publish_at":'`,
  keptJson(a, 'publish_at'),
  `',"tags":'`,
  keptJson(a, 'tags'),
  `',"locales":'`,
  keptJson(a, 'locales'),
  `',"fields":'`,
];

/** A full entry's text after its fields' value. */
export const envelopeTail = (a: string): string[] => [
  `',"created_at":'`,
  keptJson(a, 'created_at'),
  `',"updated_at":'`,
  keptJson(a, 'updated_at'),
  `',"lock_version":'`,
  `${a}.lock_version`,
  `'}'`,
];

/** An entry's own fields in its document `doc`, from index `from` to `to` (excluded): each key and value. */
export const ownFields = (t: ContentTypeDef, from: number, to: number, doc: string): string[] =>
  t.fields
    .slice(from, to)
    .flatMap((f, i) => [
      jsonKey(f.name, from + i === 0),
      `coalesce((${doc} -> ${literal(f.key)})::text, ${f.multiple ? `'[]'` : `'null'`})`,
    ]);
