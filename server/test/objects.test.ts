// The Objects API: the envelope, create, read and list published objects, update, delete, keys'
// abilities and creators' permissions, the Objects switch (workspace and global), and events.
import { startTestServer, type TestServer } from './support/server';
import { client, type TestResponse } from './support/http';
import { createWorkspace, TIMESTAMP } from './support/fixtures';
import { startReceiver, eventually, type Receiver } from './support/receiver';
import {
  ENTRY_PERMISSIONS,
  NOT_PERMITTED,
  ULID,
  adminOk,
  createBucket,
  createObject,
  createRaw,
  createSubmission,
  deleteObject,
  envelope,
  keyFor,
  objectsWorkspace,
  openReview,
  queryAll,
  rawJson,
  readAny,
  relative,
  resolveReview,
  updateObject,
  type ObjectsWorkspace,
} from './support/objects';

let s: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  s = await startTestServer();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => s.close());

const generalBucketId = async (ws: string): Promise<number> =>
  (await adminOk(s, 'get', `/admin/v1/workspaces/${ws}/buckets`)).data.find((b: { name: string }) => b.name === 'general').id;

/** The object's state as the query route (drafts included) shows it: a refused write must leave it so. */
const stateOf = (w: ObjectsWorkspace, id: number) => readAny(w, id);

describe('envelope', () => {
  it('has every field of the document, and reads, lists and queries show the same envelope', async () => {
    const w = await objectsWorkspace(s);
    const bucketId = await generalBucketId(w.ws);
    const data = { title: 'Hello world', rating: 4.5, tags: ['news'] };
    const res = await w.api.post(w.at(), { ref: 'articles/hello', data, status: 'published' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(res.body).toEqual(envelope({ ref: 'articles/hello', bucket_id: bucketId, status: 'published', data }));
    const o = res.body;
    expect(o.kind).toBe('entry');
    expect(o.id).toBeGreaterThan(0);
    expect(String(o.id)).not.toBe(o.entry_id);
    expect(o.entry_id).not.toBe(o.ref);
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
    expect((await w.api.get(`${w.at()}?view=full`)).body.data).toEqual([o]);
    expect(await queryAll(w)).toEqual([o]);
    const { data: _omitted, ...summary } = o;
    expect((await w.api.get(w.at())).body.data).toEqual([summary]);
  });

  it('keeps timestamps in UTC with real microseconds', async () => {
    const w = await objectsWorkspace(s);
    const stamps: string[] = [];
    for (let i = 0; i < 6; i++) {
      const o = await createObject(w, { ref: `t/${i}`, data: { i } });
      stamps.push(o.created_at, o.updated_at);
    }
    for (const t of stamps) expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    // Not milliseconds padded with zeros: at least one has non-zero microsecond digits.
    expect(stamps.some((t) => !/000Z$/.test(t))).toBe(true);
    // And they are now (within a minute of this machine's clock).
    for (const t of stamps) expect(Math.abs(Date.parse(t) - Date.now())).toBeLessThan(60_000);
  });

  it('keeps large and precise numbers, empty objects and arrays, nulls, booleans and nesting exactly', async () => {
    const w = await objectsWorkspace(s);
    const dataText =
      '{"big":12345678901234567890123,"precise":0.1000000000000000055511151231257827,"neg":-98765432109876543210.5,' +
      '"small":1e-7,"int":42,"dec":4.5,"zero":0,"empty_obj":{},"empty_arr":[],"nothing":null,"yes":true,"no":false,' +
      '"text":"h\\u00e9llo \\"w\\"","nested":{"a":{"b":[1,{"c":null},[],{}]}},"list":[null,true,"x",1.5]}';
    const o = await createRaw(w, 'exact', dataText, { status: 'published' });
    const expected = {
      empty_obj: {},
      empty_arr: [],
      nothing: null,
      yes: true,
      no: false,
      int: 42,
      dec: 4.5,
      zero: 0,
      small: 1e-7,
      text: 'héllo "w"',
      nested: { a: { b: [1, { c: null }, [], {}] } },
      list: [null, true, 'x', 1.5],
    };
    expect(o.data).toMatchObject(expected);
    const responses = [
      ['read', await w.api.get(w.at(o.id))],
      ['read again', await w.api.get(w.at(o.id))],
      ['list', await w.api.get(`${w.at()}?view=full`)],
      ['query', await w.api.post(w.at('query'), {})],
    ] as const;
    for (const [, res] of responses) {
      expect(res.status).toBe(200);
      expect(res.text).toContain('12345678901234567890123');
      expect(res.text).toContain('0.1000000000000000055511151231257827');
      expect(res.text).toContain('-98765432109876543210.5');
    }
    expect((responses[1][1].body as any).data).toMatchObject(expected);
    // The create answer itself, as raw text.
    const again = await rawJson(w.api, 'POST', w.at(), `{"ref":"exact2","data":${dataText}}`);
    expect(again.status).toBe(201);
    expect(again.text).toContain('"big":12345678901234567890123');
    expect(again.text).toContain('"precise":0.1000000000000000055511151231257827');
  });

  it('stores prototype-named keys as ordinary keys and reads them back exactly', async () => {
    const w = await objectsWorkspace(s);
    const dataText =
      '{"__proto__":{"polluted":true},"constructor":{"name":"x"},"toString":"s","hasOwnProperty":1,"nested":{"__proto__":[1]}}';
    const expected = JSON.parse(dataText);
    expect(Object.keys(expected)).toContain('__proto__');
    const res = await rawJson(w.api, 'POST', w.at(), `{"ref":"proto","status":"published","data":${dataText}}`);
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text).data).toEqual(expected);
    expect(res.text).toContain('"__proto__":{"polluted":true}');
    const read = await w.api.get(w.at(res.body.id));
    expect(JSON.parse(read.text).data).toEqual(expected);
    expect(read.text).toContain('"__proto__":{"polluted":true}');
    const queried = await w.api.post(w.at('query'), { filter: { 'constructor.name': { eq: 'x' } } });
    expect(queried.body.data.map((x: any) => x.id)).toEqual([res.body.id]);
    expect(JSON.parse(queried.text).data[0].data).toEqual(expected);
    // With a number that needs exact handling in the same document.
    const both = await rawJson(w.api, 'POST', w.at(), '{"ref":"proto2","data":{"__proto__":{"a":1},"big":12345678901234567890123}}');
    expect(both.status).toBe(201);
    expect(both.text).toContain('"__proto__":{"a":1}');
    // (JSON objects are unordered: only the set of keys matters.)
    expect(Object.keys(JSON.parse(both.text).data).sort()).toEqual(['__proto__', 'big']);
    expect(({} as any).polluted).toBeUndefined();
  });
});

