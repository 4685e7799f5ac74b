// The typed Entries API (002): create, read, list v1/v2, update, delete, rendering of relations
// and attachments, field-value rules, locales and the scheduled publication task.
import { startTestServer, type TestServer } from './support/server';
import { ENTRY_PERMISSIONS, objectsWorkspace, rawJson, type ObjectsWorkspace, ULID } from './support/objects';
import { TIMESTAMP } from './support/fixtures';
import { fewestStatements } from './support/statements';
import { client } from './support/http';
import { loadConfig } from '../src/config';

let s: TestServer;
let w: ObjectsWorkspace;
const entries = (ws = w) => `/api/v1/${ws.ws}/entries`;
const typed = (type: string, extra = '') => `${entries()}?contentBucket=general&contentType=${type}${extra}`;

async function contentType(ws: ObjectsWorkspace, body: Record<string, unknown>) {
  const res = await s.admin.post(`/admin/v1/workspaces/${ws.ws}/buckets/general/content-types`, body);
  if (res.status !== 201) throw new Error(`content type: ${res.status} ${res.text}`);
  return res.body;
}

async function create(type: string, body: Record<string, unknown>, extra = '') {
  const res = await w.api.post(typed(type, extra), body);
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return res.body;
}

beforeAll(async () => {
  s = await startTestServer();
  w = await objectsWorkspace(s, { permissions: [...ENTRY_PERMISSIONS, 'create-file', 'view-file', 'delete-file'] });
  await contentType(w, {
    name: 'author',
    fields: [
      { name: 'name', type: 'text', required: true },
      { name: 'email', type: 'text', unique: true },
      { name: 'mentor', type: 'relation', targets: ['author'] },
    ],
  });
  await contentType(w, {
    name: 'article',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'rating', type: 'number' },
      { name: 'featured', type: 'boolean' },
      { name: 'day', type: 'date' },
      { name: 'at', type: 'date', format: 'datetime' },
      { name: 'meta', type: 'json' },
      { name: 'authors', type: 'relation', targets: ['author'], multiple: true },
      { name: 'cover', type: 'attachment' },
    ],
  });
});
// Closing checks that every write of the suite kept typed storage in step with the documents.
afterAll(async () => {
  await s?.close();
});

