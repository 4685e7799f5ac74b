// Rendering when the content model itself bounds every expansion (core/content/render.ts chooses
// it, render-tree.ts otherwise): each relation field examines at most RELATION_WINDOW references,
// so the related entries a root can show in full are bounded by its type's fields, their targets'
// fields and so on down to MAX_DEPTH. Where that bound is within ROOT_BUDGET for every type, the
// budget can never decide, and breadth first order does not matter: an entry's text is then one
// expression, each relation field a correlated subquery aggregating its related entries' texts in
// order, nested level by level as the types nest (a cycle is seen against the entries above, which
// are the outer rows). No recursion, no pieces to sort: PostgreSQL builds each text where it reads
// the rows (the bench's page of 50: 11.0 ms of PostgreSQL's time, 12.9 breadth first). The roots are
// written one at a time, and none once the answer passed its byte budget.
import { cat, jsonKey, literal } from '../sql';
import { fileHole, fileJoin } from '../file-records';
import { documentJoin } from './store';
import { PART, ROW, docRow, nestedRow } from './render-aliases';
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
  nameOf,
  ownFields,
  relatedSight,
  steppedTexts,
  targetsOf,
  type RenderOptions,
} from './render-text';

/** The most entry texts one statement writes (every type rendered, expanded): beyond, it would take long to plan. */
const MAX_WRITTEN = 200;

/**
 * The related entries a node of `t` at `depth` can show in full, at most (as the budget counts
 * them: compact references do not count), and how many entry texts its expression writes.
 */
function boundOf(o: RenderOptions, t: ContentTypeDef, depth: number): { shown: number; written: number } {
  let shown = 0;
  let written = 1;
  if (depth >= MAX_DEPTH) return { shown, written };
  for (const f of t.fields) {
    if (f.type !== 'relation') continue;
    const below = targetsOf(o, t, f).map((u) => boundOf(o, u, depth + 1));
    shown += (f.multiple ? RELATION_WINDOW : 1) * (1 + Math.max(0, ...below.map((b) => b.shown)));
    written += below.reduce((n, b) => n + b.written, 0);
    if (shown > ROOT_BUDGET || written > MAX_WRITTEN) break;
  }
  return { shown, written };
}

/** Whether the expansion of every type rendered is bounded within the budget (and the statement stays small): then `nestedTexts` renders. */
export function nestable(o: RenderOptions): boolean {
  if (o.locale === '*') return false;
  let written = 0;
  for (const t of o.rootTypes ?? o.types) {
    const b = boundOf(o, t, 0);
    written += b.written;
    if (b.shown > ROOT_BUDGET || written > MAX_WRITTEN) return false;
  }
  return true;
}

/**
 * The text of a full entry `a` of type `t` at `depth`, below the entries `path` (their
 * `entry_id`s, root first). Its relations' entries are `c<depth + 1>`.
 */
function entryText(o: RenderOptions, t: ContentTypeDef, a: string, depth: number, path: string[]): string {
  const doc = `${docRow(a)}.data`;
  const below = [...path, `${a}.entry_id`];
  const parts = [`'{'`];
  let from = 0;
  t.fields.forEach((f, idx) => {
    if (!isSpecial(f)) return;
    parts.push(...ownFields(t, from, idx, doc), jsonKey(f.name, idx === 0, f.multiple ? '[' : ''));
    parts.push(f.type === 'relation' ? relationItems(o, t, f, a, depth, below) : fileItems(o, f, doc));
    if (f.multiple) parts.push(`']'`);
    from = idx + 1;
  });
  parts.push(...ownFields(t, from, t.fields.length, doc), `'}'`);
  return cat([...envelopeHead(o, a, nameOf(t, doc) ?? 'NULL::text'), ...parts, ...envelopeTail(a)]);
}

/**
 * A relation field's items: the entries its references name that the answer may see (of the
 * bucket, of a type it accepts), each in full or as a compact reference (a cycle, past the depth),
 * in order; a multiple field skips the others, a single field's reads `null`.
 */
