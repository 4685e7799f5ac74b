// The image proxy and temporary inline images.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace } from './support/fixtures';
import { startReceiver } from './support/receiver';

const ALL = ['create-file', 'view-file', 'delete-file'];
const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

async function jpeg(width = 1200, height = 800): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .jpeg()
    .toBuffer();
}

async function uploadImage(s: TestServer) {
  const ctx = await setupWorkspace(s.admin, { permissions: ALL });
  const res = await client(s.url, ctx.key.key).post(`/api/v1/${ctx.workspace.name}/files`, {
    file: { name: 'photo.jpg', content: (await jpeg()).toString('base64') },
  });
  expect(res.status).toBe(201);
  return { ...ctx, file: res.body };
}

async function fetchImage(url: string, accept?: string) {
  const res = await fetch(url, { headers: accept ? { Accept: accept } : {} });
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body };
}

describe('with the built-in image proxy', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ TEST_CLOCK: '1' });
  });
  afterAll(() => s.close());

  it('gives images a proxy URL and a temporary image URL', async () => {
    const { file, workspace } = await uploadImage(s);
    expect(file.mime_type).toBe('image/jpeg');
    expect(file.image_url).toBe(
      `${s.url}/_image/api/v1/${workspace.name}/files/${file.id}/${file.download_url.split('/').slice(-2).join('/')}/photo.jpg`,
    );
    expect(file.temporary_image_url).toMatch(new RegExp(`^${s.url}/api/v1/${workspace.name}/files/${file.id}/temporary-image\\?uuid=`));
  });

  it('resizes and converts, caches the variant, and negotiates auto formats', async () => {
    const { file } = await uploadImage(s);
    const url = `${file.image_url}?width=400&format=webp`;
    const first = await fetchImage(url);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/webp');
    const meta = await sharp(first.body).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 400, 267]);
    const cacheDir = path.join(s.db.dataDir, 'image-cache');
    const count = () => readdirSync(cacheDir, { recursive: true }).filter((f) => String(f).endsWith('.webp')).length;
    const cached = count();
    const second = await fetchImage(url);
    expect(second.body.equals(first.body)).toBe(true);
    expect(count()).toBe(cached);

    expect((await fetchImage(`${file.image_url}?width=100`, 'image/avif,image/webp,*/*')).headers.get('content-type')).toBe('image/avif');
    expect((await fetchImage(`${file.image_url}?width=100`, 'image/webp,*/*')).headers.get('content-type')).toBe('image/webp');
    expect((await fetchImage(`${file.image_url}?width=100`)).headers.get('content-type')).toBe('image/jpeg');
    const covered = await sharp((await fetchImage(`${file.image_url}?width=100&height=100&fit=cover&format=png`)).body).metadata();
    expect([covered.format, covered.width, covered.height]).toEqual(['png', 100, 100]);
    const padded = await sharp((await fetchImage(`${file.image_url}?width=100&height=100&fit=pad&format=png`)).body).metadata();
    expect([padded.width, padded.height]).toEqual([100, 100]);
    const notEnlarged = await sharp((await fetchImage(`${file.image_url}?width=3000&fit=scale-down&format=jpeg`)).body).metadata();
    expect(notEnlarged.width).toBe(1200);
  });

  it.each(['width=0', 'width=4097', 'height=-1', 'fit=stretch', 'format=gif', 'quality=0', 'quality=101', 'width=abc'])(
    'rejects %s with 422',
    async (q) => {
      const { file } = await uploadImage(s);
      const res = await request(s.url, 'GET', `${pathOf(file.image_url)}?${q}`);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual([q.split('=')[0]]);
    },
  );

  it('serves nothing of a deleted file, cached variants included', async () => {
    const { file, key, workspace } = await uploadImage(s);
    expect((await fetchImage(`${file.image_url}?width=50`)).status).toBe(200);
    await client(s.url, key.key).delete(`/api/v1/${workspace.name}/files/${file.id}`);
    const res = await request(s.url, 'GET', `${pathOf(file.image_url)}?width=50`);
    expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
    const wrongToken = await request(s.url, 'GET', pathOf(file.image_url).replace(/\/[^/]+\/photo\.jpg$/, '/nope/photo.jpg'));
    expect(wrongToken.status).toBe(404);
  });

  it('streams the temporary image inline through the proxy, with transforms, and never redirects', async () => {
    const { file } = await uploadImage(s);
    const res = await fetchImage(`${file.temporary_image_url}&width=120&format=webp`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('content-disposition')).toBe('inline');
    expect((await sharp(res.body).metadata()).width).toBe(120);
    const negotiated = await fetchImage(`${file.temporary_image_url}&width=120`, 'image/avif,*/*');
    expect(negotiated.headers.get('content-type')).toBe('image/avif');
  });

  it('refuses changed or expired temporary image links with 403 and bad transforms with 422', async () => {
    const { file } = await uploadImage(s);
    const p = pathOf(file.temporary_image_url);
    for (const bad of [
      `${p}&x=1`,
      `${p}&expires_in=60`,
      p.replace('/temporary-image?', '/temporary?'),
      p.replace(/signature=[0-9a-f]{2}/, 'signature=zz'),
    ]) {
      const res = await request(s.url, 'GET', bad);
      expect([bad, res.status]).toEqual([bad, 403]);
    }
    const temporary = pathOf(file.temporary_url).replace('/temporary?', '/temporary-image?');
    expect((await request(s.url, 'GET', temporary)).status).toBe(403);
    expect((await request(s.url, 'GET', `${p}&width=0`)).status).toBe(422);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 601 });
    expect((await request(s.url, 'GET', `${p}&width=10`)).status).toBe(403);
    await s.admin.delete('/admin/v1/clock');
  });

  it('404s the temporary image of a non-image file', async () => {
    const ctx = await setupWorkspace(s.admin, { permissions: ALL });
    const res = await client(s.url, ctx.key.key).post(`/api/v1/${ctx.workspace.name}/files`, {
      file: { name: 'a.txt', content: Buffer.from('x').toString('base64') },
    });
    const forged = pathOf(res.body.temporary_url).replace('/temporary?', '/temporary-image?');
    expect((await request(s.url, 'GET', forged)).status).toBe(404);
  });
});