describe('create and read', () => {
  it('creates a draft with normalized values, renders it, and hides it from delivery reads', async () => {
    const body = await create('article', {
      fields: { title: 'Hello', rating: 4.5, featured: true, day: '2024-02-29', at: '2024-03-01 10:20:30+02:00', meta: { a: [1] } },
    });
    expect(body).toMatchObject({
      name: 'Hello',
      status: 'draft',
      status_label: 'Draft',
      publish_at: null,
      tags: [],
      locales: ['en-US'],
      lock_version: 0,
    });
    expect(body.id).toMatch(ULID);
    expect(body.api_url).toBe(`${s.url}/api/v1/${w.ws}/entries/${body.id}`);
    expect(body.created_at).toMatch(TIMESTAMP);
    expect(body.fields).toEqual({
      title: 'Hello',
      rating: 4.5,
      featured: true,
      day: '2024-02-29',
      at: '2024-03-01T08:20:30Z',
      meta: { a: [1] },
      authors: [],
      cover: null,
    });
    expect((await w.api.get(`${entries()}/${body.id}`)).status).toBe(404);
  });

  it('expands relations and presents attachments; delivery reads show published entries only', async () => {
    const mentor = await create('author', { fields: { name: 'Mentor' }, status: 'published' });
    const author = await create('author', { fields: { name: 'Ann', mentor: mentor.id }, status: 'published' });
    const draft = await create('author', { fields: { name: 'Draft' } });
    const file = await w.api.post(`/api/v1/${w.ws}/files`, {
      file: { name: 'a.txt', type: 'text/plain', content: Buffer.from('x').toString('base64') },
    });
    expect(file.status).toBe(201);
    const article = await create('article', {
      fields: { title: 'Rel', authors: [author.id, draft.id], cover: file.body.id },
      status: 'published',
    });
    const read = await w.api.get(`${entries()}/${article.id}`);
    expect(read.status).toBe(200);
    expect(read.body.fields.authors).toHaveLength(1);
    expect(read.body.fields.authors[0]).toMatchObject({ id: author.id, name: 'Ann', status: 'published' });
    expect(read.body.fields.authors[0].fields.mentor).toMatchObject({ id: mentor.id, name: 'Mentor' });
    expect(read.body.fields.cover).toMatchObject({ id: file.body.id, name: 'a.txt' });
  });

  it('refuses bad values with errors keyed by field, and writes nothing', async () => {
    const res = await w.api.post(typed('article'), {
      fields: { rating: 'x', day: '2023-02-29', at: '2024-01-01 10:00:00.5', nope: 1, authors: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['fields.at', 'fields.day', 'fields.nope', 'fields.rating', 'fields.title']);
    const unique = await w.api.post(typed('author'), { fields: { name: 'U', email: 'u@example.com' } });
    expect(unique.status).toBe(201);
    const again = await w.api.post(typed('author'), { fields: { name: 'V', email: 'u@example.com' } });
    expect(again.status).toBe(422);
    expect(Object.keys(again.body.errors)).toEqual(['fields.email']);
  });
});

describe('update, lists, delete', () => {
  it('updates partially with expected_version, publishes (clearing the schedule), lists v1 and v2, deletes', async () => {
    const a = await create('author', { fields: { name: 'Up' }, publish_at: '2030-01-01T00:00:00Z' });
    expect(a.publish_at).toMatch(/^2030-01-01T00:00:00/);
    const stale = await w.api.patch(`${entries()}/${a.id}`, { fields: { name: 'X' }, expected_version: 5 });
    expect(stale.status).toBe(422);
    expect(Object.keys(stale.body.errors)).toEqual(['expected_version']);
    const up = await w.api.patch(`${entries()}/${a.id}`, { status: 'published', expected_version: 0 });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: 'published', publish_at: null, lock_version: 1, fields: { name: 'Up' } });
    const plain = await w.api.get(`${entries()}?contentBucket=general&contentType=author`);
    expect(Array.isArray(plain.body)).toBe(true);
    expect(plain.body.map((e: any) => e.id)).toContain(a.id);
    const v2 = await w.api.get(`/api/v2/${w.ws}/entries?contentBucket=general&contentType=author&per_page=1`);
    expect(v2.status).toBe(200);
    expect(v2.body.data).toHaveLength(1);
    expect(Object.keys(v2.body.data[0]).sort()).toEqual(['api_url', 'id', 'name', 'status', 'updated_at']);
    expect(v2.body.next_page_url).toEqual(expect.any(String));
    expect((await w.api.delete(`${entries()}/${a.id}`)).status).toBe(204);
    expect((await w.api.get(`${entries()}/${a.id}`)).status).toBe(404);
  });

  it('renders the ID, tags, locales and times its row holds, as a related entry too, and after an update', async () => {
    const times = async (id: string) => {
      const { rows } = await s.server.app.db.query<Record<string, string | null>>(
        `SELECT to_char(publish_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS publish_at,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at,
                to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS updated_at FROM entries WHERE entry_id = $1`,
        [id],
      );
      return rows[0];
    };
    const pick = (e: any) => ({ publish_at: e.publish_at, created_at: e.created_at, updated_at: e.updated_at });
    // Drafts, as write answers show them: the scheduled one related to the other.
    const tags = ['say "hi"', 'back\\slash', 'tab\there', 'ü ✓'];
    const a = await create('author', { fields: { name: 'Timed' }, publish_at: '2031-02-03T04:05:06.789Z', tags });
    const before = await times(a.id);
    expect(before.publish_at).toBe('2031-02-03T04:05:06.789000Z');
    expect(pick(a)).toEqual(before);
    const head = { id: a.id, api_url: `${s.url}/api/v1/${w.ws}/entries/${a.id}`, tags, locales: ['en-US'] };
    expect(a).toMatchObject(head);
    const b = await create('author', { fields: { name: 'Mentee', mentor: a.id } });
    expect(pick(b)).toEqual({ ...(await times(b.id)), publish_at: null });
    expect(pick(b.fields.mentor)).toEqual(before);
    expect(b.fields.mentor).toMatchObject(head);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const up = await w.api.patch(`${entries()}/${a.id}`, { publish_at: null, tags: ['new'], expected_version: 0 });
    expect(up.status).toBe(200);
    const after = await times(a.id);
    expect(after).toEqual({ ...before, publish_at: null, updated_at: expect.stringMatching(TIMESTAMP) });
    expect(after.updated_at).not.toBe(before.updated_at);
    expect(pick(up.body)).toEqual(after);
    const again = await w.api.patch(`${entries()}/${b.id}`, { fields: { name: 'Mentee 2' }, expected_version: 0 });
    expect(pick(again.body.fields.mentor)).toEqual(after);
    expect(again.body.fields.mentor.tags).toEqual(['new']);
  });

  it('answers 400 for an invalid locale and 404 for an unknown type', async () => {
    expect((await w.api.get(typed('author', '&locale=xx-XX'))).status).toBe(400);
    expect((await w.api.get(typed('nope'))).status).toBe(404);
  });
});

