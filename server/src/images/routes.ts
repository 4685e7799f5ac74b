// The image proxy (`IMAGE_PROXY_URL`, default `$BASE_URL/_image`): originals come only from this
// server's tokenized download (`IMAGE_ORIGIN_URL`), variants from the disk cache or sharp.
import path from 'node:path';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { badGateway, notFound } from '../http/errors';
import { safeEqual } from '../lib/secrets';
import { MIME, VariantCache, negotiate, render, type Transform } from './variants';

interface Address {
  workspace: string;
  file: number;
  uuid: string;
  token: string;
}

/** Where originals come from: this server's storage (in process) or its tokenized download (own process). */
interface OriginalSource {
  /** The original's MIME type, or undefined when it is gone or the capability is wrong. */
  lookup(a: Address): Promise<string | undefined>;
  read(a: Address): Promise<Buffer>;
}

function storageSource(app: AppContext): OriginalSource {
  // The capability is compared in constant time here, not by the database's string equality.
  const find = async (a: Address) => {
    const file = (
      await app.db.query<{ mime_type: string; content_hash: string; uuid: string; token: string }>(
        `SELECT f.mime_type, f.content_hash, f.uuid::text AS uuid, f.token FROM files f JOIN workspaces w ON w.id = f.workspace_id
          WHERE w.name = $1 AND f.id = $2 AND f.user_id IS NULL AND NOT w.suspended AND NOT w.deleting`,
        [a.workspace, a.file],
      )
    ).rows[0];
    return file && safeEqual(file.uuid, a.uuid) && safeEqual(file.token, a.token) ? file : undefined;
  };
  return {
    lookup: async (a) => (await find(a))?.mime_type,
    async read(a) {
      const file = await find(a);
      if (!file) throw notFound();
      const stream = await app.storage.read(file.content_hash).catch(() => {
        throw notFound();
      });
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
  };
}

function httpSource(originUrl: string): OriginalSource {
  const url = (a: Address) =>
    `${originUrl}/api/v1/${encodeURIComponent(a.workspace)}/files/${a.file}/${encodeURIComponent(a.uuid)}/${encodeURIComponent(a.token)}`;
  return {
    async lookup(a) {
      const head = await fetch(url(a), { method: 'HEAD', redirect: 'manual' }).catch(() => undefined);
      if (!head) throw badGateway();
      if (head.status === 404 || head.status === 403) return undefined;
      return head.headers.get('x-original-content-type') ?? undefined;
    },
    async read(a) {
      const res = await fetch(url(a), { redirect: 'follow' }).catch(() => undefined);
      if (!res) throw badGateway();
      if (res.status === 404) throw notFound();
      if (!res.ok) throw badGateway();
      return Buffer.from(await res.arrayBuffer());
    },
  };
}

export const imageHandlers = handlers({
  async getImageVariant({ params, query, koa }, app) {
    // In the API server the proxy reads this server's storage; as its own process, the
    // tokenized download of IMAGE_ORIGIN_URL.
    const source = app.db ? storageSource(app) : httpSource(app.config.imageOriginUrl);
    // A directory per workspace: its deletion removes its variants (core/workspace-deletion.ts).
    const cache = new VariantCache(path.join(app.config.dataDir, 'image-cache', params.workspace));
    const t: Transform = { width: query.width, height: query.height, fit: query.fit, format: query.format, quality: query.quality };

    // The original must still exist: a deleted file's variants are never served.
    const originalMime = await source.lookup(params);
    if (!originalMime?.startsWith('image/')) throw notFound();
    const format = negotiate(t.format, koa.get('Accept'), originalMime);
    const key = `${params.workspace}/${params.file}/${params.uuid}/${params.token}|${t.width ?? ''}|${t.height ?? ''}|${t.fit ?? ''}|${t.quality ?? ''}`;
    const headers = {
      'Content-Type': MIME[format],
      'Cache-Control': 'public, max-age=86400',
      Vary: 'Accept',
      'X-Content-Type-Options': 'nosniff',
    };

    const cached = await cache.get(key, format);
    if (cached) return { status: 200, body: cached.stream, headers: { ...headers, 'Content-Length': String(cached.size) } };

    const original = await source.read(params);
    let output: Buffer;
    try {
      output = await render(original, t, format);
    } catch {
      throw badGateway();
    }
    await cache.put(key, format, output);
    return { status: 200, body: output, headers };
  },
});