describe('create', () => {
  it('places an object in a folder with a generated ULID, or at the bucket root', async () => {
    const w = await objectsWorkspace(s);
    const inFolder = await createObject(w, { path: 'articles/2026', data: { a: 1 } });
    expect(inFolder.entry_id).toMatch(ULID);
    expect(inFolder.ref).toBe(`articles/2026/${inFolder.entry_id}`);
    const slashes = await createObject(w, { path: '/articles/', data: {} });
    expect(slashes.ref).toBe(`articles/${slashes.entry_id}`);
    const nullPath = await createObject(w, { path: null, data: {} });
    expect(nullPath.ref).toBe(nullPath.entry_id);
    const emptyPath = await createObject(w, { path: '', data: {} });
    expect(emptyPath.ref).toBe(emptyPath.entry_id);
    expect(new Set([inFolder.entry_id, slashes.entry_id, nullPath.entry_id, emptyPath.entry_id]).size).toBe(4);
    for (const o of [inFolder, slashes, nullPath, emptyPath])
      expect(o).toMatchObject({ status: 'draft', lock_version: 0, bucket: 'general' });
  });

  it('creates a published object when asked, a draft by default', async () => {
    const w = await objectsWorkspace(s);
    expect((await createObject(w, { ref: 'a', data: {} })).status).toBe('draft');
    expect((await createObject(w, { ref: 'b', data: {}, status: 'draft' })).status).toBe('draft');
    expect((await createObject(w, { ref: 'c', data: {}, status: 'published' })).status).toBe('published');
  });

  describe('refuses invalid bodies with 422 and creates nothing', () => {
    let w: ObjectsWorkspace;
    beforeAll(async () => {
      w = await objectsWorkspace(s);
    });
    afterEach(async () => {
      expect(await queryAll(w)).toEqual([]);
    });

    it.each([
      ['both ref and path', { ref: 'x', path: 'y', data: {} }, undefined],
      ['ref and a null path', { ref: 'x', path: null, data: {} }, undefined],
      ['neither ref nor path', { data: {} }, undefined],
      ['an id', { id: 5, ref: 'x', data: {} }, 'id'],
      ['an entry_id', { entry_id: '01JDQ3ZK8V4E2N6T9W5XR7B1HC', ref: 'x', data: {} }, 'entry_id'],
      ['translations', { ref: 'x', data: {}, translations: { 'de-DE': { a: 1 } } }, 'translations'],
      ['an array as data', { ref: 'x', data: [] }, 'data'],
      ['a string as data', { ref: 'x', data: 'text' }, 'data'],
      ['null as data', { ref: 'x', data: null }, 'data'],
      ['a number as data', { ref: 'x', data: 5 }, 'data'],
      ['no data', { ref: 'x' }, 'data'],
      ['an unknown bucket_id', { ref: 'x', data: {}, bucket_id: 2147483647 }, 'bucket_id'],
      ['an unknown status', { ref: 'x', data: {}, status: 'archived' }, 'status'],
      ['an empty ref', { ref: '', data: {} }, 'ref'],
      ['an unknown contract', { ref: 'x', data: {}, contract: 'no-such-contract' }, 'contract'],
      ['an extra property', { ref: 'x', data: {}, tags: ['a'] }, 'tags'],
    ])('%s', async (_label, body, key) => {
      const res = await w.api.post(w.at(), body);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0);
      if (key) expect(Object.keys(res.body.errors)).toContain(key);
    });

    it('a bucket of another workspace', async () => {
      const other = await objectsWorkspace(s);
      const res = await w.api.post(w.at(), { ref: 'x', data: {}, bucket_id: await generalBucketId(other.ws) });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['bucket_id']);
      expect(await queryAll(other)).toEqual([]);
    });

    it('a body over 1 MiB: 413', async () => {
      const res = await w.api.post(w.at(), { ref: 'big', data: { s: 'x'.repeat(1024 * 1024) } });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ message: expect.any(String) });
    });

    it('malformed JSON: 400', async () => {
      const res = await rawJson(w.api, 'POST', w.at(), '{"ref": "x", "data": {');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'Malformed JSON body.' });
    });
  });

  it('accepts a body of just under 1 MiB', async () => {
    const w = await objectsWorkspace(s);
    const body = JSON.stringify({ ref: 'big', data: { s: '' } });
    const res = await w.api.post(w.at(), { ref: 'big', data: { s: 'x'.repeat(1024 * 1024 - body.length - 16) } });
    expect(res.status).toBe(201);
  });

  it('refuses a ref already used in the bucket with 422 on ref, and allows it in another bucket', async () => {
    const w = await objectsWorkspace(s);
    const first = await createObject(w, { ref: 'pages/home', data: { v: 1 } });
    const dup = await w.api.post(w.at(), { ref: 'pages/home', data: { v: 2 } });
    expect(dup.status).toBe(422);
    expect(Object.keys(dup.body.errors)).toEqual(['ref']);
    expect((await queryAll(w)).map((o) => o.id)).toEqual([first.id]);
    const bucket = await createBucket(s, w.ws, 'blog');
    const other = await createObject(w, { ref: 'pages/home', data: { v: 3 }, bucket_id: bucket.id });
    expect(other).toMatchObject({ ref: 'pages/home', bucket_id: bucket.id, bucket: 'blog' });
    // A draft holds its ref too, and so does a legacy submission.
    await createSubmission(s, w.ws, 'forms/contact');
    const taken = await w.api.post(w.at(), { ref: 'forms/contact', data: {} });
    expect(taken.status).toBe(422);
    expect(Object.keys(taken.body.errors)).toEqual(['ref']);
  });
});

