// Content types as the typed entry core reads them: the type, its bucket and its field
// definitions, in one query (by bucket and name for writes and lists, by id for rendering).
import type { SqlRunner } from '../../db/database';
import type { LookupCache } from '../lookup-cache';
import { rows, sql, type Sql } from '../sql';

/** Every workspace's default bucket (the Objects API's), created with it and deleted only with it. */
export const GENERAL_BUCKET = 'general';

/** The most content types a workspace holds (checked by the content_types_within_limit trigger, SQLSTATE WA001). */
export const MAX_CONTENT_TYPES = 500;
export const TOO_MANY_CONTENT_TYPES = 'WA001';

export type FieldType = 'text' | 'number' | 'boolean' | 'date' | 'json' | 'relation' | 'attachment';

export interface FieldDef {
  /** The field definition's id: its column in typed storage is `f<id>` (core/query/typed.ts). */
  id: number;
  name: string;
  /** Where documents keep its value (entry_contents.data): its name when added, never changed (field-keys.ts). */
  key: string;
  type: FieldType;
  format: 'date' | 'time' | 'datetime' | null;
  multiple: boolean;
  required: boolean;
  unique: boolean;
  /** Accepted content type names (relation fields), in the same bucket. */
  targets: string[];
  cascadeOnDelete: boolean;
  /** Sort indexes in typed storage, as given at creation (null: the default, see typedColumnOf). */
  indexed: boolean | null;
}

export interface ContentTypeDef {
  id: number;
  name: string;
  bucketId: number;
  bucket: string;
  workspaceId: number;
  /** The text field that names entries (null: none). */
  nameField: string | null;
  fields: FieldDef[];
  /** The same fields by name (a map without prototype: field names come from requests). */
  byName: Map<string, FieldDef>;
  /** Whether its typed storage is complete (not still being filled, see typed-storage.ts): queries read it then. */
  typedReady: boolean;
}

/** A field definition's row (field_definitions), as SQL reads it. */
export interface FieldRow {
  id: number;
  name: string;
  key: string;
  type: FieldType;
  format: FieldDef['format'];
  multiple: boolean;
  required: boolean;
  unique: boolean;
  targets: string[];
  cascade_on_delete: boolean;
  indexed: boolean | null;
}

interface Row {
  id: number;
  name: string;
  bucket_id: number;
  bucket: string;
  workspace_id: number;
  name_field: string | null;
  typed_ready: boolean;
  fields: FieldRow[];
}

const select = (where: Sql) => sql`
  SELECT t.id, t.name, t.bucket_id, b.name AS bucket, b.workspace_id, t.name_field,
         EXISTS (SELECT 1 FROM typed_tables tt WHERE tt.content_type_id = t.id AND tt.backfill_after IS NULL) AS typed_ready,
         coalesce((SELECT json_agg(json_build_object('id', f.id, 'name', f.name, 'key', f.key, 'type', f.type, 'format', f.format, 'multiple', f.multiple,
                     'required', f.required, 'unique', f.unique, 'targets', f.targets, 'cascade_on_delete', f.cascade_on_delete, 'indexed', f.indexed) ORDER BY f.position)
                     FROM field_definitions f WHERE f.content_type_id = t.id), '[]') AS fields
    FROM content_types t JOIN buckets b ON b.id = t.bucket_id
   WHERE ${where}`;

function toDef(r: Row): ContentTypeDef {
  const fields = r.fields.map((f) => ({
    id: f.id,
    name: f.name,
    key: f.key,
    type: f.type,
    format: f.format,
    multiple: f.multiple,
    required: f.required,
    unique: f.unique,
    targets: f.targets ?? [],
    cascadeOnDelete: f.cascade_on_delete,
    indexed: f.indexed,
  }));
  return {
    id: r.id,
    name: r.name,
    bucketId: r.bucket_id,
    bucket: r.bucket,
    workspaceId: r.workspace_id,
    nameField: r.name_field,
    fields,
    byName: new Map(fields.map((f) => [f.name, f])),
    typedReady: r.typed_ready,
  };
}

/** Content types by id (the types of the entries a response renders), in one query. */
export async function contentTypesById(db: SqlRunner, ids: number[]): Promise<Map<number, ContentTypeDef>> {
  if (!ids.length) return new Map();
  const found = await rows<Row>(db, select(sql`t.id = ANY(${[...new Set(ids)]}::int[])`), true);
  return new Map(found.map((r) => [r.id, toDef(r)]));
}

/** Every content type of a bucket by name (relation targets are named within the bucket). */
export async function bucketContentTypes(db: SqlRunner, bucketId: number): Promise<Map<string, ContentTypeDef>> {
  const found = await rows<Row>(db, select(sql`t.bucket_id = ${bucketId}`), true);
  return new Map(found.map((r) => [r.name, toDef(r)]));
}

/** The process's cache of content types by bucket (dropped on every change, core/lookup-cache.ts). */
export type ContentTypeCache = LookupCache<Map<string, ContentTypeDef>>;

/** The content types of a workspace's bucket by name (empty when the bucket has none or is missing), cached. */
export function cachedTypesOfBucketName(
  db: SqlRunner,
  cache: ContentTypeCache,
  workspaceId: number,
  bucketName: string,
): Promise<Map<string, ContentTypeDef>> {
  return cache.get(`${workspaceId}/${bucketName}`, async () => {
    const found = await rows<Row>(db, select(sql`b.workspace_id = ${workspaceId} AND b.name = ${bucketName}`), true);
    return new Map(found.map((r) => [r.name, toDef(r)]));
  }) as Promise<Map<string, ContentTypeDef>>;
}

/**
 * Every content type of a workspace, cached (a delivery read renders entries of any bucket): the
 * same list until one changes, so that what is written for it can be kept with it (render.ts).
 */
export async function cachedTypesOfWorkspace(
  db: SqlRunner,
  cache: ContentTypeCache,
  workspaceId: number,
): Promise<readonly ContentTypeDef[]> {
  const byId = await cache.get(`ws:${workspaceId}`, async () => {
    const found = await rows<Row>(db, select(sql`b.workspace_id = ${workspaceId}`), true);
    return new Map(found.map((r) => [String(r.id), toDef(r)]));
  });
  return listOf(byId!);
}

/** The values of a cached map as one list per map. */
const lists = new WeakMap<Map<string, ContentTypeDef>, readonly ContentTypeDef[]>();
function listOf(map: Map<string, ContentTypeDef>): readonly ContentTypeDef[] {
  let list = lists.get(map);
  if (!list) lists.set(map, (list = [...map.values()]));
  return list;
}

/** The id of the workspace's bucket named so, if there is one. */
export async function bucketIdByName(db: SqlRunner, workspaceId: number, name: string): Promise<number | undefined> {
  const [found] = await rows<{ id: number }>(
    db,
    sql`SELECT id FROM buckets WHERE workspace_id = ${workspaceId}::int AND name = ${name}::text`,
  );
  return found?.id;
}
