// Typed clients over a generated content model: entries of a bucket typed by content type name
// (reads, writes, structured queries, batch writes) and objects typed by contract. They call the
// same routes as the untyped client (and `queryEntries`/`batchEntries`); only the types differ:
// the server validates as always, the compiler now checks names and shapes first.
import type { components } from '../generated/openapi.js';
import type { ApiError, PublicClient } from '../index.js';
import { batchEntries, queryEntries, type BatchOptions, type EntryBatchOperation } from '../entries.js';
import type { BucketName, ContentShape, ContractName, TypeName, TypesOf } from './model.js';
import type { CheckFilterOf, DefaultRowOf, EntryFilterOf, ProjectionPath, RowOf, SortKeyOf } from './query.js';

type Schemas = components['schemas'];

/** What every call resolves to, as openapi-fetch's: `data` on success, `error` otherwise. */
export type Result<T> = { data: T; error?: never; response: Response } | { data?: never; error: ApiError; response: Response };

type Type<C extends ContentShape, B extends BucketName<C>, T extends TypeName<C, B>> = TypesOf<C, B>[T];
type Model<C extends ContentShape, B extends BucketName<C>, T extends TypeName<C, B>> = Type<C, B, T>['model'];
export type EntryOf<C extends ContentShape, B extends BucketName<C>, T extends TypeName<C, B>> = Type<C, B, T>['entry'];

/** A locale code for the typed reads and writes (`*` changes the shape: use the untyped client). */
type OneLocale<L extends string> = L extends '*' ? never : L;

/** Relation fields of a batch write also take `{ $ref }` to an entry created earlier in the batch. */
type BatchFieldsOf<Fields, M> = {
  [K in keyof Fields]: K extends keyof M
    ? M[K] extends { type: 'relation' }
      ? Fields[K] extends infer V
        ? V extends (infer I)[]
          ? (I | Schemas['EntryBatchReference'])[]
          : V extends string
            ? V | Schemas['EntryBatchReference']
            : V
        : never
      : Fields[K]
    : Fields[K];
};

type WriteOptions = Omit<Schemas['EntryCreate'], 'fields'>;
type UpdateOptions = Omit<Schemas['EntryUpdate'], 'fields'>;
type BatchCommon = Pick<Schemas['EntryBatchOperation'], 'status' | 'publish_at' | 'locales' | 'tags'>;
type CheckOf<M> = { filter: CheckFilterOf<M>; exists: boolean };

/** The structured query of type `T`; `fields`, `filter` and `sort` name only paths the type has. */
export interface TypedQuery<C extends ContentShape, B extends BucketName<C>, T extends TypeName<C, B>, F> {
  type: T;
  fields?: F;
  filter?: EntryFilterOf<TypesOf<C, B>, Model<C, B, T>>;
  sort?: SortKeyOf<TypesOf<C, B>, Model<C, B, T>>[];
  locale?: string;
  offset?: number;
  limit?: number;
}

/** A page of rows shaped by the projection `F` (every content field when `fields` is omitted). */
export interface TypedQueryResult<C extends ContentShape, B extends BucketName<C>, T extends TypeName<C, B>, F> {
  data: (F extends readonly (infer P extends string)[] ? RowOf<TypesOf<C, B>, Model<C, B, T>, P> : DefaultRowOf<Model<C, B, T>>)[];
  pagination: Schemas['EntryQueryResponse']['pagination'];
}

/** Builds the operations of a typed batch write (the content type name types the fields; updates and deletes do not send it). */
export interface BatchBuilder<C extends ContentShape, B extends BucketName<C>> {
  create<T extends TypeName<C, B>>(
    type: T,
    op: BatchCommon & { ref?: string; fields: BatchFieldsOf<Type<C, B, T>['create'], Model<C, B, T>>; check?: CheckOf<Model<C, B, T>> },
  ): EntryBatchOperation;
  update<T extends TypeName<C, B>>(
    type: T,
    id: string,
    op: BatchCommon & {
      fields?: BatchFieldsOf<Type<C, B, T>['update'], Model<C, B, T>>;
      expected_version?: number;
      check?: CheckOf<Model<C, B, T>>;
    },
  ): EntryBatchOperation;
  delete<T extends TypeName<C, B>>(
    type: T,
    id: string,
    op?: { expected_version?: number; check?: CheckOf<Model<C, B, T>> },
  ): EntryBatchOperation;
}

