// What each field definition becomes: its value on reads (rendered entries), on writes (create
// and update bodies), and its descriptor in `Content` (which the SDK's typed query reads).
import type { FieldModel } from './model.js';
import { commentText, literal, quoted } from './names.js';

/** The string forms of date fields by `format`, as the Entries API reads and writes them. */
const DATE_FORMS: Record<string, { read: string; write: string }> = {
  date: { read: '`YYYY-MM-DD`', write: '`YYYY-MM-DD`' },
  time: { read: '`HH:mm`', write: '`HH:mm`' },
  datetime: {
    read: '`YYYY-MM-DDTHH:mm:ssZ` (UTC)',
    write: '`YYYY-MM-DD HH:mm` or `YYYY-MM-DD HH:mm:ss` (or with `T`), optional `Z` or offset; read as UTC without one',
  },
};

/** Generated type names of the content types a relation may point to (by target name). */
export type EntryTypeNames = (target: string) => string | undefined;

const SCALAR: Record<string, string> = { text: 'string', number: 'number', boolean: 'boolean', date: 'string', json: 'unknown' };

const list = (item: string) => (item.includes(' ') ? `(${item})[]` : `${item}[]`);

/** One rendered value: the related entries or a compact reference, the file object, a scalar. */
function readItem(f: FieldModel, entryType: EntryTypeNames): string {
  if (f.type === 'relation') {
    // A target missing from the model renders nothing; compact references remain possible.
    const targets = [...new Set(f.targets)].map(entryType).filter((n): n is string => n !== undefined);
    return [...targets, 'Sdk.EntryReference'].join(' | ');
  }
  if (f.type === 'attachment') return 'Sdk.FileObject';
  return SCALAR[f.type] ?? 'unknown';
}

/** One written value: an entry ULID for relations, a file id for attachments, a scalar. */
function writeItem(f: FieldModel): string {
  if (f.type === 'relation') return 'string';
  if (f.type === 'attachment') return 'number';
  return SCALAR[f.type] ?? 'unknown';
}

/** A field's value in a rendered entry: `[]` for an empty multiple field, `null` for an empty single one. */
export function readType(f: FieldModel, entryType: EntryTypeNames): string {
  const item = readItem(f, entryType);
  if (f.multiple) return list(item);
  return item === 'unknown' ? item : `${item} | null`;
}

/** A field's value in a write body (`null` empties an optional field). */
export function writeType(f: FieldModel, emptiable: boolean): string {
  const item = writeItem(f);
  const value = f.multiple ? list(item) : item;
  return emptiable && value !== 'unknown' ? `${value} | null` : value;
}

/** The field's doc comment: its definition and the string forms of dates. */
export function fieldDoc(f: FieldModel, use: 'read' | 'write'): string {
  let what = `\`${commentText(f.type)}\``;
  if (f.type === 'relation') what += ` to ${f.targets.map(quoted).join(' or ') || 'no type'}`;
  if (use === 'write' && f.type === 'relation') what += ' (entry ULIDs)';
  if (use === 'write' && f.type === 'attachment') what += ' (file IDs)';
  const flags = (['multiple', 'required', 'unique'] as const).filter((flag) => f[flag]);
  const forms = f.type === 'date' ? DATE_FORMS[f.format ?? 'date'] : undefined;
  return [what, ...flags].join(', ') + '.' + (forms ? ` ${use === 'read' ? forms.read : forms.write}.` : '');
}

/** The field's descriptor in `Content`, for the typed client's paths, filters and projections. */
export function descriptor(f: FieldModel): string {
  const targets = f.type === 'relation' && f.targets.length ? [...new Set(f.targets)].map(literal).join(' | ') : 'never';
  return (
    `{ type: ${literal(f.type)}; format: ${f.format === null ? 'null' : literal(f.format)}; ` +
    `multiple: ${f.multiple}; required: ${f.required}; targets: ${targets} }`
  );
}
