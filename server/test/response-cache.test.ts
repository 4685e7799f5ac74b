// The response cache of delivery reads (http/response-cache.ts): answers kept per process are the
// answers the database gives, whatever changed them (the API, another process, SQL by hand), and
// their temporary file URLs are signed for each answer.
import pg from 'pg';
import { startTestServer, type TestServer } from './support/server';
import { ENTRY_PERMISSIONS, objectsWorkspace, rawJson, type ObjectsWorkspace } from './support/objects';
import { client } from './support/http';
import { eventually } from './support/receiver';
import { contentStatements, fewestStatements } from './support/statements';
import { fillHoles, filledBytes, Fresh, withHoles } from '../src/lib/fresh-json';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { loadConfig } from '../src/config';
import { answerBuffer } from '../src/http/answer-buffers';

let s: TestServer;
let w: ObjectsWorkspace;
const entries = () => `/api/v1/${w.ws}/entries`;
const typed = (type: string, extra = '') => `${entries()}?contentBucket=general&contentType=${type}${extra}`;
const query = () => `/api/v1/${w.ws}/general/entries/query`;

async function create(type: string, body: Record<string, unknown>) {
  const res = await w.api.post(typed(type), body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  s = await startTestServer();
  // Statements are counted in this process: its minutely tasks (publication, the typed-storage
  // fill, contract rechecks) would add theirs to a request's when they run meanwhile. None of
  // these tests needs them (caches are dropped through LISTEN).
  await s.server.app.scheduler.stop();
  await s.server.app.jobs.stop();
  w = await objectsWorkspace(s, { permissions: [...ENTRY_PERMISSIONS, 'create-file', 'view-file', 'delete-file'] });
  for (const body of [
    { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] },
    {
      name: 'post',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'amount', type: 'number' },
        { name: 'author', type: 'relation', targets: ['author'] },
        { name: 'cover', type: 'attachment' },
      ],
    },
  ]) {
    const res = await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`, body);
    expect(res.status).toBe(201);
  }
});
afterAll(() => s.close());

describe('fresh JSON', () => {
  it('leaves holes for fresh values and fills them at the time asked; a stored string cannot make one', () => {
    const at = (now: Date) => ({ expires: now.getTime() });
    const body = { a: new Fresh(new Date(1000), at), b: ['x', new Fresh(new Date(1000), at)], c: '\u0000fresh:0123456789abcdef01234567' };
    expect(JSON.parse(JSON.stringify(body))).toEqual({ a: { expires: 1000 }, b: ['x', { expires: 1000 }], c: body.c });
    const holed = withHoles(() => JSON.stringify(body));
    expect(holed.holes).toHaveLength(2);
    expect(JSON.parse(fillHoles(holed, new Date(5000)))).toEqual({ a: { expires: 5000 }, b: ['x', { expires: 5000 }], c: body.c });
    // Outside withHoles, values serialize as made.
    expect(JSON.stringify(body.a)).toBe('{"expires":1000}');
  });

  it('writes the filled text as its UTF-8 bytes, multi-byte characters on both sides of a hole', () => {
    const at = (now: Date) => ({ name: 'Zoë 😀', expires: now.getTime() });
    const body = { before: 'ü€', a: new Fresh(new Date(1000), at), after: '😀'.repeat(3), b: [new Fresh(new Date(1000), at)] };
    const holed = withHoles(() => JSON.stringify(body));
    const bytes = filledBytes(holed, new Date(7000));
    expect(bytes.equals(Buffer.from(fillHoles(holed, new Date(7000)), 'utf8'))).toBe(true);
    expect(JSON.parse(bytes.toString('utf8'))).toEqual({ before: 'ü€', a: at(new Date(7000)), after: '😀😀😀', b: [at(new Date(7000))] });
  });
});

describe('answer buffers', () => {
  const response = () => new EventEmitter() as unknown as ServerResponse;

  it("reuses a large answer's buffer only once the answer is sent, and never a small one's", () => {
    const first = response();
    const a = answerBuffer(first, 100_000);
    expect(a.length).toBe(100_000);
    // Not sent yet: another answer gets other memory.
    const b = answerBuffer(response(), 100_000);
    expect(b.buffer).not.toBe(a.buffer);
    first.emit('finish');
    const c = answerBuffer(response(), 120_000);
    expect(c.buffer).toBe(a.buffer);
    expect(c.length).toBe(120_000);
    // Small answers take fresh buffers.
    const small = response();
    const d = answerBuffer(small, 1000);
    small.emit('finish');
    // (They may share Node's pool with `d`: the same memory means the same pool and offset.)
    const e = answerBuffer(response(), 1000);
    expect(e.buffer === d.buffer && e.byteOffset === d.byteOffset).toBe(false);
  });

  it('gives concurrent large answers intact', async () => {
    // A type of its own, so that the other tests' lists stay small.
    const type = await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`, {
      name: 'note',
      fields: [{ name: 'title', type: 'text', required: true }],
    });
    expect(type.status).toBe(201);
    const title = 'ü'.repeat(3000);
    for (let i = 0; i < 30; i++) await create('note', { fields: { title: `${i}${title}` }, status: 'published' });
    const pages = [10, 20, 30].map((n) => typed('note', `&per_page=${n}`));
    const alone = await Promise.all(pages.map(async (p) => (await w.api.get(p)).text));
    const together = await Promise.all(Array.from({ length: 30 }, (_, i) => w.api.get(pages[i % 3])));
    together.forEach((res, i) => {
      expect(res.status).toBe(200);
      expect(res.text).toBe(alone[i % 3]);
    });
    expect(Buffer.byteLength(alone[2])).toBeGreaterThan(64 * 1024);
  });
});

