// Rendered typed entries: every field of the document, relations expanded and attachments as file
// objects with fresh temporary URLs. Relations expand breadth first with one query per level
// (and one for the files; a single read takes its first level along, findWithRelated), so a page
// of any size costs the same number of round trips: each field
// examines its first 25 stored references and skips the invalid ones among them, at most 3 levels
// are expanded and at most 100 related entries per root; beyond that, compact references.
// Delivery reads count their answer's bytes as they render (`bytes`, lib/byte-budget.ts): each
// entry when its fields are filled, each reference and file when it is put, so that an answer
// over its budget stops there, before the next level is read.
import type { Config } from '../../config';
import type { ByteBudget } from '../../lib/byte-budget';
import type { components } from '@workspace-api/sdk/openapi';
import type { SqlRunner } from '../../db/database';
import { freshFile } from '../file-urls';
import { workspaceFiles } from '../file-records';
import type { LookupCache } from '../lookup-cache';
import type { File } from '../../generated/prisma/client';
import { raw, rows, sql, type Sql } from '../sql';
import type { ContentTypeDef, FieldDef } from './content-types';
import { referencesOf } from './field-values';
import { BASE_LOCALE, documentsIn, entrySelect, findEntries, scope, sightOn, toRecord, type EntryRecord, type Sight } from './store';

export const RELATION_WINDOW = 25;
export const MAX_DEPTH = 3;
export const ROOT_BUDGET = 100;

export interface RenderOptions {
  config: Config;
  workspace: { id: number; name: string };
  /** A locale code, or `*` for every enabled locale of each entry. */
  locale: string;
  /** Delivery reads: drafts are not valid related entries either. */
  publishedOnly: boolean;
  now: Date;
  /** The content types of a bucket by name (the process's cache, content-types.ts). */
  contentTypes: (bucketId: number) => Promise<Map<string, ContentTypeDef>>;
  /** File rows kept by this process, by workspace and IDs (delivery reads; see AppContext.fileRows). */
  fileRows?: LookupCache<File[]>;
  /** Delivery reads: the answer's budget, spent on the entries as rendered (writes render theirs whole). */
  bytes?: ByteBudget;
}

type Json = Record<string, unknown>;
export type RenderedEntry = components['schemas']['Entry'];

const apiUrl = (o: RenderOptions, id: string) => `${o.config.baseUrl}/api/v1/${encodeURIComponent(o.workspace.name)}/entries/${id}`;
const statusLabel = (status: string) => (status === 'published' ? 'Published' : 'Draft');

function nameOf(e: EntryRecord, type: ContentTypeDef | undefined, locale: string): string {
  const doc = (e.documents.get(locale === '*' ? BASE_LOCALE : locale) ?? {}) as Json;
  const value = type?.nameField ? doc[type.nameField] : undefined;
  return typeof value === 'string' && value !== '' ? value : e.entry_id;
}

function summaryOf(e: EntryRecord, type: ContentTypeDef | undefined, o: RenderOptions) {
  return { id: e.entry_id, api_url: apiUrl(o, e.entry_id), name: nameOf(e, type, o.locale), status: e.status, updated_at: e.updated_at };
}

/** The summary form of entries (`view=summary`), counted against `o.bytes` one by one. */
export function summariesOf(entries: EntryRecord[], type: ContentTypeDef | undefined, o: RenderOptions) {
  o.bytes?.spendArray(entries.length);
  return entries.map((e) => {
    const summary = summaryOf(e, type, o);
    o.bytes?.spendJson(summary);
    return summary;
  });
}

function referenceOf(e: EntryRecord, type: ContentTypeDef | undefined, o: RenderOptions, reason: 'cycle' | 'depth' | 'budget') {
  return { id: e.entry_id, api_url: apiUrl(o, e.entry_id), name: nameOf(e, type, o.locale), status: e.status, status_label: statusLabel(e.status), _relation: { reason } };
}

/** A node of the expansion: an entry rendered under a root, with the entries above it. */
interface Node {
  entry: EntryRecord;
  out: Json;
  depth: number;
  root: number;
  ancestors: Set<string>;
}

/** A field value to fill once the level below is loaded: relation references or attachments. */
interface Slot {
  node: Node;
  target: Json;
  def: FieldDef;
  refs: unknown[];
}

