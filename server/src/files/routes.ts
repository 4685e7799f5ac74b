// The Files API: upload, details, delete, tokenized and temporary downloads; and the operators'
// user-owned uploads and usage.
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { HttpError, MESSAGES, badGateway, forbidden, invalid, notFound } from '../http/errors';
import { requireWorkspace } from '../http/lookup';
import { MULTIPART_LIMIT, stageMultipart } from './multipart';
import { BASE64_LIMIT, stageJsonUpload } from './json-upload';

/** Room for the multipart framing and the JSON around the base64 content. */
const MULTIPART_OVERHEAD = 1 << 20;
const JSON_OVERHEAD = 1 << 20;
import type { StagedFile } from './staging';
import { Readable } from 'node:stream';
import { attachmentDisposition } from '../lib/disposition';
import { safeEqual } from '../lib/secrets';
import { TRANSFORM_PARAMS, isImage, isValidSignature, presentFile, temporaryPath } from '../core/file-urls';
import type { File } from '../generated/prisma/client';
import { recordUploadUsage, requireOpenWorkspace, withCheckedUpload } from './service';
import { deleteFile, getFile, requireWorkspaceFile, storeFile, uploadFile } from '../core/operations/files';
import { asHttpError } from '../http/errors';
import { operationContext } from '../http/auth';

/** Reads an upload body of either documented kind into a staging file. */
function stageUpload(koa: Context, app: AppContext, kinds: ('multipart' | 'json')[]): Promise<StagedFile> {
  const hasBody = Number(koa.get('Content-Length') || 0) > 0 || koa.get('Transfer-Encoding') !== '';
  if (!hasBody) throw invalid('file', 'The :attribute field is required.');
  // A declared length over the limit is refused before anything is read.
  const declared = Number(koa.get('Content-Length') || 0);
  if (koa.is('multipart/form-data') && declared > MULTIPART_LIMIT + MULTIPART_OVERHEAD)
    throw new HttpError(413, { message: MESSAGES.tooLarge }, { Connection: 'close' });
  if (koa.is('application/json', '+json') && declared > Math.ceil(BASE64_LIMIT / 3) * 4 + JSON_OVERHEAD)
    throw invalid('file', 'The :attribute may not be greater than 153600 kilobytes.');
  if (kinds.includes('multipart') && koa.is('multipart/form-data')) return stageMultipart(koa.req, app.config.dataDir);
  if (kinds.includes('json') && koa.is('application/json', '+json')) return stageJsonUpload(koa.req, app.config.dataDir);
  throw new HttpError(415, {
    message: `Unsupported Media Type: expected ${kinds.includes('multipart') ? 'multipart/form-data or ' : ''}application/json.`,
  });
}

const jsonBytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

/** Presigned storage URLs of tokenized downloads, reused for 5 minutes (each valid 10). */
const redirects = new Map<string, { url: string; until: number }>();
const REDIRECT_TTL_MS = 5 * 60_000;
const REDIRECT_URL_SECONDS = 10 * 60;

/** A redirect to the file in storage, valid `seconds`; 404 when the content is missing. */
async function storageRedirect(app: AppContext, file: File, seconds: number, cacheKey?: string) {
  const cached = cacheKey ? redirects.get(cacheKey) : undefined;
  let url = cached && cached.until > Date.now() ? cached.url : undefined;
  if (!url) {
    if (!(await app.storage.exists(file.contentHash))) throw notFound();
    url = await app.storage.temporaryUrl!(file.contentHash, seconds, file.name);
    if (cacheKey) redirects.set(cacheKey, { url, until: Date.now() + REDIRECT_TTL_MS });
  }
  return { status: 307 as const, body: undefined, headers: { Location: url, 'Cache-Control': 'private, no-store' } };
}

/** The stored bytes, or 404 when the content is missing. */
const readStored = (app: AppContext, file: File) =>
  app.storage.read(file.contentHash).catch(() => {
    throw notFound();
  });

/** The workspace (404, or 403 when suspended) and file of a route without API key. */
async function openFile(app: AppContext, koa: Context, workspaceName: string, fileId: number) {
  const workspace = await requireOpenWorkspace(app, workspaceName);
  koa.state.workspaceId = workspace.id;
  return { workspace, file: await requireWorkspaceFile(app, workspace.id, fileId) };
}

/** 403 unless the request's query is the signed link of this file and kind, unexpired; returns its expiry. */
function requireSignature(app: AppContext, koa: Context, workspace: string, file: File, kind: 'temporary' | 'temporary-image'): number {
  const query = new URLSearchParams(koa.querystring);
  const allowed = kind === 'temporary-image' ? TRANSFORM_PARAMS : [];
  if (!isValidSignature(app.config.appKey, temporaryPath(workspace, file.id, kind), query, app.clock.now(), file.uuid, allowed))
    throw forbidden();
  return Number(query.get('expires'));
}

/** The stored bytes with download-safe headers, or 404 when the content is missing. */
async function fileStream(koa: Context, app: AppContext, file: File, cacheControl: string) {
  const stream = await readStored(app, file);
  koa.set({
    'Content-Type': 'application/octet-stream',
    'Content-Disposition': attachmentDisposition(file.name),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': cacheControl,
    // The stored type, for the image proxy (the body itself is always sent as octet-stream).
    'X-Original-Content-Type': file.mimeType,
  });
  koa.state.responseSize = Number(file.size);
  return { status: 200 as const, body: stream, headers: { 'Content-Length': String(file.size) } };
}

