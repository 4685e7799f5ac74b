// The one place an openapi-fetch client is made (API-key and admin clients, hosted authentication).
import createFetchClient, { type Client, type ClientOptions } from 'openapi-fetch';

/** A client of the server at `baseUrl` (trailing slashes dropped); a missing `baseUrl` is a TypeError. */
export function fetchClient<P extends {}>(options: ClientOptions): Client<P> {
  const { baseUrl, ...rest } = options;
  if (typeof baseUrl !== 'string' || baseUrl === '') throw new TypeError('baseUrl is required');
  return createFetchClient<P>({ baseUrl: baseUrl.replace(/\/+$/, ''), ...rest });
}