/** The entries a relation of an entry of `bucket` may show: live typed entries of that bucket (published ones on delivery reads). */
const relatedSight = (o: RenderOptions): Sight => ({ workspaceId: o.workspace.id, kinds: ['typed'], state: o.publishedOnly ? 'published' : 'live' });

/** Related entries read with the roots: the references looked up, and the visible entries found. */
export interface Prefetched {
  considered: Set<unknown>;
  found: Map<string, EntryRecord>;
}

/**
 * One entry `sight` sees (`where`, a condition on `e` that matches at most one) read together with the entries
 * its documents may refer to, in one statement instead of two: every string at the top level of
 * its documents and the first RELATION_WINDOW items of each top-level array, looked up as related
 * entries. Rendering takes the first level from them when they hold all its references.
 */
export async function findWithRelated(db: SqlRunner, sight: Sight, where: Sql, o: RenderOptions): Promise<{ entry?: EntryRecord; prefetched: Prefetched }> {
  const candidates = sql`SELECT x.ref FROM root r JOIN entry_contents rc ON rc.entry_pk = r.id
      CROSS JOIN LATERAL jsonb_each(rc.data) f(k, v)
      CROSS JOIN LATERAL jsonb_array_elements_text(CASE jsonb_typeof(f.v) WHEN 'array' THEN f.v WHEN 'string' THEN jsonb_build_array(f.v) ELSE '[]'::jsonb END) WITH ORDINALITY x(ref, n)
     WHERE x.n <= ${RELATION_WINDOW}::int`;
  const source = sql`(SELECT root.*, true AS is_root FROM root UNION ALL
      SELECT e.*, false FROM entries e WHERE e.entry_id IN (${candidates}) AND e.bucket_id = (SELECT bucket_id FROM root) AND ${sightOn(relatedSight(o))}) e`;
  const statement = sql`WITH root AS MATERIALIZED (SELECT e.* FROM entries e WHERE ${scope.and(sightOn(sight), where)})
    ${entrySelect(documentsIn(o.locale), { source, typedOnly: true, columns: [raw('e.is_root')] })}`;
  const read = await rows<Parameters<typeof toRecord>[0] & { is_root: boolean }>(db, statement, true);
  const row = read.find((r) => r.is_root);
  const entry = row && toRecord(row);
  const found = read.filter((r) => !r.is_root).map(toRecord);
  const considered = new Set<unknown>();
  if (entry) {
    for (const doc of entry.documents.values()) {
      for (const value of Object.values((doc ?? {}) as Json)) {
        if (typeof value === 'string') considered.add(value);
        else if (Array.isArray(value)) for (const item of value.slice(0, RELATION_WINDOW)) if (typeof item === 'string') considered.add(item);
      }
    }
  }
  return { entry, prefetched: { considered, found: new Map(found.map((e) => [e.entry_id, e])) } };
}

/**
 * Renders full entries (`roots`, all of one bucket); their documents must hold the locales to
 * render. `prefetched`: the first level's related entries, when read with the root. `exact`: a
 * rendered document holds a number a double cannot (the body then needs stringifyExact).
 */
