// The rules of a content type's field definitions that the schema cannot express, shared by its
// creation and its change (content-type-changes.ts).
import type { components } from '@workspace-api/sdk/openapi';
import { addFieldError, fieldError, fieldErrors, type FieldErrors } from '../../lib/field-errors';
import type { FieldRow } from './content-types';

export type FieldInput = components['schemas']['FieldDefinition'];

/**
 * A stored field's definition as a request would give it (named `name`): every member explicit,
 * `format` on date fields, `targets` on relation fields, `indexed` when it was given.
 */
export const definitionOfRow = (f: Omit<FieldRow, 'id' | 'key'>, name = f.name): FieldInput => ({
  name,
  type: f.type,
  ...(f.type === 'date' ? { format: f.format ?? 'date' } : {}),
  multiple: f.multiple,
  required: f.required,
  unique: f.unique,
  ...(f.type === 'relation' ? { targets: f.targets } : {}),
  cascade_on_delete: f.cascade_on_delete,
  ...(f.indexed !== null ? { indexed: f.indexed } : {}),
});

const CASCADING = new Set(['relation', 'attachment']);
const NOT_UNIQUE = new Set(['json', 'relation', 'attachment']);
const INDEXABLE = new Set(['text', 'number', 'date']);

/** Checks the rules the schema cannot express; returns the errors keyed by field path. */
export function checkFieldDefinitions(
  typeName: string,
  fields: FieldInput[],
  nameField: string | undefined,
  existingTypes: ReadonlySet<string>,
): FieldErrors {
  const errors = fieldErrors();
  const add = (key: string, template: string, params?: Record<string, string>) =>
    addFieldError(errors, key, fieldError('definition', template, params));
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const at = `fields.${i}`;
    if (seen.has(f.name)) add(`${at}.name`, 'The field name :name is used more than once.', { name: f.name });
    seen.add(f.name);
    if (f.format !== undefined && f.type !== 'date') add(`${at}.format`, 'The format field is only allowed on date fields.');
    if (f.type === 'relation') {
      if (!f.targets) add(`${at}.targets`, 'The targets field is required for relation fields.');
      f.targets?.forEach((t, j) => {
        if (t !== typeName && !existingTypes.has(t))
          add(`${at}.targets.${j}`, 'The content type :type does not exist in this bucket.', { type: t });
      });
    } else if (f.targets !== undefined) add(`${at}.targets`, 'The targets field is only allowed on relation fields.');
    if (f.cascade_on_delete && !CASCADING.has(f.type))
      add(`${at}.cascade_on_delete`, 'The cascade_on_delete field is only allowed on relation and attachment fields.');
    if (f.indexed && (!INDEXABLE.has(f.type) || f.multiple))
      add(`${at}.indexed`, 'The indexed field is only allowed on single-value text, number and date fields.');
    if (f.unique && (NOT_UNIQUE.has(f.type) || f.multiple))
      add(`${at}.unique`, 'The unique field is not allowed on :kind fields.', { kind: f.multiple ? 'multiple' : f.type });
  });
  if (nameField !== undefined && !fields.some((f) => f.name === nameField && f.type === 'text' && !f.multiple)) {
    add('name_field', 'The name_field must name a single-value text field of this content type.');
  }
  return errors;
}