describe('kept answers', () => {
  it('is on without the test clock, and off with RESPONSE_CACHE_MB=0', async () => {
    expect(s.server.app.responses).toBeDefined();
    expect(s.server.app.config.responseCacheBytes).toBe(64 * 1024 * 1024);
    const base = { ADMIN_TOKEN: 'x', APP_KEY: 'y' };
    expect(loadConfig({ ...base, RESPONSE_CACHE_MB: '8' }).responseCacheBytes).toBe(8 * 1024 * 1024);
    for (const bad of ['-1', '1.5', 'lots'])
      expect(() => loadConfig({ ...base, RESPONSE_CACHE_MB: bad })).toThrow(`RESPONSE_CACHE_MB must be an integer >= 0, got "${bad}"`);
    const off = await startTestServer({ RESPONSE_CACHE_MB: '0' }, s.db);
    try {
      expect(off.server.app.responses).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it('answers a read, a list and a query again without the database, with file URLs signed afresh', async () => {
    const file = await w.api.post(`/api/v1/${w.ws}/files`, {
      file: { name: 'c.txt', type: 'text/plain', content: Buffer.from('cover').toString('base64') },
    });
    expect(file.status).toBe(201);
    const author = await create('author', { fields: { name: 'Ada' }, status: 'published' });
    const post = await create('post', { fields: { title: 'One', amount: 2, author: author.id, cover: file.body.id }, status: 'published' });
    const read = `${entries()}/${post.id}`;
    const first = await w.api.get(read);
    expect(first.status).toBe(200);
    expect(first.body.fields.author).toMatchObject({ id: author.id, fields: { name: 'Ada' } });
    // A second apart, so that the URLs' expiry differs.
    await new Promise((r) => setTimeout(r, 1_100));
    let again = first;
    expect(await fewestStatements(s, async () => (again = await w.api.get(read)))).toBe(0);
    expect(again).not.toBe(first);
    expect(again.status).toBe(200);
    const { cover: c1, ...rest1 } = first.body.fields;
    const { cover: c2, ...rest2 } = again.body.fields;
    expect({ ...again.body, fields: rest2 }).toEqual({ ...first.body, fields: rest1 });
    expect(Date.parse(c2.temporary_url_expires_at)).toBeGreaterThan(Date.parse(c1.temporary_url_expires_at));
    expect(Date.parse(c2.temporary_url_expires_at) - Date.now()).toBeGreaterThan(595_000);
    expect(c2.temporary_url).not.toBe(c1.temporary_url);
    // The kept answer's URL is a valid signature.
    const download = await fetch(c2.temporary_url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe('cover');

    for (const ask of [
      () => w.api.get(typed('post')),
      () => w.api.post(query(), { type: 'post', aggregate: { count: true, sum: ['amount'] } }),
    ]) {
      // Within one second, a file's URLs are signed the same: asked across a second's turn, the pair is asked again.
      for (let attempt = 1; ; attempt++) {
        const second = Math.floor(Date.now() / 1000);
        const one = await ask();
        expect(one.status).toBe(200);
        let two = one;
        expect(await fewestStatements(s, async () => (two = await ask()))).toBe(0);
        expect(two).not.toBe(one);
        if (Math.floor(Date.now() / 1000) !== second && attempt < 3) continue;
        expect(two.text).toBe(one.text);
        break;
      }
    }
  });

  it('sees every write through the API at once: entries, related entries, files', async () => {
    const file = await w.api.post(`/api/v1/${w.ws}/files`, {
      file: { name: 'd.txt', type: 'text/plain', content: Buffer.from('d').toString('base64') },
    });
    const author = await create('author', { fields: { name: 'Bo' }, status: 'published' });
    const post = await create('post', { fields: { title: 'Two', amount: 3, author: author.id, cover: file.body.id }, status: 'published' });
    const read = `${entries()}/${post.id}`;
    const sum = () => w.api.post(query(), { type: 'post', aggregate: { count: true } });
    const before = (await sum()).body.data[0].count;
    expect((await w.api.get(read)).body.fields.author.fields.name).toBe('Bo');
    await w.api.get(read);

    // A related entry changes: the read that renders it changes.
    expect((await w.api.patch(`${entries()}/${author.id}`, { fields: { name: 'Bob' } })).status).toBe(200);
    expect((await w.api.get(read)).body.fields.author.fields.name).toBe('Bob');
    // The file goes: the attachment with it.
    expect((await w.api.get(read)).body.fields.cover).toMatchObject({ id: file.body.id });
    expect((await w.api.delete(`/api/v1/${w.ws}/files/${file.body.id}`)).status).toBe(204);
    expect((await w.api.get(read)).body.fields.cover).toBeNull();
    // A new entry counts; a deleted one is gone.
    await create('post', { fields: { title: 'Three' }, status: 'published' });
    expect((await sum()).body.data[0].count).toBe(before + 1);
    expect((await w.api.delete(read)).status).toBe(204);
    expect((await w.api.get(read)).status).toBe(404);
    expect((await sum()).body.data[0].count).toBe(before);
  });

  it('keeps the file rows of delivery reads with the answers, dropped with them', async () => {
    const file = await w.api.post(`/api/v1/${w.ws}/files`, {
      file: { name: 'e.txt', type: 'text/plain', content: Buffer.from('e').toString('base64') },
    });
    const posts: any[] = [];
    for (const title of ['P1', 'P2', 'P3', 'P4'])
      posts.push(await create('post', { fields: { title, cover: file.body.id }, status: 'published' }));
    const [p1, p2] = posts;
    expect((await w.api.get(`${entries()}/${p1.id}`)).body.fields.cover).toMatchObject({ id: file.body.id, name: 'e.txt' });
    // The answers of P2 to P4 are not kept yet, their cover's row is: the entry's statement only
    // (the fewest of the three reads: a scheduled task may touch entries meanwhile).
    const reads: any[] = [];
    expect(await fewestStatements(s, async () => reads.push(await w.api.get(`${entries()}/${posts[reads.length + 1].id}`)))).toBe(1);
    for (const read of reads) expect(read.body.fields.cover).toMatchObject({ id: file.body.id, name: 'e.txt', size: 1 });
    // A change to the file's row drops it with the answers (here made in the database directly).
    if (!s.db.url) return;
    const sql = new pg.Client({ connectionString: s.db.url });
    await sql.connect();
    try {
      await sql.query(`UPDATE files SET name = 'renamed.txt' WHERE id = $1`, [file.body.id]);
      await eventually(async () => (await w.api.get(`${entries()}/${p2.id}`)).body.fields.cover.name === 'renamed.txt', 2_000);
      expect((await w.api.get(`${entries()}/${p1.id}`)).body.fields.cover.name).toBe('renamed.txt');
    } finally {
      await sql.end();
    }
  });

  it('keeps no answer but a 200: an entry read as 404 reads once published', async () => {
    const draft = await create('post', { fields: { title: 'Later' } });
    const read = `${entries()}/${draft.id}`;
    expect((await w.api.get(read)).status).toBe(404);
    expect((await w.api.get(read)).status).toBe(404);
    expect((await w.api.patch(read, { status: 'published' })).status).toBe(200);
    expect((await w.api.get(read)).status).toBe(200);
  });

  it('drops its answers on changes made in the database directly', async () => {
    const post = await create('post', { fields: { title: 'By hand' }, status: 'published' });
    const read = `${entries()}/${post.id}`;
    expect((await w.api.get(read)).body.fields.title).toBe('By hand');
    // The embedded database has no second connection: its own writes are the only ones.
    if (!s.db.url) return;
    const sql = new pg.Client({ connectionString: s.db.url });
    await sql.connect();
    try {
      await sql.query(
        `UPDATE entry_contents SET data = jsonb_set(data, '{title}', '"Changed"') WHERE entry_pk = (SELECT id FROM entries WHERE entry_id = $1)`,
        [post.id],
      );
      await eventually(async () => (await w.api.get(read)).body.fields.title === 'Changed', 2_000);
    } finally {
      await sql.end();
    }
  });
});

describe('kept per workspace', () => {
  it("keeps a workspace's answers through another's changes, and drops them on its own", async () => {
    const other = await objectsWorkspace(s, { permissions: ENTRY_PERMISSIONS });
    const made = await s.admin.post(`/admin/v1/workspaces/${other.ws}/buckets/general/content-types`, {
      name: 'post',
      fields: [{ name: 'title', type: 'text' }],
    });
    expect(made.status).toBe(201);
    const mine = await create('post', { fields: { title: 'Mine' }, status: 'published' });
    const theirsList = `/api/v1/${other.ws}/entries?contentBucket=general&contentType=post`;
    const titles = (res: { body: { fields: { title: string } }[] }) => res.body.map((e) => e.fields.title);
    const read = `${entries()}/${mine.id}`;
    /** The key an ask of `fn` kept (the one new key). */
    const keptBy = async (fn: () => Promise<unknown>) => {
      const before = new Set(s.server.app.responses!.kept().map((k) => k.key));
      await fn();
      const added = s.server.app.responses!.kept().filter((k) => !before.has(k.key));
      expect(added).toHaveLength(1);
      return added[0].key;
    };
    const kept = () => new Set(s.server.app.responses!.kept().map((k) => k.key));
    const mineKey = await keptBy(() => w.api.get(read));
    let theirsKey = await keptBy(async () => expect(titles(await other.api.get(theirsList))).toEqual([]));
    // A change in the other workspace: this one's read stays kept, theirs shows their write.
    expect((await other.api.post(theirsList, { fields: { title: 'Theirs' }, status: 'published' })).status).toBe(201);
    expect(kept().has(mineKey)).toBe(true);
    expect(kept().has(theirsKey)).toBe(false);
    expect(await contentStatements(s, () => w.api.get(read))).toBe(0);
    theirsKey = await keptBy(async () => expect(titles(await other.api.get(theirsList))).toEqual(['Theirs']));
    // A change in this one drops its answers, not theirs.
    expect((await w.api.patch(read, { fields: { title: 'Mine again' } })).status).toBe(200);
    expect(kept().has(theirsKey)).toBe(true);
    expect(kept().has(mineKey)).toBe(false);
    expect((await w.api.get(read)).body.fields.title).toBe('Mine again');
    // A change to the workspace's model (a content type of its own) drops its answers too.
    expect(kept().has(mineKey)).toBe(true);
    expect(
      (
        await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`, {
          name: 'extra',
          fields: [{ name: 'x', type: 'text' }],
        })
      ).status,
    ).toBe(201);
    expect(kept().has(mineKey)).toBe(false);
    expect(kept().has(theirsKey)).toBe(true);
  });
});

describe('its bounds', () => {
  it('holds at most RESPONSE_CACHE_MB, keys included, and keys a body by its JSON, not its whitespace', async () => {
    // A database of its own: on the embedded database a second server cannot share the first's.
    const small = await startTestServer({ RESPONSE_CACHE_MB: '1' });
    try {
      const own = await objectsWorkspace(small, { permissions: ENTRY_PERMISSIONS });
      const type = await small.admin.post(`/admin/v1/workspaces/${own.ws}/buckets/general/content-types`, {
        name: 'post',
        fields: [{ name: 'title', type: 'text' }],
      });
      expect(type.status).toBe(201);
      const api = client(small.url, own.key);
      const path = `/api/v1/${own.ws}/general/entries/query`;
      // Tiny answers to bodies padded to 60 KB: the bodies are what a cache keyed by them would hold.
      const padded = (offset: number, pad = 60_000) => `{"type":"post","offset":${offset}}${' '.repeat(pad)}`;
      const first = await eventually(async () => {
        const res = await rawJson(api, 'POST', path, padded(9_000));
        expect(res.status).toBe(200);
        return (await contentStatements(small, () => rawJson(api, 'POST', path, padded(9_000)))) === 0 && res;
      });
      expect(first.body).toEqual({ data: [], pagination: { offset: 9_000, limit: 20, hasMore: false } });
      // Whitespace elsewhere and of another length: the same JSON, the same kept answer.
      let again = first;
      const spaced = `\n { "type" : "post",\t"offset" : 9000 }${' '.repeat(50_000)}\r\n`;
      expect(await fewestStatements(small, async () => (again = await rawJson(api, 'POST', path, spaced)))).toBe(0);
      expect(again.text).toBe(first.text);

      for (let i = 0; i < 30; i++) expect((await rawJson(api, 'POST', path, padded(9_001 + i))).status).toBe(200);
      const kept = small.server.app.responses!.kept();
      expect(kept.length).toBeGreaterThan(1);
      // Every byte an entry holds counts (key and text at least), and all of them together stay within the setting.
      const held = (k: (typeof kept)[number]) =>
        Buffer.byteLength(k.key) + k.value.json.parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
      for (const k of kept) expect(k.weight).toBeGreaterThanOrEqual(held(k));
      expect(kept.reduce((n, k) => n + k.weight, 0)).toBeLessThanOrEqual(1024 * 1024);
      // A different query is a different answer.
      expect((await rawJson(api, 'POST', path, padded(9_001))).body.pagination.offset).toBe(9_001);
    } finally {
      await small.close();
    }
  });
});
