// A workspace moves: exported as an archive (GET .../export) and imported (POST
// /admin/v1/workspace-imports) from PostgreSQL into the embedded database and back. Every list,
// read, query, aggregate, revision and file download of the copy answers the bytes of the
// original (server addresses aside); refused archives (truncated, damaged, of an unknown version,
// IDs taken) leave nothing behind.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    execFile(
      process.execPath,
      [path.join(__dirname, '../../sdk/dist/cli.js'), ...args],
      { env: { PATH: process.env.PATH ?? '', WORKSPACE_API_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
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

/** Changed entries with checksums.sha256 (the last) made to fit them again. */
function withChecksums(entries: { name: string; body: Buffer }[]): { name: string; body: Buffer }[] {
  const sums = entries.slice(0, -1).map((e) => `${createHash('sha256').update(e.body).digest('hex')}  ${e.name}`);
  return [...entries.slice(0, -1), { name: 'checksums.sha256', body: Buffer.from(`${sums.join('\n')}\n`) }];
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
    [pg, embedded, back] = await Promise.all([
      startTestServer(),
      startTestServer({}, await createTestDatabase('pglite')),
      startTestServer(),
    ]);
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
    expect(
      (
        await s.admin.post(`/admin/v1/workspaces/${w.ws}/contracts`, {
          name: 'page',
          schema: { type: 'object', required: ['title'] },
          prefix: 'pages',
        })
      ).status,
    ).toBe(201);
    expect(
      (await s.admin.post(`/admin/v1/workspaces/${w.ws}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: 'the-secret' }))
        .status,
    ).toBe(201);
    expect(
      (
        await s.admin.post(`/admin/v1/workspaces/${w.ws}/pipelines`, {
          name: 'read',
          steps: [{ id: 'q', type: 'entries.query', with: { bucket: 'general', type: 'article' } }],
        })
      ).status,
    ).toBe(201);
    const image = (await w.api.post(`/api/v1/${w.ws}/files`, { file: { name: 'p.png', type: 'image/png', content: PNG } })).body;
    const text = await uploadFile(w.api, w.ws, 'notes.txt', 'some notes');
    const ada = await createEntry(w, 'author', { fields: { name: 'Ada' }, status: 'published' });
    const first = await createEntry(w, 'article', {
      fields: {
        title: 'One',
        views: 10,
        price: 12345678901234567.5,
        featured: true,
        published_on: '2026-10-01',
        at: '2026-10-01T12:00:00Z',
        meta: { a: [1, 2] },
        tags: ['x', 'y'],
        author: ada.id,
        cover: image.id,
      },
      status: 'published',
    });
    const second = await createEntry(w, 'article', {
      fields: { title: 'Two', views: 3, related: [first.id], author: ada.id },
      status: 'published',
    });
    await updateEntry(w, first.id, { fields: { title: 'Eins' } }, '?locale=de-DE');
    await new Promise((resolve) => setTimeout(resolve, 5));
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
      [
        'POST',
        `/api/v1/${ws}/general/entries/query`,
        { type: 'article', fields: ['title', 'author.name', 'related.title', 'price'], sort: [{ field: 'views', direction: 'desc' }] },
      ],
      [
        'POST',
        `/api/v1/${ws}/general/entries/query`,
        { type: 'article', aggregate: { count: true, sum: ['views', 'price'] }, groupBy: [{ field: 'published_on', interval: 'month' }] },
      ],
      // An entry published, then changed: its published_at is the first one, not its updated_at.
      [
        'POST',
        `/api/v1/${ws}/general/entries/query`,
        {
          type: 'article',
          fields: ['title', '@published_at', '@updated_at', '@created_at'],
          sort: [{ field: '@created_at', direction: 'asc' }],
        },
      ],
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
      Object.fromEntries(
        Object.entries(before).map(([k, v]) => [k.split(`/${w.ws}/`).join('/returned/'), v.split(`/${w.ws}/`).join('/returned/')]),
      ),
    );
    // Writes go on in the copy, with IDs after the imported ones.
    const wr = client(embedded.url, await keyOn(embedded, w.ws, w.userId));
    const created = await wr.post(`/api/v1/${w.ws}/entries?contentBucket=general&contentType=author`, { fields: { name: 'Grace' } });
    expect(created.status).toBe(201);
    expect((await wr.post(`/api/v1/${w.ws}/entries?contentBucket=general&contentType=author`, { fields: { name: 'Ada' } })).status).toBe(
      422,
    );
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
      const damaged = entries.map((e) =>
        e.name.includes('-entry_contents-') ? { ...e, body: Buffer.from(e.body.toString().replace('"Ada"', '"Adb"')) } : e,
      );
      expect(await refusal(await rebuilt(damaged), 'damaged')).toEqual({
        status: 422,
        body: {
          message: expect.any(String),
          errors: {
            archive: [
              expect.stringMatching(
                /^rows\/10-entry_contents-0001\.ndjson is damaged: its SHA-256 is not the one checksums\.sha256 gives\.$/,
              ),
            ],
          },
        },
      });
      // A line that is not JSON.
      const broken = entries.map((e) => (e.name.includes('-users-') ? { ...e, body: Buffer.from(`${e.body.toString()}{oops\n`) } : e));
      expect((await refusal(await rebuilt(broken), 'broken')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 2 is not JSON.',
      ]);
      // Two objects on one line.
      const doubled = entries.map((e) =>
        e.name.includes('-users-') ? { ...e, body: Buffer.from(e.body.toString().replace(/\n$/, ',{}\n')) } : e,
      );
      expect((await refusal(await rebuilt(doubled), 'doubled')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 1 is not JSON.',
      ]);
      // Lines that are JSON but not an object, empty, or not JSON text at all (a raw control character, bytes not UTF-8).
      const withLine = (line: Buffer) =>
        entries.map((e) => (e.name.includes('-users-') ? { ...e, body: Buffer.concat([e.body, line]) } : e));
      expect((await refusal(await rebuilt(withLine(Buffer.from('[1]\n'))), 'listed')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 2 is not a JSON object.',
      ]);
      expect((await refusal(await rebuilt(withLine(Buffer.from('\n'))), 'blank')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 2 is not JSON.',
      ]);
      expect((await refusal(await rebuilt(withLine(Buffer.from('{"x":"\x01"}\n'))), 'controlled')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 2 is not JSON text in UTF-8.',
      ]);
      expect((await refusal(await rebuilt(withLine(Buffer.from([0x7b, 0xff, 0x7d, 0x0a]))), 'latin')).body.errors.archive).toEqual([
        'rows/02-users-0001.ndjson line 2 is not JSON text in UTF-8.',
      ]);
      // (Past the first 256 KiB, which the embedded database copies as a piece of its own.)
      const filler = Buffer.from(`{"x":"${'a'.repeat(300)}"}\n`.repeat(1000));
      expect(
        (await refusal(await rebuilt(withLine(Buffer.concat([filler, Buffer.from([0x7b, 0xff, 0x7d, 0x0a])]))), 'later')).body.errors
          .archive,
      ).toEqual(['rows/02-users-0001.ndjson line 1002 is not JSON text in UTF-8.']);
      // A row that refers to a row of another workspace on the server (a bucket the archive does not hold).
      // (Its IDs far past the archive's, so that only the reference is wrong.)
      for (const t of ['workspaces', 'users', 'api_keys', 'buckets', 'content_types', 'field_definitions', 'entries'])
        await target.server.app.db.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), 1000000)`);
      const neighbour = await entriesWorkspace(target);
      await createContentType(target, neighbour.ws, 'general', { name: 'theirs', fields: [{ name: 'x', type: 'text' }] });
      const [other] = (
        await target.server.app.db.query<{ bucket: number; type: number }>(
          `SELECT b.id AS bucket, c.id AS type FROM buckets b JOIN workspaces w ON w.id = b.workspace_id JOIN content_types c ON c.bucket_id = b.id WHERE w.name = '${neighbour.ws}'`,
        )
      ).rows;
      /** The archive with the first match of `pattern` in `table`'s parts replaced, its checksums made to fit. */
      const tampered = (table: string, pattern: RegExp, replacement: string) =>
        rebuilt(
          withChecksums(
            entries.map((e) =>
              e.name.includes(`-${table}-`) ? { ...e, body: Buffer.from(e.body.toString().replace(pattern, replacement)) } : e,
            ),
          ),
        );
      expect(
        (await refusal(await tampered('entries', /"bucket_id": ?\d+/, `"bucket_id": ${other.bucket}`), 'stray')).body.errors.archive,
      ).toEqual([`entries.bucket_id ${other.bucket} refers to a row of buckets that the archive does not hold.`]);
      // Rows that belong to a workspace through the reference itself: a content type put in another
      // workspace's bucket (its entries then refer outside), a revision put on another workspace's entry.
      expect(
        (await refusal(await tampered('content_types', /"bucket_id": ?\d+/, `"bucket_id": ${other.bucket}`), 'stray-type')).body.errors
          .archive,
      ).toEqual([
        expect.stringMatching(/^entries\.content_type_id \d+ refers to a row of content_types that the archive does not hold\.$/),
      ]);
      const theirs = await createEntry(neighbour, 'theirs', { fields: { x: 'theirs' } });
      const [entry] = (await target.server.app.db.query<{ id: number }>(`SELECT id FROM entries WHERE entry_id = '${theirs.id}'`)).rows;
      expect(
        (await refusal(await tampered('entry_revisions', /"entry_pk": ?\d+/, `"entry_pk": ${entry.id}`), 'stray-revision')).body.errors
          .archive,
      ).toEqual([
        expect.stringMatching(
          /^entry_revisions: (\d+) rows imported, \d+ of them the workspace's: the others refer to rows of another workspace of this server\.$/,
        ),
      ]);
      // Contents that say another kind than their entry (copied from it, not read back from the archive).
      expect(
        (await refusal(await tampered('entry_contents', /"kind": ?"typed"/, '"kind": "object"'), 'unlike')).body.errors.archive,
      ).toEqual([
        expect.stringMatching(
          /^entry_contents: the contents of the entry [0-9A-Z]{26} do not name its bucket, content type, ID, kind or deletion as the entry does\.$/,
        ),
      ]);
      // A reference without a foreign key: an entry of another workspace's content type.
      expect(
        (await refusal(await tampered('entries', /"content_type_id": ?\d+/, `"content_type_id": ${other.type}`), 'stray-entry')).body.errors
          .archive,
      ).toEqual([`entries.content_type_id ${other.type} refers to a row of content_types that the archive does not hold.`]);
      expect(
        (await target.admin.get(`/admin/v1/workspaces/${neighbour.ws}/buckets/general/content-types`)).body.data.map(
          (t: { name: string }) => t.name,
        ),
      ).toEqual(['theirs']);
      // Cut short: no checksums at the end.
      expect((await refusal(await rebuilt(entries.slice(0, -1)), 'truncated')).body.errors.archive).toEqual([
        'The archive ends before checksums.sha256: it is truncated.',
      ]);
      expect((await refusal(archive.subarray(0, archive.length - 100), 'cut')).status).toBe(422);
      // Another format version.
      const manifest = JSON.parse(entries[0].body.toString());
      const future = [{ name: 'manifest.json', body: Buffer.from(JSON.stringify({ ...manifest, version: 2 })) }, ...entries.slice(1)];
      expect((await refusal(await rebuilt(future), 'future')).body.errors.archive).toEqual([
        "The archive's format version 2 is not one this server reads (1).",
      ]);
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
      const parts = async (bytes: Buffer) =>
        (await entriesOf(bytes)).filter(
          (e) => !['manifest.json', 'checksums.sha256'].includes(e.name) && !e.name.includes('-workspace_usage-'),
        );
      expect(await parts(readFileSync(file))).toEqual(await parts(archive));
      const copied = await cli(['import', '--url', target.url, '--file', file, '--name', 'first-copy']);
      expect(copied).toMatchObject({ code: 0, stdout: '' });
      expect(copied.stderr).toMatch(/^imported workspace "first-copy": workspaces 1, users 1, .*; 2 files \(0\.0 MB\)\n$/);
      const twice = await refusal(archive, 'second-copy');
      expect(twice.status).toBe(409);
      expect(twice.body.message).toMatch(
        /^rows\/\d{2}-[a-z_]+-0001\.ndjson: its rows hold IDs \(or unique values\) that rows of this server hold already\./,
      );
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
  it('backs a server up and restores it elsewhere: every workspace, every read the same; a restore is all or nothing', async () => {
    const source = await startTestServer({}, await createTestDatabase('pglite'));
    const target = await startTestServer();
    try {
      const a = await stocked(source);
      const b = await entriesWorkspace(source);
      await createContentType(source, b.ws, 'general', { name: 'note', fields: [{ name: 'text', type: 'text' }] });
      await createEntry(b, 'note', { fields: { text: 'hello' } });
      const before = await reads(source, a.w.ws, a.w.key, a.ids);
      const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'wsapi-backup-')), 'nightly');
      const made = await cli(['backup', '--url', source.url, '--out', dir]);
      expect(made).toMatchObject({ code: 0, stdout: '' });
      expect(made.stderr).toMatch(new RegExp(`backed up 2 workspaces to ${dir} \\(\\d+\\.\\d MB\\)\\n$`));
      expect(readdirSync(dir).sort()).toEqual(['backup.json', `${a.w.ws}.tar.gz`, `${b.ws}.tar.gz`].sort());
      const manifest = JSON.parse(readFileSync(path.join(dir, 'backup.json'), 'utf8'));
      expect(manifest).toMatchObject({ format: 'workspace-api-backup', version: 1, workspaces: expect.any(Array) });
      for (const w of manifest.workspaces) {
        expect(w.sha256).toBe(
          createHash('sha256')
            .update(readFileSync(path.join(dir, w.file)))
            .digest('hex'),
        );
      }
      // A second backup into the same directory is refused (exit 1), the first left as it was.
      expect(await cli(['backup', '--url', source.url, '--out', dir])).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${dir} holds a backup already: give a new directory\n`,
      });

      // A damaged archive: refused before anything is imported.
      const file = path.join(dir, `${b.ws}.tar.gz`);
      const good = readFileSync(file);
      writeFileSync(file, Buffer.concat([good.subarray(0, 100), Buffer.from([good[100] ^ 1]), good.subarray(101)]));
      const damaged = await cli(['restore', '--url', target.url, '--from', dir]);
      expect(damaged).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${file} is missing or damaged: its size or SHA-256 is not the one backup.json gives; nothing was restored\n`,
      });
      writeFileSync(file, good);
      // A name the server has: refused before anything is imported. (Its IDs far past the backup's.)
      for (const t of ['workspaces', 'buckets'])
        await target.server.app.db.query(`SELECT setval(pg_get_serial_sequence('${t}', 'id'), 1000000)`);
      expect((await target.admin.post('/admin/v1/workspaces', { name: b.ws })).status).toBe(201);
      expect(await cli(['restore', '--url', target.url, '--from', dir])).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: the server has a workspace "${b.ws}" already; nothing was restored\n`,
      });
      expect((await target.admin.get(`/admin/v1/workspaces/${a.w.ws}`)).status).toBe(404);

      // Only the first workspace, then (the name freed) all: the reads answer as on the source.
      const one = await cli(['restore', '--url', target.url, '--from', dir, '--workspace', a.w.ws]);
      expect(one).toMatchObject({ code: 0, stdout: '' });
      expect(one.stderr).toMatch(/restored 1 workspaces from /);
      expect(await reads(target, a.w.ws, await keyOn(target, a.w.ws, a.w.userId), a.ids)).toEqual(before);
      expect((await cli(['restore', '--url', target.url, '--from', dir, '--workspace', 'nope'])).stderr).toBe(
        'error: the backup holds no workspace "nope"\n',
      );

      // The second archive's IDs taken on a third server: the first, restored, is deleted again.
      const third = await startTestServer();
      try {
        const [first, second] = manifest.workspaces as { name: string; file: string }[];
        const held = await cli(['import', '--url', third.url, '--file', path.join(dir, second.file), '--name', 'holds-the-ids']);
        expect(held.code).toBe(0);
        const failed = await cli(['restore', '--url', third.url, '--from', dir]);
        expect(failed.code).toBe(1);
        expect(failed.stderr).toMatch(/: its rows hold IDs .*; nothing was restored \(the 1 restored were deleted again\)\n$/);
        expect((await third.admin.get(`/admin/v1/workspaces/${first.name}`)).status).toBe(404);
        expect((await third.admin.get('/admin/v1/workspaces')).body.data.map((x: { name: string }) => x.name)).toEqual(['holds-the-ids']);
      } finally {
        await third.close();
      }
    } finally {
      await Promise.all([source.close(), target.close()]);
    }
  });

  it('exports a consistent view of the embedded database while it takes writes', async () => {
    const w = await entriesWorkspace(embedded);
    await createContentType(embedded, w.ws, 'general', { name: 'tick', fields: [{ name: 'n', type: 'number', required: true }] });
    for (let i = 0; i < 20; i++) await createEntry(w, 'tick', { fields: { n: i } });
    let writing = true;
    const written: number[] = [];
    const writer = (async () => {
      for (let i = 20; writing; i++) {
        await createEntry(w, 'tick', { fields: { n: i } });
        written.push(i);
      }
    })();
    const archives: Buffer[] = [];
    for (let i = 0; i < 3; i++) archives.push(await exported(embedded, w.ws));
    writing = false;
    await writer;
    expect(written.length).toBeGreaterThan(0);
    for (const [i, archive] of archives.entries()) {
      const entries = await entriesOf(archive);
      const count = (table: string) =>
        entries.filter((e) => e.name.includes(`-${table}-`)).reduce((n, e) => n + e.body.toString().split('\n').filter(Boolean).length, 0);
      // Every entry with its document, and no document without its entry.
      expect(`archive ${i}: ${count('entry_contents')}`).toBe(`archive ${i}: ${count('entries')}`);
    }
    // (The archives hold the same IDs: one of them is imported.)
    const res = await imported(back, archives[2], 'consistent');
    expect(res.status).toBe(201);
    expect(res.body.rows.entries).toBeGreaterThanOrEqual(21);
  });
  it("seals the webhooks' secrets with a passphrase, and opens them only with it", async () => {
    const w = await entriesWorkspace(pg);
    const hook = (
      await pg.admin.post(`/admin/v1/workspaces/${w.ws}/webhooks`, {
        url: 'http://127.0.0.1:9/hook',
        events: ['*'],
        secret: 'the-secret-of-the-hook',
      })
    ).body as { id: number };
    const passphrase = 'correct horse battery staple';
    const exportWith = (p: string) =>
      fetch(`${pg.url}/admin/v1/workspaces/${w.ws}/export`, {
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'X-Archive-Passphrase': p },
      });
    const short = await exportWith('too short');
    expect(short.status).toBe(422);
    expect(((await short.json()) as { errors: unknown }).errors).toEqual({
      passphrase: ['The passphrase (X-Archive-Passphrase) must be 12 to 1024 printable ASCII characters.'],
    });
    const res = await exportWith(passphrase);
    expect(res.status).toBe(200);
    const archive = Buffer.from(await res.arrayBuffer());
    const entries = await entriesOf(archive);
    const manifest = JSON.parse(entries[0].body.toString());
    expect(manifest.secrets).toEqual({
      cipher: 'aes-256-gcm',
      kdf: 'scrypt',
      N: 32768,
      r: 8,
      p: 1,
      salt: expect.any(String),
      check: expect.stringMatching(/^enc:v1:/),
    });
    const webhooks = entries.find((e) => e.name.includes('-webhooks-'))!.body.toString();
    expect(webhooks).not.toContain('the-secret-of-the-hook');
    expect(JSON.parse(webhooks).secret).toMatch(/^enc:v1:[A-Za-z0-9+/]+=*$/);

    const target = await startTestServer({}, await createTestDatabase('pglite'));
    try {
      const importWith = async (p?: string) => {
        const r = await fetch(`${target.url}/admin/v1/workspace-imports`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${ADMIN_TOKEN}`,
            'Content-Type': 'application/gzip',
            ...(p ? { 'X-Archive-Passphrase': p } : {}),
          },
          body: new Uint8Array(archive),
        });
        return { status: r.status, body: (await r.json()) as { errors?: Record<string, string[]> } };
      };
      expect(await importWith()).toEqual({
        status: 422,
        body: {
          message: expect.any(String),
          errors: {
            passphrase: [
              "The archive's secrets are sealed with a passphrase: give it (X-Archive-Passphrase, or the CLI's --passphrase-file).",
            ],
          },
        },
      });
      expect(await importWith('another passphrase')).toEqual({
        status: 422,
        body: { message: expect.any(String), errors: { passphrase: ['The passphrase is not the one the archive was exported with.'] } },
      });
      // A derivation the server does not run (scrypt's N must be at least 2; nor would it take gigabytes).
      for (const odd of [{ N: 1 }, { N: 1 << 20 }, { r: 1 }, { p: 16 }, { salt: 7 }]) {
        const manifestOf = { ...manifest, secrets: { ...manifest.secrets, ...odd } };
        const r = await fetch(`${target.url}/admin/v1/workspace-imports`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/gzip', 'X-Archive-Passphrase': passphrase },
          body: new Uint8Array(
            await rebuilt(withChecksums([{ name: 'manifest.json', body: Buffer.from(JSON.stringify(manifestOf)) }, ...entries.slice(1)])),
          ),
        });
        expect({ odd, status: r.status, body: await r.json() }).toEqual({
          odd,
          status: 422,
          body: {
            message: expect.any(String),
            errors: { archive: ['manifest.json gives secrets sealed in a way this server does not read.'] },
          },
        });
      }
      expect((await target.admin.get(`/admin/v1/workspaces/${w.ws}`)).status).toBe(404);
      // Through the CLI, the passphrase in a file.
      const dir = mkdtempSync(path.join(os.tmpdir(), 'wsapi-sealed-'));
      writeFileSync(path.join(dir, 'passphrase'), `${passphrase}\n`);
      writeFileSync(path.join(dir, 'ws.tar.gz'), archive);
      const done = await cli([
        'import',
        '--url',
        target.url,
        '--file',
        path.join(dir, 'ws.tar.gz'),
        '--passphrase-file',
        path.join(dir, 'passphrase'),
      ]);
      expect(done).toMatchObject({ code: 0, stdout: '' });
      const [row] = (await target.server.app.db.query<{ secret: string }>(`SELECT secret FROM webhooks WHERE id = ${Number(hook.id)}`))
        .rows;
      expect(row.secret).toBe('the-secret-of-the-hook');
    } finally {
      await target.close();
    }
  });
});
