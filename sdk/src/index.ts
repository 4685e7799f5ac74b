// Typed client of the Workspace API. The paths, parameters and bodies come from the generated
// types of the OpenAPI spec (./generated/openapi.ts); behaviour is added as openapi-fetch middleware.
import createFetchClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { paths, components, operations } from './generated/openapi.js';

export type { paths, components, operations };
export type Schemas = components['schemas'];

/** Every path of the public API (`/api/...`) and its operations. */
export type PublicPaths = { [P in keyof paths as P extends `/api/${string}` ? P : never]: paths[P] };
/** Every path of the management API (`/admin/...`). */
export type AdminPaths = { [P in keyof paths as P extends `/admin/${string}` ? P : never]: paths[P] };

export interface BaseOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Server address without the `/api/v1` part, for example `http://localhost:3000`. */
  baseUrl: string;
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

function client<P extends {}>(options: BaseOptions, token: string): Client<P> {
  const { baseUrl, ...rest } = options;
  const c = createFetchClient<P>({ baseUrl: baseUrl.replace(/\/+$/, ''), ...rest });
  c.use(bearerAuth(token));
  return c;
}

/** A client of the public API, authenticated with a workspace API key. */
export function createClient(options: BaseOptions & { apiKey: string }): Client<PublicPaths> {
  const { apiKey, ...rest } = options;
  return client<PublicPaths>(rest, apiKey);
}

/** A client of the management API, authenticated with the server's ADMIN_TOKEN. */
export function createAdminClient(options: BaseOptions & { adminToken: string }): Client<AdminPaths> {
  const { adminToken, ...rest } = options;
  return client<AdminPaths>(rest, adminToken);
}
