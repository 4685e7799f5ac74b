// Typed client of the Workspace API. The paths, parameters and bodies come from the generated
// types of the OpenAPI spec (./generated/openapi.ts); behaviour is added as openapi-fetch middleware.
import type { Client, ClientOptions, Middleware } from 'openapi-fetch';
import { fetchClient } from './fetch-client.js';
import type { paths, components, operations } from './generated/openapi.js';

export type { paths, components, operations };
export type { Middleware };
export type Schemas = components['schemas'];

/** Every path of the public API (`/api/...`) and its operations. */
export type PublicPaths = { [P in keyof paths as P extends `/api/${string}` ? P : never]: paths[P] };
/** Every path of the management API (`/admin/...`). */
export type AdminPaths = { [P in keyof paths as P extends `/admin/${string}` ? P : never]: paths[P] };

/** What `createClient` returns. */
export type PublicClient = Client<PublicPaths>;
/** What `createAdminClient` returns. */
export type AdminClient = Client<AdminPaths>;

export interface BaseOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Server address without the `/api/v1` part, for example `http://localhost:3000`. */
  baseUrl: string;
  /** A `fetch` to send the requests with (default: the global `fetch`); it receives a `Request`. */
  fetch?: ClientOptions['fetch'];
}
export type PublicClientOptions = BaseOptions & { apiKey: string };
export type AdminClientOptions = BaseOptions & { adminToken: string };

/**
 * The body of every error response: `message`, and on a `422` also `errors`, which maps a field
 * path (`name`, `fields.0.type`) to its messages.
 */
export type ApiError = Pick<Schemas['Error'], 'message'> & Partial<Pick<Schemas['ValidationError'], 'errors'>>;
/** The body of a `422`. */
export type ValidationError = Schemas['ValidationError'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isErrorMap = (v: unknown): v is ValidationError['errors'] =>
  isObject(v) && Object.values(v).every((m) => Array.isArray(m) && m.every((s) => typeof s === 'string'));

/** Whether `value` is an error body of the API (`{ message }`, with `errors` on a `422`). */
export function isApiError(value: unknown): value is ApiError {
  return isObject(value) && typeof value.message === 'string' && (value.errors === undefined || isErrorMap(value.errors));
}

/** Whether `value` is the body of a `422` (`{ message, errors }`). */
export function isValidationError(value: unknown): value is ValidationError {
  return isApiError(value) && value.errors !== undefined;
}

/** Sends `Authorization: Bearer <token>` on every request. */
export function bearerAuth(token: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  };
}

function client<P extends {}>(options: BaseOptions, token: string, name: string): Client<P> {
  if (typeof token !== 'string' || token === '') throw new TypeError(`${name} is required`);
  const c = fetchClient<P>(options);
  c.use(bearerAuth(token));
  return c;
}

/** A client of the public API (`/api/v1/...`), authenticated with a workspace API key. */
export function createClient(options: PublicClientOptions): PublicClient {
  const { apiKey, ...rest } = options;
  return client<PublicPaths>(rest, apiKey, 'apiKey');
}

/** A client of the management API (`/admin/v1/...`), authenticated with the server's ADMIN_TOKEN. */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const { adminToken, ...rest } = options;
  return client<AdminPaths>(rest, adminToken, 'adminToken');
}

export { emails, type EmailMessage } from './emails.js';
export {
  auth,
  type AuthOptions,
  type AuthLoginBody,
  type AuthVerifyBody,
  type AuthCode,
  type AuthToken,
  type AuthSession,
} from './auth.js';
export { verifyWebhookSignature, parseWebhookEvent, type WebhookEvent } from './webhooks.js';
export { uploadFile, refreshTemporaryUrls, type FileObject, type UploadInput, type UploadOptions } from './files.js';
export {
  queryEntries,
  queryEntriesBatch,
  batchEntries,
  type BatchOptions,
  type EntryQueryResult,
  type EntryQueryRow,
  type EntryAggregateRow,
  type EntryQueryBatchResponse,
  type EntryQuery,
  type EntryFilter,
  type EntryQueryResponse,
  type EntryBatchRequest,
  type EntryBatchOperation,
  type EntryBatchResponse,
} from './entries.js';
export {
  contentClient,
  typedEntries,
  typedObjects,
  type ContentClient,
  type TypedEntries,
  type TypedObjects,
  type TypedQuery,
  type TypedQueryResult,
  type BatchBuilder,
  type EntryOf,
  type ContractObject,
  type AnyObject,
  type Result,
} from './content/client.js';
export type {
  RenderedEntry,
  EntryReference,
  ContentShape,
  ContentTypeShape,
  FieldDescriptor,
  BucketName,
  TypeName,
  ContractName,
} from './content/model.js';
export type { ProjectionPath, FilterPath, SortPath, EntryFilterOf, RowOf, DefaultRowOf, MetaSelector } from './content/query.js';
export {
  pipelines,
  PipelineTimeoutError,
  type Pipelines,
  type RunOptions,
  type PipelineExecution,
  type PipelineExecutionQueued,
} from './pipelines.js';
export { paginate, pages, PageError, type CursorPath, type PageOf, type ItemOf, type PageParams } from './pagination.js';