describe('with a broken image proxy', () => {
  it.each([
    ['a proxy that is down', async () => ({ url: 'http://127.0.0.1:9', close: async () => undefined })],
    ['a proxy that answers text', async () => startReceiver(() => 200)],
    ['a proxy that redirects', async () => startReceiver(() => 302)],
    ['a proxy that fails', async () => startReceiver(() => 500)],
  ])('answers 502 with a generic body for %s', async (_label, makeProxy) => {
    const proxy = await makeProxy();
    const s = await startTestServer({ IMAGE_PROXY_URL: proxy.url.replace(/\/hook$/, '') });
    try {
      const { file } = await uploadImage(s);
      const res = await request(s.url, 'GET', pathOf(file.temporary_image_url));
      expect([res.status, res.body]).toEqual([502, { message: 'Bad Gateway' }]);
    } finally {
      await s.close();
      await proxy.close();
    }
  });
});

describe('in local mode (IMAGE_PROXY_URL empty)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ IMAGE_PROXY_URL: '' });
  });
  afterAll(() => s.close());

  it('points image URLs to the original and serves temporary images untransformed', async () => {
    const { file } = await uploadImage(s);
    expect(file.image_url).toBe(file.download_url);
    const res = await fetchImage(file.temporary_image_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    expect((await sharp(res.body).metadata()).width).toBe(1200);
    const transformed = await request(s.url, 'GET', `${pathOf(file.temporary_image_url)}&width=100`);
    expect(transformed.status).toBe(422);
    expect(existsSync(path.join(s.db.dataDir, 'image-cache'))).toBe(false);
  });
});

describe('behind a reverse proxy (BASE_URL not reachable from the server)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ BASE_URL: 'https://media.example.invalid' });
  });
  afterAll(() => s.close());

  it('publishes public URLs and still fetches temporary images through the built-in proxy on loopback', async () => {
    const { file } = await uploadImage(s);
    expect(file.image_url).toMatch(/^https:\/\/media\.example\.invalid\/_image\/api\/v1\//);
    expect(file.temporary_image_url).toMatch(/^https:\/\/media\.example\.invalid\/api\/v1\//);
    const res = await fetchImage(`${s.url}${pathOf(file.temporary_image_url)}&width=40&format=png`);
    expect(res.status).toBe(200);
    expect((await sharp(res.body).metadata()).width).toBe(40);
  });
});