/** The entries of one bucket, typed by content type name. */
export interface TypedEntries<C extends ContentShape, B extends BucketName<C>> {
  readonly bucket: B;
  /** Published entries of `type`, rendered, oldest first (the plain list: at most 1,000). */
  list<T extends TypeName<C, B>, L extends string = 'en-US'>(
    type: T,
    options?: { locale?: OneLocale<L> },
  ): Promise<Result<EntryOf<C, B, T>[]>>;
  /** One cursor page of published entries of `type`, rendered; follow `next_page_url` (or pass its `cursor`). */
  page<T extends TypeName<C, B>, L extends string = 'en-US'>(
    type: T,
    options?: { locale?: OneLocale<L>; per_page?: number; cursor?: string },
  ): Promise<Result<{ data: EntryOf<C, B, T>[]; next_page_url: string | null; prev_page_url: string | null }>>;
  /** A published entry by ULID. `type` types the answer; the server does not check it (it answers any typed entry). */
  get<T extends TypeName<C, B>, L extends string = 'en-US'>(
    type: T,
    id: string,
    options?: { locale?: OneLocale<L> },
  ): Promise<Result<EntryOf<C, B, T>>>;
  create<T extends TypeName<C, B>, L extends string = 'en-US'>(
    type: T,
    body: WriteOptions & { fields: Type<C, B, T>['create'] },
    options?: { locale?: OneLocale<L> },
  ): Promise<Result<EntryOf<C, B, T>>>;
  update<T extends TypeName<C, B>, L extends string = 'en-US'>(
    type: T,
    id: string,
    body: UpdateOptions & { fields?: Type<C, B, T>['update'] },
    options?: { locale?: OneLocale<L> },
  ): Promise<Result<EntryOf<C, B, T>>>;
  delete(id: string, options?: { skipWebhooks?: boolean }): Promise<Result<undefined>>;
  /** A structured query; rows follow `fields` (aggregations: use `queryEntries`). */
  query<T extends TypeName<C, B>, const F extends readonly ProjectionPath<TypesOf<C, B>, Model<C, B, T>>[] | undefined = undefined>(
    query: TypedQuery<C, B, T, F>,
  ): Promise<Result<TypedQueryResult<C, B, T, F>>>;
  /** The builders of `batch`'s operations. */
  readonly op: BatchBuilder<C, B>;
  /** An atomic batch write (`batchEntries`: an Idempotency-Key, retried with it when the outcome is uncertain). */
  batch(operations: EntryBatchOperation[], options?: BatchOptions & { locale?: string }): ReturnType<typeof batchEntries>;
}

/** An object under contract `N` (its `data` typed by the contract when the contract enforces it). */
export type ContractObject<C extends ContentShape, N extends ContractName<C>> = Omit<Schemas['ObjectEnvelope'], 'contract' | 'data'> & {
  contract: N;
  data?: (C['contracts'][N]['mode'] extends 'enforce' ? C['contracts'][N]['data'] : unknown) | null;
};
/** Any object: narrow by `contract` to get its typed `data`. */
export type AnyObject<C extends ContentShape> =
  { [N in ContractName<C>]: ContractObject<C, N> }[ContractName<C>] | (Omit<Schemas['ObjectEnvelope'], 'contract'> & { contract: null });

/** Objects typed by contract. */
export interface TypedObjects<C extends ContentShape> {
  /** Creates an object under exactly `contract` (sent as the object's `contract`, so the server checks `data` against it). */
  create<N extends ContractName<C>>(
    contract: N,
    body: Omit<Schemas['ObjectCreate'], 'data' | 'contract'> & { data: C['contracts'][N]['data'] },
  ): Promise<Result<ContractObject<C, N>>>;
  /** A published object by id; the answer's `contract` narrows its `data`. */
  get(id: number, options?: { locale?: string }): Promise<Result<AnyObject<C>>>;
}

