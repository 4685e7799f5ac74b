// A small HTTP client for black-box tests; every response goes through the contract check.
import { checkResponse } from './contract';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  /** JSON-serialised unless `raw` is given. */
  body?: unknown;
  /** A body sent as is (for malformed JSON, other content types, oversize bodies). */
  raw?: string | Buffer;
  token?: string;
  headers?: Record<string, string>;
}

export async function request<T = any>(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  let body: string | Buffer | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const url = baseUrl + path;
  // Redirects are part of what the tests check: never followed.
  const res = await fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: 'manual' });
  const text = await res.text();
  const type = res.headers.get('content-type');
  const parsed = type?.includes('json') && text ? JSON.parse(text) : text;
  checkResponse(method, url, res.status, type, parsed);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A client bound to a server and a credential. */
export function client(baseUrl: string, token?: string) {
  const call = <T = any>(method: string, path: string, opts: RequestOptions = {}) => request<T>(baseUrl, method, path, { token, ...opts });
  return {
    get: <T = any>(path: string, opts?: RequestOptions) => call<T>('GET', path, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('POST', path, { body, ...opts }),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PUT', path, { body, ...opts }),
    patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => call<T>('PATCH', path, { body, ...opts }),
    delete: <T = any>(path: string, opts?: RequestOptions) => call<T>('DELETE', path, opts),
  };
}
