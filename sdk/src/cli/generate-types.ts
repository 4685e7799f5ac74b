/// <reference types="node" />
// `generate-types`: reads a workspace's content model through the management API, generates the
// TypeScript module (the same generator as `GET /admin/v1/workspaces/{workspace}/types.ts`) and
// writes it atomically. Nothing is written unless every step succeeded.
import { createAdminClient } from '../index.js';
import { generateTypes } from '../typegen/index.js';
import { writeFileAtomic } from './atomic-write.js';
import { CliError, fetchContentModel } from './fetch-model.js';

export interface GenerateTypesOptions {
  url: string;
  token: string;
  workspace: string;
  /** A file path, or `-` for standard output. */
  out: string;
  timeoutSeconds: number;
}

/** Why a request got no answer, in words (fetch reports it as `TypeError: fetch failed` with a cause). */
function unreachable(err: unknown, url: string, timeoutSeconds: number): CliError | undefined {
  if (!(err instanceof Error)) return undefined;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return new CliError(`no answer from ${url} within ${timeoutSeconds} s`);
  if (err instanceof SyntaxError) return new CliError(`${url} did not answer with JSON: is --url the Workspace API server?`);
  if (err.name !== 'TypeError') return undefined;
  const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
  return new CliError(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? err.message}`);
}

export async function generateTypesCommand(options: GenerateTypesOptions): Promise<{ text: string; summary: string }> {
  const admin = createAdminClient({
    baseUrl: options.url,
    adminToken: options.token,
    fetch: (request) => globalThis.fetch(new Request(request, { signal: AbortSignal.timeout(options.timeoutSeconds * 1000) })),
  });
  let model;
  try {
    model = await fetchContentModel(admin, options.url, options.workspace);
  } catch (err) {
    throw unreachable(err, options.url, options.timeoutSeconds) ?? err;
  }
  const text = await generateTypes(model);
  if (options.out !== '-') writeFileAtomic(options.out, text);
  const hash = /^\/\/ Content hash: (\S+)$/m.exec(text)?.[1] ?? '';
  const counts = `${model.contentTypes.length} content type${model.contentTypes.length === 1 ? '' : 's'}, ${model.contracts.length} contract${model.contracts.length === 1 ? '' : 's'}`;
  return { text, summary: `${options.out === '-' ? 'generated' : `wrote ${options.out}`}: workspace "${options.workspace}", ${counts} (${hash})` };
}
