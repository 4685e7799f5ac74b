// The shape of a generated content model (`Content` in the module that `generate-types` writes)
// and the types every generated module imports from the SDK.
import type { components } from '../generated/openapi.js';

type Schemas = components['schemas'];

/** A rendered typed entry whose `fields` are `F` (generated: `<Bucket><Type>Entry`). */
export interface RenderedEntry<F> extends Omit<Schemas['Entry'], 'fields'> {
  fields: F;
  /** Only compact references carry `_relation`: `if (value._relation)` tells them apart. */
  _relation?: undefined;
}
/** Where relation expansion stops: `{ id, api_url, name, status, status_label, _relation }`. */
export type EntryReference = Schemas['EntryReference'];
/** A file of the Files API, as attachment fields render it. */
export type FileObject = Schemas['File'];

/** One field definition, as the generated `model` describes it. */
export interface FieldDescriptor {
  type: string;
  format: string | null;
  multiple: boolean;
  required: boolean;
  /** Relation targets (content type names of the bucket); `never` for other fields. */
  targets: string;
}

/** One content type of the generated `Content`. */
export interface ContentTypeShape {
  entry: unknown;
  fields: unknown;
  create: unknown;
  update: unknown;
  model: { [field: string]: FieldDescriptor };
}

/** What a generated `Content` looks like. */
export interface ContentShape {
  workspace: string;
  hash: string;
  buckets: { [bucket: string]: { [type: string]: ContentTypeShape } };
  contracts: { [name: string]: { data: unknown; mode: 'enforce' | 'report'; bucket: string | null; prefix: string | null } };
  objects: { [bucket: string]: { [prefix: string]: string } };
}

export type BucketName<C extends ContentShape> = keyof C['buckets'] & string;
/** The content types of bucket `B`. */
export type TypesOf<C extends ContentShape, B extends BucketName<C>> = C['buckets'][B];
export type TypeName<C extends ContentShape, B extends BucketName<C>> = keyof TypesOf<C, B> & string;
export type ContractName<C extends ContentShape> = keyof C['contracts'] & string;
