// The Files API: uploads (multipart and base64), details, tokenized and temporary downloads,
// deletion, installers, usage, and the bad input of each.
import { readdirSync, existsSync, rmSync, statSync, utimesSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace, createWorkspace, TIMESTAMP } from './support/fixtures';
import { startReceiver, eventually, type Receiver } from './support/receiver';
import { checkResponse } from './support/contract';
import { createHash } from 'node:crypto';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ TEST_CLOCK: '1', SCHEDULER_TICK_MS: '100' });
});
afterEach(() => s.admin.delete('/admin/v1/clock'));
afterAll(() => s.close());

const ALL = ['create-file', 'view-file', 'delete-file'];
const files = (ws: string) => `/api/v1/${ws}/files`;

function multipart(parts: { name: string; filename?: string; type?: string; content: Buffer | string }[]) {
  const form = new FormData();
  for (const p of parts) {
    if (p.filename === undefined) form.append(p.name, String(p.content));
    else form.append(p.name, new Blob([p.content as BlobPart], { type: p.type ?? 'application/octet-stream' }), p.filename);
  }
  return form;
}

async function upload(url: string, key: string, ws: string, form: FormData) {
  const res = await fetch(`${url}${files(ws)}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, Accept: 'application/json' },
    body: form,
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  checkResponse('POST', `${url}${files(ws)}`, res.status, res.headers.get('content-type'), body);
  return { status: res.status, body, headers: res.headers };
}

/** A ZIP with one stored entry (an APK when the entry is `classes.dex`). */
function zipOf(name: string, data: Buffer): Buffer {
  const n = Buffer.from(name);
  const crc = crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(n.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(n.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + n.length, 12);
  end.writeUInt32LE(local.length + n.length + data.length, 16);
  return Buffer.concat([local, n, data, central, n, end]);
}

const uploadJson = (key: string, ws: string, file: object) => client(s.url, key).post(files(ws), { file });
const b64 = (content: string | Buffer) => Buffer.from(content).toString('base64');

function storedObjects(): string[] {
  const root = path.join(s.db.dataDir, 'files', 'content');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}
const stagingLeft = () => {
  const dir = path.join(s.db.dataDir, 'tmp', 'uploads');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('upload', () => {
  it('stores a multipart upload and returns the file object with its URLs', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const res = await upload(
      s.url,
      key.key,
      workspace.name,
      multipart([{ name: 'file', filename: 'notes.txt', type: 'text/plain', content: 'hello world' }]),
    );
    expect(res.status).toBe(201);
    const f = res.body;
    expect(f).toEqual({
      id: expect.any(Number),
      name: 'notes.txt',
      mime_type: 'text/plain',
      size: 11,
      tags: [],
      download_url: expect.stringMatching(new RegExp(`^${s.url}/api/v1/${workspace.name}/files/`)),
      temporary_url: expect.any(String),
      temporary_url_expires_at: expect.stringMatching(TIMESTAMP),
      image_url: null,
      temporary_image_url: null,
      temporary_image_url_expires_at: null,
      alt_text: '',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(f.download_url).toMatch(new RegExp(`/api/v1/${workspace.name}/files/${f.id}/[0-9a-f-]{36}/[A-Za-z0-9_-]+$`));
    expect(f.temporary_url).toMatch(
      new RegExp(`/api/v1/${workspace.name}/files/${f.id}/temporary\\?uuid=[0-9a-f-]{36}&expires=\\d+&signature=[0-9a-f]{64}$`),
    );
    const clock = new Date((await s.admin.get('/admin/v1/clock')).body.now).getTime();
    expect(Math.abs(new Date(f.temporary_url_expires_at).getTime() - clock - 600_000)).toBeLessThan(2_000);
    expect(stagingLeft()).toEqual([]);
  });

  it('stores a base64 JSON upload, counting decoded bytes, and strips paths from names', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const res = await uploadJson(key.key, workspace.name, { name: '../../etc/passwd', type: 'text/plain', content: b64('root:x:0:0') });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ name: 'passwd', size: 10, mime_type: 'text/plain' });
    const logs = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?limit=1`);
    expect(logs.body.data[0]).toMatchObject({ method: 'POST', status: 201, upload_size: 10, response_size: Buffer.byteLength(res.text) });
  });

  it('detects the type from the content, not the declared one', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
      'hex',
    );
    const res = await uploadJson(key.key, workspace.name, { name: 'pixel.bin', type: 'text/plain', content: b64(png) });
    expect(res.body.mime_type).toBe('image/png');
    expect(res.body.image_url).toEqual(expect.any(String));
    expect(res.body.temporary_image_url).toMatch(/\/temporary-image\?uuid=/);
  });

  it('stores identical content once', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const before = storedObjects().length;
    const content = b64(`same bytes ${workspace.name}`);
    await uploadJson(key.key, workspace.name, { name: 'a.txt', content });
    await uploadJson(key.key, workspace.name, { name: 'b.txt', content });
    expect(storedObjects().length).toBe(before + 1);
  });

  describe('bad input stores nothing', () => {
    let ctx: Awaited<ReturnType<typeof setupWorkspace>>;
    beforeAll(async () => {
      ctx = await setupWorkspace(s.admin, { permissions: ALL });
    });
    afterEach(async () => {
      const db = s.server.app.db;
      const ws = await db.prisma.workspace.findUniqueOrThrow({ where: { name: ctx.workspace.name } });
      expect(await db.prisma.file.count({ where: { workspaceId: ws.id } })).toBe(0);
      expect(stagingLeft()).toEqual([]);
    });

    it.each([
      ['no file part', [{ name: 'other', content: 'x' }]],
      ['a file in another part', [{ name: 'upload', filename: 'a.txt', content: 'x' }]],
      [
        'two files',
        [
          { name: 'file', filename: 'a.txt', content: 'x' },
          { name: 'file', filename: 'b.txt', content: 'y' },
        ],
      ],
      ['an empty file', [{ name: 'file', filename: 'a.txt', content: '' }]],
      ['a disguised .exe', [{ name: 'file', filename: 'setup.exe', type: 'application/x-msdownload', content: 'not really' }]],
      [
        'a disguised .apk',
        [{ name: 'file', filename: 'app.apk', type: 'application/vnd.android.package-archive', content: 'PK not really' }],
      ],
      ['a disguised .dmg', [{ name: 'file', filename: 'disk.dmg', content: deflateSync(Buffer.alloc(4096)) }]],
    ])('multipart with %s: 422 on file', async (_label, parts) => {
      const res = await upload(s.url, ctx.key.key, ctx.workspace.name, multipart(parts as never));
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['file']);
    });

    it.each([
      ['invalid base64', { name: 'a.txt', content: 'not base64!' }, 'file'],
      ['bad padding', { name: 'a.txt', content: 'aGVsbG8=aGVs' }, 'file'],
      ['empty content', { name: 'a.txt', content: '' }, 'file'],
      ['no content', { name: 'a.txt' }, 'file.content'],
      ['no name', { content: b64('x') }, 'file.name'],
      ['a number as content', { name: 'a.txt', content: 5 }, 'file.content'],
    ])('JSON with %s: 422 on %s', async (_label, file, key) => {
      const res = await uploadJson(ctx.key.key, ctx.workspace.name, file);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual([key]);
    });

    it('answers a JSON body without a file object, malformed JSON, other types and no body', async () => {
      const api = client(s.url, ctx.key.key);
      expect((await api.post(files(ctx.workspace.name), { other: 1 })).status).toBe(422);
      expect((await api.post(files(ctx.workspace.name), { file: 'x' })).body.errors).toHaveProperty('file');
      const malformed = await api.post(files(ctx.workspace.name), undefined, {
        raw: '{"file": {"name": "a',
        headers: { 'Content-Type': 'application/json' },
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({ message: 'Malformed JSON body.' });
      const text = await api.post(files(ctx.workspace.name), undefined, { raw: 'hello', headers: { 'Content-Type': 'text/plain' } });
      expect(text.status).toBe(415);
      const none = await api.post(files(ctx.workspace.name));
      expect(none.status).toBe(422);
      expect(none.body.errors).toEqual({ file: ['The file field is required.'] });
    });

    it('refuses a multipart body declared over 250 MiB with 413 before reading it', async () => {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${s.url}${files(ctx.workspace.name)}`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${ctx.key.key}`,
            'Content-Type': 'multipart/form-data; boundary=x',
            'Content-Length': String(262_144_000 + 2 * 1024 * 1024),
          },
        });
        req.on('response', (r) => {
          let body = '';
          r.on('data', (d) => (body += d));
          r.on('end', () => resolve({ status: r.statusCode!, body }));
        });
        req.on('error', reject);
        req.write('--x\r\n');
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toEqual({ message: 'The request body is too large.' });
    });

    it('refuses a base64 body declared over 150 MiB decoded with 422 on file', async () => {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${s.url}${files(ctx.workspace.name)}`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${ctx.key.key}`,
            'Content-Type': 'application/json',
            'Content-Length': String(220 * 1024 * 1024),
          },
        });
        req.on('response', (r) => {
          let body = '';
          r.on('data', (d) => (body += d));
          r.on('end', () => resolve({ status: r.statusCode!, body }));
        });
        req.on('error', reject);
        req.write('{"file":');
      });
      expect(res.status).toBe(422);
      expect(Object.keys(JSON.parse(res.body).errors)).toEqual(['file']);
    });
  });

  it('accepts an APK (a ZIP with classes.dex) and refuses a plain ZIP named .apk', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const apk = await uploadJson(key.key, workspace.name, {
      name: 'app.apk',
      content: b64(zipOf('classes.dex', Buffer.from('dex\n035\0' + 'x'.repeat(100)))),
    });
    expect(apk.status).toBe(201);
    expect(apk.body.mime_type).toBe('application/vnd.android.package-archive');
    const zip = await uploadJson(key.key, workspace.name, { name: 'app.apk', content: b64(zipOf('readme.txt', Buffer.from('hello'))) });
    expect(zip.status).toBe(422);
    expect(zip.body.errors).toEqual({ file: ['The file is not an Android package.'] });
  });

  it('leaves nothing behind when the client aborts mid-upload', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    await new Promise<void>((resolve) => {
      const req = http.request(`${s.url}${files(workspace.name)}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key.key}`,
          'Content-Type': 'multipart/form-data; boundary=x',
          'Content-Length': String(10 * 1024 * 1024),
        },
      });
      req.on('error', () => resolve());
      req.write('--x\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n');
      req.write(Buffer.alloc(256 * 1024, 1));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    await eventually(async () => stagingLeft().length === 0);
    const ws = await s.server.app.db.prisma.workspace.findUniqueOrThrow({ where: { name: workspace.name } });
    expect(await s.server.app.db.prisma.file.count({ where: { workspaceId: ws.id } })).toBe(0);
  });

  it('accepts real installers: an MZ executable and a compressed disk image with its koly trailer', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(1022)]);
    const dmgBody = deflateSync(Buffer.alloc(8192, 7));
    const trailer = Buffer.alloc(512);
    trailer.write('koly', 0, 'latin1');
    const dmg = Buffer.concat([dmgBody, trailer]);
    const e = await upload(s.url, key.key, workspace.name, multipart([{ name: 'file', filename: 'setup.exe', content: exe }]));
    expect(e.status).toBe(201);
    expect(e.body.mime_type).toBe('application/x-msdownload');
    const d = await uploadJson(key.key, workspace.name, { name: 'disk.dmg', content: b64(dmg) });
    expect(d.status).toBe(201);
    expect(d.body.mime_type).toBe('application/x-apple-diskimage');
  });
});