export async function renderEntries(db: SqlRunner, roots: EntryRecord[], o: RenderOptions, prefetched?: Prefetched): Promise<{ entries: RenderedEntry[]; exact: boolean }> {
  if (!roots.length) return { entries: [], exact: false };
  const types = new Map([...(await o.contentTypes(roots[0].bucket_id)).values()].map((t) => [t.id, t]));
  const typeOf = (e: EntryRecord) => (e.content_type_id === null ? undefined : types.get(e.content_type_id));
  const budget = roots.map(() => 0);
  const files: Slot[] = [];
  o.bytes?.spendArray(roots.length);

  const start = (entry: EntryRecord, depth: number, root: number, ancestors: Set<string>): Node => {
    const out: Json = {
      id: entry.entry_id,
      api_url: apiUrl(o, entry.entry_id),
      name: nameOf(entry, typeOf(entry), o.locale),
      status: entry.status,
      status_label: statusLabel(entry.status),
      publish_at: entry.publish_at,
      tags: entry.tags,
      locales: entry.locales,
      fields: {},
      created_at: entry.created_at,
      updated_at: entry.updated_at,
      lock_version: entry.lock_version,
    };
    return { entry, out, depth, root, ancestors };
  };

  /** Fills the plain fields of a node; returns the slots its relations and attachments leave. */
  const fill = (node: Node): Slot[] => {
    const type = typeOf(node.entry);
    const locales = o.locale === '*' ? node.entry.locales : [o.locale];
    const slots: Slot[] = [];
    const perLocale: Json = {};
    for (const locale of locales) {
      const doc = (node.entry.documents.get(locale) ?? {}) as Json;
      const target: Json = {};
      for (const def of type?.fields ?? []) {
        if (def.type === 'relation' || def.type === 'attachment') {
          target[def.name] = def.multiple ? [] : null;
          const refs = referencesOf(doc, def);
          const slot = { node, target, def, refs: def.type === 'relation' ? refs.slice(0, RELATION_WINDOW) : refs };
          if (def.type === 'relation') slots.push(slot);
          else files.push(slot);
        } else target[def.name] = Object.hasOwn(doc, def.name) ? doc[def.name] : def.multiple ? [] : null;
      }
      perLocale[locale] = target;
    }
    node.out.fields = o.locale === '*' ? perLocale : perLocale[o.locale];
    // Counted with its relations and attachments still empty: what goes there counts when put.
    o.bytes?.spendJson(node.out, node.entry.exact);
    return slots;
  };

  /** `rendered`: a related entry, counted when its fields are filled. */
  const put = (slot: Slot, value: unknown, rendered = false) => {
    const held = slot.target[slot.def.name] as unknown[] | null;
    if (!slot.def.multiple && held !== null) return;
    o.bytes?.spendPut(held, value, rendered);
    if (held) held.push(value);
    else slot.target[slot.def.name] = value;
  };

  const rootNodes = roots.map((e, i) => start(e, 0, i, new Set([e.entry_id])));
  let exact = roots.some((e) => e.exact);
  let slots = rootNodes.flatMap(fill);
  let first = prefetched;
  while (slots.length) {
    const ids = [...new Set(slots.flatMap((s) => s.refs as string[]))];
    let byId: Map<string, EntryRecord>;
    if (first && ids.every((id) => first!.considered.has(id))) byId = first.found;
    else {
      const found = ids.length
        ? await findEntries(db, relatedSight(o), sql`e.entry_id = ANY(${ids}::text[]) AND e.bucket_id = ${roots[0].bucket_id}::int`, { content: documentsIn(o.locale), typedOnly: true })
        : [];
      byId = new Map(found.map((e) => [e.entry_id, e]));
    }
    first = undefined;
    const next: Node[] = [];
    for (const slot of slots) {
      for (const ref of slot.refs as string[]) {
        const related = byId.get(ref);
        const type = related && typeOf(related);
        // Invalid references (gone, a draft on delivery reads, another type) are skipped.
        if (!related || !type || !slot.def.targets.includes(type.name)) continue;
        const { node } = slot;
        if (node.ancestors.has(ref)) put(slot, referenceOf(related, type, o, 'cycle'));
        else if (node.depth + 1 > MAX_DEPTH) put(slot, referenceOf(related, type, o, 'depth'));
        else if (budget[node.root] >= ROOT_BUDGET) put(slot, referenceOf(related, type, o, 'budget'));
        else {
          budget[node.root]++;
          const child = start(related, node.depth + 1, node.root, new Set([...node.ancestors, ref]));
          exact ||= related.exact;
          put(slot, child.out, true);
          next.push(child);
        }
      }
    }
    slots = next.flatMap(fill);
  }

  const fileIds = [...new Set(files.flatMap((s) => s.refs as number[]))].sort((a, b) => a - b);
  if (fileIds.length) {
    const load = () => workspaceFiles(db, o.workspace.id, fileIds);
    const found = (o.fileRows ? await o.fileRows.get(`${o.workspace.id}:${fileIds.join(',')}`, load) : await load()) ?? [];
    const byId = new Map(found.map((f) => [f.id, freshFile(o.config, o.workspace.name, f, o.now)]));
    for (const slot of files) for (const id of slot.refs as number[]) if (byId.has(id)) put(slot, byId.get(id));
  }
  return { entries: rootNodes.map((n) => n.out as unknown as RenderedEntry), exact };
}