export const fileHandlers = handlers({
  async uploadFile({ principal, koa }, app) {
    const cx = operationContext(app, principal);
    koa.state.uploadSize = 0;
    try {
      const staged = await stageUpload(koa, app, ['multipart', 'json']);
      const { file, body } = await withCheckedUpload(staged, (upload) => uploadFile(cx, upload));
      koa.state.uploadSize = Number(file.size);
      await recordUploadUsage(app, cx.workspace.id, Number(file.size) + jsonBytes(body));
      return { status: 201, body };
    } catch (thrown) {
      // A rejected upload counts only its response bytes.
      const err = asHttpError(thrown);
      if (err instanceof HttpError) await recordUploadUsage(app, cx.workspace.id, jsonBytes(err.body));
      throw thrown;
    }
  },

  async getFile({ params, query, principal, koa }, app) {
    const body = await getFile(operationContext(app, principal), params.file, query.expires_in ?? 600);
    koa.set('Cache-Control', 'private, no-store');
    return { status: 200, body };
  },

  async deleteFile({ params, principal }, app) {
    await deleteFile(operationContext(app, principal), params.file);
    return { status: 204 };
  },

  async downloadFile({ params, koa }, app) {
    const workspace = await requireOpenWorkspace(app, params.workspace);
    koa.state.workspaceId = workspace.id;
    const file = await requireWorkspaceFile(app, workspace.id, params.file);
    // Compared in constant time. Counted once it matches, under the file: a counter per token
    // sent would keep the secret and add a row for every guess.
    if (!safeEqual(file.uuid, params.uuid) || !safeEqual(file.token, params.token)) throw notFound();
    await app.rateLimits.consume('token-downloads', `file:${file.id}`);
    if (app.storage.supportsTemporaryUrls) return storageRedirect(app, file, REDIRECT_URL_SECONDS, `${file.id}:${file.contentHash}`);
    return fileStream(koa, app, file, 'private, no-cache');
  },

  async downloadTemporaryFile({ params, koa }, app) {
    const { workspace, file } = await openFile(app, koa, params.workspace, params.file);
    const expires = requireSignature(app, koa, workspace.name, file, 'temporary');
    await app.rateLimits.consume('files', `file:${workspace.id}:${file.id}`);
    if (app.storage.supportsTemporaryUrls) {
      // The storage URL expires when the signed link does: no new lifetime is granted.
      return storageRedirect(app, file, expires - app.clock.now().getTime() / 1000);
    }
    return fileStream(koa, app, file, 'private, no-store');
  },

  async getTemporaryImage({ params, query, koa }, app) {
    const { workspace, file } = await openFile(app, koa, params.workspace, params.file);
    if (!isImage(file.mimeType)) throw notFound();
    requireSignature(app, koa, workspace.name, file, 'temporary-image');
    await app.rateLimits.consume('files', `file:${workspace.id}:${file.id}`);
    const transforms = TRANSFORM_PARAMS.filter((p) => query[p] !== undefined);
    const inline = { 'Cache-Control': 'private, no-store', 'Content-Disposition': 'inline', 'X-Content-Type-Options': 'nosniff' };
    if (!app.config.imageProxyUrl) {
      // Local mode: the original, without transforms (they need the image proxy).
      if (transforms.length) throw invalid(transforms[0], 'Image transforms need the image proxy (IMAGE_PROXY_URL).');
      const stream = await readStored(app, file);
      return { status: 200, body: stream, headers: { ...inline, 'Content-Type': file.mimeType, 'Content-Length': String(file.size) } };
    }
    const url = new URL(
      `${app.config.imageProxyFetchUrl}/api/v1/${encodeURIComponent(workspace.name)}/files/${file.id}/${file.uuid}/${file.token}/${encodeURIComponent(file.name)}`,
    );
    for (const p of transforms) url.searchParams.set(p, String(query[p]));
    const res = await fetch(url, {
      headers: { Accept: koa.get('Accept') || 'image/*' },
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    }).catch(() => undefined);
    if (!res) throw badGateway();
    if (res.status === 404) throw notFound();
    const type = res.headers.get('content-type') ?? '';
    if (res.status !== 200 || !type.startsWith('image/') || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      throw badGateway();
    }
    const headers: Record<string, string> = { ...inline, 'Content-Type': type };
    const length = res.headers.get('content-length');
    if (length) headers['Content-Length'] = length;
    return { status: 200, body: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), headers };
  },

  async createUserFile({ params, koa }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const user = await app.db.prisma.user.findFirst({ where: { id: params.id, workspaceId: workspace.id } });
    if (!user) throw notFound();
    const staged = await stageUpload(koa, app, ['json']);
    const file = await withCheckedUpload(staged, (upload) => storeFile(app, workspace.id, upload, user.id));
    return { status: 201, body: presentFile(app.config, workspace.name, file, app.clock.now()) };
  },

  async getUsage({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const usage = await app.db.prisma.workspaceUsage.findUnique({ where: { workspaceId: workspace.id } });
    return { status: 200, body: { bandwidth_bytes: Number(usage?.bandwidthBytes ?? 0), storage_bytes: Number(usage?.storageBytes ?? 0) } };
  },
});
