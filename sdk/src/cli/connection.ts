/// <reference types="node" />
// What every command shares: the admin client on --url and --token with a per-answer timeout, a
// request's failure to get an answer in words, and an answer's status as the CLI's message.
import { createAdminClient, type AdminClient } from '../index.js';
import { CliError } from './fetch-model.js';

export interface Connection {
  url: string;
  token: string;
  workspace: string;
  timeoutSeconds: number;
}

export const adminClientOf = (c: Connection): AdminClient =>
  createAdminClient({
    baseUrl: c.url,
    adminToken: c.token,
    fetch: (request) => globalThis.fetch(new Request(request, { signal: AbortSignal.timeout(c.timeoutSeconds * 1000) })),
  });

/** Why a request got no answer, in words (fetch reports it as `TypeError: fetch failed` with a cause). */
function unreachable(err: unknown, url: string, timeoutSeconds: number): CliError | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return new CliError(`no answer from ${url} within ${timeoutSeconds} s`);
  if (err instanceof SyntaxError) return new CliError(`${url} did not answer with JSON: is --url the Workspace API server?`);
  if (err.name !== 'TypeError') return undefined;
  const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
  return new CliError(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? err.message}`);
}

/** Runs `work` against the server; a request without an answer becomes a CliError that says why. */
export async function talking<T>(c: Connection, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw unreachable(err, c.url, c.timeoutSeconds) ?? err;
  }
}