function relationItems(o: RenderOptions, t: ContentTypeDef, f: FieldDef, a: string, depth: number, path: string[]): string {
  const c = nestedRow(depth + 1);
  const targets = targetsOf(o, t, f);
  const value = `${docRow(a)}.data -> ${literal(f.key)}`;
  const names = (v: string) =>
    `jsonb_typeof(${v}) = 'string' AND ${c}.entry_id = ${v} #>> '{}' AND ${c}.bucket_id = ${a}.bucket_id AND ${relatedSight(o, c)} AND ${c}.content_type_id = ANY(${idList(targets)})`;
  // A field that accepts no type of the bucket shows nothing.
  if (!targets.length) return f.multiple ? `''` : `'null'`;
  const item = itemText(o, targets, c, depth + 1, path);
  if (f.multiple) {
    return `coalesce((SELECT string_agg(${item}, ',' ORDER BY y.n) FROM jsonb_array_elements(${itemsOf(value, true)}) WITH ORDINALITY y(v, n)
      JOIN entries ${c} ON ${names('y.v')} ${documentJoin(c, o.locale)} WHERE y.n <= ${RELATION_WINDOW}), '')`;
  }
  return `coalesce((SELECT ${item} FROM entries ${c} ${documentJoin(c, o.locale)} WHERE ${names(`(${value})`)}), 'null')`;
}

/** A related entry `c` (of one of `targets`) at `depth`: compact for a cycle or past the depth, else in full. */
function itemText(o: RenderOptions, targets: readonly ContentTypeDef[], c: string, depth: number, path: string[]): string {
  const compact = (reason: string) => compactText(o, c, nameAmong(targets, `${c}.content_type_id`, `${docRow(c)}.data`), `'${reason}'`);
  const full =
    depth > MAX_DEPTH
      ? compact('depth')
      : `CASE ${c}.content_type_id ${targets.map((u) => `WHEN ${u.id} THEN ${entryText(o, u, c, depth, path)}`).join(' ')} END`;
  return `CASE WHEN ${c}.entry_id IN (${path.join(', ')}) THEN ${compact('cycle')} ELSE ${full} END`;
}

/** An attachment field's items: the files of the workspace it names, as holes; a multiple field skips the others, a single field's reads `null`. */
function fileItems(o: RenderOptions, f: FieldDef, doc: string): string {
  const value = `${doc} -> ${literal(f.key)}`;
  if (f.multiple) {
    return `coalesce((SELECT string_agg(${fileHole()}, ',' ORDER BY y.n) FROM jsonb_array_elements(${itemsOf(value, true)}) WITH ORDINALITY y(v, n) JOIN ${fileJoin(o.workspace.id, 'y.v')}), '')`;
  }
  return `coalesce((SELECT ${fileHole()} FROM (SELECT ${value} AS v) y JOIN ${fileJoin(o.workspace.id, 'y.v')}), 'null')`;
}

/** `roots` and `steps` (render-text.ts steppedTexts) of the first `show.limit` entries `found` gives, each root's text one expression. */
export function nestedTexts(o: RenderOptions, show: { limit: number; reverse?: boolean }): string {
  const [r, s, r0] = [ROW.root, ROW.step, nestedRow(0)];
  const byType = (o.rootTypes ?? o.types).map((t) => `WHEN ${t.id} THEN ${entryText(o, t, r0, 0, [])}`);
  return steppedTexts(
    show,
    `SELECT ${r}.root, ${byType.length ? `CASE ${r0}.content_type_id ${byType.join(' ')} END` : 'NULL::text'} AS j
       FROM ${PART.roots} ${r} JOIN entries ${r0} ON ${r0}.id = ${r}.pk ${documentJoin(r0, o.locale)} WHERE ${r}.step = ${s}.step + 1`,
  );
}
