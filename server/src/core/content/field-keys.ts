// Documents keep each field's value at the field's key (field_definitions.key): its name when the
// field was added, fixed for good, so that renaming a field changes its definition alone, whatever
// the number of entries. Requests, answers and the field-value rules name fields; documents are
// converted here, where typed entries are read from and written to the store, and every SQL read
// of a document takes the value at `FieldDef.key`.
import { emptyRecord } from '../../lib/records';
import type { ContentTypeDef } from './content-types';

const plain = new WeakMap<ContentTypeDef, boolean>();
/** Whether every field of the type is kept at its name (no field renamed): documents need no conversion. */
function keysAreNames(type: ContentTypeDef): boolean {
  let found = plain.get(type);
  if (found === undefined) plain.set(type, (found = type.fields.every((f) => f.key === f.name)));
  return found;
}

/** A stored document with its fields named (the type's fields only; field-values.ts keeps only those too). */
export function namedDocument(type: ContentTypeDef, stored: Record<string, unknown>): Record<string, unknown> {
  if (keysAreNames(type)) return stored;
  const out = emptyRecord();
  for (const f of type.fields) if (Object.hasOwn(stored, f.key)) out[f.name] = stored[f.key];
  return out;
}

/** A document of field names (as field-values.ts writes it) with each value at its field's key, to store. */
export function storedDocument(type: ContentTypeDef, named: Record<string, unknown>): Record<string, unknown> {
  if (keysAreNames(type)) return named;
  const out = emptyRecord();
  for (const f of type.fields) if (Object.hasOwn(named, f.name)) out[f.key] = named[f.name];
  return out;
}
