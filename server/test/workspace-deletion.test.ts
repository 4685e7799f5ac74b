// Deleting a workspace (DELETE /admin/v1/workspaces/{workspace}): gone from every route at once,
// then everything it held deleted by a job whose status is polled. A scan of every table that can
// name one of its rows, of the stored contents and of the image cache then finds nothing of it,
// while another workspace (sharing a file's content) keeps all of its own.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, uploadFile, type EntriesWorkspace } from './support/entries';
import { createObject } from './support/objects';
import { eventually } from './support/receiver';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A workspace holding a bit of everything: typed entries in two buckets, objects, files (one image, its variant cached), a webhook, a removed field, logs. */
async function stocked(shared: string): Promise<{ w: EntriesWorkspace; ids: Record<string, number[]>; hashes: string[]; entry: string }> {
  const w = await entriesWorkspace(s);
  await createContentType(s, w.ws, 'general', {
    name: 'author',
    fields: [
      { name: 'name', type: 'text' },
      { name: 'old', type: 'text' },
    ],
  });
  expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets`, { name: 'blog' })).status).toBe(201);
  await createContentType(s, w.ws, 'blog', {
    name: 'post',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'cover', type: 'attachment' },
    ],
  });
  const image = (await w.api.post(`/api/v1/${w.ws}/files`, { file: { name: 'p.png', type: 'image/png', content: PNG } })).body;
  const own = await uploadFile(w.api, w.ws, 'own.txt', `only in ${w.ws}`);
  const common = await uploadFile(w.api, w.ws, 'common.txt', shared);
  const author = await createEntry(w, 'author', { fields: { name: 'Ann', old: 'x' }, status: 'published' });
  await createEntry(w, 'post', { fields: { title: 'Hello', cover: image.id }, status: 'published' }, '', 'blog');
  await createObject(w, { ref: 'settings/site', data: { title: 'Site' } });
  expect(
    (
      await s.admin.post(`/admin/v1/workspaces/${w.ws}/webhooks`, {
        url: 'http://127.0.0.1:9/hook',
        events: ['*'],
        secret: 'a-secret-value',
      })
    ).status,
  ).toBe(201);
  expect(
    (await s.admin.patch(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types/author`, { remove_fields: ['old'] })).status,
  ).toBe(200);
  expect((await w.api.get(w.typed('author'))).status).toBe(200);
  expect((await s.admin.get(new URL(image.image_url).pathname + '?width=1')).status).toBe(200);
  const q = async (text: string) => (await s.server.app.db.query<{ id: number }>(text, [w.ws])).rows.map((r) => r.id);
  const ids = {
    workspace_id: await q('SELECT id FROM workspaces WHERE name = $1'),
    bucket_id: await q('SELECT b.id FROM buckets b JOIN workspaces w ON w.id = b.workspace_id WHERE w.name = $1'),
    content_type_id: await q(
      'SELECT t.id FROM content_types t JOIN buckets b ON b.id = t.bucket_id JOIN workspaces w ON w.id = b.workspace_id WHERE w.name = $1',
    ),
    user_id: await q('SELECT u.id FROM users u JOIN workspaces w ON w.id = u.workspace_id WHERE w.name = $1'),
    api_key_id: await q('SELECT k.id FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE w.name = $1'),
    webhook_id: await q('SELECT h.id FROM webhooks h JOIN workspaces w ON w.id = h.workspace_id WHERE w.name = $1'),
    entry_pk: await q('SELECT e.id FROM entries e JOIN workspaces w ON w.id = e.workspace_id WHERE w.name = $1'),
    file_id: await q('SELECT f.id FROM files f JOIN workspaces w ON w.id = f.workspace_id WHERE w.name = $1'),
  };
  for (const [column, list] of Object.entries(ids)) expect({ column, some: list.length > 0 }).toEqual({ column, some: true });
  const hashes = (
    await s.server.app.db.query<{ h: string }>('SELECT content_hash AS h FROM files WHERE id = ANY($1::int[]) ORDER BY id', [
      [image.id, own.id, common.id],
    ])
  ).rows.map((r) => r.h);
  return { w, ids, hashes, entry: author.id };
}

async function storedHashes(): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const o of s.server.app.storage.list()) out.add(o.hash);
  return out;
}

