// The `s3` storage driver against a real S3-compatible server on loopback (s3rver).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, freePort, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace } from './support/fixtures';

// s3rver ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (o: object) => { run(): Promise<unknown>; close(): Promise<void> };

let s3: InstanceType<typeof S3rver>;
let s3Dir: string;
let s3Url: string;
let s: TestServer;

beforeAll(async () => {
  s3Dir = mkdtempSync(path.join(tmpdir(), 'wsapi-s3rver-'));
  const port = await freePort();
  s3Url = `http://127.0.0.1:${port}`;
  s3 = new S3rver({ port, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'files' }] });
  await s3.run();
  s = await startTestServer({
    TEST_CLOCK: '1',
    STORAGE_DRIVER: 's3',
    S3_BUCKET: 'files',
    S3_ENDPOINT: s3Url,
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    STORAGE_PRUNE_MIN_AGE_SECONDS: '0',
  });
});
afterAll(async () => {
  await s.close();
  await s3.close();
  rmSync(s3Dir, { recursive: true, force: true });
});
afterEach(() => s.admin.delete('/admin/v1/clock'));

const ALL = ['create-file', 'view-file', 'delete-file'];
const b64 = (t: string | Buffer) => Buffer.from(t).toString('base64');
const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

async function uploaded(content = 'stored in s3') {
  const ctx = await setupWorkspace(s.admin, { permissions: ALL });
  const res = await client(s.url, ctx.key.key).post(`/api/v1/${ctx.workspace.name}/files`, {
    file: { name: 'report.txt', content: b64(content) },
  });
  expect(res.status).toBe(201);
  return { ...ctx, file: res.body };
}

it('redirects the tokenized download to a storage URL signed for 10 minutes, reused for 5', async () => {
  const { file } = await uploaded();
  const res = await request(s.url, 'GET', pathOf(file.download_url));
  expect(res.status).toBe(307);
  expect(res.headers.get('cache-control')).toBe('private, no-store');
  const location = res.headers.get('location')!;
  expect(location.startsWith(`${s3Url}/files/content/`)).toBe(true);
  expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('600');
  expect(await (await fetch(location)).text()).toBe('stored in s3');
  const again = await request(s.url, 'GET', pathOf(file.download_url));
  expect(again.headers.get('location')).toBe(location);
});

it('redirects the temporary download with 307 to a URL that expires with the link', async () => {
  const { file, key, workspace } = await uploaded();
  const short = await client(s.url, key.key).get(`/api/v1/${workspace.name}/files/${file.id}?expires_in=60`);
  const res = await request(s.url, 'GET', pathOf(short.body.temporary_url));
  expect(res.status).toBe(307);
  expect(res.headers.get('cache-control')).toBe('private, no-store');
  const location = res.headers.get('location')!;
  const expires = Number(new URL(location).searchParams.get('X-Amz-Expires'));
  expect(expires).toBeGreaterThan(55);
  expect(expires).toBeLessThanOrEqual(60);
  const download = await fetch(location);
  expect(await download.text()).toBe('stored in s3');
  expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="report.txt"/);
  await s.admin.post('/admin/v1/clock', { advance_seconds: 30 });
  const later = await request(s.url, 'GET', pathOf(short.body.temporary_url));
  expect(Number(new URL(later.headers.get('location')!).searchParams.get('X-Amz-Expires'))).toBeLessThanOrEqual(30);
});

it('stores identical content once, keeps it while used, and prunes it after the last delete', async () => {
  const a = await uploaded('shared in s3');
  const b = await client(s.url, a.key.key).post(`/api/v1/${a.workspace.name}/files`, {
    file: { name: 'copy.txt', content: b64('shared in s3') },
  });
  const api = client(s.url, a.key.key);
  await api.delete(`/api/v1/${a.workspace.name}/files/${a.file.id}`);
  expect((await request(s.url, 'GET', pathOf(a.file.download_url))).status).toBe(404);
  const stillThere = await request(s.url, 'GET', pathOf(b.body.download_url));
  expect(await (await fetch(stillThere.headers.get('location')!)).text()).toBe('shared in s3');
  await api.delete(`/api/v1/${a.workspace.name}/files/${b.body.id}`);
  const run = await s.admin.post('/admin/v1/tasks/files:prune-storage');
  expect(run.body.processed).toBeGreaterThanOrEqual(1);
  expect((await fetch(stillThere.headers.get('location')!)).status).toBe(404);
});

it('serves image variants from S3 originals', async () => {
  const sharp = (await import('sharp')).default;
  const ctx = await setupWorkspace(s.admin, { permissions: ALL });
  const png = await sharp({ create: { width: 200, height: 100, channels: 3, background: '#123456' } })
    .png()
    .toBuffer();
  const up = await client(s.url, ctx.key.key).post(`/api/v1/${ctx.workspace.name}/files`, { file: { name: 'a.png', content: b64(png) } });
  const res = await fetch(`${up.body.temporary_image_url}&width=50&format=webp`);
  expect(res.status).toBe(200);
  expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(50);
});
