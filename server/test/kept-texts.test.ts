// Rendered delivery entries kept in the database (core/content/kept-texts.ts): a delivery list
// keeps the texts it rendered, later lists and reads read them, and every change to what a text shows
// or examines (the entry, a related entry to the depth rendered, a reference that shows nothing
// yet, a file, the content types) is seen by the next answer. With the response cache off, so that
// every answer reaches the database.
import { Client } from 'pg';
import { startTestServer, type TestServer } from './support/server';
import { ENTRY_PERMISSIONS, objectsWorkspace, type ObjectsWorkspace } from './support/objects';
import { fewestStatements } from './support/statements';
import type { TestResponse } from './support/http';

let s: TestServer;
let w: ObjectsWorkspace;
const entries = () => `/api/v1/${w.ws}/entries`;
const typed = (type: string, extra = '') => `${entries()}?contentBucket=general&contentType=${type}${extra}`;

async function create(type: string, body: Record<string, unknown>) {
  const res = await w.api.post(typed(type), body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body;
}

/** An answer without its file's temporary URLs (signed at the second of the answer). */
const stable = (body: unknown) => JSON.parse(JSON.stringify(body).replace(/"temporary_(image_)?url(_expires_at)?":("[^"]*"|null),?/g, ''));

async function read(id: string) {
  const res = await w.api.get(`${entries()}/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Lists every post (fewer than a page), which keeps their texts, and reads `id` (kept if listed). */
async function listed(id: string) {
  const res = await w.api.get(typed('post', '&per_page=100'));
  expect(res.status).toBe(200);
  expect(res.body.next_page_url).toBeNull();
  // The keep that this answer started, if any, is done before the test looks.
  await s.server.app.keeper!.settled();
  const one = await read(id);
  expect(stable(res.body.data.find((e: any) => e.id === id))).toEqual(stable(one));
  return one;
}

/** The kept texts of an entry (by ULID): each one's text and deps. */
async function keptOf(id: string): Promise<{ text: string; deps: string[] }[]> {
  const { rows } = await s.server.app.db.query<{ text: string; deps: string[] }>(
    'SELECT k.text, k.deps FROM entry_texts k JOIN entries e ON e.id = k.entry_pk WHERE e.entry_id = $1',
    [id],
  );
  return rows;
}

async function upload(name: string) {
  const res = await w.api.post(`/api/v1/${w.ws}/files`, {
    file: { name, type: 'text/plain', content: Buffer.from(name).toString('base64') },
  });
  expect(res.status).toBe(201);
  return res.body;
}

beforeAll(async () => {
  s = await startTestServer({ RESPONSE_CACHE_MB: '0' });
  w = await objectsWorkspace(s, { permissions: [...ENTRY_PERMISSIONS, 'create-file', 'view-file', 'delete-file'] });
  for (const body of [
    {
      name: 'person',
      fields: [
        { name: 'name', type: 'text', required: true },
        { name: 'mentor', type: 'relation', targets: ['person'] },
      ],
    },
    {
      name: 'post',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'authors', type: 'relation', targets: ['person'], multiple: true },
        { name: 'cover', type: 'attachment' },
      ],
    },
  ]) {
    const res = await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`, body);
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await s?.close();
});

describe('kept texts', () => {
  it('keeps what a list rendered, with what it depends on, and answers the next lists and reads from it in one statement', async () => {
    const mentor = await create('person', { fields: { name: 'Mentor' }, status: 'published' });
    const author = await create('person', { fields: { name: 'Ann', mentor: mentor.id }, status: 'published' });
    const draft = await create('person', { fields: { name: 'Drafty' } });
    const file = await upload('cover.txt');
    const post = await create('post', { fields: { title: 'Kept', authors: [author.id, draft.id], cover: file.id }, status: 'published' });
    const first = await listed(post.id);
    expect(first.fields.authors.map((a: any) => a.name)).toEqual(['Ann']);
    const [kept] = await keptOf(post.id);
    // The post, the author and her mentor, the draft it examines, and the file it shows.
    expect([...kept.deps].sort()).toEqual([post.id, author.id, mentor.id, draft.id, `f:${file.id}`].sort());
    expect(stable(await listed(post.id))).toEqual(stable(first));
    // The answer is the kept text: changed where no change would reach it, the answer follows.
    await s.server.app.db.query(`UPDATE entry_texts SET text = replace(text, '"title":"Kept"', '"title":"From the kept text"')`);
    expect((await listed(post.id)).fields.title).toBe('From the kept text');
    expect(await fewestStatements(s, () => w.api.get(`${entries()}/${post.id}`))).toBe(1);
    // Another locale is another text.
    const german = await w.api.get(typed('post', '&per_page=100&locale=de-DE'));
    expect(german.status).toBe(200);
    expect(german.body.data.find((e: any) => e.id === post.id).fields.title).not.toBe('From the kept text');
    await s.server.app.keeper!.settled();
    expect(await keptOf(post.id)).toHaveLength(2);
  });

  it('shows every change to the entry, a related entry at any depth rendered, a reference that showed nothing, or a file', async () => {
    const mentor = await create('person', { fields: { name: 'Old mentor' }, status: 'published' });
    const author = await create('person', { fields: { name: 'Bea', mentor: mentor.id }, status: 'published' });
    const draft = await create('person', { fields: { name: 'Not yet' } });
    const file = await upload('shown.txt');
    const post = await create('post', {
      fields: { title: 'Watched', authors: [author.id, draft.id], cover: file.id },
      status: 'published',
    });
    const names = (p: any) => p.fields.authors.map((a: any) => a.name);
    expect(names(await listed(post.id))).toEqual(['Bea']);
    expect(await keptOf(post.id)).toHaveLength(1);

    // The entry itself.
    expect((await w.api.patch(`${entries()}/${post.id}`, { fields: { title: 'Watched again' } })).status).toBe(200);
    expect(await keptOf(post.id)).toHaveLength(0);
    expect((await listed(post.id)).fields.title).toBe('Watched again');
    // Two levels down.
    expect((await w.api.patch(`${entries()}/${mentor.id}`, { fields: { name: 'New mentor' } })).status).toBe(200);
    expect((await listed(post.id)).fields.authors[0].fields.mentor.name).toBe('New mentor');
    // A reference that showed nothing: the draft, published.
    expect((await w.api.patch(`${entries()}/${draft.id}`, { status: 'published' })).status).toBe(200);
    expect(names(await listed(post.id))).toEqual(['Bea', 'Not yet']);
    // A related entry deleted.
    expect((await w.api.delete(`${entries()}/${author.id}`)).status).toBe(204);
    expect(names(await listed(post.id))).toEqual(['Not yet']);
    // The file deleted.
    expect((await listed(post.id)).fields.cover).toMatchObject({ id: file.id });
    expect((await w.api.delete(`/api/v1/${w.ws}/files/${file.id}`)).status).toBe(204);
    expect((await listed(post.id)).fields.cover).toBeNull();
    // Each answer was kept again.
    expect(await keptOf(post.id)).toHaveLength(1);
  });

  it('keeps the entries of a page, and a page of kept and new entries reads in order, either way', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create('post', { fields: { title: `Paged ${i}` }, status: 'published' })).id);
    // All kept, then two changed: the pages find some kept and render the others.
    await listed(ids[0]);
    for (const i of [1, 3])
      expect((await w.api.patch(`${entries()}/${ids[i]}`, { fields: { title: `Paged ${i}, changed` } })).status).toBe(200);
    expect(await keptOf(ids[1])).toHaveLength(0);
    expect(await keptOf(ids[2])).toHaveLength(1);
    const page = async (extra: string) => {
      const res = await w.api.get(typed('post', `&per_page=2${extra}`));
      expect(res.status).toBe(200);
      await s.server.app.keeper!.settled();
      return res.body;
    };
    const all: any[] = [];
    let next = await page('');
    for (;;) {
      all.push(...next.data);
      if (!next.next_page_url) break;
      next = await page(`&cursor=${new URL(next.next_page_url).searchParams.get('cursor')}`);
    }
    expect(all.map((e) => e.id).filter((id) => ids.includes(id))).toEqual(ids);
    expect(all.find((e) => e.id === ids[3]).fields.title).toBe('Paged 3, changed');
    for (const id of ids) expect(await keptOf(id)).toHaveLength(1);
    // Backwards, every entry kept now: the same entries in the same order.
    const back = await page(`&cursor=${new URL(next.prev_page_url).searchParams.get('cursor')}`);
    const index = all.findIndex((e) => e.id === back.data[0].id);
    expect(stable(back.data)).toEqual(stable(all.slice(index, index + back.data.length)));
  });

  it('keeps nothing from a read: it reads what lists kept', async () => {
    const post = await create('post', { fields: { title: 'Read alone' }, status: 'published' });
    await read(post.id);
    await s.server.app.keeper!.settled();
    expect(await keptOf(post.id)).toHaveLength(0);
    await listed(post.id);
    expect(await keptOf(post.id)).toHaveLength(1);
  });

  it('does not read the texts of other content type definitions', async () => {
    const post = await create('post', { fields: { title: 'Typed' }, status: 'published' });
    const before = await listed(post.id);
    expect(await keptOf(post.id)).toHaveLength(1);
    const res = await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`, {
      name: 'later',
      fields: [{ name: 'x', type: 'text' }],
    });
    expect(res.status).toBe(201);
    // The workspace's texts were of the earlier definitions.
    expect(await keptOf(post.id)).toHaveLength(0);
    expect(stable(await listed(post.id))).toEqual(stable(before));
    expect(await keptOf(post.id)).toHaveLength(1);
  });

  it('keeps nothing while a change of the workspace is uncommitted, and shows it once committed', async () => {
    const author = await create('person', { fields: { name: 'Before' }, status: 'published' });
    const post = await create('post', { fields: { title: 'Racing', authors: [author.id] }, status: 'published' });
    if (!s.db.url) return; // The embedded database has one connection: no change can be in flight beside a read.
    const other = new Client({ connectionString: s.db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE entry_contents SET data = jsonb_set(data, '{name}', '"After"') WHERE entry_id = $1`, [author.id]);
      // The read renders what is committed, and keeps nothing: it could be out of date at the commit.
      expect((await listed(post.id)).fields.authors[0].name).toBe('Before');
      expect(await keptOf(post.id)).toHaveLength(0);
      await other.query('COMMIT');
    } finally {
      await other.end();
    }
    expect((await listed(post.id)).fields.authors[0].name).toBe('After');
    expect(await keptOf(post.id)).toHaveLength(1);
  });

  it('makes a change wait while a keeper holds the lock, then delete what it kept', async () => {
    const author = await create('person', { fields: { name: 'Held' }, status: 'published' });
    const post = await create('post', { fields: { title: 'Held up', authors: [author.id] }, status: 'published' });
    if (!s.db.url) return; // The embedded database has one connection: a keeper and a change never overlap.
    const keeper = new Client({ connectionString: s.db.url });
    await keeper.connect();
    try {
      // As a keeper does: the workspace's lock exclusively, then a text written from what it read.
      await keeper.query('BEGIN');
      const { rows } = await keeper.query('SELECT e.id, e.workspace_id FROM entries e WHERE e.entry_id = $1', [post.id]);
      expect((await keeper.query('SELECT pg_try_advisory_xact_lock(280001, $1) AS taken', [rows[0].workspace_id])).rows).toEqual([
        { taken: true },
      ]);
      await keeper.query(`INSERT INTO entry_texts (entry_pk, variant, workspace_id, text, deps) VALUES ($1, 'held', $2, '{}', $3)`, [
        rows[0].id,
        rows[0].workspace_id,
        [post.id, author.id],
      ]);
      let changed = false;
      const change = w.api.patch(`${entries()}/${author.id}`, { fields: { name: 'Held no more' } }).then((res) => ((changed = true), res));
      // The change waits for the keeper (its trigger's lock) ...
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(changed).toBe(false);
      await keeper.query('COMMIT');
      // ... then deletes the text the keeper wrote before it could see the change.
      expect((await change).status).toBe(200);
      expect(await keptOf(post.id)).toHaveLength(0);
    } finally {
      await keeper.end();
    }
  });
});