it('hides the workspace at once, then deletes every row, stored content and cached variant of it, and frees its name', async () => {
  const shared = `shared ${Date.now()}`;
  const other = await stocked(shared);
  const { w, ids, hashes, entry } = await stocked(shared);
  const [imageHash, ownHash, commonHash] = hashes;
  expect(existsSync(path.join(s.db.dataDir, 'image-cache', w.ws))).toBe(true);

  const res = await s.admin.delete(`/admin/v1/workspaces/${w.ws}`);
  expect(res.status).toBe(202);
  expect(res.body).toEqual({
    id: expect.any(Number),
    workspace: w.ws,
    status: 'running',
    removed: {},
    error: null,
    created_at: expect.any(String),
    finished_at: null,
  });
  expect(res.headers.get('location')).toBe(`/admin/v1/workspace-deletions/${res.body.id}`);
  // Gone from every route before the answer: its key, its admin routes, the list; its name taken still.
  expect((await w.api.get(w.entry(entry))).status).toBe(403);
  expect((await s.admin.get(`/admin/v1/workspaces/${w.ws}`)).status).toBe(404);
  expect((await s.admin.delete(`/admin/v1/workspaces/${w.ws}`)).status).toBe(404);
  expect((await s.admin.get('/admin/v1/workspaces')).body.data.map((x: { name: string }) => x.name)).not.toContain(w.ws);

  const done = await eventually(async () => {
    const status = await s.admin.get(res.headers.get('location')!);
    expect(status.status).toBe(200);
    return status.body.status === 'done' && status.body;
  }, 30_000);
  expect(done).toMatchObject({ workspace: w.ws, error: null, finished_at: expect.any(String) });
  expect(done.removed).toMatchObject({ files: 3, stored_contents: 1, entries: 3, webhooks: 1 });

  // Every table that can name one of its rows names none now (its deletion's own record aside).
  const { rows: columns } = await s.server.app.db.query<{ table_name: string; column_name: string }>(
    `SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = ANY($1::text[]) AND table_name <> 'workspace_deletions' ORDER BY 1, 2`,
    [Object.keys(ids)],
  );
  expect(columns.length).toBeGreaterThan(20);
  const left: string[] = [];
  for (const { table_name, column_name } of columns) {
    const { rows } = await s.server.app.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${table_name}" WHERE "${column_name}" = ANY($1::int[])`,
      [ids[column_name as keyof typeof ids]],
    );
    if (rows[0].n) left.push(`${table_name}.${column_name}: ${rows[0].n}`);
  }
  expect(left).toEqual([]);
  const tables = await s.server.app.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM unnest($1::int[]) t WHERE to_regclass('typed_' || t) IS NOT NULL`,
    [ids.content_type_id],
  );
  expect(tables.rows[0].n).toBe(0);
  const jobs = await s.server.app.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pgboss.job WHERE state IN ('created', 'retry') AND data ->> 'workspaceId' = $1`,
    [String(ids.workspace_id[0])],
  );
  expect(jobs.rows[0].n).toBe(0);
  // Stored contents: its own gone, the one another workspace's file shares kept; no cached variant.
  const stored = await storedHashes();
  expect([stored.has(imageHash), stored.has(ownHash), stored.has(commonHash)]).toEqual([true, false, true]);
  expect(existsSync(path.join(s.db.dataDir, 'image-cache', w.ws))).toBe(false);

  // The other workspace keeps everything (its image shares the first's content: same bytes).
  expect((await other.w.api.get(other.w.entry(other.entry))).status).toBe(200);
  expect((await other.w.api.get(other.w.typed('post', '', 'blog'))).body).toHaveLength(1);
  expect(existsSync(path.join(s.db.dataDir, 'image-cache', other.w.ws))).toBe(true);
  // The name is free again.
  expect((await s.admin.post('/admin/v1/workspaces', { name: w.ws })).status).toBe(201);
  expect((await s.admin.get(`/admin/v1/workspaces/${w.ws}/buckets/blog`)).status).toBe(404);
  expect((await s.admin.get('/admin/v1/workspace-deletions/999999')).status).toBe(404);
}, 60_000);

it('deletes a creator with their keys and own files; what they wrote stays', async () => {
  const w = await entriesWorkspace(s);
  await createContentType(s, w.ws, 'general', { name: 'note', fields: [{ name: 'text', type: 'text' }] });
  const note = await createEntry(w, 'note', { fields: { text: 'kept' }, status: 'published' });
  const picture = await s.admin.post(`/admin/v1/workspaces/${w.ws}/users/${w.userId}/files`, {
    file: { name: 'me.txt', type: 'text/plain', content: Buffer.from(`me ${w.ws}`).toString('base64') },
  });
  expect(picture.status).toBe(201);
  const [{ h: hash }] = (await s.server.app.db.query<{ h: string }>('SELECT content_hash AS h FROM files WHERE id = $1', [picture.body.id]))
    .rows;
  expect((await storedHashes()).has(hash)).toBe(true);
  const other = await s.admin.post(`/admin/v1/workspaces/${w.ws}/users`, {
    email: `other-${w.ws}@example.com`,
    permissions: ['view-entry'],
  });
  const otherKey = await s.admin.post(`/admin/v1/workspaces/${w.ws}/api-keys`, { name: 'other', user_id: other.body.id, abilities: ['*'] });

  expect((await s.admin.delete(`/admin/v1/workspaces/${w.ws}/users/${w.userId}`)).status).toBe(204);
  expect((await w.api.get(w.entry(note.id))).status).toBe(403);
  const { rows } = await s.server.app.db.query<{ n: number }>(
    'SELECT (SELECT count(*) FROM users WHERE id = $1) + (SELECT count(*) FROM api_keys WHERE user_id = $1) + (SELECT count(*) FROM files WHERE user_id = $1) AS n',
    [w.userId],
  );
  expect(Number(rows[0].n)).toBe(0);
  expect((await storedHashes()).has(hash)).toBe(false);
  const read = await fetch(`${s.url}${w.entry(note.id)}`, { headers: { Authorization: `Bearer ${otherKey.body.key}` } });
  expect(read.status).toBe(200);
  expect((await s.admin.delete(`/admin/v1/workspaces/${w.ws}/users/${w.userId}`)).status).toBe(404);
});