describe('round trips', () => {
  it('reads a list page in the same number of statements whatever its size, relations and attachments included', async () => {
    await contentType(w, {
      name: 'node',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'links', type: 'relation', targets: ['node', 'author'], multiple: true },
        { name: 'file', type: 'attachment' },
      ],
    });
    const file = await w.api.post(`/api/v1/${w.ws}/files`, {
      file: { name: 'n.txt', type: 'text/plain', content: Buffer.from('n').toString('base64') },
    });
    const authors = [];
    for (let i = 0; i < 3; i++) authors.push((await create('author', { fields: { name: `A${i}` }, status: 'published' })).id);
    const nodes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const links = [...authors, ...nodes.slice(-3)];
      nodes.push((await create('node', { fields: { title: `n${i}`, links, file: file.body.id }, status: 'published' })).id);
    }
    // Rendering's own count: the response cache is dropped before each request.
    const uncached = () => s.server.app.responses?.drop();
    const count = (perPage: number) =>
      fewestStatements(
        s,
        async () => {
          const res = await w.api.get(typed('node', `&per_page=${perPage}`));
          expect(res.status).toBe(200);
          expect(res.body.data).toHaveLength(perPage);
          expect(res.body.data.at(-1).fields.links.length).toBeGreaterThan(0);
        },
        uncached,
      );
    const reads = (id: string) =>
      fewestStatements(s, async () => expect((await w.api.get(`${entries()}/${id}`)).status).toBe(200), uncached);
    await count(5);
    // PostgreSQL renders a page or a read in the statement that finds it: its relations to every
    // level (each node links the three before it, so pages of 5 and 12 reach the deepest chains,
    // a page of 1 links authors only), their compact references and the files, whatever the size.
    expect([await count(1), await count(5), await count(12)]).toEqual([1, 1, 1]);
    expect([await reads(nodes[0]), await reads(nodes[11])]).toEqual([1, 1]);
    // Asked again, the same page and read are answered from the response cache: no statement.
    expect(s.server.app.responses).toBeDefined();
    for (const path of [typed('node', '&per_page=12'), `${entries()}/${nodes[11]}`]) {
      const get = () => w.api.get(path);
      expect(await fewestStatements(s, async () => expect((await get()).status).toBe(200), get)).toBe(0);
    }
  });

  it('renders the same read with and without the first level read along (references in every position)', async () => {
    const a = await create('author', { fields: { name: 'Ada' }, status: 'published' });
    const b = await create('author', { fields: { name: 'Bo', mentor: a.id }, status: 'published' });
    const draft = await create('author', { fields: { name: 'Draft' } });
    const gone = await create('author', { fields: { name: 'Gone' }, status: 'published' });
    // Lowercase IDs are stored uppercase; a draft and a deleted entry are skipped on delivery.
    const article = await create('article', {
      fields: { title: 'T', authors: [b.id.toLowerCase(), draft.id, gone.id, a.id], meta: { note: a.id } },
      status: 'published',
    });
    expect((await w.api.delete(`${entries()}/${gone.id}`)).status).toBe(204);
    const read = await w.api.get(`${entries()}/${article.id}`);
    expect(read.status).toBe(200);
    expect(read.body.fields.authors.map((x: any) => [x.id, x.fields.name, x.fields.mentor?.id ?? null])).toEqual([
      [b.id, 'Bo', a.id],
      [a.id, 'Ada', null],
    ]);
    // A list renders it without reading the first level along: the same.
    const listed = await w.api.get(typed('article', '&per_page=100'));
    expect(listed.body.data.find((x: any) => x.id === article.id)).toEqual(read.body);
  });
});