describe('details', () => {
  it('refreshes temporary URLs for expires_in, privately', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const up = await uploadJson(key.key, workspace.name, { name: 'a.txt', content: b64('abc') });
    const res = await client(s.url, key.key).get(`${files(workspace.name)}/${up.body.id}?expires_in=30`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const clock = new Date((await s.admin.get('/admin/v1/clock')).body.now).getTime();
    expect(Math.abs(new Date(res.body.temporary_url_expires_at).getTime() - clock - 30_000)).toBeLessThan(2_000);
    expect(res.body.temporary_url).not.toBe(up.body.temporary_url);
    expect(res.body.download_url).toBe(up.body.download_url);
  });

  it.each(['29', '601', 'abc', '', '30.5', '-30'])('rejects expires_in=%s with 422 on expires_in', async (value) => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const up = await uploadJson(key.key, workspace.name, { name: 'a.txt', content: b64('abc') });
    const res = await client(s.url, key.key).get(`${files(workspace.name)}/${up.body.id}?expires_in=${value}`);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['expires_in']);
  });

  it('404s foreign, user-owned, missing and non-integer files', async () => {
    const a = await setupWorkspace(s.admin, { permissions: ALL });
    const b = await setupWorkspace(s.admin, { permissions: ALL });
    const up = await uploadJson(a.key.key, a.workspace.name, { name: 'a.txt', content: b64('abc') });
    const own = await s.admin.post(`/admin/v1/workspaces/${b.workspace.name}/users/${b.user.id}/files`, {
      file: { name: 'me.txt', content: b64('me') },
    });
    expect(own.status).toBe(201);
    for (const id of [up.body.id, own.body.id, 999999, 'abc']) {
      const res = await client(s.url, b.key.key).get(`${files(b.workspace.name)}/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
  });
});

describe('abilities and permissions', () => {
  it('needs the ability and the permission of each operation', async () => {
    const uploadOnly = await setupWorkspace(s.admin, { permissions: ALL, abilities: ['files:write'] });
    const up = await uploadJson(uploadOnly.key.key, uploadOnly.workspace.name, { name: 'a.txt', content: b64('abc') });
    expect(up.status).toBe(201);
    const denied = { message: 'This API key is not permitted to perform this action' };
    const details = await client(s.url, uploadOnly.key.key).get(`${files(uploadOnly.workspace.name)}/${up.body.id}`);
    expect([details.status, details.body]).toEqual([403, denied]);
    const del = await client(s.url, uploadOnly.key.key).delete(`${files(uploadOnly.workspace.name)}/${up.body.id}`);
    expect([del.status, del.body]).toEqual([403, denied]);
    const noPermission = await setupWorkspace(s.admin, { permissions: ['view-file'], abilities: ['*'] });
    const refused = await uploadJson(noPermission.key.key, noPermission.workspace.name, { name: 'a.txt', content: b64('abc') });
    expect([refused.status, refused.body]).toEqual([403, denied]);
  });
});

describe('downloads', () => {
  async function uploaded(content = 'the report') {
    const ctx = await setupWorkspace(s.admin, { permissions: ALL });
    const up = await uploadJson(ctx.key.key, ctx.workspace.name, { name: 'Report "Q1" ü.txt', content: b64(content) });
    return { ...ctx, file: up.body };
  }
  const path = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

  it('streams the tokenized download with download-safe headers, without an API key', async () => {
    const { file } = await uploaded();
    const res = await request(s.url, 'GET', path(file.download_url));
    expect(res.status).toBe(200);
    expect(res.text).toBe('the report');
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="Report _Q1_ _.txt"; filename*=UTF-8''Report%20%22Q1%22%20%C3%BC.txt`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('404s a wrong token, a wrong uuid, another workspace; 403s a suspended workspace', async () => {
    const { workspace, file } = await uploaded();
    const other = await createWorkspace(s.admin);
    const p = path(file.download_url);
    for (const bad of [
      p.replace(/[^/]+$/, 'wrongtoken'),
      p.replace(/[0-9a-f-]{36}/, '00000000-0000-0000-0000-000000000000'),
      p.replace(workspace.name, other.name),
    ]) {
      const res = await request(s.url, 'GET', bad);
      expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
    }
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: true });
    const res = await request(s.url, 'GET', p);
    expect([res.status, res.body]).toEqual([403, { message: 'Workspace suspended' }]);
  });

  it('404s both downloads when the stored content is missing', async () => {
    const content = `missing later ${Date.now()}`;
    const { file } = await uploaded(content);
    const hash = createHash('sha256').update(content).digest('hex');
    const stored = storedObjects().find((f) => f.endsWith(hash))!;
    rmSync(stored);
    for (const url of [file.download_url, file.temporary_url]) {
      const res = await request(s.url, 'GET', path(url));
      expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
    }
  });

  it('streams the temporary download privately and refuses any change to the link', async () => {
    const { workspace, file } = await uploaded();
    const p = path(file.temporary_url);
    const ok = await request(s.url, 'GET', p);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('the report');
    expect(ok.headers.get('cache-control')).toBe('private, no-store');
    expect(ok.headers.get('content-disposition')).toMatch(/^attachment; /);
    const forbidden = { message: 'Forbidden' };
    for (const bad of [
      `${p}&expires_in=60`,
      p.replace(/signature=[0-9a-f]{4}/, 'signature=0000'),
      p.replace(/expires=(\d+)/, (_m, e) => `expires=${Number(e) + 60}`),
      p.replace(/&signature=[0-9a-f]+/, ''),
      p.replace(/uuid=[0-9a-f-]+/, 'uuid=00000000-0000-0000-0000-000000000000'),
      `${p}&width=100`,
      p.replace('/temporary?', '/temporary-image?').replace('/temporary-image?', '/temporary?x=1&'),
    ]) {
      const res = await request(s.url, 'GET', bad);
      expect([res.status, res.body]).toEqual([403, forbidden]);
    }
    const other = await createWorkspace(s.admin);
    expect((await request(s.url, 'GET', p.replace(workspace.name, other.name))).status).toBe(404);
  });

  it('expires temporary links on the server clock', async () => {
    const { key, workspace, file } = await uploaded();
    const short = await client(s.url, key.key).get(`${files(workspace.name)}/${file.id}?expires_in=30`);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 31 });
    expect((await request(s.url, 'GET', path(short.body.temporary_url))).status).toBe(403);
    expect((await request(s.url, 'GET', path(file.temporary_url))).status).toBe(200);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 600 });
    expect((await request(s.url, 'GET', path(file.temporary_url))).status).toBe(403);
    expect((await request(s.url, 'GET', path(file.download_url))).status).toBe(200);
  });
});