describe('read published', () => {
  it('reads a published object without changing its version', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'p', data: { a: 1 }, status: 'published' });
    const first = await w.api.get(w.at(o.id));
    const second = await w.api.get(w.at(o.id));
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.lock_version).toBe(0);
    expect((await stateOf(w, o.id)).updated_at).toBe(o.updated_at);
  });

  it('is a 404 for drafts (even for a wildcard key), foreign, missing and out-of-range ids, and submissions', async () => {
    const w = await objectsWorkspace(s);
    const other = await objectsWorkspace(s);
    const draft = await createObject(w, { ref: 'd', data: {} });
    const foreign = await createObject(other, { ref: 'f', data: {}, status: 'published' });
    const submission = await createSubmission(s, w.ws, 'forms/x');
    for (const id of [draft.id, foreign.id, submission.id, 2147483647, '2147483648', '9223372036854775808', '0', '-1', 'abc']) {
      const res = await w.api.get(w.at(id));
      expect([id, res.status]).toEqual([id, 404]);
      expect(res.body).toEqual({ message: 'Not Found' });
      expect(res.headers.get('x-request-id')).toEqual(expect.any(String));
    }
    // The foreign object is there for its own workspace.
    expect((await other.api.get(other.at(foreign.id))).status).toBe(200);
  });

  it('picks the language: data null without a translation, the translation with one, everything with *', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'l', data: { title: 'Hello' }, status: 'published' });
    const de = await w.api.get(`${w.at(o.id)}?locale=de-DE`);
    expect(de.status).toBe(200);
    expect(de.body).toMatchObject({ data: null, locale: 'de-DE', locales: ['en-US'] });
    expect(de.body).not.toHaveProperty('translations');
    const star = await w.api.get(`${w.at(o.id)}?locale=*`);
    expect(star.body).toMatchObject({ data: { title: 'Hello' }, translations: {}, locale: 'en-US' });
    const u = await updateObject(w, o, { data: { title: 'Hello' }, translations: { 'de-DE': { title: 'Hallo', n: 1 } } });
    const de2 = await w.api.get(`${w.at(o.id)}?locale=de-DE`);
    expect(de2.body).toMatchObject({ data: { title: 'Hallo', n: 1 }, locale: 'de-DE', lock_version: u.lock_version });
    expect([...de2.body.locales].sort()).toEqual(['de-DE', 'en-US']);
    const star2 = await w.api.get(`${w.at(o.id)}?locale=*`);
    expect(star2.body).toMatchObject({ data: { title: 'Hello' }, translations: { 'de-DE': { title: 'Hallo', n: 1 } }, locale: 'en-US' });
    expect(Object.keys(star2.body.translations)).toEqual(['de-DE']);
    const en = await w.api.get(`${w.at(o.id)}?locale=en-US`);
    expect(en.body).toMatchObject({ data: { title: 'Hello' }, locale: 'en-US' });
    expect(en.body).not.toHaveProperty('translations');
  });

  it.each(['fr-FR', 'de_DE', 'xx', 'DE-de', 'not a locale'])('refuses locale %s with 400', async (locale) => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'l', data: {}, status: 'published' });
    const res = await w.api.get(`${w.at(o.id)}?locale=${encodeURIComponent(locale)}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Invalid locale.' });
    const list = await w.api.get(`${w.at()}?locale=${encodeURIComponent(locale)}`);
    expect(list.status).toBe(400);
    expect(list.body).toEqual({ message: 'Invalid locale.' });
  });
});

describe('list published', () => {
  it('lists published objects only, by id, summary by default and full on request', async () => {
    const w = await objectsWorkspace(s);
    const a = await createObject(w, { ref: 'a', data: { n: 1 }, status: 'published' });
    await createObject(w, { ref: 'draft', data: { n: 2 } });
    const b = await createObject(w, { ref: 'b', data: { n: 3 }, status: 'published' });
    await createSubmission(s, w.ws, 'forms/sub');
    const summary = await w.api.get(w.at());
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({
      data: [expect.objectContaining({ id: a.id, ref: 'a' }), expect.objectContaining({ id: b.id, ref: 'b' })],
      path: `${s.url}${w.at()}`,
      per_page: 50,
      next_cursor: null,
      next_page_url: null,
      prev_cursor: null,
      prev_page_url: null,
    });
    for (const o of summary.body.data) {
      expect(o).not.toHaveProperty('data');
      expect(o).not.toHaveProperty('translations');
    }
    expect((await w.api.get(`${w.at()}?view=summary`)).body.data).toEqual(summary.body.data);
    const full = await w.api.get(`${w.at()}?view=full`);
    expect(full.body.data).toEqual([a, b]);
    // A draft published later appears, in id order.
    const d = (await queryAll(w, { filter: { '@ref': { eq: 'draft' } } }))[0];
    await updateObject(w, d, { data: d.data, status: 'published' });
    expect((await w.api.get(w.at())).body.data.map((o: any) => o.ref)).toEqual(['a', 'draft', 'b']);
  });

  it('shows every language with locale=* in the full view only', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: { t: 'en' }, status: 'published' });
    await updateObject(w, o, { data: { t: 'en' }, translations: { 'de-DE': { t: 'de' } } });
    const full = await w.api.get(`${w.at()}?view=full&locale=*`);
    expect(full.body.data[0]).toMatchObject({ data: { t: 'en' }, translations: { 'de-DE': { t: 'de' } }, locale: 'en-US' });
    const de = await w.api.get(`${w.at()}?view=full&locale=de-DE`);
    expect(de.body.data[0]).toMatchObject({ data: { t: 'de' }, locale: 'de-DE' });
    expect(de.body.data[0]).not.toHaveProperty('translations');
    const summary = await w.api.get(`${w.at()}?locale=*`);
    expect(summary.body.data[0]).not.toHaveProperty('data');
    expect(summary.body.data[0]).not.toHaveProperty('translations');
  });

  it.each(['0', '101', '-1', 'abc', '1.5'])('refuses per_page=%s with 422', async (perPage) => {
    const w = await objectsWorkspace(s);
    const res = await w.api.get(`${w.at()}?per_page=${perPage}`);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['per_page']);
  });

  it('accepts per_page 1 and 100', async () => {
    const w = await objectsWorkspace(s);
    expect((await w.api.get(`${w.at()}?per_page=1`)).body.per_page).toBe(1);
    expect((await w.api.get(`${w.at()}?per_page=100`)).body.per_page).toBe(100);
  });

  it('pages with cursors: following next_page_url visits every published object once; prev_page_url goes back', async () => {
    const w = await objectsWorkspace(s);
    const published: number[] = [];
    for (let i = 0; i < 8; i++) {
      const o = await createObject(w, { ref: `p/${i}`, data: { i }, status: i === 3 || i === 6 ? 'draft' : 'published' });
      if (o.status === 'published') published.push(o.id);
    }
    expect(published).toHaveLength(6);
    const pages: any[] = [];
    let url: string | null = `${w.at()}?per_page=4&view=full&prefix=p`;
    while (url) {
      const res: TestResponse = await w.api.get(url);
      expect(res.status).toBe(200);
      expect(res.body.per_page).toBe(4);
      pages.push(res.body);
      url = res.body.next_page_url ? relative(s, res.body.next_page_url) : null;
      if (pages.length > 10) throw new Error('no end');
    }
    const seen = pages.flatMap((p) => p.data.map((o: any) => o.id));
    expect(seen).toEqual(published);
    expect(pages.flatMap((p) => p.data.map((o: any) => o.data))).toEqual(
      pages.flatMap((p) => p.data.map((o: any) => ({ i: Number(o.ref.slice(2)) }))),
    );
    expect(pages.length).toBe(2);
    expect(pages[0].prev_cursor).toBeNull();
    expect(pages[0].prev_page_url).toBeNull();
    expect(pages[pages.length - 1].next_cursor).toBeNull();
    // The next page's URL keeps the other parameters and only replaces the cursor.
    const next = new URL(pages[0].next_page_url);
    expect(`${next.origin}${next.pathname}`).toBe(`${s.url}${w.at()}`);
    expect(Object.fromEntries(next.searchParams)).toEqual({ per_page: '4', view: 'full', prefix: 'p', cursor: pages[0].next_cursor });
    // Back from the last page to the first.
    const back = await w.api.get(relative(s, pages[1].prev_page_url));
    expect(back.body.data.map((o: any) => o.id)).toEqual(published.slice(0, 4));
    expect(back.body.prev_page_url).toBeNull();
    expect(back.body.next_page_url).not.toBeNull();

    // Smaller pages: three of two, and back twice.
    const p1 = await w.api.get(`${w.at()}?per_page=2`);
    const p2 = await w.api.get(relative(s, p1.body.next_page_url));
    const p3 = await w.api.get(relative(s, p2.body.next_page_url));
    expect([p1, p2, p3].map((p) => p.body.data.map((o: any) => o.id))).toEqual([
      published.slice(0, 2),
      published.slice(2, 4),
      published.slice(4, 6),
    ]);
    expect(p3.body.next_page_url).toBeNull();
    const b2 = await w.api.get(relative(s, p3.body.prev_page_url));
    expect(b2.body.data.map((o: any) => o.id)).toEqual(published.slice(2, 4));
    const b1 = await w.api.get(relative(s, b2.body.prev_page_url));
    expect(b1.body.data.map((o: any) => o.id)).toEqual(published.slice(0, 2));
    expect(b1.body.prev_page_url).toBeNull();
  });

  it("pages one bucket's objects in id order, forward and back, past another bucket's objects between them", async () => {
    const w = await objectsWorkspace(s);
    const blog = await createBucket(s, w.ws, 'blog');
    const inBlog: number[] = [];
    for (let i = 0; i < 7; i++) {
      const o = await createObject(w, { ref: `b/${i}`, data: {}, status: 'published', ...(i % 3 === 1 ? {} : { bucket_id: blog.id }) });
      if (o.bucket === 'blog') inBlog.push(o.id);
    }
    expect(inBlog).toHaveLength(5);
    for (const narrowed of ['bucket=blog', `bucket_id=${blog.id}`, `bucket=blog&bucket_id=${blog.id}`]) {
      const pages: TestResponse[] = [await w.api.get(`${w.at()}?${narrowed}&per_page=2`)];
      while (pages[pages.length - 1].body.next_page_url)
        pages.push(await w.api.get(relative(s, pages[pages.length - 1].body.next_page_url)));
      expect(pages.map((p) => p.body.data.map((o: any) => o.id))).toEqual([inBlog.slice(0, 2), inBlog.slice(2, 4), inBlog.slice(4)]);
      const b2 = await w.api.get(relative(s, pages[2].body.prev_page_url));
      const b1 = await w.api.get(relative(s, b2.body.prev_page_url));
      expect([b1, b2].map((p) => p.body.data.map((o: any) => o.id))).toEqual([inBlog.slice(0, 2), inBlog.slice(2, 4)]);
      expect(b1.body.prev_page_url).toBeNull();
    }
  });

  it.each(['garbage', 'W10', Buffer.from('[1,"x"]').toString('base64url'), Buffer.from('{"id":1}').toString('base64url')])(
    'refuses the invalid cursor %s with 422',
    async (cursor) => {
      const w = await objectsWorkspace(s);
      const res = await w.api.get(`${w.at()}?cursor=${cursor}`);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['cursor']);
    },
  );

  it('narrows by folder prefix (literal % and _, slashes ignored), exact ref and bucket', async () => {
    const w = await objectsWorkspace(s);
    const blog = await createBucket(s, w.ws, 'blog');
    const refs = [
      'articles',
      'articles/x',
      'articles/x/y',
      'articles-old/y',
      'articlesx',
      'a_b/1',
      'axb/1',
      'a%b/1',
      'aXXb/1',
      'other/articles',
    ];
    const ids: Record<string, number> = {};
    for (const ref of refs) ids[ref] = (await createObject(w, { ref, data: {}, status: 'published' })).id;
    const inBlog = await createObject(w, { ref: 'articles/z', data: {}, status: 'published', bucket_id: blog.id });
    await createObject(w, { ref: 'articles/draft', data: {} });
    const list = async (query: string) => {
      const res = await w.api.get(`${w.at()}?${query}`);
      expect(res.status).toBe(200);
      return res.body.data.map((o: any) => `${o.bucket}:${o.ref}`);
    };
    expect(await list('prefix=articles')).toEqual(['general:articles', 'general:articles/x', 'general:articles/x/y', 'blog:articles/z']);
    expect(await list(`prefix=${encodeURIComponent('/articles/')}`)).toEqual(await list('prefix=articles'));
    expect(await list('prefix=articles/x')).toEqual(['general:articles/x', 'general:articles/x/y']);
    expect(await list('prefix=a_b')).toEqual(['general:a_b/1']);
    expect(await list(`prefix=${encodeURIComponent('a%b')}`)).toEqual(['general:a%b/1']);
    expect(await list(`prefix=${encodeURIComponent('a%')}`)).toEqual([]);
    expect(await list('prefix=art')).toEqual([]);
    expect(await list('ref=articles')).toEqual(['general:articles']);
    expect(await list('ref=articles/x')).toEqual(['general:articles/x']);
    expect(await list('ref=articles/z&bucket=blog')).toEqual(['blog:articles/z']);
    expect(await list('ref=articles/z&bucket=general')).toEqual([]);
    expect(await list('bucket=blog')).toEqual(['blog:articles/z']);
    expect(await list(`bucket_id=${blog.id}`)).toEqual(['blog:articles/z']);
    expect(await list(`prefix=articles&bucket_id=${await generalBucketId(w.ws)}`)).toEqual([
      'general:articles',
      'general:articles/x',
      'general:articles/x/y',
    ]);
    expect(await list('bucket=nosuchbucket')).toEqual([]);
    expect(await list('prefix=')).toHaveLength(refs.length + 1);
    expect(await list('prefix=/')).toHaveLength(refs.length + 1);
    expect(inBlog.bucket).toBe('blog');
    expect(ids['a_b/1']).toBeDefined();
  });
});

describe('update', () => {
  it('replaces the whole document, increments lock_version and keeps ids on a rename', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: { keep: 1, drop: 2, nested: { x: 1, y: 2 } }, status: 'published' });
    const res = await w.api.patch(w.at(o.id), { lock_version: 0, ref: 'renamed/a', data: { nested: { x: 1 }, added: [] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...o,
      ref: 'renamed/a',
      data: { nested: { x: 1 }, added: [] },
      lock_version: 1,
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(o.updated_at));
    expect(res.body.updated_at).not.toBe(o.updated_at);
    expect((await w.api.get(w.at(o.id))).body).toEqual(res.body);
    const second = await w.api.patch(w.at(o.id), { lock_version: 1, ref: 'renamed/a', data: {}, status: 'draft' });
    expect(second.body).toMatchObject({ lock_version: 2, status: 'draft', data: {}, id: o.id, entry_id: o.entry_id });
    expect((await w.api.get(w.at(o.id))).status).toBe(404);
    const third = await w.api.patch(w.at(o.id), { lock_version: 2, ref: 'renamed/a', data: { z: 1 } });
    expect(third.body).toMatchObject({ lock_version: 3, status: 'draft' });
  });

  it('places the entry in a folder with path: <path>/<entry_id>, or the root', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: {} });
    const moved = await w.api.patch(w.at(o.id), { lock_version: 0, path: '/news/2026/', data: {} });
    expect(moved.status).toBe(200);
    expect(moved.body.ref).toBe(`news/2026/${o.entry_id}`);
    const root = await w.api.patch(w.at(o.id), { lock_version: 1, path: null, data: {} });
    expect(root.body.ref).toBe(o.entry_id);
  });

  it('moves to another bucket of the workspace and keeps the bucket when omitted', async () => {
    const w = await objectsWorkspace(s);
    const blog = await createBucket(s, w.ws, 'blog');
    const o = await createObject(w, { ref: 'a', data: {} });
    const moved = await updateObject(w, o, { data: {}, bucket_id: blog.id });
    expect(moved).toMatchObject({ bucket_id: blog.id, bucket: 'blog', ref: 'a', id: o.id, entry_id: o.entry_id });
    const kept = await updateObject(w, moved, { data: { v: 1 } });
    expect(kept).toMatchObject({ bucket_id: blog.id, bucket: 'blog' });
  });

  describe('refusals change nothing', () => {
    let w: ObjectsWorkspace;
    let o: any;
    let other: any;
    beforeAll(async () => {
      w = await objectsWorkspace(s);
      o = await createObject(w, { ref: 'target', data: { v: 1 }, status: 'published' });
      o = await updateObject(w, o, { data: { v: 2 }, translations: { 'de-DE': { v: 'zwei' } } });
      other = await createObject(w, { ref: 'taken', data: {} });
    });
    afterEach(async () => {
      const now = await stateOf(w, o.id);
      expect(now).toEqual({ ...o, locale: 'en-US' });
      const de = await w.api.get(`${w.at(o.id)}?locale=de-DE`);
      expect(de.body.data).toEqual({ v: 'zwei' });
    });

    it.each([
      ['a stale lock_version', { lock_version: 0, ref: 'target', data: { v: 3 } }, 'lock_version'],
      ['a future lock_version', { lock_version: 5, ref: 'target', data: { v: 3 } }, 'lock_version'],
      ['no lock_version', { ref: 'target', data: { v: 3 } }, 'lock_version'],
      ['a negative lock_version', { lock_version: -1, ref: 'target', data: { v: 3 } }, 'lock_version'],
      ['a string lock_version', { lock_version: '1', ref: 'target', data: { v: 3 } }, 'lock_version'],
      ['no data', { lock_version: 1, ref: 'target' }, 'data'],
      ['an array as data', { lock_version: 1, ref: 'target', data: [1] }, 'data'],
      ['neither ref nor path', { lock_version: 1, data: { v: 3 } }, undefined],
      ['both ref and path', { lock_version: 1, ref: 'target', path: 'x', data: { v: 3 } }, undefined],
      ['a ref held by another object', { lock_version: 1, ref: 'taken', data: { v: 3 } }, 'ref'],
      [
        'translations for an unconfigured locale',
        { lock_version: 1, ref: 'target', data: { v: 3 }, translations: { 'fr-FR': { v: 'trois' } } },
        'translations.fr-FR',
      ],
      [
        'translations for the base locale',
        { lock_version: 1, ref: 'target', data: { v: 3 }, translations: { 'en-US': { v: 3 } } },
        undefined,
      ],
      [
        'a translation that is not an object',
        { lock_version: 1, ref: 'target', data: { v: 3 }, translations: { 'de-DE': 'drei' } },
        'translations.de-DE',
      ],
      ['an unknown bucket_id', { lock_version: 1, ref: 'target', data: { v: 3 }, bucket_id: 2147483647 }, 'bucket_id'],
      ['an id', { lock_version: 1, ref: 'target', data: { v: 3 }, id: 1 }, 'id'],
    ])('%s: 422', async (_label, body, key) => {
      const res = await w.api.patch(w.at(o.id), body);
      expect(res.status).toBe(422);
      if (key) expect(Object.keys(res.body.errors)).toContain(key);
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0);
    });

    it('a body over 1 MiB: 413', async () => {
      const res = await w.api.patch(w.at(o.id), { lock_version: 1, ref: 'target', data: { s: 'x'.repeat(1024 * 1024) } });
      expect(res.status).toBe(413);
    });

    it('a pending review: 422, and saving works again once it is resolved', async () => {
      const review = await openReview(s, w.ws, other.entry_id);
      const res = await w.api.patch(w.at(other.id), { lock_version: other.lock_version, ref: 'taken', data: { changed: true } });
      expect(res.status).toBe(422);
      expect((await stateOf(w, other.id)).data).toEqual({});
      await resolveReview(s, w.ws, review.id);
      const ok = await w.api.patch(w.at(other.id), { lock_version: other.lock_version, ref: 'taken', data: { changed: true } });
      expect(ok.status).toBe(200);
      other = ok.body;
    });

    it('missing, foreign and deleted objects: 404', async () => {
      const foreignWs = await objectsWorkspace(s);
      const foreign = await createObject(foreignWs, { ref: 'f', data: { v: 1 } });
      const gone = await createObject(w, { ref: 'gone', data: {} });
      await deleteObject(w, gone.id, 0);
      for (const id of [foreign.id, gone.id, 2147483647, '9223372036854775808']) {
        const res = await w.api.patch(w.at(id), { lock_version: 0, ref: 'f2', data: { v: 9 } });
        expect([id, res.status]).toEqual([id, 404]);
      }
      expect((await stateOf(foreignWs, foreign.id)).data).toEqual({ v: 1 });
    });
  });

  it('replaces the translation map, keeps it when omitted and removes it with {}', async () => {
    const w = await objectsWorkspace(s, { locales: ['de-DE', 'fr-FR'] });
    let o = await createObject(w, { ref: 't', data: { t: 'en' }, status: 'published' });
    o = await updateObject(w, o, { data: { t: 'en' }, translations: { 'de-DE': { t: 'de' }, 'fr-FR': { t: 'fr' } } });
    expect([...o.locales].sort()).toEqual(['de-DE', 'en-US', 'fr-FR']);
    expect(o.data).toEqual({ t: 'en' });
    o = await updateObject(w, o, { data: { t: 'en2' } });
    expect([...o.locales].sort()).toEqual(['de-DE', 'en-US', 'fr-FR']);
    expect((await w.api.get(`${w.at(o.id)}?locale=*`)).body.translations).toEqual({ 'de-DE': { t: 'de' }, 'fr-FR': { t: 'fr' } });
    o = await updateObject(w, o, { data: { t: 'en2' }, translations: { 'fr-FR': { t: 'fr2' } } });
    expect([...o.locales].sort()).toEqual(['en-US', 'fr-FR']);
    expect((await w.api.get(`${w.at(o.id)}?locale=*`)).body.translations).toEqual({ 'fr-FR': { t: 'fr2' } });
    expect((await w.api.get(`${w.at(o.id)}?locale=de-DE`)).body.data).toBeNull();
    o = await updateObject(w, o, { data: { t: 'en3' }, translations: {} });
    expect(o.locales).toEqual(['en-US']);
    expect((await w.api.get(`${w.at(o.id)}?locale=*`)).body.translations).toEqual({});
    expect(o.lock_version).toBe(4);
  });
});

describe('delete', () => {
  it('moves the object out of reads, listings and queries at once: 204 with no body', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: { v: 1 }, status: 'published' });
    const keep = await createObject(w, { ref: 'b', data: {}, status: 'published' });
    const draft = await createObject(w, { ref: 'c', data: {} });
    const res = await w.api.delete(w.at(o.id), { body: { lock_version: 0 } });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await w.api.get(w.at(o.id))).status).toBe(404);
    expect((await w.api.get(w.at())).body.data.map((x: any) => x.id)).toEqual([keep.id]);
    expect((await w.api.get(`${w.at()}?ref=a`)).body.data).toEqual([]);
    expect((await queryAll(w)).map((x) => x.id)).toEqual([keep.id, draft.id]);
    expect(await queryAll(w, { ref: 'a' })).toEqual([]);
    // A draft is deleted the same way, and a second delete finds nothing.
    await deleteObject(w, draft.id, 0);
    expect((await queryAll(w)).map((x) => x.id)).toEqual([keep.id]);
    expect((await w.api.delete(w.at(o.id), { body: { lock_version: 1 } })).status).toBe(404);
    // Its ref is free again.
    expect((await w.api.post(w.at(), { ref: 'a', data: {} })).status).toBe(201);
  });

  it.each([
    ['a stale lock_version', { lock_version: 1 }],
    ['no lock_version', {}],
    ['a negative lock_version', { lock_version: -1 }],
    ['a string lock_version', { lock_version: '0' }],
  ])('refuses %s with 422 on lock_version and deletes nothing', async (_label, body) => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: { v: 1 }, status: 'published' });
    const res = await w.api.delete(w.at(o.id), { body });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['lock_version']);
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
  });

  it('is blocked by a pending review until it is resolved', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: {}, status: 'published' });
    const review = await openReview(s, w.ws, o.entry_id);
    expect(review.status).toBe('pending');
    const res = await w.api.delete(w.at(o.id), { body: { lock_version: 0 } });
    expect(res.status).toBe(422);
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
    expect((await resolveReview(s, w.ws, review.id)).status).toBe('resolved');
    expect((await w.api.delete(w.at(o.id), { body: { lock_version: 0 } })).status).toBe(204);
  });

  it('refuses a legacy submission with 403 (read-only), which keeps its ref', async () => {
    const w = await objectsWorkspace(s);
    const sub = await createSubmission(s, w.ws, 'forms/contact/1');
    const res = await w.api.delete(w.at(sub.id), { body: { lock_version: 0 } });
    expect(res.status).toBe(403);
    const taken = await w.api.post(w.at(), { ref: 'forms/contact/1', data: {} });
    expect(taken.status).toBe(422);
    expect(Object.keys(taken.body.errors)).toEqual(['ref']);
    // Never listed or queried.
    expect(await queryAll(w)).toEqual([]);
  });

  it('is a 404 for missing and foreign objects', async () => {
    const w = await objectsWorkspace(s);
    const other = await objectsWorkspace(s);
    const foreign = await createObject(other, { ref: 'f', data: {} });
    for (const id of [foreign.id, 2147483647, '9223372036854775808']) {
      expect((await w.api.delete(w.at(id), { body: { lock_version: 0 } })).status).toBe(404);
    }
    expect(await readAny(other, foreign.id)).toBeDefined();
  });
});

describe('authentication, abilities and permissions', () => {
  const ALL_ABILITIES = [
    'files:write',
    'files:read',
    'files:delete',
    'entries:read',
    'entries:query',
    'entries:write',
    'entries:delete',
    'entries:history',
    'email:send',
    'pipelines:execute',
  ];

  interface Route {
    name: string;
    abilities: string[];
    permissions: string[];
    call: (api: ReturnType<typeof client>, w: ObjectsWorkspace, o: any) => ReturnType<ReturnType<typeof client>['get']>;
    ok: number;
  }
  const routes: Route[] = [
    { name: 'list', abilities: ['entries:read'], permissions: ['list-entries'], call: (api, w) => api.get(w.at()), ok: 200 },
    { name: 'read', abilities: ['entries:read'], permissions: ['view-entry'], call: (api, w, o) => api.get(w.at(o.id)), ok: 200 },
    { name: 'query', abilities: ['entries:query'], permissions: ['list-entries'], call: (api, w) => api.post(w.at('query'), {}), ok: 200 },
    {
      name: 'create',
      abilities: ['entries:write'],
      permissions: ['create-entry'],
      call: (api, w) => api.post(w.at(), { path: 'new', data: {} }),
      ok: 201,
    },
    {
      name: 'update',
      abilities: ['entries:write'],
      permissions: ['update-entry'],
      call: (api, w, o) => api.patch(w.at(o.id), { lock_version: o.lock_version, ref: o.ref, data: { u: 1 } }),
      ok: 200,
    },
    {
      name: 'delete',
      abilities: ['entries:delete'],
      permissions: ['delete-entry'],
      call: (api, w, o) => api.delete(w.at(o.id), { body: { lock_version: o.lock_version } }),
      ok: 204,
    },
    {
      name: 'revisions',
      abilities: ['entries:history'],
      permissions: ['list-entries', 'view-entry'],
      call: (api, w, o) => api.get(w.at(o.id, 'revisions')),
      ok: 200,
    },
    {
      name: 'revision',
      abilities: ['entries:history'],
      permissions: ['list-entries', 'view-entry'],
      call: (api, w, o) => api.get(w.at(o.id, 'revisions', o.revision)),
      ok: 200,
    },
    {
      name: 'compare',
      abilities: ['entries:history'],
      permissions: ['list-entries', 'view-entry'],
      call: (api, w, o) => api.get(`${w.at(o.id, 'revisions', 'compare')}?from=${o.revision}&to=${o.revision}`),
      ok: 200,
    },
    {
      name: 'trash',
      abilities: ['entries:history'],
      permissions: ['list-entries', 'view-entry'],
      call: (api, w) => api.get(w.at('trash')),
      ok: 200,
    },
    {
      name: 'restore',
      abilities: ['entries:history', 'entries:write'],
      permissions: ['list-entries', 'view-entry', 'create-entry', 'update-entry'],
      call: (api, w, o) => api.post(w.at(o.id, 'restore'), { lock_version: o.lock_version, revision_id: o.revision }),
      ok: 200,
    },
  ];

  /** A published object and the id of its first revision. */
  async function target(w: ObjectsWorkspace) {
    const o = await createObject(w, { path: 'auth', data: { v: 1 }, status: 'published' });
    const revisions = await w.api.get(w.at(o.id, 'revisions'));
    return { ...o, revision: revisions.body.data[0].id };
  }

  it('refuses requests without a key, with a wrong key or with a key of another workspace: 403', async () => {
    const w = await objectsWorkspace(s);
    const other = await objectsWorkspace(s);
    const o = await target(w);
    for (const token of [undefined, 'wsk_nope', other.key]) {
      const api = client(s.url, token);
      for (const route of routes) {
        const res = await route.call(api, w, o);
        expect([route.name, res.status, res.body]).toEqual([route.name, 403, { message: 'Forbidden' }]);
      }
    }
    expect(await readAny(w, o.id)).toMatchObject({ lock_version: 0, data: { v: 1 } });
  });

  it('needs each route ability of the key: 403 with the documented message', async () => {
    const w = await objectsWorkspace(s);
    const o = await target(w);
    for (const route of routes) {
      for (const ability of route.abilities) {
        const api = await keyFor(
          s,
          w.ws,
          ALL_ABILITIES.filter((a) => a !== ability),
        );
        const res = await route.call(api, w, o);
        expect([route.name, ability, res.status, res.body]).toEqual([route.name, ability, 403, NOT_PERMITTED]);
      }
    }
    // entries:read is not enough for history.
    const reader = await keyFor(s, w.ws, ['entries:read']);
    for (const route of routes.filter((r) => r.abilities.includes('entries:history'))) {
      expect((await route.call(reader, w, o)).status).toBe(403);
    }
    expect(await readAny(w, o.id)).toMatchObject({ lock_version: 0 });
  });

  it('needs each route permission of the creator: 403 with the documented message', async () => {
    const w = await objectsWorkspace(s);
    const o = await target(w);
    for (const route of routes) {
      for (const permission of route.permissions) {
        const api = await keyFor(
          s,
          w.ws,
          ['*'],
          ENTRY_PERMISSIONS.filter((p) => p !== permission),
        );
        const res = await route.call(api, w, o);
        expect([route.name, permission, res.status, res.body]).toEqual([route.name, permission, 403, NOT_PERMITTED]);
      }
    }
    expect(await readAny(w, o.id)).toMatchObject({ lock_version: 0 });
  });

  it('lets a key with exactly the route abilities and a creator with exactly its permissions through', async () => {
    const w = await objectsWorkspace(s);
    for (const route of routes) {
      const o = await target(w);
      const api = await keyFor(s, w.ws, route.abilities, route.permissions);
      const res = await route.call(api, w, o);
      expect([route.name, res.status]).toEqual([route.name, route.ok]);
    }
  });
});

describe('the Objects switch', () => {
  /** One valid request of every objects route; `o` is a published object with one revision. */
  async function everyRoute(w: ObjectsWorkspace, o: any, revision: number) {
    return [
      await w.api.get(w.at()),
      await w.api.get(w.at(o.id)),
      await w.api.post(w.at('query'), {}),
      await w.api.post(w.at(), { ref: 'new', data: {} }),
      await w.api.patch(w.at(o.id), { lock_version: o.lock_version, ref: o.ref, data: { x: 2 } }),
      await w.api.get(w.at(o.id, 'revisions')),
      await w.api.get(w.at(o.id, 'revisions', revision)),
      await w.api.get(`${w.at(o.id, 'revisions', 'compare')}?from=${revision}&to=${revision}`),
      await w.api.get(w.at('trash')),
      await w.api.post(w.at(o.id, 'restore'), { lock_version: o.lock_version, revision_id: revision }),
      await w.api.delete(w.at(o.id), { body: { lock_version: o.lock_version } }),
    ];
  }

  it('answers 404 on every route of a workspace with Objects turned off, and serves it again once on', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'a', data: { x: 1 }, status: 'published' });
    const revision = (await w.api.get(w.at(o.id, 'revisions'))).body.data[0].id;
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}`, { objects_enabled: false });
    for (const res of await everyRoute(w, o, revision)) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}`, { objects_enabled: true });
    // Nothing changed meanwhile, and the workspace was not migrated: the object is as it was.
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
    expect((await w.api.get(w.at())).body.data).toHaveLength(1);
  });

  it('answers 404 for a workspace created with Objects off', async () => {
    const w = await objectsWorkspace(s, { objects_enabled: false });
    expect((await w.api.get(w.at())).status).toBe(404);
    expect((await w.api.post(w.at(), { ref: 'a', data: {} })).status).toBe(404);
    expect((await w.api.post(w.at('query'), {})).status).toBe(404);
  });

  it('answers 404 on every route when OBJECTS_ENABLED=false, whatever the workspace says', async () => {
    // On PostgreSQL a second server shares this database, so real objects are asked for; the
    // embedded database has one process, so there a fresh one serves ids that would exist.
    const shared = s.db.url !== undefined;
    let w: ObjectsWorkspace | undefined;
    let o: any = { id: 1, lock_version: 0, ref: 'a' };
    let revision = 1;
    if (shared) {
      w = await objectsWorkspace(s);
      o = await createObject(w, { ref: 'a', data: { x: 1 }, status: 'published' });
      revision = (await w.api.get(w.at(o.id, 'revisions'))).body.data[0].id;
    }
    const off = await startTestServer({ OBJECTS_ENABLED: 'false' }, shared ? s.db : undefined);
    try {
      const target = w ? { ...w, api: client(off.url, w.key) } : await objectsWorkspace(off);
      expect((await off.admin.get(`/admin/v1/workspaces/${target.ws}`)).body.objects_enabled).toBe(true);
      for (const r of await everyRoute(target, o, revision)) {
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ message: 'Not Found' });
      }
    } finally {
      await off.close();
    }
    if (w) expect((await w.api.get(w.at(o.id))).body).toEqual(o);
  });
});

describe('events and audit', () => {
  it('dispatches entry.created, entry.updated, entry.deleted and entry.restored, and audits deletions', async () => {
    const w = await objectsWorkspace(s);
    const r = await startReceiver();
    receivers.push(r);
    const hook = await s.admin.post(`/admin/v1/workspaces/${w.ws}/webhooks`, { url: r.url, events: ['*'], secret: 'a-long-enough-secret' });
    expect(hook.status).toBe(201);
    const o = await createObject(w, { ref: 'ev', data: { v: 1 } });
    await r.waitFor(1);
    const u = await updateObject(w, o, { data: { v: 2 } });
    await r.waitFor(2);
    // A refused write publishes nothing.
    expect((await w.api.patch(w.at(o.id), { lock_version: 0, ref: 'ev', data: { v: 3 } })).status).toBe(422);
    await deleteObject(w, o.id, u.lock_version);
    await r.waitFor(3);
    const trash = (await w.api.get(w.at('trash'))).body.data[0];
    const recovered = await w.api.post(w.at(o.id, 'restore'), { lock_version: trash.lock_version });
    expect(recovered.status).toBe(200);
    await r.waitFor(4);
    const revisions = (await w.api.get(w.at(o.id, 'revisions'))).body.data;
    const first = revisions[revisions.length - 1].id;
    const restored = await w.api.post(w.at(o.id, 'restore'), { lock_version: recovered.body.lock_version, revision_id: first });
    expect(restored.status).toBe(200);
    const got = await r.waitFor(5);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.requests.map((x) => x.body.event)).toEqual([
      'entry.created',
      'entry.updated',
      'entry.deleted',
      'entry.restored',
      'entry.restored',
    ]);
    for (const x of got) {
      expect(x.body).toMatchObject({ workspace: w.ws, created_at: expect.stringMatching(TIMESTAMP), data: expect.any(Object) });
      expect(x.headers['x-webhook-event']).toBe(x.body.event);
    }
    const audit = await eventually(async () => {
      const res = await s.admin.get(`/admin/v1/workspaces/${w.ws}/audit`);
      return res.body.data.find((a: any) => a.event === 'entry.deleted');
    });
    expect(audit).toEqual({
      event: 'entry.deleted',
      entry_id: o.entry_id,
      object_id: o.id,
      actor: `api_key:${w.keyId}`,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    // Workspace ownership: another workspace sees none of it.
    const other = await createWorkspace(s.admin);
    expect(
      (await s.admin.get(`/admin/v1/workspaces/${other.name}/audit`)).body.data.filter((a: any) => a.event === 'entry.deleted'),
    ).toEqual([]);
  });
});
