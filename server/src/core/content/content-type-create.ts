// A content type's creation, by the management API's route and by a model's apply alike: its
// field rules (field-rules.ts), then its rows, in the caller's unit of work. Its typed table is
// created at the commit (the typed_storage_created trigger); a taken name is the database's
// unique violation, a workspace at MAX_CONTENT_TYPES its WA001: the caller words both.
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import { throwIfInvalid } from '../errors';
import { rows, sql } from '../sql';
import { transaction } from '../transaction';
import { checkFieldDefinitions } from './field-rules';

export type ContentTypeCreate = components['schemas']['ContentTypeCreate'];

/**
 * Creates the content type in the bucket; returns its id. `types` are the names its relation
 * targets may name besides its own (default: the bucket's types now); `keys` proposes each
 * field's key by position (default its name).
 */
export function createContentType(
  core: CoreContext,
  bucketId: number,
  input: ContentTypeCreate,
  options: { types?: ReadonlySet<string>; keys?: readonly (string | undefined)[] } = {},
): Promise<number> {
  return transaction(core, async (tx) => {
    const types =
      options.types ??
      new Set(
        (await rows<{ name: string }>(tx, sql`SELECT name FROM content_types WHERE bucket_id = ${bucketId}::int`)).map((t) => t.name),
      );
    throwIfInvalid(checkFieldDefinitions(input.name, input.fields, input.name_field, types));
    const nameField = input.name_field ?? input.fields.find((f) => f.type === 'text' && !f.multiple)?.name ?? null;
    const now = core.clock.now();
    const [type] = await rows<{ id: number }>(
      tx,
      sql`INSERT INTO content_types (bucket_id, name, name_field, created_at, updated_at) VALUES (${bucketId}::int, ${input.name}, ${nameField}::text, ${now}, ${now}) RETURNING id`,
    );
    const fields = input.fields.map((f, position) => ({
      position,
      name: f.name,
      key: options.keys?.[position] ?? f.name,
      type: f.type,
      format: f.type === 'date' ? (f.format ?? 'date') : null,
      multiple: f.multiple ?? false,
      required: f.required ?? false,
      unique: f.unique ?? false,
      targets: f.targets ?? [],
      cascade_on_delete: f.cascade_on_delete ?? false,
      indexed: f.indexed ?? null,
    }));
    await rows(
      tx,
      sql`INSERT INTO field_definitions (content_type_id, position, name, key, type, format, multiple, required, "unique", targets, cascade_on_delete, indexed)
          SELECT ${type.id}::int, u.position, u.name, u.key, u.type, u.format, u.multiple, u.required, u."unique", u.targets, u.cascade_on_delete, u.indexed
            FROM jsonb_to_recordset(${JSON.stringify(fields)}::jsonb) AS u(position int, name text, key text, type text, format text, multiple boolean, required boolean, "unique" boolean, targets text[], cascade_on_delete boolean, indexed boolean)`,
    );
    return type.id;
  });
}
