// The `http.request` step: only to origins of PIPELINE_HTTP_ALLOWLIST. The URL is checked when the
// pipeline is saved (its origin must be written out, placeholders may follow it) and again after
// placeholders are resolved; redirects are not followed by fetch but hop by hop, each hop checked
// before it is requested, so no request ever leaves for another origin. The answer is read up to
// a size bound within one deadline for the whole step.
import type { PipelineConfig } from '../../config';
import { PIPELINE_LIMITS, type HttpRequestWith } from './step-types';
import { StepFailed } from './step-failed';

/** The URL when its origin is allowlisted, or why not. */
export function allowedUrl(config: PipelineConfig, raw: string): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (!config.httpAllowlist.includes(url.origin)) return `names the origin ${url.origin}, which is not in PIPELINE_HTTP_ALLOWLIST`;
  return url;
}

/**
 * Why a saved `url` (placeholders unresolved) could leave the allowlist, or undefined: the text
 * before the first placeholder must be an allowlisted origin followed by `/`, `?` or `#` (or be
 * the whole URL), so that placeholders can only change the path and the query (and there only
 * within a segment or a value: url-placeholders.ts, when the step runs).
 */
export function savedUrlProblem(config: PipelineConfig, url: string): string | undefined {
  const at = url.indexOf('{{');
  const fixed = at < 0 ? url : url.slice(0, at);
  if (at >= 0 && !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+[/?#]/i.test(fixed))
    return 'must spell out its origin before any placeholder (placeholders may stand only in the path or query)';
  const checked = allowedUrl(config, at < 0 ? url : fixed.replace(/[?#]$/, '/'));
  return typeof checked === 'string' ? checked : undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Reads at most `limit` bytes of the body, else fails the step. */
async function readBounded(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new StepFailed(`The answer is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The process is shutting down: the step was cut short and runs again elsewhere (not a failure). */
export class Interrupted extends Error {}

/** Sends the request (following allowlisted redirects); the output is `{status, body}`. `stop` cuts it short at shutdown. */
export async function sendHttpRequest(
  config: PipelineConfig,
  w: HttpRequestWith,
  ids: { execution: string; step: string },
  stop: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const first = allowedUrl(config, w.url);
  if (typeof first === 'string') throw new StepFailed(`The url ${first}.`);
  const headers = new Headers(w.headers ?? {});
  headers.set('X-Pipeline-Execution', ids.execution);
  headers.set('X-Pipeline-Step', ids.step);
  let body: string | undefined;
  if (w.body !== undefined && w.method !== 'GET' && w.method !== 'HEAD') {
    body = typeof w.body === 'string' ? w.body : JSON.stringify(w.body);
    if (!headers.has('Content-Type'))
      headers.set('Content-Type', typeof w.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json');
  }
  const signal = AbortSignal.any([AbortSignal.timeout(config.httpTimeoutMs), stop]);
  let url = first;
  let method: string = w.method;
  try {
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, { method, headers, body, redirect: 'manual', signal });
      const location = res.headers.get('location');
      if (!REDIRECTS.has(res.status) || location === null) {
        const text = await readBounded(res, PIPELINE_LIMITS.responseBytes);
        return { status: res.status, body: method === 'HEAD' ? null : parseBody(text) };
      }
      await res.body?.cancel().catch(() => undefined);
      if (hop >= PIPELINE_LIMITS.redirects)
        throw new StepFailed(`The request was redirected more than ${PIPELINE_LIMITS.redirects} times.`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new StepFailed('The answer redirected to a malformed URL.');
      }
      const allowed = allowedUrl(config, next.href);
      if (typeof allowed === 'string') throw new StepFailed(`The answer redirected to a URL that ${allowed}; it was not followed.`);
      // As browsers do: 303, and 301/302 after a POST, continue with a GET without body.
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        headers.delete('Content-Type');
      }
      url = allowed;
    }
  } catch (err) {
    if (err instanceof StepFailed) throw err;
    if (stop.aborted) throw new Interrupted('The process shut down during the request.');
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError') throw new StepFailed(`No answer within ${config.httpTimeoutMs} ms.`);
    throw new StepFailed(`The request failed: ${e.cause?.code ?? e.cause?.message ?? e.message}.`);
  }
}
