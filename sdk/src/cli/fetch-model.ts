// Reads a workspace's content model through the management API: the workspace (so that an
// unknown name or a refused token is told apart from an empty model), its buckets with their
// content types, and its contracts.
import type { AdminClient } from '../index.js';
import type { ContentModel, ContentTypeModel } from '../typegen/index.js';

/** A failure the CLI reports as its message, with a non-zero exit. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

const messageOf = (body: unknown) =>
  typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string'
    ? (body as { message: string }).message
    : undefined;

/** A 422's field errors as lines (`  path: message`), or none. */
/** The refusal of a token that is not the server's admin token. */
export const tokenRefused = () => new CliError(`the server refused the token (403 Forbidden): --token must be the server's ADMIN_TOKEN`);

/** A 422 body's field errors, a line each. */
export function errorLines(body: unknown): string {
  const errors = typeof body === 'object' && body !== null ? (body as { errors?: unknown }).errors : undefined;
  if (typeof errors !== 'object' || errors === null) return '';
  return Object.entries(errors as Record<string, unknown>)
    .flatMap(([path, messages]) => (Array.isArray(messages) ? messages.map((m) => `\n  ${path}: ${String(m)}`) : []))
    .join('');
}

/**
 * The answer's data, or a CliError that says what the status means for this command: `doing`
 * what (default `reading <what>`), with a 422's field errors one per line.
 */
export function dataOf<T>(answer: Answer<T>, what: string, workspace: string, doing = `reading ${what}`): T {
  const { status } = answer.response;
  if (answer.data !== undefined && status >= 200 && status < 300) return answer.data;
  const detail = messageOf(answer.error);
  // Our API answers these two with its JSON error bodies; anything else is another server.
  if (status === 403 && detail === 'Forbidden') throw tokenRefused();
  if (status === 404 && detail === 'Not Found') throw new CliError(`workspace "${workspace}" not found (404 ${doing})`);
  if (status === 403 || status === 404)
    throw new CliError(`${answer.response.url} answered ${status} without the API's error body: is --url the Workspace API server?`);
  throw new CliError(
    `${doing} failed: the server answered ${status}${detail ? ` (${detail})` : ''}${status === 422 ? errorLines(answer.error) : ''}`,
  );
}

/** Whether `baseUrl` serves the Workspace API: its `GET /health` answers JSON with a `status`. */
async function servesTheApi(baseUrl: string): Promise<boolean> {
  try {
    const res = await globalThis.fetch(`${baseUrl.replace(/\/+$/, '')}/health`, { signal: AbortSignal.timeout(10_000) });
    const body = (await res.json()) as { status?: unknown };
    return typeof body.status === 'string';
  } catch {
    return false;
  }
}

/** Checks that the workspace exists (an unknown name, a refused token or a wrong --url each told apart). */
export async function requireWorkspace(admin: AdminClient, baseUrl: string, workspace: string): Promise<void> {
  const found = await admin.GET('/admin/v1/workspaces/{workspace}', { params: { path: { workspace } } });
  // Our API answers an unknown route with the same 404 as an unknown workspace: tell them apart.
  if (found.response.status === 404 && !(await servesTheApi(baseUrl))) {
    throw new CliError(`${baseUrl} does not serve the Workspace API (no GET /health there): check --url`);
  }
  dataOf(found, 'the workspace', workspace);
}

export async function fetchContentModel(admin: AdminClient, baseUrl: string, workspace: string): Promise<ContentModel> {
  const path = { workspace };
  await requireWorkspace(admin, baseUrl, workspace);
  const [buckets, contracts] = await Promise.all([
    admin.GET('/admin/v1/workspaces/{workspace}/buckets', { params: { path } }),
    admin.GET('/admin/v1/workspaces/{workspace}/contracts', { params: { path } }),
  ]);
  const bucketNames = dataOf(buckets, 'the buckets', workspace).data.map((b) => b.name);
  const typeLists = await Promise.all(
    bucketNames.map(
      async (bucket) =>
        dataOf(
          await admin.GET('/admin/v1/workspaces/{workspace}/buckets/{bucket}/content-types', { params: { path: { workspace, bucket } } }),
          `the content types of bucket "${bucket}"`,
          workspace,
        ).data,
    ),
  );
  const contentTypes: ContentTypeModel[] = typeLists.flat();
  return { workspace, contentTypes, contracts: dataOf(contracts, 'the contracts', workspace).data };
}