describe('attachments of a read', () => {
  it('renders the files of a read as a list renders them (single, multiple, deleted, numbers that are not attachments)', async () => {
    await contentType(w, {
      name: 'album',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'cover', type: 'attachment' },
        { name: 'gallery', type: 'attachment', multiple: true },
        { name: 'count', type: 'number' },
        { name: 'big', type: 'number' },
        { name: 'meta', type: 'json' },
      ],
    });
    const upload = async (name: string) =>
      (await w.api.post(`/api/v1/${w.ws}/files`, { file: { name, type: 'text/plain', content: Buffer.from(name).toString('base64') } }))
        .body;
    const [f1, f2, f3, f4] = [await upload('1.txt'), await upload('2.txt'), await upload('3.txt'), await upload('4.txt')];
    // A number field holding a file's ID and JSON numbers are no attachments; 1e26 and 1.5 are no IDs.
    const body = `{"fields":{"title":"A","cover":${f1.id},"gallery":[${f2.id},${f3.id},${f1.id}],"count":${f4.id},"big":1e26,"meta":[${f4.id},1.5,-3]},"status":"published"}`;
    const album = (await rawJson(w.api, 'POST', typed('album'), body)).body;
    expect((await w.api.delete(`/api/v1/${w.ws}/files/${f3.id}`)).status).toBe(204);
    const stable = (e: any) => JSON.parse(JSON.stringify(e, (k, v) => (k.startsWith('temporary_') ? undefined : v)));
    const read = await w.api.get(`${entries()}/${album.id}`);
    expect(read.status).toBe(200);
    expect(read.body.fields.cover).toMatchObject({
      id: f1.id,
      name: '1.txt',
      created_at: f1.created_at,
      updated_at: f1.updated_at,
      size: f1.size,
    });
    expect(read.body.fields.gallery.map((f: any) => f.id)).toEqual([f2.id, f1.id]);
    expect([read.body.fields.count, read.body.fields.meta]).toEqual([f4.id, [f4.id, 1.5, -3]]);
    const listed = await w.api.get(typed('album', '&per_page=10'));
    expect(stable(listed.body.data.find((x: any) => x.id === album.id))).toEqual(stable(read.body));
    // The Files API shows the same file.
    expect(stable((await w.api.get(`/api/v1/${w.ws}/files/${f1.id}`)).body)).toEqual(stable(read.body.fields.cover));
  });
});

describe('exact numbers', () => {
  it("keeps a related entry's number a double cannot hold, in reads and lists", async () => {
    const big = '12345678901234567890.5';
    const res = await rawJson(w.api, 'POST', typed('article'), `{"fields":{"title":"Big","rating":${big}},"status":"published"}`);
    expect(res.status).toBe(201);
    const host = await create('author', { fields: { name: 'Host' }, status: 'published' });
    const article = await create('article', { fields: { title: 'Holder', authors: [host.id] }, status: 'published' });
    await contentType(w, { name: 'pick', fields: [{ name: 'item', type: 'relation', targets: ['article'] }] });
    const pick = await create('pick', { fields: { item: res.body.id }, status: 'published' });
    for (const path of [`${entries()}/${pick.id}`, typed('pick', '&per_page=10')]) {
      const got = await w.api.get(path);
      expect(got.status).toBe(200);
      expect(got.text).toContain(`"rating":${big}`);
      expect(got.text).not.toContain('isLosslessNumber');
    }
    expect((await w.api.get(`${entries()}/${article.id}`)).status).toBe(200);
  });
});

