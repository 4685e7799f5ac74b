// Field paths of the Entries structured query, resolved against the content types of a bucket:
// own fields, `@` metadata, dot paths through relations (at most 3 levels; the field must exist
// with a compatible definition in every accepted type), attachment properties and JSON property
// paths. What each clause (fields, filter, sort, groupBy, aggregate) accepts is decided by its
// parser from the resolved path.
import type { Hop, MetaColumn } from '../../query/ast';
import { typedColumnOf } from '../../query/typed';
import type { ContentTypeDef, FieldDef } from '../content-types';
import { emptyRecord } from '../../../lib/records';

/** Metadata selectors of typed entries and the columns behind them. */
export const ENTRY_META: Record<string, MetaColumn> = Object.assign(emptyRecord<MetaColumn>(), {
  '@id': { column: 'entry_id', type: 'string' },
  '@lock_version': { column: 'lock_version', type: 'integer' },
  '@status': { column: 'status', type: 'status' },
  '@locales': { column: 'locales', type: 'locales' },
  '@created_at': { column: 'created_at', type: 'timestamp' },
  '@updated_at': { column: 'updated_at', type: 'timestamp' },
  '@publish_at': { column: 'publish_at', type: 'timestamp', nullable: true },
  '@published_at': { column: 'published_at', type: 'timestamp', nullable: true },
});

/** Properties of a file an attachment path may select (those of the Files API's file object). */
export const FILE_PROPERTIES = new Set([
  'id',
  'name',
  'mime_type',
  'size',
  'tags',
  'download_url',
  'temporary_url',
  'temporary_url_expires_at',
  'image_url',
  'temporary_image_url',
  'temporary_image_url_expires_at',
  'alt_text',
  'created_at',
  'updated_at',
]);

export const MAX_RELATION_LEVELS = 3;

/** The hop of a relation field to `targets` (its accepted types that exist; default: looked up in `types`). */
export function relationHop(
  def: FieldDef,
  types: Map<string, ContentTypeDef>,
  targets = def.targets.map((n) => types.get(n)).filter((t): t is ContentTypeDef => t !== undefined),
): Hop {
  const single = targets.length === 1 && targets[0].typedReady ? targets[0].id : undefined;
  return {
    field: def.key,
    typeIds: targets.map((t) => t.id),
    column: typedColumnOf(def),
    ...(single !== undefined ? { typedTarget: single } : {}),
  };
}

/** A relation traversed by a path, with the field as every accepted type defines it. */
export interface PathHop extends Hop {
  def: FieldDef;
  /** The accepted types (those that exist in the bucket). */
  types: ContentTypeDef[];
}

export type PathEnd =
  | { kind: 'meta'; name: string; meta: MetaColumn }
  /** A content field; `json` is a property path inside a JSON field. */
  | { kind: 'field'; def: FieldDef; json: string[] }
  | { kind: 'file'; def: FieldDef; property: string };

export interface ResolvedPath {
  text: string;
  hops: PathHop[];
  end: PathEnd;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;
// Documents keep a field's value at its key: types whose fields of one name have different keys
// (one renamed) are read differently too.
const same = (a: FieldDef, b: FieldDef) => a.type === b.type && a.format === b.format && a.multiple === b.multiple && a.key === b.key;

/**
 * `text` resolved from `root` within the bucket's types, or why it names nothing. `levels`: the
 * relation levels already traversed above `root` (by the `some` filters a path sits in).
 */
export function resolvePath(
  text: string,
  root: ContentTypeDef | ContentTypeDef[],
  types: Map<string, ContentTypeDef>,
  levels = 0,
): ResolvedPath | string {
  if (text.length > 512) return 'must not be longer than 512 characters';
  const segments = text.split('.');
  const hops: PathHop[] = [];
  let current = Array.isArray(root) ? root : [root];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const last = i === segments.length - 1;
    if (segment.startsWith('@')) {
      const meta = Object.hasOwn(ENTRY_META, segment) ? ENTRY_META[segment] : undefined;
      if (!meta) return `names an unknown metadata selector ${segment}`;
      if (!last) return `cannot continue after ${segment}`;
      return { text, hops, end: { kind: 'meta', name: segment, meta } };
    }
    if (!SEGMENT.test(segment)) return 'must be field names joined by dots';
    const defs = current.map((t) => t.byName.get(segment));
    if (defs.some((d) => d === undefined)) return `names no field ${segment} of ${current.map((t) => t.name).join(' or ')}`;
    const def = defs[0]!;
    if (!defs.every((d) => same(d!, def)))
      return `names the field ${segment}, which the types ${current.map((t) => t.name).join(' and ')} define differently`;
    if (last) return { text, hops, end: { kind: 'field', def, json: [] } };
    if (def.type === 'json') {
      const json = segments.slice(i + 1);
      if (!json.every((s) => SEGMENT.test(s))) return 'must be property names joined by dots';
      return { text, hops, end: { kind: 'field', def, json } };
    }
    if (def.type === 'attachment') {
      const property = segments[i + 1];
      if (i + 2 !== segments.length || !FILE_PROPERTIES.has(property))
        return `must end with a file property after the attachment ${segment}`;
      return { text, hops, end: { kind: 'file', def, property } };
    }
    if (def.type !== 'relation') return `cannot continue after the ${def.type} field ${segment}`;
    if (levels + hops.length >= MAX_RELATION_LEVELS) return `must not traverse more than ${MAX_RELATION_LEVELS} relation levels`;
    const targets = [...new Set(defs.flatMap((d) => d!.targets))]
      .map((name) => types.get(name))
      .filter((t): t is ContentTypeDef => t !== undefined);
    if (!targets.length) return `names the relation ${segment}, whose accepted types do not exist`;
    hops.push({ ...relationHop(def, types, targets), def, types: targets });
    current = targets;
  }
  return 'must not be empty';
}
