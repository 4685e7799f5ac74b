// The image proxy (`IMAGE_PROXY_URL`, default `$BASE_URL/_image`): originals come only from this
// server's tokenized download (`IMAGE_ORIGIN_URL`), variants from the disk cache or sharp.
import path from 'node:path';
import { handlers } from '../http/handlers';
import { HttpError, notFound } from '../http/errors';
import { MIME, VariantCache, negotiate, render, type Transform } from './variants';

export const badGateway = () => new HttpError(502, { message: 'Bad Gateway' });
const caches = new Map<string, VariantCache>();

export const imageHandlers = handlers({
  async getImageVariant({ params, query, koa }, app) {
    const origin = `${app.config.imageOriginUrl}/api/v1/${encodeURIComponent(params.workspace)}/files/${params.file}/${encodeURIComponent(params.uuid)}/${encodeURIComponent(params.token)}`;
    const dir = path.join(app.config.dataDir, 'image-cache');
    const cache = caches.get(dir) ?? caches.set(dir, new VariantCache(dir)).get(dir)!;
    const t: Transform = { width: query.width, height: query.height, fit: query.fit, format: query.format, quality: query.quality };

    // The original must still exist (a deleted file's variants are never served).
    const head = await fetch(origin, { method: 'HEAD', redirect: 'manual' }).catch(() => undefined);
    if (!head) throw badGateway();
    if (head.status === 404 || head.status === 403) throw notFound();
    const originalMime = head.headers.get('x-original-content-type') ?? '';
    if (!originalMime.startsWith('image/')) throw notFound();
    const format = negotiate(t.format, koa.get('Accept'), originalMime);
    const key = `${params.workspace}/${params.file}/${params.uuid}/${params.token}|${t.width ?? ''}|${t.height ?? ''}|${t.fit ?? ''}|${t.quality ?? ''}`;
    const headers = { 'Content-Type': MIME[format], 'Cache-Control': 'public, max-age=86400', Vary: 'Accept', 'X-Content-Type-Options': 'nosniff' };

    const cached = await cache.get(key, format);
    if (cached) return { status: 200, body: cached.stream, headers: { ...headers, 'Content-Length': String(cached.size) } };

    const res = await fetch(origin, { redirect: 'follow' }).catch(() => undefined);
    if (!res) throw badGateway();
    if (res.status === 404) throw notFound();
    if (!res.ok) throw badGateway();
    let output: Buffer;
    try {
      output = await render(Buffer.from(await res.arrayBuffer()), t, format);
    } catch {
      throw badGateway();
    }
    await cache.put(key, format, output);
    return { status: 200, body: output, headers };
  },
});