export interface ContentClient<C extends ContentShape> {
  entries<B extends BucketName<C>>(bucket: B): TypedEntries<C, B>;
  readonly objects: TypedObjects<C>;
}

const ok = <T>(result: { data?: unknown; error?: unknown; response: Response }) => result as unknown as Result<T>;

function batchBuilder<C extends ContentShape, B extends BucketName<C>>(): BatchBuilder<C, B> {
  return {
    create: (type, op) => ({ action: 'create', type, ...op }),
    update: (_type, id, op) => ({ action: 'update', id, ...op }),
    delete: (_type, id, op = {}) => ({ action: 'delete', id, ...op }),
  };
}

/** The entries of `bucket` in `workspace`, typed by the generated content model `C`. */
export function typedEntries<C extends ContentShape, B extends BucketName<C>>(
  client: PublicClient,
  workspace: string,
  bucket: B,
): TypedEntries<C, B> {
  const path = { workspace };
  const where = (type: string, locale?: string) => ({
    contentBucket: bucket,
    contentType: type,
    ...(locale === undefined ? {} : { locale }),
  });
  return {
    bucket,
    async list(type, options = {}) {
      return ok(await client.GET('/api/v1/{workspace}/entries', { params: { path, query: where(type, options.locale) } }));
    },
    async page(type, options = {}) {
      const { locale, ...paging } = options;
      return ok(
        await client.GET('/api/v1/{workspace}/entries', { params: { path, query: { ...where(type, locale), ...paging, view: 'full' } } }),
      );
    },
    async get(_type, id, options = {}) {
      const query = options.locale === undefined ? {} : { locale: options.locale };
      return ok(await client.GET('/api/v1/{workspace}/entries/{entry}', { params: { path: { workspace, entry: id }, query } }));
    },
    async create(type, body, options = {}) {
      return ok(
        await client.POST('/api/v1/{workspace}/entries', {
          params: { path, query: where(type, options.locale) },
          body: body as Schemas['EntryCreate'],
        }),
      );
    },
    async update(_type, id, body, options = {}) {
      const query = options.locale === undefined ? {} : { locale: options.locale };
      return ok(
        await client.PATCH('/api/v1/{workspace}/entries/{entry}', {
          params: { path: { workspace, entry: id }, query },
          body: body as Schemas['EntryUpdate'],
        }),
      );
    },
    async delete(id, options = {}) {
      return ok(await client.DELETE('/api/v1/{workspace}/entries/{entry}', { params: { path: { workspace, entry: id }, query: options } }));
    },
    async query(query) {
      return ok(await queryEntries(client, workspace, bucket, query as Schemas['EntryQuery']));
    },
    op: batchBuilder<C, B>(),
    batch(operations, options = {}) {
      const { locale, ...retry } = options;
      return batchEntries(client, workspace, bucket, { operations, ...(locale === undefined ? {} : { locale }) }, retry);
    },
  };
}

/** Objects of `workspace` typed by the contracts of the generated content model `C`. */
export function typedObjects<C extends ContentShape>(client: PublicClient, workspace: string): TypedObjects<C> {
  return {
    async create(contract, body) {
      const sent = { ...body, contract } as Schemas['ObjectCreate'];
      return ok(await client.POST('/api/v1/{workspace}/objects', { params: { path: { workspace } }, body: sent }));
    },
    async get(id, options = {}) {
      const query = options.locale === undefined ? {} : { locale: options.locale };
      return ok(await client.GET('/api/v1/{workspace}/objects/{objectRef}', { params: { path: { workspace, objectRef: id }, query } }));
    },
  };
}

/**
 * A client typed by the content model that `generate-types` wrote:
 * `contentClient<Content>(api, 'acme').entries('blog').query({ type: 'post', fields: ['title'] })`.
 */
export function contentClient<C extends ContentShape>(client: PublicClient, workspace: string): ContentClient<C> {
  return {
    entries: (bucket) => typedEntries<C, typeof bucket>(client, workspace, bucket),
    objects: typedObjects<C>(client, workspace),
  };
}
