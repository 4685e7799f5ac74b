// A workspace moves: exported as an archive (GET .../export) and imported (POST
// /admin/v1/workspace-imports) from PostgreSQL into the embedded database and back. Every list,
// read, query, aggregate, revision and file download of the copy answers the bytes of the
// original (server addresses aside); refused archives (truncated, damaged, of an unknown version,
// IDs taken) leave nothing behind.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createGunzip, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { createTestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { client } from './support/http';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, updateEntry, uploadFile } from './support/entries';
import { createObject, updateObject } from './support/objects';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

async function exported(s: TestServer, ws: string): Promise<Buffer> {
  const res = await fetch(`${s.url}/admin/v1/workspaces/${ws}/export`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/gzip');
  expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${ws}.tar.gz"`);
  return Buffer.from(await res.arrayBuffer());
}

async function imported(s: TestServer, archive: Buffer, name?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}/admin/v1/workspace-imports${name ? `?name=${name}` : ''}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/gzip' },
    body: new Uint8Array(archive),
  });
  return { status: res.status, body: await res.json() };
}

/** Runs the SDK's CLI with the admin token in its environment. */
const cli = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, [path.join(__dirname, '../../sdk/dist/cli.js'), ...args], { env: { PATH: process.env.PATH ?? '', WORKSPACE_API_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

/** The archive's entries in order, with their contents. */
async function entriesOf(archive: Buffer): Promise<{ name: string; body: Buffer }[]> {
  const out: { name: string; body: Buffer }[] = [];
  const extract = tar.extract();
  Readable.from(archive).pipe(createGunzip()).pipe(extract);
  for await (const entry of extract) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    out.push({ name: entry.header.name, body: Buffer.concat(chunks) });
  }
  return out;
}

/** An archive rebuilt from (changed) entries. */
async function rebuilt(entries: { name: string; body: Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const e of entries) pack.entry({ name: e.name, size: e.body.length }, e.body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const c of pack) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

describeWithPostgres('a workspace archive', () => {
  let pg: TestServer;
  let embedded: TestServer;
  let back: TestServer;
  beforeAll(async () => {
    [pg, embedded, back] = await Promise.all([startTestServer(), startTestServer({}, await createTestDatabase('pglite')), startTestServer()]);
  });
  afterAll(async () => {
    await Promise.all([pg?.close(), embedded?.close(), back?.close()]);
  });

  /** A workspace with every kind of field, relations, locales, revisions, Trash, objects under a contract, files. */
  async function stocked(s: TestServer) {
    const w = await entriesWorkspace(s);
    await createContentType(s, w.ws, 'general', { name: 'author', fields: [{ name: 'name', type: 'text', required: true, unique: true }] });
    await createContentType(s, w.ws, 'general', {
      name: 'article',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'views', type: 'number' },
        { name: 'price', type: 'number' },
        { name: 'featured', type: 'boolean' },
        { name: 'published_on', type: 'date' },
        { name: 'at', type: 'date', format: 'datetime' },
        { name: 'meta', type: 'json' },
        { name: 'tags', type: 'text', multiple: true },
        { name: 'author', type: 'relation', targets: ['author'] },
        { name: 'related', type: 'relation', targets: ['article'], multiple: true },
        { name: 'cover', type: 'attachment' },
      ],
    });
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/contracts`, { name: 'page', schema: { type: 'object', required: ['title'] }, prefix: 'pages' })).status).toBe(201);
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'the-secret' })).status).toBe(201);
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/pipelines`, { name: 'read', steps: [{ id: 'q', type: 'entries.query', with: { bucket: 'general', type: 'article' } }] })).status).toBe(201);
    const image = (await w.api.post(`/api/v1/${w.ws}/files`, { file: { name: 'p.png', type: 'image/png', content: PNG } })).body;
    const text = await uploadFile(w.api, w.ws, 'notes.txt', 'some notes');
    const ada = await createEntry(w, 'author', { fields: { name: 'Ada' }, status: 'published' });
    const first = await createEntry(w, 'article', {
      fields: { title: 'One', views: 10, price: 12345678901234567.5, featured: true, published_on: '2026-10-01', at: '2026-10-01T12:00:00Z', meta: { a: [1, 2] }, tags: ['x', 'y'], author: ada.id, cover: image.id },
      status: 'published',
    });
    const second = await createEntry(w, 'article', { fields: { title: 'Two', views: 3, related: [first.id], author: ada.id }, status: 'published' });
    await updateEntry(w, first.id, { fields: { title: 'Eins' } }, '?locale=de-DE');
    await updateEntry(w, second.id, { fields: { views: 4 } });
    const gone = await createEntry(w, 'article', { fields: { title: 'Gone' } });
    expect((await w.api.delete(w.entry(gone.id))).status).toBe(204);
    const page = await createObject(w, { ref: 'pages/home', data: { title: 'Home', n: 1 } });
    await updateObject(w, page, { data: { title: 'Home!', n: 2 } });
    const settings = await createObject(w, { ref: 'settings', data: { theme: 'dark' } });
    await updateObject(w, settings, { data: { theme: 'dark' }, translations: { 'de-DE': { theme: 'dunkel' } } });
    return { w, ids: { ada: ada.id, first: first.id, second: second.id, page: page.id, image: image.id, text: text.id } };
  }

  /** What a client reads of the workspace, as text, the server's address taken out. */
  async function reads(s: TestServer, ws: string, key: string, ids: Record<string, string | number>): Promise<Record<string, string>> {
    const api = client(s.url, key);
    const out: Record<string, string> = {};
    const paths: [string, string, unknown?][] = [
      ['GET', `/api/v1/${ws}/entries?contentBucket=general&contentType=article`],
      ['GET', `/api/v1/${ws}/entries?contentBucket=general&contentType=article&locale=*`],
      ['GET', `/api/v1/${ws}/entries/${ids.first}?locale=de-DE`],
      ['GET', `/api/v1/${ws}/entries/${ids.second}`],
      ['POST', `/api/v1/${ws}/general/entries/query`, { type: 'article', fields: ['title', 'author.name', 'related.title', 'price'], sort: [{ field: 'views', direction: 'desc' }] }],
      ['POST', `/api/v1/${ws}/general/entries/query`, { type: 'article', aggregate: { count: true, sum: ['views', 'price'] }, groupBy: [{ field: 'published_on', interval: 'month' }] }],
      ['GET', `/api/v1/${ws}/objects`],
      ['GET', `/api/v1/${ws}/objects/${ids.page}/revisions`],
      ['GET', `/api/v1/${ws}/objects/trash`],
      ['GET', `/api/v1/${ws}/files/${ids.text}`],
    ];
    for (const [method, p, body] of paths) {
      const res = method === 'GET' ? await api.get(p) : await api.post(p, body);
      expect(`${p} ${res.status}`).toBe(`${p} 200`);
      // Signed URLs aside: their expiry follows the clock.
      out[`${method} ${p} ${JSON.stringify(body ?? '')}`] = res.text
        .split(s.url)
        .join('<server>')
        .replace(/expires=\d+&signature=[0-9a-f]+/g, 'expires=…')
        .replace(/("temporary_(image_)?url_expires_at":)"[^"]+"/g, '$1"…"');
    }
    const file = JSON.parse(out[`GET /api/v1/${ws}/files/${ids.text} ""`].split('<server>').join(s.url)) as { download_url: string };
    out.download = await (await fetch(file.download_url)).text();
    return out;
  }

  /** A key on the imported workspace for the creator of the original one (creators keep their IDs). */
  const keyOn = async (s: TestServer, ws: string, userId: number) =>
    (await s.admin.post(`/admin/v1/workspaces/${ws}/api-keys`, { name: 'moved', user_id: userId, abilities: ['*'] })).body.key as string;

  it('moves a workspace from PostgreSQL to the embedded database and back: every read answers the same bytes', async () => {
    const { w, ids } = await stocked(pg);
    const before = await reads(pg, w.ws, w.key, ids);
    const archive = await exported(pg, w.ws);
    const entries = await entriesOf(archive);
    expect(entries[0].name).toBe('manifest.json');
    expect(entries[entries.length - 1].name).toBe('checksums.sha256');
    const manifest = JSON.parse(entries[0].body.toString());
    expect(manifest).toMatchObject({ format: 'workspace-api-export', version: 1, workspace: w.ws, files: { count: 2 } });
    // 3 typed entries (a deleted one is gone for good), 2 objects.
    expect(manifest.tables.find((t: any) => t.name === 'entries').rows).toBe(5);
    // No secrets and no keys in the archive.
    const text = entries.map((e) => e.body.toString('latin1')).join('\n');
    expect(text).not.toContain('the-secret');
    expect(text).not.toContain(w.key);

    const there = await imported(embedded, archive);
    expect(there.status).toBe(201);
    expect(there.body.workspace.name).toBe(w.ws);
    expect(there.body.files).toEqual({ count: 2, bytes: manifest.files.bytes });
    const onEmbedded = await reads(embedded, w.ws, await keyOn(embedded, w.ws, w.userId), ids);
    expect(onEmbedded).toEqual(before);

    // And back, from the embedded database into PostgreSQL.
    const again = await exported(embedded, w.ws);
    expect((await imported(back, again, 'returned')).status).toBe(201);
    expect(await reads(back, 'returned', await keyOn(back, 'returned', w.userId), ids)).toEqual(
      Object.fromEntries(Object.entries(before).map(([k, v]) => [k.split(`/${w.ws}/`).join('/returned/'), v.split(`/${w.ws}/`).join('/returned/')])),
    );
    // Writes go on in the copy, with IDs after the imported ones.
    const wr = client(embedded.url, await keyOn(embedded, w.ws, w.userId));
    const created = await wr.post(`/api/v1/${w.ws}/entries?contentBucket=general&contentType=author`, { fields: { name: 'Grace' } });
    expect(created.status).toBe(201);
    expect((await wr.post(`/api/v1/${w.ws}/entries?contentBucket=general&contentType=author`, { fields: { name: 'Ada' } })).status).toBe(422);
  });

  it('refuses a damaged, truncated or unknown archive, and IDs the server holds, leaving nothing behind', async () => {
    const { w } = await stocked(pg);
    const archive = await exported(pg, w.ws);
    // A server of its own: the other test's imports hold IDs this workspace's rows may have.
    const target = await startTestServer({}, await createTestDatabase('pglite'));
    try {
    const entries = await entriesOf(archive);
    const refusal = async (bytes: Buffer, name: string) => {
      const res = await imported(target, bytes, name);
      if (res.status === 201) throw new Error(`${name}: imported ${JSON.stringify(res.body)}`);
      expect((await target.admin.get(`/admin/v1/workspaces/${name}`)).status).toBe(404);
      return res;
    };
    // A changed byte in a part.
    const damaged = entries.map((e) => (e.name.includes('-entry_contents-') ? { ...e, body: Buffer.from(e.body.toString().replace('"Ada"', '"Adb"')) } : e));
    expect(await refusal(await rebuilt(damaged), 'damaged')).toEqual({
      status: 422,
      body: { message: expect.any(String), errors: { archive: [expect.stringMatching(/^rows\/10-entry_contents-0001\.ndjson is damaged: its SHA-256 is not the one checksums\.sha256 gives\.$/)] } },
    });
    // A line that is not JSON.
    const broken = entries.map((e) => (e.name.includes('-users-') ? { ...e, body: Buffer.from(`${e.body.toString()}{oops\n`) } : e));
    expect((await refusal(await rebuilt(broken), 'broken')).body.errors.archive).toEqual(['rows/02-users-0001.ndjson line 2 is not JSON.']);
    // Cut short: no checksums at the end.
    expect((await refusal(await rebuilt(entries.slice(0, -1)), 'truncated')).body.errors.archive).toEqual(['The archive ends before checksums.sha256: it is truncated.']);
    expect((await refusal(archive.subarray(0, archive.length - 100), 'cut')).status).toBe(422);
    // Another format version.
    const manifest = JSON.parse(entries[0].body.toString());
    const future = [{ name: 'manifest.json', body: Buffer.from(JSON.stringify({ ...manifest, version: 2 })) }, ...entries.slice(1)];
    expect((await refusal(await rebuilt(future), 'future')).body.errors.archive).toEqual(["The archive's format version 2 is not one this server reads (1)."]);
    expect((await refusal(Buffer.from('not an archive'), 'garbage')).status).toBe(422);
    // None of them left a stored content behind.
    const stored: string[] = [];
    for await (const o of target.server.app.storage.list()) stored.push(o.hash);
    expect(stored).toEqual([]);
    // The CLI: exported to a file and imported from it (once); then again under another name: its IDs are taken.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wsapi-archive-'));
    const file = path.join(dir, 'ws.tar.gz');
    const out = await cli(['export', '--url', pg.url, '--workspace', w.ws, '--out', file]);
    expect(out).toMatchObject({ code: 0, stdout: '' });
    expect(out.stderr).toContain('users: 1/1 rows\n');
    expect(out.stderr).toContain('file contents: 2/2 (');
    expect(out.stderr).toMatch(new RegExp(`wrote ${file}: workspace "${w.ws}" \\(\\d+\\.\\d MB\\)\\n$`));
    expect(readdirSync(dir)).toEqual(['ws.tar.gz']);
    // The same rows and files as the archive taken before (its manifest has another time, and the
    // workspace's usage counted the downloads since).
    const parts = async (bytes: Buffer) => (await entriesOf(bytes)).filter((e) => !['manifest.json', 'checksums.sha256'].includes(e.name) && !e.name.includes('-workspace_usage-'));
    expect(await parts(readFileSync(file))).toEqual(await parts(archive));
    const copied = await cli(['import', '--url', target.url, '--file', file, '--name', 'first-copy']);
    expect(copied).toMatchObject({ code: 0, stdout: '' });
    expect(copied.stderr).toMatch(/^imported workspace "first-copy": workspaces 1, users 1, .*; 2 files \(0\.0 MB\)\n$/);
    const twice = await refusal(archive, 'second-copy');
    expect(twice.status).toBe(409);
    expect(twice.body.message).toMatch(/^rows\/\d{2}-[a-z_]+-0001\.ndjson: its rows hold IDs \(or unique values\) that rows of this server hold already\./);
    expect((await imported(target, archive, 'first-copy')).body.errors).toEqual({ name: ['The name has already been taken.'] });
    const again = await cli(['import', '--url', target.url, '--file', file, '--name', 'first-copy']);
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: importing ${file} failed: the server answered 422 (The name has already been taken.)\n  name: The name has already been taken.; nothing was imported\n`,
    });
    } finally {
      await target.close();
    }
  });
});
