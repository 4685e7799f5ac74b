// Hosted authentication helpers for a workspace's own app: no API key, so they build their own
// unauthenticated client; the session calls send the app user's access token.
import type { ClientOptions } from 'openapi-fetch';
import { fetchClient } from './fetch-client.js';
import type { components, paths } from './generated/openapi.js';

type S = components['schemas'];
export type AuthLoginBody = S['AuthLogin'];
export type AuthVerifyBody = S['AuthVerify'];
export type AuthCode = S['AuthCode'];
export type AuthToken = S['AuthToken'];
export type AuthSession = S['AuthSession'];

export interface AuthOptions {
  /** Server address without the `/api/v1` part, for example `http://localhost:3000`. */
  baseUrl: string;
  workspace: string;
  /** A `fetch` to send the requests with (default: the global `fetch`). */
  fetch?: ClientOptions['fetch'];
}

function open(options: AuthOptions) {
  const client = fetchClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  if (typeof options.workspace !== 'string' || options.workspace === '') throw new TypeError('workspace is required');
  return { client, path: { workspace: options.workspace } };
}

const bearer = (accessToken: string) => ({ Authorization: `Bearer ${accessToken}` });

/** Mails a one-time code to the address (`204`, the same for every address). */
function login(options: AuthOptions, body: AuthLoginBody) {
  const { client, path } = open(options);
  return client.POST('/api/v1/{workspace}/auth/login', { params: { path }, body });
}

/** Trades the mailed code for a single-use authorization code valid 60 s. */
function verify(options: AuthOptions, body: AuthVerifyBody) {
  const { client, path } = open(options);
  return client.POST('/api/v1/{workspace}/auth/verify', { params: { path }, body });
}

/** Trades an authorization code for an access token. */
function exchange(options: AuthOptions, code: string) {
  const { client, path } = open(options);
  return client.POST('/api/v1/{workspace}/auth/token', { params: { path }, body: { code } });
}

/** The app user and expiry of an access token (`403` when it is not valid). */
function session(options: AuthOptions, accessToken: string) {
  const { client, path } = open(options);
  return client.GET('/api/v1/{workspace}/auth/session', { params: { path }, headers: bearer(accessToken) });
}

/** Revokes an access token (`204`). */
function logout(options: AuthOptions, accessToken: string) {
  const { client, path } = open(options);
  return client.DELETE('/api/v1/{workspace}/auth/session', { params: { path }, headers: bearer(accessToken) });
}

export const auth = { login, verify, exchange, session, logout };