describe('delete', () => {
  let hooks: Receiver;
  beforeAll(async () => {
    hooks = await startReceiver();
  });
  afterAll(() => hooks.close());

  it('removes the record, dispatches file.created and file.deleted, and 404s its URLs', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    await s.admin.post(`/admin/v1/workspaces/${workspace.name}/webhooks`, {
      url: hooks.url,
      events: ['file.created', 'file.deleted'],
      secret: 'a-long-enough-secret',
    });
    const up = await uploadJson(key.key, workspace.name, { name: 'a.txt', content: b64('abc') });
    const api = client(s.url, key.key);
    const del = await api.delete(`${files(workspace.name)}/${up.body.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await request(s.url, 'GET', up.body.download_url.replace(/^https?:\/\/[^/]+/, ''))).status).toBe(404);
    expect((await request(s.url, 'GET', up.body.temporary_url.replace(/^https?:\/\/[^/]+/, ''))).status).toBe(404);
    expect((await api.get(`${files(workspace.name)}/${up.body.id}`)).status).toBe(404);
    expect((await api.delete(`${files(workspace.name)}/${up.body.id}`)).status).toBe(404);
    const events = await eventually(async () => {
      const mine = hooks.requests.filter((r) => r.body.workspace === workspace.name);
      return mine.length >= 2 && mine;
    });
    expect(events.map((e) => e.body.event).sort()).toEqual(['file.created', 'file.deleted']);
    expect(events.find((e) => e.body.event === 'file.deleted')!.body.data).toEqual({
      file: { id: up.body.id, name: 'a.txt', mime_type: 'text/plain', size: 3 },
    });
  });

  it('keeps content shared with another file, and the prune task removes unreferenced content', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const content = b64(`shared ${workspace.name}`);
    const a = await uploadJson(key.key, workspace.name, { name: 'a.txt', content });
    const b = await uploadJson(key.key, workspace.name, { name: 'b.txt', content });
    const api = client(s.url, key.key);
    await api.delete(`${files(workspace.name)}/${a.body.id}`);
    expect((await request(s.url, 'GET', b.body.download_url.replace(/^https?:\/\/[^/]+/, ''))).text).toBe(`shared ${workspace.name}`);
    await api.delete(`${files(workspace.name)}/${b.body.id}`);
    const hash = createHash('sha256').update(`shared ${workspace.name}`).digest('hex');
    const stored = storedObjects().find((f) => f.endsWith(hash))!;
    expect(stored).toBeDefined();
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(stored, old, old);
    const run = await s.admin.post('/admin/v1/tasks/files:prune-storage');
    expect(run.body.processed).toBeGreaterThanOrEqual(1);
    expect(existsSync(stored)).toBe(false);
    expect(statSync(path.dirname(stored)).isDirectory()).toBe(true);
  });
});

describe('usage', () => {
  it('counts stored bytes plus response bytes of uploads, and only response bytes of rejected ones', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
    const ok = await uploadJson(key.key, workspace.name, { name: 'a.txt', content: b64('12345') });
    const bad = await uploadJson(key.key, workspace.name, { name: 'a.txt', content: '!!' });
    const expected = 5 + Buffer.byteLength(ok.text) + Buffer.byteLength(bad.text);
    let last: unknown;
    const usage = await eventually(async () => {
      const u = (await s.admin.get(`/admin/v1/workspaces/${workspace.name}/usage`)).body;
      last = u;
      return u.bandwidth_bytes === expected && u;
    }).catch(async (err) => {
      const jobs = await s.server.app.db.query(
        `SELECT name, state, retry_count, output FROM pgboss.job WHERE name = 'usage.record' ORDER BY created_on DESC LIMIT 5`,
      );
      throw new Error(`${err.message}: expected ${expected}, last ${JSON.stringify(last)}; jobs ${JSON.stringify(jobs.rows)}`);
    });
    expect(usage).toEqual({ bandwidth_bytes: expected, storage_bytes: 5 });
  });
});
