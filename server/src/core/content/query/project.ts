// The projection of a structured query's page: selected fields and metadata of each root, and
// through relations the selected fields of the visible related entries (stored order; a single
// reference to nothing visible is null, a multiple one []). Related entries load level by level,
// one statement per level, then files in one more: the statements do not grow with the page.
// Referenced entries and files count against one budget per response, and going over it is a
// `422`, never a truncated result; so do the answer's bytes (`bytes`, lib/byte-budget.ts), counted
// as each row and related entry is projected, each reference and file as it is put.
import type { Config } from '../../../config';
import type { ByteBudget } from '../../../lib/byte-budget';
import type { SqlRunner } from '../../../db/database';
import { invalidAt } from '../../errors';
import { freshFile } from '../../file-urls';
import { workspaceFiles } from '../../file-records';
import { sql } from '../../sql';
import { findEntries, scope, type EntryRecord } from '../store';
import type { JsonTree, Selection } from './parse';
import { emptyRecord } from '../../../lib/records';

export const REFERENCE_BUDGET = 1000;

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

type Out = Record<string, unknown>;

/** A value to fill from the next level: a relation's entries or an attachment's files. */
interface Slot {
  out: Out;
  key: string;
  multiple: boolean;
  refs: unknown[];
  typeIds?: number[];
  /** Relation entries: their selection (undefined: the IDs only). Files: their properties (undefined: the IDs). */
  children?: Selection;
  properties?: string[];
}

const references = (value: unknown): unknown[] => (value === null || value === undefined ? [] : Array.isArray(value) ? value : [value]);

function pickJson(value: unknown, tree: JsonTree): Out {
  // No prototype: a property named `__proto__` is an ordinary key of the output.
  const out: Out = emptyRecord();
  for (const [key, sub] of Object.entries(tree)) {
    const v = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, key) ? (value as Out)[key] : null;
    out[key] = sub === true ? v : pickJson(v, sub);
  }
  return out;
}

export async function projectEntries(db: SqlRunner, roots: EntryRecord[], selection: Selection, o: ProjectOptions): Promise<Out[]> {
  const files: Slot[] = [];
  const spend = (n: number) => {
    o.budget.used += n;
    if (o.budget.used > o.budget.limit) throw invalidAt(o.errorPath, 'The :attribute field references more than :limit entries and files in one response; narrow the selection or the page.', { limit: o.budget.limit });
  };

  const fill = (entry: EntryRecord, sel: Selection): { out: Out; slots: Slot[] } => {
    const out: Out = {};
    const slots: Slot[] = [];
    const doc = (entry.documents.get(o.locale) ?? {}) as Out;
    for (const [key, s] of sel) {
      if (s.kind === 'meta') out[key] = (entry as unknown as Out)[s.column] ?? null;
      else if (s.kind === 'value') out[key] = Object.hasOwn(doc, s.def.name) ? doc[s.def.name] : null;
      else if (s.kind === 'json') out[key] = pickJson(Object.hasOwn(doc, s.def.name) ? doc[s.def.name] : null, s.tree);
      else {
        const multiple = s.def.multiple;
        out[key] = multiple ? [] : null;
        const refs = references(doc[s.def.name]);
        if (s.kind === 'files' || (s.kind === 'ids' && s.def.type === 'attachment')) files.push({ out, key, multiple, refs, properties: s.kind === 'files' ? s.properties : undefined });
        else slots.push({ out, key, multiple, refs, typeIds: s.kind === 'relation' ? s.hop.typeIds : s.hop!.typeIds, children: s.kind === 'relation' ? s.children : undefined });
      }
    }
    // Counted with its relations and attachments still empty: what goes there counts when put.
    o.bytes.spendJson(out, entry.exact);
    return { out, slots };
  };

  /** `projected`: a related entry's projection, counted by its `fill`. */
  const put = (slot: Slot, value: unknown, projected = false) => {
    const held = slot.out[slot.key] as unknown[] | null;
    o.bytes.spendPut(held, value, projected);
    if (slot.multiple) held!.push(value);
    else slot.out[slot.key] = value;
  };
  /** Whether a slot takes another value: a single one only its first. */
  const open = (slot: Slot) => slot.multiple || slot.out[slot.key] === null;

  o.bytes.spendArray(roots.length);
  const results = roots.map((r) => fill(r, selection));
  let slots = results.flatMap((r) => r.slots);
  while (slots.length) {
    const ids = [...new Set(slots.flatMap((s) => s.refs.filter((r): r is string => typeof r === 'string')))];
    const typeIds = [...new Set(slots.flatMap((s) => s.typeIds ?? []))];
    const remaining = o.budget.limit - o.budget.used;
    const found = ids.length
      ? await findEntries(
          db,
          { workspaceId: o.workspace.id, kinds: ['typed'], state: 'live' },
          scope.and(sql`e.entry_id = ANY(${ids}::text[])`, sql`e.bucket_id = ${o.bucketId}::int`, sql`e.content_type_id = ANY(${typeIds}::int[])`),
          { content: { kind: 'locale', locale: o.locale }, typedOnly: true, page: { orderBy: sql`e.id`, limit: remaining + 1 } },
        )
      : [];
    spend(found.length);
    const byId = new Map(found.map((e) => [e.entry_id, e]));
    const next: Slot[] = [];
    for (const slot of slots) {
      for (const ref of slot.refs) {
        const related = typeof ref === 'string' ? byId.get(ref) : undefined;
        if (!related || !slot.typeIds!.includes(related.content_type_id!) || !open(slot)) continue;
        if (!slot.children) {
          put(slot, related.entry_id);
          continue;
        }
        const child = fill(related, slot.children);
        put(slot, child.out, true);
        next.push(...child.slots);
      }
    }
    slots = next;
  }

  const fileIds = [...new Set(files.flatMap((s) => s.refs.filter((r): r is number => typeof r === 'number')))];
  if (fileIds.length) {
    const found = await workspaceFiles(db, o.workspace.id, fileIds);
    spend(found.length);
    const byId = new Map(found.map((f) => [f.id, f]));
    for (const slot of files) {
      for (const ref of slot.refs) {
        const file = byId.get(ref as number);
        if (!file || !open(slot)) continue;
        put(slot, slot.properties ? freshFile(o.config, o.workspace.name, file, o.now, slot.properties) : file.id);
      }
    }
  }
  return results.map((r) => r.out);
}