describe('KEEP_RENDERED_ENTRIES=false', () => {
  it('keeps nothing', async () => {
    const off = await startTestServer({ RESPONSE_CACHE_MB: '0', KEEP_RENDERED_ENTRIES: 'false' });
    try {
      expect(off.server.app.keeper).toBeUndefined();
      const ws = await objectsWorkspace(off);
      expect(
        (
          await off.admin.post(`/admin/v1/workspaces/${ws.ws}/buckets/general/content-types`, {
            name: 'note',
            fields: [{ name: 'text', type: 'text' }],
          })
        ).status,
      ).toBe(201);
      const list = `/api/v1/${ws.ws}/entries?contentBucket=general&contentType=note`;
      expect((await ws.api.post(list, { fields: { text: 'Unkept' }, status: 'published' })).status).toBe(201);
      const res = await ws.api.get(`${list}&per_page=10`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((e: any) => e.fields.text)).toEqual(['Unkept']);
      expect((await off.server.app.db.query('SELECT count(*)::int AS n FROM entry_texts')).rows).toEqual([{ n: 0 }]);
    } finally {
      await off.close();
    }
  });
});

describe('its bounds', () => {
  it('keeps nothing of a refused answer, and holds at most KEPT_TEXTS_MB per workspace, the oldest kept going first', async () => {
    const small = await startTestServer({ RESPONSE_CACHE_MB: '0', KEPT_TEXTS_MB: '1', DELIVERY_ANSWER_MB: '1' });
    try {
      const ws = await objectsWorkspace(small);
      expect(
        (
          await small.admin.post(`/admin/v1/workspaces/${ws.ws}/buckets/general/content-types`, {
            name: 'note',
            fields: [
              { name: 'text', type: 'text' },
              { name: 'more', type: 'text' },
            ],
          })
        ).status,
      ).toBe(201);
      const list = `/api/v1/${ws.ws}/entries?contentBucket=general&contentType=note`;
      const ids: string[] = [];
      for (let i = 0; i < 24; i++) {
        const res = await ws.api.post(list, {
          fields: { text: `${i} `.padEnd(50_000, 'x'), more: 'y'.repeat(50_000) },
          status: 'published',
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const kept = async () =>
        (
          await small.server.app.db.query<{ entry_id: string; bytes: number }>(
            'SELECT e.entry_id, k.bytes FROM entry_texts k JOIN entries e ON e.id = k.entry_pk ORDER BY k.kept',
          )
        ).rows;
      // 15 entries of 100 KB: over the answer's 1 MB, refused, and nothing kept of it; its
      // rendering stopped once past the budget: the bytes it wrote are the budget's and one text
      // more (about 100 KB), not the 15 texts' 1.5 MB. Both forms (render.ts): notes are rendered
      // nested, chains (a multiple relation to their own type) breadth first.
      expect(
        (
          await small.admin.post(`/admin/v1/workspaces/${ws.ws}/buckets/general/content-types`, {
            name: 'chain',
            fields: [
              { name: 'text', type: 'text' },
              { name: 'more', type: 'text' },
              { name: 'next', type: 'relation', targets: ['chain'], multiple: true },
            ],
          })
        ).status,
      ).toBe(201);
      const chains = `/api/v1/${ws.ws}/entries?contentBucket=general&contentType=chain`;
      const end = await ws.api.post(chains, { fields: { text: 'end' }, status: 'published' });
      for (let i = 0; i < 15; i++) {
        const res = await ws.api.post(chains, {
          fields: { text: `${i} `.padEnd(50_000, 'x'), more: 'y'.repeat(50_000), next: [end.body.id] },
          status: 'published',
        });
        expect(res.status).toBe(201);
      }
      const db = small.server.app.db;
      for (const [path, form] of [
        [list, 'nested'],
        [chains, 'tree'],
      ] as const) {
        const original = db.query;
        const statements: { text: string; values?: unknown[] }[] = [];
        db.query = ((text: string, values?: unknown[], prepare?: never) => (
          statements.push({ text, values }),
          original.call(db, text, values, prepare)
        )) as typeof db.query;
        let refused: TestResponse;
        try {
          refused = await ws.api.get(`${path}&per_page=15`);
        } finally {
          db.query = original;
        }
        expect({ form, status: refused.status }).toEqual({ form, status: 422 });
        await small.server.app.keeper!.settled();
        expect(await kept()).toEqual([]);
        const render = statements.find((q) => q.text.includes('steps(step, root, j, total)'))!;
        expect({ form, tree: render.text.includes('tree AS (') }).toEqual({ form, tree: form === 'tree' });
        const [head] = (await db.query<{ root: number; bytes: number }>(render.text, render.values)).rows;
        expect({ form, root: head.root }).toEqual({ form, root: 0 });
        expect(Number(head.bytes)).toBeGreaterThan(1024 * 1024);
        // A chain's text holds the small chain it relates to too (a few hundred bytes).
        expect({ form, within: Number(head.bytes) < 1024 * 1024 + 110_000 }).toEqual({ form, within: true });
      }
      // Pages of 5 (500 KB each) are kept, past 1 MB the oldest go.
      const pages: unknown[] = [];
      let url: string | null = `${list}&per_page=5`;
      while (url) {
        const res: TestResponse = await ws.api.get(url);
        expect(res.status).toBe(200);
        pages.push(res.body);
        await small.server.app.keeper!.settled();
        const now = await kept();
        expect(now.reduce((n, k) => n + k.bytes, 0)).toBeLessThanOrEqual(1024 * 1024);
        // This page's texts are the newest kept.
        const shown = (res.body as { data: { id: string }[] }).data.map((e) => e.id);
        expect(
          now
            .slice(-shown.length)
            .map((k) => k.entry_id)
            .sort(),
        ).toEqual([...shown].sort());
        const next = (res.body as { next_page_url: string | null }).next_page_url;
        url = next && new URL(next).pathname + new URL(next).search;
      }
      expect(pages).toHaveLength(5);
      // Each page asked again (kept texts where they are left, rendered where evicted) is the same answer.
      url = `${list}&per_page=5`;
      for (const page of pages) {
        const res: TestResponse = await ws.api.get(url!);
        expect(res.body).toEqual(page);
        const next = (res.body as { next_page_url: string | null }).next_page_url;
        url = next && new URL(next).pathname + new URL(next).search;
      }
      expect((await kept()).map((k) => k.bytes).every((b) => b > 100_000)).toBe(true);
    } finally {
      await small.close();
    }
  });
});