describe('answer budgets', () => {
  const MiB = 1024 * 1024;
  const over = (field: string, limit: number, advice: string) => {
    const message = `The ${field} field gives a result larger than ${limit} bytes; ${advice}.`;
    return { message, errors: { [field]: [message] } };
  };
  const text = (c: string) => c.repeat(60_000);

  it('is 16 MiB unless DELIVERY_ANSWER_MB says otherwise', () => {
    expect(s.server.app.config.deliveryAnswerBytes).toBe(16 * MiB);
    const base = { ADMIN_TOKEN: 'x', APP_KEY: 'y' };
    expect(loadConfig({ ...base, DELIVERY_ANSWER_MB: '2' }).deliveryAnswerBytes).toBe(2 * MiB);
    for (const bad of ['0', '-1', '1.5'])
      expect(() => loadConfig({ ...base, DELIVERY_ANSWER_MB: bad })).toThrow(`DELIVERY_ANSWER_MB must be an integer >= 1, got "${bad}"`);
  });

  const chapters: string[] = [];
  let omnibus: { id: string };
  beforeAll(async () => {
    await contentType(w, {
      name: 'chapter',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'body', type: 'text' },
      ],
      name_field: 'title',
    });
    for (const name of ['book', 'omnibus'])
      await contentType(w, {
        name,
        fields: [
          { name: 'title', type: 'text' },
          { name: 'chapters', type: 'relation', targets: ['chapter'], multiple: true },
        ],
      });
    // 18 chapters of 60 KB; 20 books that each show the first: a list of 1.2 MB from 60 KB of it.
    for (let i = 0; i < 18; i++)
      chapters.push(
        (await create('chapter', { fields: { title: `Chapter ${i}`, body: text(String.fromCharCode(97 + i)) }, status: 'published' })).id,
      );
    for (let i = 0; i < 20; i++) await create('book', { fields: { title: `Book ${i}`, chapters: [chapters[0]] }, status: 'published' });
    omnibus = await create('omnibus', { fields: { title: 'All', chapters }, status: 'published' });
  });

  it('refuses a list, read or query page larger than the budget, before building it, and answers a smaller one', async () => {
    const small = await startTestServer({ DELIVERY_ANSWER_MB: '1' }, s.db);
    try {
      const api = client(small.url, w.key);
      const list = (type: string, extra = '') => `/api/v1/${w.ws}/entries?contentBucket=general&contentType=${type}${extra}`;
      const v2 = (extra: string) => `/api/v2/${w.ws}/entries?contentBucket=general&contentType=book${extra}`;
      const refused = [
        [list('book'), over('per_page', MiB, 'ask for pages of fewer entries (per_page)')],
        [list('book', '&per_page=20'), over('per_page', MiB, 'ask for fewer entries per page')],
        [v2('&view=full&per_page=20'), over('per_page', MiB, 'ask for fewer entries per page')],
        [`${entries()}/${omnibus.id}`, over('entry', MiB, 'select fewer fields with a structured query')],
      ] as const;
      for (const [path, body] of refused) {
        const res = await api.get(path);
        expect([path, res.status, res.body]).toEqual([path, 422, body]);
      }
      const query = (limit: number) => api.post(`/api/v1/${w.ws}/general/entries/query`, { type: 'chapter', fields: ['body'], limit });
      const big = await query(18);
      expect([big.status, big.body]).toEqual([422, over('limit', MiB, 'ask for fewer rows or fields')]);

      // Smaller pages of the same entries fit.
      const page = await api.get(list('book', '&per_page=10'));
      expect(page.status).toBe(200);
      expect(page.body.data).toHaveLength(10);
      expect(page.body.data.every((b: any) => b.fields.chapters[0].fields.body === text('a'))).toBe(true);
      expect(page.text.length).toBeGreaterThan(600_000);
      const summaries = await api.get(v2('&per_page=20'));
      expect([summaries.status, summaries.body.data.length]).toEqual([200, 20]);
      const fewer = await query(10);
      expect([fewer.status, fewer.body.data.length, fewer.body.data[9].body]).toEqual([200, 10, text('j')]);
      expect((await api.get(`${entries()}/${chapters[0]}`)).body.fields.body).toBe(text('a'));

      // Counting costs no statement: the page reads as it does with room to spare (one statement).
      const uncached = (t: TestServer) => () => t.server.app.responses?.drop();
      const statements = (t: TestServer, a: typeof api) =>
        fewestStatements(t, async () => expect((await a.get(list('book', '&per_page=10'))).status).toBe(200), uncached(t));
      expect(await statements(small, api)).toBe(1);
      expect(await statements(s, w.api)).toBe(1);
    } finally {
      await small.close();
    }
  });

  it('keeps a batch of queries within 2 MiB, the whole answer counted', async () => {
    const batch = (queries: Record<string, unknown>) => w.api.post(`/api/v1/${w.ws}/general/entries/query/batch`, { queries });
    const chapters = { type: 'chapter', fields: ['body'], limit: 18 };
    const one = await batch({ a: chapters });
    expect([one.status, one.body.results.a.data.length]).toEqual([200, 18]);
    const two = await batch({ a: chapters, b: chapters });
    expect([two.status, two.body]).toEqual([422, over('queries', 2 * MiB, 'ask for fewer rows or fields')]);
  });
});
