// Content types and their field definitions, with the rules of the field-definition model.
import type { components } from '@workspace-api/sdk/openapi';
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { addFieldError, fieldError, fieldErrors, type FieldErrors } from '../lib/field-errors';
import { uniqueOr422 } from '../lib/db-errors';
import { sqlState } from '../lib/sql-state';
import { MAX_CONTENT_TYPES, TOO_MANY_CONTENT_TYPES } from '../core/content/content-types';
import { presentContentType } from './presenters';
import { requireBucket } from '../http/lookup';

type FieldInput = components['schemas']['FieldDefinition'];

const CASCADING = new Set(['relation', 'attachment']);
const NOT_UNIQUE = new Set(['json', 'relation', 'attachment']);
const INDEXABLE = new Set(['text', 'number', 'date']);

/** Checks the rules the schema cannot express; returns the errors keyed by field path. */
export function checkFieldDefinitions(
  typeName: string,
  fields: FieldInput[],
  nameField: string | undefined,
  existingTypes: Set<string>,
): FieldErrors {
  const errors = fieldErrors();
  const add = (key: string, template: string, params?: Record<string, string>) => addFieldError(errors, key, fieldError('definition', template, params));
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const at = `fields.${i}`;
    if (seen.has(f.name)) add(`${at}.name`, 'The field name :name is used more than once.', { name: f.name });
    seen.add(f.name);
    if (f.format !== undefined && f.type !== 'date') add(`${at}.format`, 'The format field is only allowed on date fields.');
    if (f.type === 'relation') {
      if (!f.targets) add(`${at}.targets`, 'The targets field is required for relation fields.');
      f.targets?.forEach((t, j) => {
        if (t !== typeName && !existingTypes.has(t)) add(`${at}.targets.${j}`, 'The content type :type does not exist in this bucket.', { type: t });
      });
    } else if (f.targets !== undefined) add(`${at}.targets`, 'The targets field is only allowed on relation fields.');
    if (f.cascade_on_delete && !CASCADING.has(f.type)) add(`${at}.cascade_on_delete`, 'The cascade_on_delete field is only allowed on relation and attachment fields.');
    if (f.indexed && (!INDEXABLE.has(f.type) || f.multiple)) add(`${at}.indexed`, 'The indexed field is only allowed on single-value text, number and date fields.');
    if (f.unique && (NOT_UNIQUE.has(f.type) || f.multiple)) add(`${at}.unique`, 'The unique field is not allowed on :kind fields.', { kind: f.multiple ? 'multiple' : f.type });
  });
  if (nameField !== undefined && !fields.some((f) => f.name === nameField && f.type === 'text' && !f.multiple)) {
    add('name_field', 'The name_field must name a single-value text field of this content type.');
  }
  return errors;
}

/** A content type's creation: a name taken, or the workspace at MAX_CONTENT_TYPES, is a 422 on `name`. */
async function withinLimit<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await uniqueOr422('name', create);
  } catch (err) {
    if (sqlState(err) !== TOO_MANY_CONTENT_TYPES) throw err;
    const errors = fieldErrors();
    addFieldError(errors, 'name', fieldError('limit', 'The workspace holds :max content types, the most it may.', { max: MAX_CONTENT_TYPES }));
    throw validationFailed(errors);
  }
}

export const contentTypeHandlers = handlers({
  async createContentType({ params, body }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const existing = await app.db.prisma.contentType.findMany({ where: { bucketId: bucket.id }, select: { name: true } });
    const errors = checkFieldDefinitions(body.name, body.fields, body.name_field, new Set(existing.map((t) => t.name)));
    if (Object.keys(errors).length) throw validationFailed(errors);
    const nameField = body.name_field ?? body.fields.find((f) => f.type === 'text' && !f.multiple)?.name ?? null;
    const now = app.clock.now();
    const type = await withinLimit(() =>
      app.db.prisma.contentType.create({
        data: {
          bucketId: bucket.id,
          name: body.name,
          nameField,
          createdAt: now,
          updatedAt: now,
          fields: {
            create: body.fields.map((f, position) => ({
              position,
              name: f.name,
              type: f.type,
              format: f.type === 'date' ? (f.format ?? 'date') : null,
              multiple: f.multiple ?? false,
              required: f.required ?? false,
              unique: f.unique ?? false,
              targets: f.targets ?? [],
              cascadeOnDelete: f.cascade_on_delete ?? false,
              indexed: f.indexed ?? null,
            })),
          },
        },
        include: { fields: true },
      }),
    );
    return { status: 201, body: presentContentType(type, bucket.name) };
  },

  async listContentTypes({ params }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const rows = await app.db.prisma.contentType.findMany({ where: { bucketId: bucket.id }, include: { fields: true }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map((t) => presentContentType(t, bucket.name)) } };
  },

  async getContentType({ params }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const type = await app.db.prisma.contentType.findUnique({
      where: { bucketId_name: { bucketId: bucket.id, name: params.type } },
      include: { fields: true },
    });
    if (!type) throw notFound();
    return { status: 200, body: presentContentType(type, bucket.name) };
  },
});
