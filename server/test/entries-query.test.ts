// The Entries structured query (002, "Structured query", "Aggregation and grouping", "Batch
// queries", "Limits"), black-box: projection (own fields, metadata, dot paths through relations
// and attachments, bare IDs, JSON paths, defaults), every filter operator with its null and
// missing semantics, visible references only, sorting, locales, paging, limits, authorization,
// aggregation with exact decimals, grouping (calendar buckets across daylight-saving changes),
// related numeric paths, and batch queries with their budgets and quota.
import { startTestServer, type TestServer } from './support/server';
import { client, type TestResponse } from './support/http';
import { TIMESTAMP } from './support/fixtures';
import { ENTRY_PERMISSIONS, NOT_PERMITTED, adminOk, createBucket, keyFor, rawJson, type Api } from './support/objects';
import {
  FILE_PERMISSIONS,
  createContentType,
  createEntry,
  entriesWorkspace,
  updateEntry,
  uploadFile,
  type EntriesWorkspace,
  type FieldDef,
} from './support/entries';
import {
  INVALID_LOCALE,
  NOT_FOUND,
  createEntries,
  expectErrors,
  inParallel,
  queryBatchPath,
  queryOk,
  queryPath,
} from './support/entries-query';
import { fewestStatements } from './support/statements';

let s: TestServer;
let w: EntriesWorkspace;

const TYPES: Record<string, FieldDef[]> = {
  country: [
    { name: 'name', type: 'text' },
    { name: 'code', type: 'text' },
  ],
  author: [
    { name: 'name', type: 'text' },
    { name: 'score', type: 'number' },
    { name: 'country', type: 'relation', targets: ['country'] },
    { name: 'born', type: 'date' },
  ],
  illustrator: [
    { name: 'name', type: 'text' },
    { name: 'score', type: 'text' },
  ],
  book: [
    { name: 'title', type: 'text' },
    { name: 'price', type: 'number' },
    { name: 'pages', type: 'number' },
    { name: 'available', type: 'boolean' },
    { name: 'released', type: 'date' },
    { name: 'clock', type: 'date', format: 'time' },
    { name: 'at', type: 'date', format: 'datetime' },
    { name: 'meta', type: 'json' },
    { name: 'labels', type: 'text', multiple: true },
    { name: 'ratings', type: 'number', multiple: true },
    { name: 'author', type: 'relation', targets: ['author'] },
    { name: 'authors', type: 'relation', targets: ['author'], multiple: true },
    { name: 'contributor', type: 'relation', targets: ['author', 'illustrator'] },
    { name: 'cover', type: 'attachment' },
    { name: 'gallery', type: 'attachment', multiple: true },
  ],
  item: [
    { name: 'name', type: 'text' },
    { name: 'n', type: 'number' },
    { name: 'flag', type: 'boolean' },
    { name: 'day', type: 'date' },
    { name: 'at', type: 'date', format: 'datetime' },
    { name: 'clock', type: 'date', format: 'time' },
    { name: 'meta', type: 'json' },
    { name: 'labels', type: 'text', multiple: true },
    { name: 'code', type: 'text' },
    { name: 'cover', type: 'attachment' },
  ],
  node: [
    { name: 'name', type: 'text' },
    { name: 'next', type: 'relation', targets: ['node'] },
    { name: 'many', type: 'relation', targets: ['node'], multiple: true },
  ],
  leaf: [
    { name: 'name', type: 'text' },
    { name: 'weight', type: 'number' },
  ],
  hub: [
    { name: 'name', type: 'text' },
    { name: 'many', type: 'relation', targets: ['leaf'], multiple: true },
  ],
  maker: [
    { name: 'name', type: 'text' },
    { name: 'rating', type: 'number' },
    { name: 'parent', type: 'relation', targets: ['maker'] },
  ],
  product: [
    { name: 'name', type: 'text' },
    { name: 'price', type: 'number' },
    { name: 'maker', type: 'relation', targets: ['maker'] },
  ],
  sale: [
    { name: 'region', type: 'text' },
    { name: 'amount', type: 'number' },
    { name: 'paid', type: 'boolean' },
    { name: 'day', type: 'date' },
    { name: 'clock', type: 'date', format: 'time' },
    { name: 'meta', type: 'json' },
    { name: 'tags', type: 'text', multiple: true },
    { name: 'scores', type: 'number', multiple: true },
    { name: 'product', type: 'relation', targets: ['product'] },
    { name: 'products', type: 'relation', targets: ['product'], multiple: true },
  ],
  num: [
    { name: 'g', type: 'text' },
    { name: 'v', type: 'number' },
  ],
  prec: [
    { name: 'g', type: 'text' },
    { name: 'v', type: 'number' },
    { name: 'w', type: 'number' },
  ],
  wide: Array.from({ length: 11 }, (_x, i) => ({ name: `n${i}`, type: 'number' })),
  event: [
    { name: 'name', type: 'text' },
    { name: 'at', type: 'date', format: 'datetime' },
    { name: 'day', type: 'date' },
    { name: 'clock', type: 'date', format: 'time' },
    { name: 'kind', type: 'text' },
  ],
  label: [{ name: 'name', type: 'text' }],
  longkey: [{ name: 'name', type: 'text' }],
  edge: [{ name: 'at', type: 'date', format: 'datetime' }],
};

beforeAll(async () => {
  s = await startTestServer();
  w = await entriesWorkspace(s);
  for (const [name, fields] of Object.entries(TYPES)) await createContentType(s, w.ws, 'general', { name, fields });
  await createBucket(s, w.ws, 'other');
  await createContentType(s, w.ws, 'other', { name: 'elsewhere', fields: [{ name: 'name', type: 'text' }] });
  await createContentType(s, w.ws, 'other', { name: 'item', fields: [{ name: 'name', type: 'text' }] });
}, 60_000);
// Closing checks that every write of the suite kept typed storage in step with the documents.
afterAll(async () => {
  await s?.close();
});

const q = (body: unknown, api: Api = w.api, bucket = 'general'): Promise<TestResponse> => api.post(queryPath(w.ws, bucket), body);
const ok = (body: unknown) => queryOk(w.api, w.ws, body);
const raw = (text: string, path = queryPath(w.ws)) => rawJson(w.api, 'POST', path, text);
const byIdAsc = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const convert = (id: string) => adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/entries/${id}/convert`);

// ---------------------------------------------------------------------------------------------
// The items of the operator, sort, locale and paging tests.

const ITEMS: [string, 'draft' | 'published', Record<string, unknown>, string[]][] = [
  [
    'i1',
    'published',
    {
      n: 1,
      flag: true,
      day: '2024-01-15',
      at: '2024-01-15 10:00:00',
      clock: '09:30',
      code: 'A%b',
      labels: ['x', 'y'],
      meta: { color: 'red', size: 2, ok: true },
    },
    ['de-DE'],
  ],
  [
    'i2',
    'draft',
    {
      n: 2.5,
      flag: false,
      day: '2024-03-01',
      at: '2024-03-01T00:00:00Z',
      clock: '18:00',
      code: 'Axb',
      labels: ['y'],
      meta: { color: 'blue', size: '2' },
    },
    [],
  ],
  ['i3', 'published', { n: -3, code: 'a_b', labels: [], meta: { color: 'Red' } }, []],
  ['i4', 'draft', { n: null, flag: null, day: null, code: 'axb' }, []],
  ['i5', 'draft', {}, []],
  [
    'i6',
    'published',
    { n: 0, flag: false, day: '2023-12-31', at: '2023-12-31T23:59:59+01:00', clock: '00:00', code: '50%', meta: { size: 10 } },
    ['fr-FR'],
  ],
];
const items: Record<string, any> = {};
let itemsReady: Promise<void> | undefined;
/** Creates the items once (in order, one at a time); i1 also gets de-DE values. */
function ensureItems(): Promise<void> {
  itemsReady ??= (async () => {
    for (const [name, status, fields, locales] of ITEMS)
      items[name] = await createEntry(w, 'item', { fields: { name, ...fields }, status, locales });
    items.i1 = await updateEntry(w, items.i1.id, { fields: { name: 'i1-de', n: 100, code: 'de' } }, '?locale=de-DE');
  })();
  return itemsReady;
}
/** The item names in ID order. */
const inIdOrder = (...names: string[]) =>
  names
    .map((n) => ({ n, id: items[n].id }))
    .sort((a, b) => byIdAsc(a, b))
    .map((x) => x.n);
const ALL_ITEMS = () => inIdOrder('i1', 'i2', 'i3', 'i4', 'i5', 'i6');
/** Names of the items the query matches, in result order. */
async function itemNames(body: Record<string, unknown>): Promise<string[]> {
  const res = await ok({ type: 'item', fields: ['name'], limit: 100, ...body });
  return res.data.map((r: any) => r.name);
}
const where = (filter: unknown) => itemNames({ filter });

// ---------------------------------------------------------------------------------------------

describe('selection', () => {
  let fx: Record<string, any>;
  beforeAll(async () => {
    const fr = await createEntry(w, 'country', { fields: { name: 'France', code: 'FR' }, status: 'published' });
    const ann = await createEntry(w, 'author', {
      fields: { name: 'Ann', score: 5, country: fr.id, born: '1990-05-01' },
      status: 'published',
    });
    const bob = await createEntry(w, 'author', { fields: { name: 'Bob', score: 7 } });
    const cid = await createEntry(w, 'author', { fields: { name: 'Cid', score: 1 }, status: 'published' });
    const dan = await createEntry(w, 'author', { fields: { name: 'Dan' }, status: 'published' });
    const ivy = await createEntry(w, 'illustrator', { fields: { name: 'Ivy', score: 'high' }, status: 'published' });
    const f1 = await uploadFile(w.api, w.ws, 'one.txt', 'one');
    const f2 = await uploadFile(w.api, w.ws, 'two.txt', 'two!');
    const f3 = await uploadFile(w.api, w.ws, 'three.txt', 'three');
    const b1 = await createEntry(w, 'book', {
      fields: {
        title: 'B1',
        price: 10.5,
        pages: 100,
        available: true,
        released: '2024-02-29',
        clock: '09:30',
        at: '2024-03-01 10:20:30',
        meta: { color: 'red', dims: { w: 2 }, list: [1, 2] },
        labels: ['x', 'y'],
        ratings: [1, 2],
        author: ann.id,
        authors: [bob.id, ann.id],
        contributor: ivy.id,
        cover: f1.id,
        gallery: [f2.id, f1.id],
      },
      status: 'published',
    });
    const b2 = await createEntry(w, 'book', {
      fields: { title: 'B2', author: cid.id, authors: [cid.id, dan.id], contributor: ann.id, cover: f3.id, gallery: [f3.id, f2.id] },
    });
    const b3 = await createEntry(w, 'book', { fields: { title: 'B3' }, publish_at: '2031-05-06T10:20:30+02:00' });
    // Invisible from now on: a deleted entry, an entry converted to an object, a deleted file.
    expect((await w.api.delete(w.entry(cid.id))).status).toBe(204);
    await convert(dan.id);
    expect((await w.api.delete(`/api/v1/${w.ws}/files/${f3.id}`)).status).toBe(204);
    const details = async (f: any) => (await w.api.get(`/api/v1/${w.ws}/files/${f.id}`)).body;
    fx = { fr, ann, bob, ivy, f1: await details(f1), f2: await details(f2), b1, b2, b3 };
  });

  const book = async (id: string, fields?: unknown) => {
    const res = await ok({ type: 'book', filter: { '@id': { eq: id } }, ...(fields === undefined ? {} : { fields }) });
    expect(res.data).toHaveLength(1);
    return res.data[0];
  };
  /** Multiple-value content fields never written: null (the document) or [] (as rendered). */
  const emptyMultiple = (row: any, ...names: string[]) => {
    for (const n of names) {
      expect([null, []]).toContainEqual(row[n]);
      delete row[n];
    }
    return row;
  };

  it('without fields: every own content field, relations and attachments as visible IDs, no metadata, no expansion', async () => {
    const res = await ok({ type: 'book', filter: { '@id': { eq: fx.b1.id } } });
    expect(res).toEqual({
      data: [
        {
          title: 'B1',
          price: 10.5,
          pages: 100,
          available: true,
          released: '2024-02-29',
          clock: '09:30',
          at: '2024-03-01T10:20:30Z',
          meta: { color: 'red', dims: { w: 2 }, list: [1, 2] },
          labels: ['x', 'y'],
          ratings: [1, 2],
          author: fx.ann.id,
          authors: [fx.bob.id, fx.ann.id],
          contributor: fx.ivy.id,
          cover: fx.f1.id,
          gallery: [fx.f2.id, fx.f1.id],
        },
      ],
      pagination: { offset: 0, limit: 20, hasMore: false },
    });
    // Invisible references are left out: a deleted author, a converted one, a deleted file.
    const b2 = emptyMultiple(await book(fx.b2.id), 'labels', 'ratings');
    expect(b2).toEqual({
      title: 'B2',
      price: null,
      pages: null,
      available: null,
      released: null,
      clock: null,
      at: null,
      meta: null,
      author: null,
      authors: [],
      contributor: fx.ann.id,
      cover: null,
      gallery: [fx.f2.id],
    });
    // Known fields without values are null: nothing is synthesized.
    const b3 = emptyMultiple(await book(fx.b3.id), 'labels', 'ratings');
    expect(b3).toEqual({
      title: 'B3',
      price: null,
      pages: null,
      available: null,
      released: null,
      clock: null,
      at: null,
      meta: null,
      author: null,
      authors: [],
      contributor: null,
      cover: null,
      gallery: [],
    });
  });

  it('fields [] gives an empty object per result', async () => {
    const res = await ok({ type: 'book', fields: [], filter: { title: { in: ['B1', 'B2', 'B3'] } } });
    expect(res).toEqual({ data: [{}, {}, {}], pagination: { offset: 0, limit: 20, hasMore: false } });
  });

  it('selects own fields by name, values keeping their JSON types', async () => {
    const row = await book(fx.b1.id, ['title', 'price', 'available', 'labels', 'meta']);
    expect(row).toEqual({
      title: 'B1',
      price: 10.5,
      available: true,
      labels: ['x', 'y'],
      meta: { color: 'red', dims: { w: 2 }, list: [1, 2] },
    });
    const res = await q({ type: 'book', fields: ['price'], filter: { '@id': { eq: fx.b1.id } } });
    expect(res.text).toContain('"price":10.5');
  });

  it('selects metadata only when asked, keeping the @ keys', async () => {
    const meta = ['@id', '@lock_version', '@status', '@locales', '@created_at', '@updated_at', '@publish_at', '@published_at'];
    const b1 = await book(fx.b1.id, ['title', ...meta]);
    expect(b1).toEqual({
      title: 'B1',
      '@id': fx.b1.id,
      '@lock_version': 0,
      '@status': 'published',
      '@locales': ['en-US'],
      '@created_at': fx.b1.created_at,
      '@updated_at': fx.b1.updated_at,
      '@publish_at': null,
      '@published_at': expect.any(String),
    });
    expect(b1['@created_at']).toMatch(TIMESTAMP);
    expect(Math.abs(Date.parse(b1['@published_at']) - Date.parse(fx.b1.created_at))).toBeLessThan(60_000);
    const b2 = await book(fx.b2.id, meta);
    expect(b2).toMatchObject({ '@id': fx.b2.id, '@status': 'draft', '@publish_at': null, '@published_at': null, '@locales': ['en-US'] });
    expect(b2['@lock_version']).toEqual(expect.any(Number));
    const b3 = await book(fx.b3.id, ['@publish_at', '@status', '@published_at']);
    expect(b3).toEqual({ '@publish_at': expect.any(String), '@status': 'draft', '@published_at': null });
    expect(Date.parse(b3['@publish_at'])).toBe(Date.parse('2031-05-06T08:20:30Z'));
  });

  it('gives @published_at the time of the latest move to published, null while a draft', async () => {
    const e = await createEntry(w, 'book', { fields: { title: 'published later' } });
    const at = async () => (await book(e.id, ['@published_at', '@status']))['@published_at'];
    expect(await at()).toBeNull();
    const published = await updateEntry(w, e.id, { status: 'published' });
    const first = await at();
    expect(Math.abs(Date.parse(first) - Date.parse(published.updated_at))).toBeLessThan(1000);
    await updateEntry(w, e.id, { status: 'draft' });
    expect(await at()).toBeNull();
    await new Promise((r) => setTimeout(r, 20));
    const again = await updateEntry(w, e.id, { status: 'published' });
    const second = await at();
    expect(Date.parse(second)).toBeGreaterThan(Date.parse(first));
    expect(Math.abs(Date.parse(second) - Date.parse(again.updated_at))).toBeLessThan(1000);
    expect((await w.api.delete(w.entry(e.id))).status).toBe(204);
  });

  it('follows single relations to objects and multiple relations to arrays in stored order, drafts included', async () => {
    const row = await book(fx.b1.id, ['author.name', 'author.@id', 'authors.name', 'authors.@status', 'author.country.name', '@id']);
    expect(row).toEqual({
      author: { name: 'Ann', '@id': fx.ann.id, country: { name: 'France' } },
      authors: [
        { name: 'Bob', '@status': 'draft' },
        { name: 'Ann', '@status': 'published' },
      ],
      '@id': fx.b1.id,
    });
    // An unavailable single reference gives null, a multiple one [].
    expect(await book(fx.b2.id, ['author.name', 'authors.name', 'author.country.name'])).toEqual({ author: null, authors: [] });
    expect(await book(fx.b3.id, ['author.@id', 'authors.@id'])).toEqual({ author: null, authors: [] });
  });

  it('a relation with several target types: paths that every target type defines compatibly', async () => {
    expect(await book(fx.b1.id, ['contributor.name', 'contributor.@id'])).toEqual({ contributor: { name: 'Ivy', '@id': fx.ivy.id } });
    expect(await book(fx.b2.id, ['contributor.name'])).toEqual({ contributor: { name: 'Ann' } });
    // score is a number in author, text in illustrator; born exists in author only.
    expectErrors(await q({ type: 'book', fields: ['title', 'contributor.score'] }), ['fields.1']);
    expectErrors(await q({ type: 'book', fields: ['contributor.born'] }), ['fields.0']);
    expectErrors(await q({ type: 'book', filter: { 'contributor.score': { eq: 5 } } }), [/^filter\.contributor\.score(\.eq)?$/]);
    expectErrors(await q({ type: 'book', sort: [{ field: 'contributor.born', direction: 'asc' }] }), ['sort.0.field']);
  });

  it('bare relation and attachment names select the visible IDs', async () => {
    expect(await book(fx.b1.id, ['author', 'authors', 'contributor', 'cover', 'gallery'])).toEqual({
      author: fx.ann.id,
      authors: [fx.bob.id, fx.ann.id],
      contributor: fx.ivy.id,
      cover: fx.f1.id,
      gallery: [fx.f2.id, fx.f1.id],
    });
    expect(await book(fx.b2.id, ['author', 'authors', 'cover', 'gallery'])).toEqual({
      author: null,
      authors: [],
      cover: null,
      gallery: [fx.f2.id],
    });
  });

  it('follows attachments to file properties', async () => {
    const row = await book(fx.b1.id, [
      'cover.id',
      'cover.name',
      'cover.mime_type',
      'cover.size',
      'cover.download_url',
      'gallery.name',
      'gallery.id',
    ]);
    expect(row).toEqual({
      cover: { id: fx.f1.id, name: 'one.txt', mime_type: fx.f1.mime_type, size: fx.f1.size, download_url: fx.f1.download_url },
      gallery: [
        { name: 'two.txt', id: fx.f2.id },
        { name: 'one.txt', id: fx.f1.id },
      ],
    });
    expect(await book(fx.b2.id, ['cover.name', 'gallery.name'])).toEqual({ cover: null, gallery: [{ name: 'two.txt' }] });
  });

  it('selects scalar JSON property paths (null when missing) and whole JSON fields as stored', async () => {
    expect(await book(fx.b1.id, ['meta.color', 'meta.dims.w', 'meta.nope'])).toEqual({
      meta: { color: 'red', dims: { w: 2 }, nope: null },
    });
    expect(await book(fx.b3.id, ['meta.color'])).toEqual({ meta: { color: null } });
    expect(await book(fx.b1.id, ['meta'])).toEqual({ meta: { color: 'red', dims: { w: 2 }, list: [1, 2] } });
  });

  it('selects JSON properties named __proto__ or constructor like any other', async () => {
    const res = await rawJson(
      w.api,
      'POST',
      w.typed('book'),
      '{"fields":{"title":"Proto","meta":{"__proto__":{"x":1},"constructor":{"prototype":2}}}}',
    );
    expect(res.status).toBe(201);
    const got = await queryOk(w.api, w.ws, {
      type: 'book',
      fields: ['meta.__proto__.x', 'meta.constructor.prototype'],
      filter: { 'meta.__proto__.x': { eq: 1 } },
    });
    expect(got.data).toHaveLength(1);
    expect(JSON.stringify(got.data[0])).toBe('{"meta":{"__proto__":{"x":1},"constructor":{"prototype":2}}}');
  });

  it.each([
    ['an unknown field', { fields: ['title', 'nope'] }, ['fields.1']],
    ['an unknown metadata selector', { fields: ['@nope'] }, ['fields.0']],
    ['an unknown field below a relation', { fields: ['author.nope'] }, ['fields.0']],
    ['an unknown file property', { fields: ['cover.nope'] }, ['fields.0']],
    ['a path below a scalar field', { fields: ['title.x'] }, ['fields.0']],
    ['a relation and a path below it', { fields: ['title', 'author', 'author.name'] }, [/^fields\.[12]$/]],
    ['a path below a relation and the relation', { fields: ['authors.name', 'authors'] }, [/^fields\.[01]$/]],
    ['a field that is not a string', { fields: [5] }, ['fields.0']],
    ['fields that are not an array', { fields: 'title' }, ['fields']],
    ['101 fields', { fields: Array.from({ length: 101 }, () => 'title') }, ['fields']],
    ['an unknown property', { colour: 'red' }, ['colour']],
  ])('refuses %s with 422', async (_label, body, keys) => {
    expectErrors(await q({ type: 'book', ...body }), keys);
  });

  it('refuses a missing or non-string type with 422 on type', async () => {
    expectErrors(await q({ fields: ['title'] }), ['type']);
    expectErrors(await q({ type: 5 }), ['type']);
  });

  it('filters, sorts and narrows through relations over visible references only, drafts included', async () => {
    const titles = async (body: Record<string, unknown>) =>
      (await ok({ type: 'book', fields: ['title'], ...body })).data.map((r: any) => r.title);
    // b1 is the only book whose authors include the draft Bob.
    expect(await titles({ filter: { 'authors.name': { eq: 'Bob' } } })).toEqual(['B1']);
    expect(await titles({ filter: { authors: { includes: fx.bob.id } } })).toEqual(['B1']);
    expect(await titles({ filter: { author: { eq: fx.ann.id } } })).toEqual(['B1']);
    expect(await titles({ filter: { 'author.country.code': { eq: 'FR' } } })).toEqual(['B1']);
    // b2's references are gone (deleted, converted): they match nothing, not even their old names.
    expect(await titles({ filter: { 'author.name': { eq: 'Cid' } } })).toEqual([]);
    expect(await titles({ filter: { 'authors.name': { in: ['Cid', 'Dan'] } } })).toEqual([]);
    expect(await titles({ filter: { title: { in: ['B1', 'B2', 'B3'] }, author: { eq: null } } })).toEqual(['B2', 'B3']);
    expect(await titles({ filter: { title: { in: ['B1', 'B2', 'B3'] }, 'author.name': { eq: null } } })).toEqual(['B2', 'B3']);
    expect(await titles({ filter: { 'contributor.name': { eq: 'Ivy' } } })).toEqual(['B1']);
    // A published root expands a draft related entry; @status narrows the roots only.
    expect(
      (await ok({ type: 'book', fields: ['authors.name'], filter: { '@status': { eq: 'published' }, title: { eq: 'B1' } } })).data,
    ).toEqual([{ authors: [{ name: 'Bob' }, { name: 'Ann' }] }]);
    // Sorting by a single-relation path: missing last.
    const sorted = await titles({ filter: { title: { in: ['B1', 'B2', 'B3'] } }, sort: [{ field: 'author.name', direction: 'desc' }] });
    const [b2, b3] = [fx.b2, fx.b3].sort(byIdAsc);
    expect(sorted).toEqual(['B1', b2.fields.title, b3.fields.title]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('filter operators', () => {
  beforeAll(() => ensureItems());

  it.each([
    ['eq', { n: { eq: 1 } }, ['i1']],
    ['eq a decimal', { n: { eq: 2.5 } }, ['i2']],
    ['eq null: missing or null', { n: { eq: null } }, ['i4', 'i5']],
    ['ne null: a value required', { n: { ne: null } }, ['i1', 'i2', 'i3', 'i6']],
    ['ne never matches a missing value', { n: { ne: 1 } }, ['i2', 'i3', 'i6']],
    ['lt', { n: { lt: 1 } }, ['i3', 'i6']],
    ['lte', { n: { lte: 1 } }, ['i1', 'i3', 'i6']],
    ['gt', { n: { gt: 0 } }, ['i1', 'i2']],
    ['gte', { n: { gte: 0 } }, ['i1', 'i2', 'i6']],
    ['two operators ANDed', { n: { gt: 0, lt: 2 } }, ['i1']],
    ['in', { n: { in: [1, 0, 99] } }, ['i1', 'i6']],
  ])('numbers: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it.each([
    ['eq true', { flag: { eq: true } }, ['i1']],
    ['eq false', { flag: { eq: false } }, ['i2', 'i6']],
    ['ne true never matches missing or null', { flag: { ne: true } }, ['i2', 'i6']],
    ['eq null', { flag: { eq: null } }, ['i3', 'i4', 'i5']],
    ['ne null', { flag: { ne: null } }, ['i1', 'i2', 'i6']],
    ['in', { flag: { in: [true] } }, ['i1']],
  ])('booleans: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it.each([
    ['date gte', { day: { gte: '2024-01-01' } }, ['i1', 'i2']],
    ['date lt', { day: { lt: '2024-01-15' } }, ['i6']],
    ['date eq', { day: { eq: '2024-03-01' } }, ['i2']],
    ['date ne never matches missing', { day: { ne: '2024-03-01' } }, ['i1', 'i6']],
    ['date eq null', { day: { eq: null } }, ['i3', 'i4', 'i5']],
    ['datetime gt with an offset', { at: { gt: '2024-01-15T11:00:00+02:00' } }, ['i1', 'i2']],
    ['datetime eq in another accepted form', { at: { eq: '2024-01-15 10:00' } }, ['i1']],
    ['datetime lt across midnight UTC', { at: { lt: '2024-01-01T00:00:00+01:00' } }, ['i6']],
    ['datetime lte', { at: { lte: '2023-12-31 22:59:59' } }, ['i6']],
    ['time gte', { clock: { gte: '09:30' } }, ['i1', 'i2']],
    ['time lt', { clock: { lt: '09:30' } }, ['i6']],
  ])('dates: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it.each([
    ['eq is exact and case-sensitive', { code: { eq: 'axb' } }, ['i4']],
    ['eq in another case', { code: { eq: 'AXB' } }, []],
    ['ne never matches missing', { code: { ne: 'axb' } }, ['i1', 'i2', 'i3', 'i6']],
    ['startsWith with a literal %', { code: { startsWith: 'A%' } }, ['i1']],
    ['startsWith', { code: { startsWith: 'A' } }, ['i1', 'i2']],
    ['endsWith with a literal _', { code: { endsWith: '_b' } }, ['i3']],
    ['endsWith a literal %', { code: { endsWith: '%' } }, ['i6']],
    ['contains a literal %', { code: { contains: '%' } }, ['i1', 'i6']],
    ['contains a literal _', { code: { contains: '_' } }, ['i3']],
    ['contains', { code: { contains: 'x' } }, ['i2', 'i4']],
    ['in', { code: { in: ['axb', 'a_b', 'zzz'] } }, ['i3', 'i4']],
  ])('text: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it.each([
    ['includes', { labels: { includes: 'y' } }, ['i1', 'i2']],
    ['includes one', { labels: { includes: 'x' } }, ['i1']],
    ['includes nothing', { labels: { includes: 'z' } }, []],
  ])('arrays: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it.each([
    ['a string property', { 'meta.color': { eq: 'red' } }, ['i1']],
    ['case-sensitive', { 'meta.color': { eq: 'Red' } }, ['i3']],
    ['a number matches numbers only', { 'meta.size': { eq: 2 } }, ['i1']],
    ['a string matches strings only', { 'meta.size': { eq: '2' } }, ['i2']],
    ['gt compares numbers only', { 'meta.size': { gt: 1 } }, ['i1', 'i6']],
    ['a boolean', { 'meta.ok': { eq: true } }, ['i1']],
    ['startsWith', { 'meta.color': { startsWith: 'r' } }, ['i1']],
    ['eq null: missing', { 'meta.color': { eq: null } }, ['i4', 'i5', 'i6']],
    ['ne null', { 'meta.color': { ne: null } }, ['i1', 'i2', 'i3']],
  ])('JSON paths: %s', async (_label, filter, expected) => {
    expect(await where(filter)).toEqual(inIdOrder(...expected));
  });

  it('filters on metadata: @status, @locales, @id, @lock_version, @published_at', async () => {
    expect(await where({ '@status': { eq: 'draft' } })).toEqual(inIdOrder('i2', 'i4', 'i5'));
    expect(await where({ '@status': { eq: 'published' } })).toEqual(inIdOrder('i1', 'i3', 'i6'));
    expect(await where({ '@status': { ne: 'published' } })).toEqual(inIdOrder('i2', 'i4', 'i5'));
    expect(await where({ '@locales': { includes: 'de-DE' } })).toEqual(['i1']);
    expect(await where({ '@locales': { includes: 'fr-FR' } })).toEqual(['i6']);
    expect(await where({ '@locales': { includes: 'en-US' } })).toEqual(ALL_ITEMS());
    expect(await where({ '@id': { eq: items.i3.id } })).toEqual(['i3']);
    expect(await where({ '@id': { in: [items.i1.id, items.i5.id] } })).toEqual(inIdOrder('i1', 'i5'));
    expect(await where({ '@id': { ne: items.i1.id } })).toEqual(inIdOrder('i2', 'i3', 'i4', 'i5', 'i6'));
    // IDs in any case, as paths and batch targets take them.
    expect(await where({ '@id': { eq: items.i3.id.toLowerCase() } })).toEqual(['i3']);
    expect(await where({ '@id': { in: [items.i1.id.toLowerCase(), items.i5.id] } })).toEqual(inIdOrder('i1', 'i5'));
    // Timestamps of the years 0001 to 9999 only (PostgreSQL reads no year 0000): a 422, not a 500.
    expect(await where({ '@created_at': { gt: '0001-01-01T00:00:00+14:00' } })).toEqual(ALL_ITEMS());
    for (const op of ['gt', 'eq'] as const)
      expectErrors(await q({ type: 'item', filter: { '@created_at': { [op]: '0000-01-01T00:00:00Z' } } }), [`filter.@created_at.${op}`]);
    expectErrors(await q({ type: 'item', filter: { '@publish_at': { in: ['0000-06-01'] } } }), ['filter.@publish_at.in']);
    expect(await where({ '@lock_version': { gte: 1 } })).toEqual(['i1']);
    expect(await where({ '@published_at': { eq: null } })).toEqual(inIdOrder('i2', 'i4', 'i5'));
  });

  it('combines with $and and $or, nested, and with sibling conditions', async () => {
    expect(await where({ $or: [{ n: { eq: 1 } }, { code: { eq: 'axb' } }] })).toEqual(inIdOrder('i1', 'i4'));
    expect(await where({ $and: [{ n: { gte: 0 } }, { flag: { eq: false } }] })).toEqual(inIdOrder('i2', 'i6'));
    expect(await where({ $or: [{ $and: [{ n: { gt: 0 } }, { flag: { eq: false } }] }, { code: { eq: '50%' } }] })).toEqual(
      inIdOrder('i2', 'i6'),
    );
    expect(await where({ flag: { ne: null }, $or: [{ n: { lt: 1 } }, { code: { eq: 'Axb' } }] })).toEqual(inIdOrder('i2', 'i6'));
    expect(await where({ $and: [{ $or: [{ n: { eq: -3 } }, { n: { eq: 0 } }] }, { '@status': { eq: 'published' } }] })).toEqual(
      inIdOrder('i3', 'i6'),
    );
  });

  it('includes drafts and published entries; an empty or omitted filter matches all', async () => {
    expect(await itemNames({})).toEqual(ALL_ITEMS());
    expect(await where({})).toEqual(ALL_ITEMS());
  });

  it.each([
    ['a bare value', { n: 1 }, ['filter.n']],
    ['null instead of an operator object', { n: null }, ['filter.n']],
    ['an unknown operator', { n: { like: 1 } }, ['filter.n.like']],
    ['an unknown field', { nope: { eq: 1 } }, ['filter.nope']],
    ['a string operand on a number field', { n: { gt: '1' } }, ['filter.n.gt']],
    ['a null lt', { n: { lt: null } }, ['filter.n.lt']],
    ['lt on a text field', { code: { lt: 'b' } }, ['filter.code.lt']],
    ['startsWith with a number', { code: { startsWith: 1 } }, ['filter.code.startsWith']],
    ['startsWith on a number field', { n: { startsWith: '1' } }, ['filter.n.startsWith']],
    ['an invalid date operand', { day: { gte: '2024-02-30' } }, ['filter.day.gte']],
    ['a datetime operand with fractional seconds', { at: { gt: '2024-01-01T00:00:00.5Z' } }, ['filter.at.gt']],
    ['a number operand on a date field', { day: { lt: 20240101 } }, ['filter.day.lt']],
    ['in with no values', { n: { in: [] } }, ['filter.n.in']],
    ['in with 101 values', { n: { in: Array.from({ length: 101 }, (_x, i) => i) } }, ['filter.n.in']],
    ['in with an array value', { n: { in: [[1]] } }, [/^filter\.n\.in(\.0)?$/]],
    ['an object operand', { 'meta.color': { eq: { a: 1 } } }, ['filter.meta.color.eq']],
    ['equality of a whole JSON object', { meta: { eq: { color: 'red' } } }, [/^filter\.meta(\.eq)?$/]],
    ['an array operand', { n: { eq: [1] } }, ['filter.n.eq']],
    ['eq on a multiple field', { labels: { eq: 'y' } }, ['filter.labels.eq']],
    ['in on a multiple field', { labels: { in: ['y'] } }, ['filter.labels.in']],
    ['includes on a single field', { code: { includes: 'x' } }, ['filter.code.includes']],
    ['includes with an array operand', { labels: { includes: ['y'] } }, ['filter.labels.includes']],
    ['an attachment filter', { cover: { eq: 1 } }, [/^filter\.cover(\.eq)?$/]],
    ['@locales with eq', { '@locales': { eq: 'de-DE' } }, [/^filter\.@locales(\.eq)?$/]],
    ['an unknown metadata key', { '@nope': { eq: 1 } }, ['filter.@nope']],
    ['some on a non-relation field', { code: { some: { name: { eq: 'x' } } } }, [/^filter\.code(\.some)?$/]],
    ['an empty $or', { $or: [] }, ['filter.$or']],
    ['an empty $and', { $and: [] }, ['filter.$and']],
    ['a group that is not an array', { $and: { n: { eq: 1 } } }, ['filter.$and']],
    ['a group member that is not an object', { $or: [1] }, ['filter.$or.0']],
    ['an error inside a group', { $or: [{ n: { eq: 1 } }, { nope: { eq: 1 } }] }, ['filter.$or.1.nope']],
    ['an operator error inside a group', { $and: [{ n: { gt: 'x' } }] }, ['filter.$and.0.n.gt']],
    ['$not', { $not: { n: { eq: 1 } } }, ['filter.$not']],
    ['a filter that is an array', [{ n: { eq: 1 } }], ['filter']],
    ['a filter that is a string', 'n = 1', ['filter']],
  ])('refuses %s with 422', async (_label, filter, keys) => {
    expectErrors(await q({ type: 'item', filter }), keys);
  });
});

// ---------------------------------------------------------------------------------------------

describe('sorting', () => {
  beforeAll(() => ensureItems());
  const sorted = (...sort: unknown[]) => itemNames({ sort });

  it('orders by entry ID ascending by default', async () => {
    const res = await ok({ type: 'item', fields: ['@id'], limit: 100 });
    const ids = res.data.map((r: any) => r['@id']);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toHaveLength(6);
  });

  it('sorts numbers with missing and null values last in both directions, ties by ID', async () => {
    const missing = inIdOrder('i4', 'i5');
    expect(await sorted({ field: 'n', direction: 'asc' })).toEqual(['i3', 'i6', 'i1', 'i2', ...missing]);
    expect(await sorted({ field: 'n', direction: 'desc' })).toEqual(['i2', 'i1', 'i6', 'i3', ...missing]);
  });

  it('sorts number values of any size and precision exactly, as number fields take them', async () => {
    await createContentType(s, w.ws, 'general', {
      name: 'measure',
      fields: [
        { name: 'label', type: 'text' },
        { name: 'v', type: 'number' },
      ],
    });
    // Beyond DECIMAL(38,12): 27 integer digits, 101 fractional places (the Objects rule is not the typed one).
    const values: [string, string][] = [
      ['big', '1e26'],
      ['tiny', '1e-101'],
      ['neg', '-0.0000000000005'],
      ['zero', '0'],
      ['huge', '123456789012345678901234567890.5'],
    ];
    for (const [label, v] of values) {
      const res = await rawJson(
        w.api,
        'POST',
        `${w.entries}?contentBucket=general&contentType=measure`,
        `{"fields":{"label":"${label}","v":${v}}}`,
      );
      expect(res.status).toBe(201);
    }
    const order = async (direction: string) =>
      (await ok({ type: 'measure', fields: ['label'], sort: [{ field: 'v', direction }], limit: 10 })).data.map((r: any) => r.label);
    expect(await order('asc')).toEqual(['neg', 'zero', 'tiny', 'big', 'huge']);
    expect(await order('desc')).toEqual(['huge', 'big', 'tiny', 'zero', 'neg']);
  });

  it('sorts booleans and dates, missing last', async () => {
    const noFlag = inIdOrder('i3', 'i4', 'i5');
    expect(await sorted({ field: 'flag', direction: 'asc' })).toEqual([...inIdOrder('i2', 'i6'), 'i1', ...noFlag]);
    expect(await sorted({ field: 'flag', direction: 'desc' })).toEqual(['i1', ...inIdOrder('i2', 'i6'), ...noFlag]);
    expect(await sorted({ field: 'day', direction: 'desc' })).toEqual(['i2', 'i1', 'i6', ...noFlag]);
    expect(await sorted({ field: 'at', direction: 'asc' })).toEqual(['i6', 'i1', 'i2', ...noFlag]);
    expect(await sorted({ field: 'clock', direction: 'desc' })).toEqual(['i2', 'i1', 'i6', ...noFlag]);
  });

  it('applies up to five keys in precedence order', async () => {
    expect(await sorted({ field: 'flag', direction: 'asc' }, { field: 'n', direction: 'desc' })).toEqual([
      'i2',
      'i6',
      'i1',
      'i3',
      ...inIdOrder('i4', 'i5'),
    ]);
    const five = await sorted(
      { field: '@status', direction: 'desc' },
      { field: 'flag', direction: 'desc' },
      { field: 'day', direction: 'asc' },
      { field: 'n', direction: 'asc' },
      { field: '@created_at', direction: 'asc' },
    );
    // published: i1 (true), i6 (false), i3 (no flag); drafts: i2 (false), then i4, i5 (no flag, no day, no n).
    expect(five).toEqual([
      'i1',
      'i6',
      'i3',
      'i2',
      ...[items.i4, items.i5].sort((a, b) => (a.created_at < b.created_at ? -1 : 1)).map((e) => e.fields.name),
    ]);
  });

  it('sorts by metadata', async () => {
    const byCreated = [...ITEMS.map(([n]) => n)].sort((a, b) =>
      items[a].created_at < items[b].created_at ? -1 : items[a].created_at > items[b].created_at ? 1 : 0,
    );
    expect(await sorted({ field: '@created_at', direction: 'desc' })).toEqual([...byCreated].reverse());
    expect(await sorted({ field: '@lock_version', direction: 'desc' })).toEqual(['i1', ...inIdOrder('i2', 'i3', 'i4', 'i5', 'i6')]);
  });

  it.each([
    ['six keys', Array.from({ length: 6 }, () => ({ field: 'n', direction: 'asc' })), ['sort']],
    ['an array field', [{ field: 'labels', direction: 'asc' }], ['sort.0.field']],
    ['a JSON field', [{ field: 'meta', direction: 'asc' }], ['sort.0.field']],
    ['an unknown field', [{ field: 'nope', direction: 'asc' }], ['sort.0.field']],
    ['an invalid direction', [{ field: 'n', direction: 'up' }], ['sort.0.direction']],
    ['a missing field', [{ direction: 'asc' }], ['sort.0.field']],
    [
      'the second key',
      [
        { field: 'n', direction: 'asc' },
        { field: 'labels', direction: 'asc' },
      ],
      ['sort.1.field'],
    ],
    ['a sort that is not an array', { field: 'n', direction: 'asc' }, ['sort']],
  ])('refuses %s with 422', async (_label, sort, keys) => {
    expectErrors(await q({ type: 'item', sort }), keys);
  });

  it('refuses sorting by a multiple relation or a path through one', async () => {
    expectErrors(await q({ type: 'book', sort: [{ field: 'authors', direction: 'asc' }] }), ['sort.0.field']);
    expectErrors(await q({ type: 'book', sort: [{ field: 'authors.name', direction: 'asc' }] }), ['sort.0.field']);
    expectErrors(await q({ type: 'book', sort: [{ field: 'gallery', direction: 'asc' }] }), ['sort.0.field']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('locale', () => {
  beforeAll(() => ensureItems());

  it('reads, filters and sorts the values of the requested locale only, without fallback', async () => {
    const de = await ok({ type: 'item', locale: 'de-DE', fields: ['name', 'n', 'code'], limit: 100 });
    expect(de.data).toEqual(
      ALL_ITEMS().map((n) => (n === 'i1' ? { name: 'i1-de', n: 100, code: 'de' } : { name: null, n: null, code: null })),
    );
    expect(await itemNames({ locale: 'de-DE', filter: { n: { ne: null } } })).toEqual(['i1-de']);
    expect(await itemNames({ locale: 'de-DE', filter: { name: { eq: 'i1' } } })).toEqual([]);
    expect(await itemNames({ filter: { name: { eq: 'i1-de' } } })).toEqual([]);
    const sortedDe = await ok({ type: 'item', locale: 'de-DE', fields: ['@id'], sort: [{ field: 'n', direction: 'asc' }], limit: 100 });
    expect(sortedDe.data.map((r: any) => r['@id'])).toEqual([
      items.i1.id,
      ...ALL_ITEMS()
        .filter((n) => n !== 'i1')
        .map((n) => items[n].id),
    ]);
    // fr-FR is enabled on i6 but has no values there.
    expect((await ok({ type: 'item', locale: 'fr-FR', fields: ['name'], filter: { '@id': { eq: items.i6.id } } })).data).toEqual([
      { name: null },
    ]);
    // en-US is the default.
    expect((await ok({ type: 'item', fields: ['name', 'n'], filter: { '@id': { eq: items.i1.id } } })).data).toEqual([
      { name: 'i1', n: 1 },
    ]);
    expect((await ok({ type: 'item', locale: 'en-US', fields: ['name'], filter: { '@id': { eq: items.i1.id } } })).data).toEqual([
      { name: 'i1' },
    ]);
  });

  it.each(['*', 'it-IT', 'xx', 'not a locale'])('answers the locale %j with 400 Invalid locale.', async (locale) => {
    const res = await q({ type: 'item', locale });
    expect([res.status, res.body]).toEqual([400, INVALID_LOCALE]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('paging', () => {
  beforeAll(() => ensureItems());
  const page = (offset: number | undefined, limit: number | undefined) =>
    ok({ type: 'item', fields: ['name'], ...(offset === undefined ? {} : { offset }), ...(limit === undefined ? {} : { limit }) });

  it('pages with offset and limit; hasMore says whether one more matches', async () => {
    const all = ALL_ITEMS();
    const first = await page(undefined, 2);
    expect(first).toEqual({ data: all.slice(0, 2).map((name) => ({ name })), pagination: { offset: 0, limit: 2, hasMore: true } });
    expect(await page(3, 2)).toEqual({
      data: all.slice(3, 5).map((name) => ({ name })),
      pagination: { offset: 3, limit: 2, hasMore: true },
    });
    expect(await page(4, 2)).toEqual({
      data: all.slice(4, 6).map((name) => ({ name })),
      pagination: { offset: 4, limit: 2, hasMore: false },
    });
    expect(await page(5, 1)).toEqual({ data: [{ name: all[5] }], pagination: { offset: 5, limit: 1, hasMore: false } });
    expect(await page(6, undefined)).toEqual({ data: [], pagination: { offset: 6, limit: 20, hasMore: false } });
    expect(await page(10_000, 100)).toEqual({ data: [], pagination: { offset: 10_000, limit: 100, hasMore: false } });
    expect(await page(0, 6)).toEqual({ data: all.map((name) => ({ name })), pagination: { offset: 0, limit: 6, hasMore: false } });
    expect(await page(0, 5)).toMatchObject({ pagination: { offset: 0, limit: 5, hasMore: true } });
  });

  it.each([
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['a string limit', { limit: '10' }, 'limit'],
    ['a fractional limit', { limit: 1.5 }, 'limit'],
    ['offset -1', { offset: -1 }, 'offset'],
    ['offset 10001', { offset: 10_001 }, 'offset'],
  ])('refuses %s with 422', async (_label, body, key) => {
    expectErrors(await q({ type: 'item', ...body }), [key]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('limits', () => {
  let chain: any[];
  beforeAll(async () => {
    await ensureItems();
    chain = [];
    for (let i = 0; i < 5; i++)
      chain.push(await createEntry(w, 'node', { fields: { name: `n${i}`, ...(i ? { next: chain[i - 1].id } : {}) } }));
  });
  const nest = (depth: number): Record<string, unknown> => {
    let f: Record<string, unknown> = { n: { eq: 1 } };
    for (let i = 0; i < depth; i++) f = { $and: [f] };
    return f;
  };

  it('allows 8 nested groups and refuses 9 with 422 on filter', async () => {
    expect(await where(nest(8))).toEqual(['i1']);
    expectErrors(await q({ type: 'item', filter: nest(9) }), ['filter']);
    expectErrors(await q({ type: 'item', filter: { $or: [{ n: { eq: 5 } }, { $and: [nest(7)] }] } }), ['filter']);
  });

  it('allows 100 filter groups and operators and refuses 101 with 422 on filter', async () => {
    const or = (n: number) => ({ $or: Array.from({ length: n }, (_x, i) => ({ n: { eq: i === 0 ? 1 : 1000 + i } })) });
    // One group and 99 operators.
    expect(await where(or(99))).toEqual(['i1']);
    // One group and 100 operators.
    expectErrors(await q({ type: 'item', filter: or(100) }), ['filter']);
    // 50 groups of two operators: 150.
    const groups = { $and: Array.from({ length: 50 }, () => ({ $or: [{ n: { ne: 5000 } }, { n: { eq: 5001 } }] })) };
    expectErrors(await q({ type: 'item', filter: groups }), ['filter']);
  });

  it('counts an in of 100 values as one operator', async () => {
    const values = [1, ...Array.from({ length: 99 }, (_x, i) => 1001 + i)];
    expect(await where({ n: { in: values } })).toEqual(['i1']);
    // With 98 more operators and its group: 100 in all.
    expect(await where({ $or: [{ n: { in: values } }, ...Array.from({ length: 98 }, (_x, i) => ({ n: { eq: 5000 + i } }))] })).toEqual([
      'i1',
    ]);
    expectErrors(
      await q({
        type: 'item',
        filter: { $or: [{ n: { in: values } }, ...Array.from({ length: 99 }, (_x, i) => ({ n: { eq: 5000 + i } }))] },
      }),
      ['filter'],
    );
    expectErrors(await q({ type: 'item', filter: { n: { in: [...values, 7] } } }), ['filter.n.in']);
  });

  it('counts the relation levels of nested some filters with those of their paths', async () => {
    const m: any[] = [];
    for (let i = 0; i < 5; i++) m.push(await createEntry(w, 'node', { fields: { name: `m${i}`, ...(i ? { many: [m[i - 1].id] } : {}) } }));
    const some = (levels: number, inner: Record<string, unknown>): Record<string, unknown> =>
      levels ? { many: { some: some(levels - 1, inner) } } : inner;
    const match = (filter: unknown) => ok({ type: 'node', fields: ['name'], filter }).then((r) => r.data.map((x: any) => x.name));
    expect(await match(some(3, { name: { eq: 'm0' } }))).toEqual(['m3']);
    expect(await match(some(1, { 'many.many.name': { eq: 'm0' } }))).toEqual(['m3']);
    expect(await match(some(2, { 'next.@id': { eq: null }, name: { eq: 'm1' } }))).toEqual(['m3']);
    expectErrors(await q({ type: 'node', filter: some(4, { name: { eq: 'm0' } }) }), ['filter.many.some.many.some.many.some.many.some']);
    expectErrors(await q({ type: 'node', filter: some(1, { 'many.many.many.name': { eq: 'm0' } }) }), [
      'filter.many.some.many.many.many.name',
    ]);
    expectErrors(await q({ type: 'node', filter: some(3, { 'next.name': { eq: 'm0' } }) }), [
      'filter.many.some.many.some.many.some.next.name',
    ]);
  });

  it('follows at most 3 relation levels in fields, filters and sorts', async () => {
    const [n0, n1, , , n4] = chain;
    expect(
      (await ok({ type: 'node', fields: ['next.next.next.name', 'next.next.next.@id'], filter: { '@id': { eq: n4.id } } })).data,
    ).toEqual([{ next: { next: { next: { name: 'n1', '@id': n1.id } } } }]);
    expect((await ok({ type: 'node', fields: ['name'], filter: { 'next.next.next.name': { eq: 'n0' } } })).data).toEqual([{ name: 'n3' }]);
    expect((await ok({ type: 'node', fields: ['name'], filter: { 'next.next.next.@id': { eq: n0.id } } })).data).toEqual([{ name: 'n3' }]);
    expectErrors(await q({ type: 'node', fields: ['name', 'next.next.next.next.name'] }), ['fields.1']);
    expectErrors(await q({ type: 'node', filter: { 'next.next.next.next.name': { eq: 'n0' } } }), ['filter.next.next.next.next.name']);
    expectErrors(await q({ type: 'node', sort: [{ field: 'next.next.next.next.name', direction: 'asc' }] }), ['sort.0.field']);
  });

  it('refuses a body over 64 KiB with 413 and accepts one just under', async () => {
    const over = await q({ type: 'item', filter: { code: { eq: 'x'.repeat(64 * 1024) } } });
    expect(over.status).toBe(413);
    const under = await q({ type: 'item', fields: ['name'], filter: { code: { ne: 'x'.repeat(64 * 1024 - 200) } } });
    expect(under.status).toBe(200);
    expect(under.body.data.map((r: any) => r.name)).toEqual(inIdOrder('i1', 'i2', 'i3', 'i4', 'i6'));
  });

  it('answers malformed JSON with 400', async () => {
    const res = await raw('{"type": "item", "filter": {');
    expect(res.status).toBe(400);
    expect(typeof res.body.message).toBe('string');
  });
});

// ---------------------------------------------------------------------------------------------

describe('the budget of 1000 referenced entries', () => {
  let hubs: any[];
  let wideHub: any;
  let wideLeaves: any[];
  beforeAll(async () => {
    const leaves = await createEntries(
      w,
      'leaf',
      Array.from({ length: 41 * 25 }, (_x, i) => ({ fields: { name: `l${i}`, weight: 1 }, status: 'published' })),
    );
    hubs = [];
    for (let h = 0; h < 41; h++)
      hubs.push(
        await createEntry(w, 'hub', {
          fields: { name: `hub${String(h).padStart(2, '0')}`, many: leaves.slice(h * 25, h * 25 + 25).map((l) => l.id) },
        }),
      );
    // 30 references; the 30th names a leaf that no other hub references.
    const beyond = await createEntry(w, 'leaf', { fields: { name: 'beyond', weight: 1 }, status: 'published' });
    wideLeaves = [...leaves.slice(0, 29), beyond];
    wideHub = await createEntry(w, 'hub', { fields: { name: 'wide', many: wideLeaves.map((l) => l.id) } });
  }, 180_000);

  const hubQuery = (limit: number, offset = 0) => ({
    type: 'hub',
    fields: ['name', 'many.name'],
    filter: { name: { startsWith: 'hub' } },
    sort: [{ field: 'name', direction: 'asc' }],
    limit,
    offset,
  });

  it('returns 1000 referenced entries in full and refuses 1025 with 422 on fields, never truncating', async () => {
    const full = await ok(hubQuery(40));
    expect(full.data).toHaveLength(40);
    full.data.forEach((row: any, h: number) => {
      expect(row.name).toBe(`hub${String(h).padStart(2, '0')}`);
      expect(row.many.map((l: any) => l.name)).toEqual(Array.from({ length: 25 }, (_x, i) => `l${h * 25 + i}`));
    });
    expectErrors(await q(hubQuery(41)), ['fields']);
    expect((await ok(hubQuery(40, 1))).data).toHaveLength(40);
  });

  it('filters and aggregates over every stored reference, beyond the first 25', async () => {
    const last = wideLeaves[29];
    expect((await ok({ type: 'hub', fields: ['name'], filter: { many: { some: { name: { eq: last.fields.name } } } } })).data).toEqual([
      { name: 'wide' },
    ]);
    expect((await ok({ type: 'hub', fields: ['name'], filter: { many: { includes: last.id } } })).data).toEqual([{ name: 'wide' }]);
    expect((await ok({ type: 'hub', fields: ['name', 'many'], filter: { '@id': { eq: wideHub.id } } })).data[0].many).toHaveLength(30);
    expect((await ok({ type: 'hub', aggregate: { sum: ['many.weight'] }, filter: { name: { eq: 'wide' } } })).data).toEqual([
      { sum: { 'many.weight': '30' } },
    ]);
  });

  it('counts the budget across the members of a batch query', async () => {
    const res = await w.api.post(queryBatchPath(w.ws), { queries: { a: hubQuery(20), b: hubQuery(20, 20) } });
    expect(res.status).toBe(200);
    expect(res.body.results.a.data).toHaveLength(20);
    expect(res.body.results.b.data).toHaveLength(20);
    expect(res.body.results.b.data[19].many).toHaveLength(25);
    const over = await w.api.post(queryBatchPath(w.ws), { queries: { a: hubQuery(20), b: hubQuery(21, 20) } });
    expectErrors(over, [/^queries/]);
    expect(over.body.results).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------

describe('authorization and missing resources', () => {
  beforeAll(() => ensureItems());

  it('needs entries:query: 403 without it, even with entries:read and every other ability', async () => {
    const perms = [...ENTRY_PERMISSIONS, ...FILE_PERMISSIONS];
    const others = ['files:write', 'files:read', 'files:delete', 'entries:read', 'entries:write', 'entries:delete', 'entries:history'];
    for (const abilities of [['entries:read'], others]) {
      const api = await keyFor(s, w.ws, abilities, perms);
      const res = await q({ type: 'item' }, api);
      expect([abilities, res.status, res.body]).toEqual([abilities, 403, NOT_PERMITTED]);
    }
  });

  it('needs the creator permission list-entries', async () => {
    const api = await keyFor(
      s,
      w.ws,
      ['*'],
      ENTRY_PERMISSIONS.filter((p) => p !== 'list-entries'),
    );
    const res = await q({ type: 'item' }, api);
    expect([res.status, res.body]).toEqual([403, NOT_PERMITTED]);
  });

  it('lets a key with exactly entries:query and a creator with exactly list-entries through; drafts included', async () => {
    const api = await keyFor(s, w.ws, ['entries:query'], ['list-entries']);
    const res = await q({ type: 'item', fields: ['name'], limit: 100 }, api);
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: any) => r.name)).toEqual(ALL_ITEMS());
    // entries:query grants no delivery read and no write.
    expect((await api.get(w.typed('item'))).status).toBe(403);
    expect((await api.post(w.typed('item'), { fields: { name: 'x' } })).status).toBe(403);
  });

  it('refuses no key, a wrong key and a key of another workspace with 403 Forbidden', async () => {
    const other = await entriesWorkspace(s);
    for (const token of [undefined, 'wsk_nope', other.key]) {
      const res = await q({ type: 'item' }, client(s.url, token));
      expect([res.status, res.body]).toEqual([403, { message: 'Forbidden' }]);
    }
  });

  it('answers 404 for an unknown bucket or type, or a type of another bucket, after authorization', async () => {
    for (const [type, bucket] of [
      ['item', 'nobucket'],
      ['nope', 'general'],
      ['elsewhere', 'general'],
    ]) {
      const res = await q({ type }, w.api, bucket);
      expect([type, bucket, res.status, res.body]).toEqual([type, bucket, 404, NOT_FOUND]);
    }
    const reader = await keyFor(s, w.ws, ['entries:read']);
    expect((await q({ type: 'nope' }, reader, 'nobucket')).status).toBe(403);
    // The bucket in the path decides: item of the other bucket is another type.
    const other = await ok({ type: 'item', fields: ['name'] });
    expect(other.data).toHaveLength(6);
    expect((await queryOk(w.api, w.ws, { type: 'item' }, 'other')).data).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Aggregation: sales of products by makers.

describe('aggregation', () => {
  let fx: Record<string, any>;
  beforeAll(async () => {
    const m1 = await createEntry(w, 'maker', { fields: { name: 'Acme', rating: 4 }, status: 'published' });
    const m2 = await createEntry(w, 'maker', { fields: { name: 'Bolt', rating: 2 } });
    const p1 = await createEntry(w, 'product', { fields: { name: 'Pen', price: 5, maker: m1.id }, status: 'published' });
    const p2 = await createEntry(w, 'product', { fields: { name: 'Cup', price: 1.5, maker: m1.id }, status: 'published' });
    const p3 = await createEntry(w, 'product', { fields: { name: 'Pen', price: 2, maker: m2.id }, locales: ['de-DE'] });
    await updateEntry(w, p3.id, { fields: { name: 'Stift', price: 9 } }, '?locale=de-DE');
    const p4 = await createEntry(w, 'product', { fields: { name: 'Hat', price: 3 }, status: 'published' });
    const p5 = await createEntry(w, 'product', { fields: { name: 'Ink' }, status: 'published' });
    const p6 = await createEntry(w, 'product', { fields: { name: 'Gem', price: 100 }, status: 'published' });
    const sale = (fields: Record<string, unknown>, status = 'published', locales: string[] = []) =>
      createEntry(w, 'sale', { fields, status, locales });
    const s1 = await sale({ region: 'north', amount: 10, paid: true, day: '2024-01-05', product: p1.id, products: [p1.id, p2.id] });
    const s2 = await sale({ region: 'south', amount: 2.5, paid: false, day: '2024-01-05', product: p3.id, products: [p3.id] }, 'draft');
    const s3 = await sale({
      region: 'north',
      amount: 0.1,
      paid: false,
      day: '2024-02-10',
      product: p1.id,
      products: [p1.id, p1.id, p2.id],
    });
    const s4 = await sale({ amount: 0.2, products: [p4.id, p6.id] }, 'draft');
    const s5 = await sale({ region: 'south', paid: true, day: '2024-02-10', products: [p5.id] });
    const s6 = await sale({ region: 'east', amount: -4, product: p2.id, products: [] }, 'published', ['de-DE']);
    await updateEntry(w, s6.id, { fields: { region: 'ost', amount: 1, products: [p3.id] } }, '?locale=de-DE');
    // Invisible from now on: a deleted product and a converted one.
    expect((await w.api.delete(w.entry(p4.id))).status).toBe(204);
    await convert(p6.id);
    fx = { m1, m2, p1, p2, p3, p4, p5, p6, s1, s2, s3, s4, s5, s6 };
  });

  const agg = (body: Record<string, unknown>) => ok({ type: 'sale', ...body });

  it('counts every match in one row, 0 included; the page is fixed', async () => {
    expect(await agg({ aggregate: { count: true } })).toEqual({
      data: [{ count: 6 }],
      pagination: { offset: 0, limit: 1, hasMore: false },
    });
    expect(await agg({ aggregate: { count: true }, filter: { region: { eq: 'west' } } })).toEqual({
      data: [{ count: 0 }],
      pagination: { offset: 0, limit: 1, hasMore: false },
    });
    expect((await agg({ aggregate: { count: true }, filter: { '@status': { eq: 'draft' } } })).data).toEqual([{ count: 2 }]);
  });

  it('sums exactly, averages rounded to 12 places, min and max exactly; null and missing ignored', async () => {
    const res = await agg({ aggregate: { count: true, sum: ['amount'], avg: ['amount'], min: ['amount'], max: ['amount'] } });
    expect(res.data).toEqual([
      { count: 6, sum: { amount: '8.8' }, avg: { amount: '1.760000000000' }, min: { amount: '-4' }, max: { amount: '10' } },
    ]);
    // Only what is asked: no count without count: true.
    expect((await agg({ aggregate: { sum: ['amount'] } })).data).toEqual([{ sum: { amount: '8.8' } }]);
    expect((await agg({ aggregate: { max: ['amount'] }, filter: { region: { eq: 'north' } } })).data).toEqual([{ max: { amount: '10' } }]);
  });

  it('gives null for each numeric result without contributors, a count of the roots still', async () => {
    expect(
      (
        await agg({
          aggregate: { count: true, sum: ['amount'], avg: ['amount'], min: ['amount'], max: ['amount'] },
          filter: { region: { eq: 'west' } },
        })
      ).data,
    ).toEqual([{ count: 0, sum: { amount: null }, avg: { amount: null }, min: { amount: null }, max: { amount: null } }]);
    expect((await agg({ aggregate: { count: true, sum: ['amount'], avg: ['amount'] }, filter: { '@id': { eq: fx.s5.id } } })).data).toEqual(
      [{ count: 1, sum: { amount: null }, avg: { amount: null } }],
    );
  });

  it('counts each root once when several related entries satisfy some', async () => {
    expect((await agg({ aggregate: { count: true }, filter: { products: { some: { price: { gt: 0 } } } } })).data).toEqual([{ count: 3 }]);
  });

  it('some needs all its conditions on the same related entry; separate paths do not', async () => {
    const ids = async (filter: unknown) => (await ok({ type: 'sale', fields: ['@id'], filter })).data.map((r: any) => r['@id']);
    const sorted = (...xs: any[]) => xs.map((x) => x.id).sort();
    expect(await ids({ products: { some: { name: { eq: 'Pen' }, price: { lt: 3 } } } })).toEqual([fx.s2.id]);
    expect(await ids({ 'products.name': { eq: 'Pen' }, 'products.price': { lt: 3 } })).toEqual(sorted(fx.s1, fx.s2, fx.s3));
    expect(await ids({ products: { some: { name: { eq: 'Hat' } } } })).toEqual([]);
    expect(await ids({ products: { some: { 'maker.name': { eq: 'Bolt' } } } })).toEqual([fx.s2.id]);
    // some qualifies the root; the selected array keeps every related entry.
    expect(
      (
        await ok({
          type: 'sale',
          fields: ['products.name'],
          filter: { '@id': { eq: fx.s1.id }, products: { some: { name: { eq: 'Cup' } } } },
        })
      ).data,
    ).toEqual([{ products: [{ name: 'Pen' }, { name: 'Cup' }] }]);
    expectErrors(await q({ type: 'sale', filter: { product: { some: { name: { eq: 'Pen' } } } } }), [/^filter\.product(\.some)?$/]);
    expectErrors(await q({ type: 'sale', filter: { products: { some: { nope: { eq: 1 } } } } }), ['filter.products.some.nope']);
    expectErrors(await q({ type: 'sale', filter: { products: { some: { price: { gt: 'x' } } } } }), ['filter.products.some.price.gt']);
  });

  it('groups by a string field: rows with counts and aggregates, null group last', async () => {
    const res = await agg({ groupBy: ['region'], aggregate: { count: true, sum: ['amount'] } });
    expect(res).toEqual({
      data: [
        { group: { region: 'east' }, count: 1, sum: { amount: '-4' } },
        { group: { region: 'north' }, count: 2, sum: { amount: '10.1' } },
        { group: { region: 'south' }, count: 2, sum: { amount: '2.5' } },
        { group: { region: null }, count: 1, sum: { amount: '0.2' } },
      ],
      pagination: { offset: 0, limit: 20, hasMore: false },
    });
    // Without count: rows carry no count.
    expect((await agg({ groupBy: ['region'], aggregate: { max: ['amount'] }, filter: { paid: { eq: true } } })).data).toEqual([
      { group: { region: 'north' }, max: { amount: '10' } },
      { group: { region: 'south' }, max: { amount: null } },
    ]);
  });

  it('pages groups; counts cover the whole filtered set', async () => {
    const body = { groupBy: ['region'], aggregate: { count: true } };
    expect(await agg({ ...body, limit: 2 })).toEqual({
      data: [
        { group: { region: 'east' }, count: 1 },
        { group: { region: 'north' }, count: 2 },
      ],
      pagination: { offset: 0, limit: 2, hasMore: true },
    });
    expect(await agg({ ...body, offset: 2, limit: 2 })).toEqual({
      data: [
        { group: { region: 'south' }, count: 2 },
        { group: { region: null }, count: 1 },
      ],
      pagination: { offset: 2, limit: 2, hasMore: false },
    });
    expect(await agg({ ...body, offset: 3, limit: 1 })).toEqual({
      data: [{ group: { region: null }, count: 1 }],
      pagination: { offset: 3, limit: 1, hasMore: false },
    });
    expect(await agg({ ...body, filter: { region: { eq: 'west' } } })).toEqual({
      data: [],
      pagination: { offset: 0, limit: 20, hasMore: false },
    });
  });

  it('groups by booleans, dates, metadata and tuples in requested order, null last per dimension', async () => {
    expect((await agg({ groupBy: ['paid'], aggregate: { count: true } })).data).toEqual([
      { group: { paid: false }, count: 2 },
      { group: { paid: true }, count: 2 },
      { group: { paid: null }, count: 2 },
    ]);
    expect((await agg({ groupBy: ['day'], aggregate: { count: true } })).data).toEqual([
      { group: { day: '2024-01-05' }, count: 2 },
      { group: { day: '2024-02-10' }, count: 2 },
      { group: { day: null }, count: 2 },
    ]);
    expect((await agg({ groupBy: ['@status'], aggregate: { count: true } })).data).toEqual([
      { group: { '@status': 'draft' }, count: 2 },
      { group: { '@status': 'published' }, count: 4 },
    ]);
    expect((await agg({ groupBy: ['region', 'paid'], aggregate: { count: true } })).data).toEqual([
      { group: { region: 'east', paid: null }, count: 1 },
      { group: { region: 'north', paid: false }, count: 1 },
      { group: { region: 'north', paid: true }, count: 1 },
      { group: { region: 'south', paid: false }, count: 1 },
      { group: { region: 'south', paid: true }, count: 1 },
      { group: { region: null, paid: null }, count: 1 },
    ]);
    expect(
      (await agg({ groupBy: ['paid', 'region'], aggregate: { count: true }, filter: { '@status': { eq: 'published' } } })).data,
    ).toEqual([
      { group: { paid: false, region: 'north' }, count: 1 },
      { group: { paid: true, region: 'north' }, count: 1 },
      { group: { paid: true, region: 'south' }, count: 1 },
      { group: { paid: null, region: 'east' }, count: 1 },
    ]);
  });

  it('groups by a single-relation path: equal names combine, @id keeps identity', async () => {
    expect((await agg({ groupBy: ['product.name'], aggregate: { count: true } })).data).toEqual([
      { group: { 'product.name': 'Cup' }, count: 1 },
      { group: { 'product.name': 'Pen' }, count: 3 },
      { group: { 'product.name': null }, count: 2 },
    ]);
    const byId = (await agg({ groupBy: ['product.@id'], aggregate: { count: true } })).data;
    const expected = [
      [fx.p1.id, 2],
      [fx.p2.id, 1],
      [fx.p3.id, 1],
    ]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .map(([id, count]) => ({ group: { 'product.@id': id }, count }));
    expect(byId).toEqual([...expected, { group: { 'product.@id': null }, count: 2 }]);
  });

  it('aggregates related numeric paths: once per root per terminal entry, independent paths', async () => {
    const res = await agg({
      aggregate: {
        sum: ['products.price', 'product.price', 'products.maker.rating'],
        avg: ['products.price', 'product.price', 'products.maker.rating'],
        min: ['products.price'],
        max: ['products.price'],
      },
    });
    expect(res.data).toEqual([
      {
        sum: { 'products.price': '15', 'product.price': '13.5', 'products.maker.rating': '10' },
        avg: { 'products.price': '3.000000000000', 'product.price': '3.375000000000', 'products.maker.rating': '3.333333333333' },
        min: { 'products.price': '1.5' },
        max: { 'products.price': '5' },
      },
    ]);
    // Roots without related values stay in their groups with null results.
    expect((await agg({ groupBy: ['region'], aggregate: { count: true, sum: ['products.price'] } })).data).toEqual([
      { group: { region: 'east' }, count: 1, sum: { 'products.price': null } },
      { group: { region: 'north' }, count: 2, sum: { 'products.price': '13' } },
      { group: { region: 'south' }, count: 2, sum: { 'products.price': '2' } },
      { group: { region: null }, count: 1, sum: { 'products.price': null } },
    ]);
    // Relation filters qualify roots, not contributors.
    expect((await agg({ aggregate: { sum: ['products.price'] }, filter: { products: { some: { name: { eq: 'Cup' } } } } })).data).toEqual([
      { sum: { 'products.price': '13' } },
    ]);
    // A path of three relations.
    expect((await agg({ aggregate: { sum: ['product.maker.parent.rating'] } })).data).toEqual([
      { sum: { 'product.maker.parent.rating': null } },
    ]);
  });

  it('reads root and related values in the requested locale without fallback', async () => {
    expect((await agg({ locale: 'de-DE', aggregate: { count: true, sum: ['amount', 'products.price'] } })).data).toEqual([
      { count: 6, sum: { amount: '1', 'products.price': '9' } },
    ]);
    expect((await agg({ locale: 'de-DE', groupBy: ['region'], aggregate: { count: true } })).data).toEqual([
      { group: { region: 'ost' }, count: 1 },
      { group: { region: null }, count: 5 },
    ]);
    expect((await agg({ locale: 'de-DE', groupBy: ['product.name'], aggregate: { count: true } })).data).toEqual([
      { group: { 'product.name': null }, count: 6 },
    ]);
  });

  it.each([
    ['fields with aggregate', { aggregate: { count: true }, fields: ['region'] }, ['aggregate']],
    ['sort with aggregate', { aggregate: { count: true }, sort: [{ field: 'amount', direction: 'asc' }] }, ['aggregate']],
    ['limit on an ungrouped aggregate', { aggregate: { count: true }, limit: 5 }, ['limit']],
    ['offset on an ungrouped aggregate', { aggregate: { count: true }, offset: 0 }, ['offset']],
    ['groupBy without aggregate', { groupBy: ['region'] }, [/^(aggregate|groupBy)$/]],
    ['an empty sum', { aggregate: { sum: [] } }, ['aggregate.sum']],
    ['a repeated path in one operation', { aggregate: { sum: ['amount', 'amount'] } }, ['aggregate.sum.1']],
    ['a text field', { aggregate: { sum: ['region'] } }, ['aggregate.sum.0']],
    ['numeric metadata', { aggregate: { avg: ['@lock_version'] } }, ['aggregate.avg.0']],
    ['a JSON path', { aggregate: { min: ['meta.n'] } }, ['aggregate.min.0']],
    ['a multiple-value numeric field', { aggregate: { max: ['scores'] } }, ['aggregate.max.0']],
    ['a relation', { aggregate: { sum: ['product'] } }, ['aggregate.sum.0']],
    ['an unknown field', { aggregate: { sum: ['amount', 'nope'] } }, ['aggregate.sum.1']],
    ['a path of four relations', { aggregate: { sum: ['product.maker.parent.parent.rating'] } }, ['aggregate.sum.0']],
    ['a path ending at a text field', { aggregate: { sum: ['product.name'] } }, ['aggregate.sum.0']],
    ['count that is not true', { aggregate: { count: 'yes' } }, ['aggregate.count']],
    ['an unknown operation', { aggregate: { median: ['amount'] } }, ['aggregate.median']],
    ['a numeric groupBy', { groupBy: ['amount'], aggregate: { count: true } }, ['groupBy.0']],
    ['a groupBy through a multiple relation', { groupBy: ['products.name'], aggregate: { count: true } }, ['groupBy.0']],
    ['a JSON groupBy', { groupBy: ['meta.color'], aggregate: { count: true } }, ['groupBy.0']],
    ['an array groupBy', { groupBy: ['tags'], aggregate: { count: true } }, ['groupBy.0']],
    ['an unknown groupBy', { groupBy: ['region', 'nope'], aggregate: { count: true } }, ['groupBy.1']],
    ['a repeated groupBy', { groupBy: ['region', 'region'], aggregate: { count: true } }, ['groupBy.1']],
    ['four groupBy fields', { groupBy: ['region', 'paid', 'day', '@status'], aggregate: { count: true } }, ['groupBy']],
    ['a time-only calendar bucket', { groupBy: [{ field: 'clock', interval: 'day' }], aggregate: { count: true } }, ['groupBy.0']],
    ['a text calendar bucket', { groupBy: [{ field: 'region', interval: 'day' }], aggregate: { count: true } }, ['groupBy.0']],
  ])('refuses %s with 422', async (_label, body, keys) => {
    expectErrors(await q({ type: 'sale', ...body }), keys);
  });

  it('allows at most 10 distinct numeric paths across all operations', async () => {
    const paths = Array.from({ length: 11 }, (_x, i) => `n${i}`);
    await createEntry(w, 'wide', { fields: Object.fromEntries(paths.map((p, i) => [p, i])) });
    const ten = await ok({ type: 'wide', aggregate: { sum: paths.slice(0, 5), avg: paths.slice(5, 10), max: paths.slice(0, 10) } });
    expect(ten.data[0].sum).toEqual({ n0: '0', n1: '1', n2: '2', n3: '3', n4: '4' });
    expect(ten.data[0].max.n9).toBe('9');
    expect(ten.data[0].avg.n5).toBe('5.000000000000');
    expectErrors(await q({ type: 'wide', aggregate: { sum: paths.slice(0, 5), avg: paths.slice(5, 11) } }), ['aggregate']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('decimal results', () => {
  beforeAll(async () => {
    const rows: [string, string][] = [
      ['big', '99999999999999999999999999'],
      ['big', '0.000000000001'],
      ['exact', '0.1'],
      ['exact', '0.2'],
      ['negtie', '-0.000000000001'],
      ['negtie', '0'],
      ['nulls', 'null'],
      ['nulls', ''],
      ['sci', '1.5e3'],
      ['sci', '2E-3'],
      ['third', '1'],
      ['third', '2'],
      ['third', '2'],
      ['tie', '0.000000000001'],
      ['tie', '0'],
      ['trail', '2.50'],
      ['trail', '1.250'],
      ['whole', '2'],
      ['whole', '4'],
      ['whole', 'null'],
      ['zero', '1'],
      ['zero', '-1'],
    ];
    await inParallel(rows, 8, async ([g, v]) => {
      const text = `{"fields":{"g":"${g}"${v === '' ? '' : `,"v":${v}`}},"status":"published"}`;
      const res = await rawJson(w.api, 'POST', w.typed('num'), text);
      if (res.status !== 201) throw new Error(`num ${g} ${v}: ${res.status} ${res.text}`);
    });
  });

  it('sum exact without trailing zeros, avg rounded once half away from zero with 12 places, min and max exact', async () => {
    const res = await ok({ type: 'num', groupBy: ['g'], aggregate: { count: true, sum: ['v'], avg: ['v'], min: ['v'], max: ['v'] } });
    const row = (g: string, count: number, sum: string | null, avg: string | null, min: string | null, max: string | null) => ({
      group: { g },
      count,
      sum: { v: sum },
      avg: { v: avg },
      min: { v: min },
      max: { v: max },
    });
    expect(res.data).toEqual([
      row(
        'big',
        2,
        '99999999999999999999999999.000000000001',
        '49999999999999999999999999.500000000001',
        '0.000000000001',
        '99999999999999999999999999',
      ),
      row('exact', 2, '0.3', '0.150000000000', '0.1', '0.2'),
      row('negtie', 2, '-0.000000000001', '-0.000000000001', '-0.000000000001', '0'),
      row('nulls', 2, null, null, null, null),
      row('sci', 2, '1500.002', '750.001000000000', '0.002', '1500'),
      row('third', 3, '5', '1.666666666667', '1', '2'),
      row('tie', 2, '0.000000000001', '0.000000000001', '0', '0.000000000001'),
      row('trail', 2, '3.75', '1.875000000000', '1.25', '2.5'),
      row('whole', 3, '6', '3.000000000000', '2', '4'),
      row('zero', 2, '0', '0.000000000000', '-1', '1'),
    ]);
    expect(res.pagination).toEqual({ offset: 0, limit: 20, hasMore: false });
  });
});

describe('the decimal contract', () => {
  beforeAll(async () => {
    const rows: [string, string][] = [
      ['a-ok', '1'],
      ['ok26', '99999999999999999999999999'],
      ['oktrail', '1.2300000000000000'],
      ['oksci', '-0.5E-11'],
      ['x-bad-frac', '0.1234567890123'],
      ['x-bad-int', '123456789012345678901234567'],
      ['x-bad-exp', '1e26'],
      ['x-bad-small', '1e-13'],
      ['ok-zeroexp', '0e100'],
      ['ok-128', '1.' + '0'.repeat(126)],
    ];
    for (const [g, v] of rows) {
      const res = await rawJson(w.api, 'POST', w.typed('prec'), `{"fields":{"g":"${g}","v":${v},"w":1},"status":"published"}`);
      if (res.status !== 201) throw new Error(`prec ${g}: ${res.status} ${res.text}`);
    }
  });
  const only = (g: string) => ({ g: { eq: g } });

  it.each([
    ['a-ok', '1'],
    ['ok26', '99999999999999999999999999'],
    ['oktrail', '1.23'],
    ['oksci', '-0.000000000005'],
    ['ok-zeroexp', '0'],
    ['ok-128', '1'],
  ])('accepts %s as %s', async (g, sum) => {
    expect((await ok({ type: 'prec', filter: only(g), aggregate: { sum: ['w', 'v'], min: ['v'] } })).data).toEqual([
      { sum: { w: '1', v: sum }, min: { v: sum } },
    ]);
  });

  it.each(['x-bad-frac', 'x-bad-int', 'x-bad-exp', 'x-bad-small'])('refuses %s with 422 on the path, never rounding', async (g) => {
    expectErrors(await q({ type: 'prec', filter: only(g), aggregate: { sum: ['w', 'v'] } }), ['aggregate.sum.1']);
    expectErrors(await q({ type: 'prec', filter: only(g), aggregate: { max: ['v'] } }), ['aggregate.max.0']);
    expectErrors(await q({ type: 'prec', filter: only(g), aggregate: { avg: ['v'] } }), ['aggregate.avg.0']);
  });

  it('refuses a stored JSON number longer than 128 characters, even when its digits fit', async () => {
    const [entry] = await createEntries(w, 'prec', [{ fields: { g: 'x-long', v: 1, w: 1 }, status: 'published' }]);
    // 1 with 130 fractional zeros: fits DECIMAL(38,12) once trailing zeros go, but is 132 characters as stored.
    await s.server.app.db.query(
      `UPDATE entry_contents SET data = jsonb_set(data, '{v}', ('1.' || repeat('0', 130))::jsonb) WHERE entry_pk = (SELECT id FROM entries WHERE entry_id = $1)`,
      [entry.id],
    );
    expectErrors(await q({ type: 'prec', filter: only('x-long'), aggregate: { sum: ['v'] } }), ['aggregate.sum.0']);
    await s.server.app.db.query(
      `UPDATE entry_contents SET data = jsonb_set(data, '{v}', ('1.' || repeat('0', 126))::jsonb) WHERE entry_pk = (SELECT id FROM entries WHERE entry_id = $1)`,
      [entry.id],
    );
    expect((await ok({ type: 'prec', filter: only('x-long'), aggregate: { sum: ['v'] } })).data).toEqual([{ sum: { v: '1' } }]);
  });

  it('refuses a bad contributor outside the requested page of groups, and ignores roots the filter excludes', async () => {
    expectErrors(await q({ type: 'prec', groupBy: ['g'], aggregate: { count: true, sum: ['v'] }, limit: 1 }), ['aggregate.sum.0']);
    const fine = await ok({ type: 'prec', groupBy: ['g'], aggregate: { count: true, sum: ['w'] }, limit: 1 });
    expect(fine).toEqual({
      data: [{ group: { g: 'a-ok' }, count: 1, sum: { w: '1' } }],
      pagination: { offset: 0, limit: 1, hasMore: true },
    });
    expect((await ok({ type: 'prec', filter: { g: { in: ['oktrail', 'oksci'] } }, aggregate: { count: true, sum: ['v'] } })).data).toEqual([
      { count: 2, sum: { v: '1.229999999995' } },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('group keys', () => {
  it('groups strings case-sensitively, trailing whitespace included', async () => {
    await createEntries(
      w,
      'label',
      ['Red', 'red', 'red ', 'red', ' red', null].map((name) => ({ fields: name === null ? {} : { name } })),
    );
    const res = await ok({ type: 'label', groupBy: ['name'], aggregate: { count: true } });
    expect(res.data).toHaveLength(5);
    expect(res.data[4]).toEqual({ group: { name: null }, count: 1 });
    const byKey = Object.fromEntries(res.data.slice(0, 4).map((r: any) => [r.group.name, r.count]));
    expect(byKey).toEqual({ Red: 1, red: 2, 'red ': 1, ' red': 1 });
  });

  it('refuses a string key over 512 UTF-8 bytes with 422 on groupBy.<n>, even beyond the page', async () => {
    const max = 'é'.repeat(256);
    const over = 'zz' + 'é'.repeat(256);
    await createEntries(
      w,
      'longkey',
      ['a', max, over].map((name) => ({ fields: { name } })),
    );
    expectErrors(await q({ type: 'longkey', groupBy: ['name'], aggregate: { count: true }, limit: 1 }), ['groupBy.0']);
    const fine = await ok({ type: 'longkey', groupBy: ['name'], aggregate: { count: true }, filter: { name: { ne: over } } });
    expect(fine.data).toEqual([
      { group: { name: 'a' }, count: 1 },
      { group: { name: max }, count: 1 },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('calendar buckets', () => {
  beforeAll(async () => {
    const rows: [string, string | null, string, string | null][] = [
      ['e1', '2024-03-30T22:59:59Z', 'a', '2024-03-31'],
      ['e2', '2024-03-30T23:00:00Z', 'b', '2024-04-01'],
      ['e3', '2024-03-31T21:59:59Z', 'a', null],
      ['e4', '2024-03-31T22:00:00Z', 'a', null],
      ['e5', '2024-12-31T23:30:00Z', 'b', null],
      ['e6', null, 'a', null],
      ['e7', '2024-10-26T22:30:00Z', 'b', null],
      ['e8', '2024-10-27T22:30:00Z', 'b', null],
    ];
    await createEntries(
      w,
      'event',
      rows.map(([name, at, kind, day]) => ({
        fields: { name, kind, ...(at ? { at } : {}), ...(day ? { day } : {}) },
        status: 'published',
      })),
    );
  });

  const buckets = async (interval: string, timezone?: string, extra: Record<string, unknown> = {}) => {
    const res = await ok({
      type: 'event',
      groupBy: [{ field: 'at', interval, ...(timezone ? { timezone } : {}) }],
      aggregate: { count: true },
      ...extra,
    });
    return res.data.map((r: any) => [r.group.at, r.count]);
  };

  it.each([
    [
      'day',
      'Europe/Berlin',
      [
        ['2024-03-30', 1],
        ['2024-03-31', 2],
        ['2024-04-01', 1],
        ['2024-10-27', 2],
        ['2025-01-01', 1],
        [null, 1],
      ],
    ],
    [
      'day',
      undefined,
      [
        ['2024-03-30', 2],
        ['2024-03-31', 2],
        ['2024-10-26', 1],
        ['2024-10-27', 1],
        ['2024-12-31', 1],
        [null, 1],
      ],
    ],
    [
      'day',
      'UTC',
      [
        ['2024-03-30', 2],
        ['2024-03-31', 2],
        ['2024-10-26', 1],
        ['2024-10-27', 1],
        ['2024-12-31', 1],
        [null, 1],
      ],
    ],
    [
      'day',
      'Asia/Kolkata',
      [
        ['2024-03-31', 2],
        ['2024-04-01', 2],
        ['2024-10-27', 1],
        ['2024-10-28', 1],
        ['2025-01-01', 1],
        [null, 1],
      ],
    ],
    [
      'week',
      'Europe/Berlin',
      [
        ['2024-03-25', 3],
        ['2024-04-01', 1],
        ['2024-10-21', 2],
        ['2024-12-30', 1],
        [null, 1],
      ],
    ],
    [
      'week',
      undefined,
      [
        ['2024-03-25', 4],
        ['2024-10-21', 2],
        ['2024-12-30', 1],
        [null, 1],
      ],
    ],
    [
      'month',
      'Europe/Berlin',
      [
        ['2024-03-01', 3],
        ['2024-04-01', 1],
        ['2024-10-01', 2],
        ['2025-01-01', 1],
        [null, 1],
      ],
    ],
    [
      'month',
      undefined,
      [
        ['2024-03-01', 4],
        ['2024-10-01', 2],
        ['2024-12-01', 1],
        [null, 1],
      ],
    ],
    [
      'quarter',
      'Europe/Berlin',
      [
        ['2024-01-01', 3],
        ['2024-04-01', 1],
        ['2024-10-01', 2],
        ['2025-01-01', 1],
        [null, 1],
      ],
    ],
    [
      'quarter',
      undefined,
      [
        ['2024-01-01', 4],
        ['2024-10-01', 3],
        [null, 1],
      ],
    ],
    [
      'year',
      'Europe/Berlin',
      [
        ['2024-01-01', 6],
        ['2025-01-01', 1],
        [null, 1],
      ],
    ],
    [
      'year',
      undefined,
      [
        ['2024-01-01', 7],
        [null, 1],
      ],
    ],
  ])('%s buckets in %s: local start dates of observed periods only, null last', async (interval, timezone, expected) => {
    expect(await buckets(interval, timezone)).toEqual(expected);
  });

  it('pages buckets and combines them with other dimensions (observed combinations only)', async () => {
    const res = await ok({
      type: 'event',
      groupBy: [{ field: 'at', interval: 'day', timezone: 'Europe/Berlin' }],
      aggregate: { count: true },
      offset: 2,
      limit: 2,
    });
    expect(res).toEqual({
      data: [
        { group: { at: '2024-04-01' }, count: 1 },
        { group: { at: '2024-10-27' }, count: 2 },
      ],
      pagination: { offset: 2, limit: 2, hasMore: true },
    });
    const combined = await ok({
      type: 'event',
      groupBy: [{ field: 'at', interval: 'year', timezone: 'Europe/Berlin' }, 'kind'],
      aggregate: { count: true },
    });
    expect(combined.data).toEqual([
      { group: { at: '2024-01-01', kind: 'a' }, count: 3 },
      { group: { at: '2024-01-01', kind: 'b' }, count: 3 },
      { group: { at: '2025-01-01', kind: 'b' }, count: 1 },
      { group: { at: null, kind: 'a' }, count: 1 },
    ]);
  });

  it('buckets date-only fields without timezone or in UTC', async () => {
    const expected = [
      { group: { day: '2024-03-01' }, count: 1 },
      { group: { day: '2024-04-01' }, count: 1 },
      { group: { day: null }, count: 6 },
    ];
    expect((await ok({ type: 'event', groupBy: [{ field: 'day', interval: 'month' }], aggregate: { count: true } })).data).toEqual(
      expected,
    );
    expect(
      (await ok({ type: 'event', groupBy: [{ field: 'day', interval: 'month', timezone: 'UTC' }], aggregate: { count: true } })).data,
    ).toEqual(expected);
    expect((await ok({ type: 'event', groupBy: [{ field: 'day', interval: 'week' }], aggregate: { count: true } })).data).toEqual([
      { group: { day: '2024-03-25' }, count: 1 },
      { group: { day: '2024-04-01' }, count: 1 },
      { group: { day: null }, count: 6 },
    ]);
  });

  it.each([
    ['an unknown timezone', { field: 'at', interval: 'day', timezone: 'Mars/Olympus' }, ['groupBy.0.timezone']],
    ['a timezone that is not a string', { field: 'at', interval: 'day', timezone: 5 }, ['groupBy.0.timezone']],
    ['an empty timezone', { field: 'at', interval: 'day', timezone: '' }, ['groupBy.0.timezone']],
    [
      'a named timezone on a date-only field',
      { field: 'day', interval: 'month', timezone: 'Europe/Berlin' },
      [/^groupBy\.0(\.timezone)?$/],
    ],
    ['an unknown interval', { field: 'at', interval: 'hour' }, [/^groupBy\.0(\.interval)?$/]],
    ['a missing interval', { field: 'at' }, [/^groupBy\.0(\.interval)?$/]],
    ['a missing field', { interval: 'day' }, [/^groupBy\.0(\.field)?$/]],
    ['another property', { field: 'at', interval: 'day', label: 'x' }, [/^groupBy\.0(\.label)?$/]],
    ['a time-only field', { field: 'clock', interval: 'day' }, ['groupBy.0']],
  ])('refuses %s with 422', async (_label, bucket, keys) => {
    expectErrors(await q({ type: 'event', groupBy: [bucket], aggregate: { count: true } }), keys);
  });

  it('refuses dates whose local time leaves years 1 to 9999 with 422 on groupBy.<n>, even beyond the page', async () => {
    await createEntries(
      w,
      'edge',
      ['0001-01-01T02:00:00Z', '2024-05-01T00:00:00Z', '9999-12-31T20:00:00Z'].map((at) => ({ fields: { at } })),
    );
    const year = (timezone: string, extra: Record<string, unknown> = {}) =>
      q({ type: 'edge', groupBy: [{ field: 'at', interval: 'year', timezone }], aggregate: { count: true }, ...extra });
    expect(
      (await ok({ type: 'edge', groupBy: [{ field: 'at', interval: 'year', timezone: 'UTC' }], aggregate: { count: true } })).data,
    ).toEqual([
      { group: { at: '0001-01-01' }, count: 1 },
      { group: { at: '2024-01-01' }, count: 1 },
      { group: { at: '9999-01-01' }, count: 1 },
    ]);
    // New York is behind UTC (year 0 for the first), Tokyo ahead (year 10000 for the last).
    expectErrors(await year('America/New_York', { limit: 1, offset: 1 }), ['groupBy.0']);
    expectErrors(await year('Asia/Tokyo', { limit: 1 }), ['groupBy.0']);
    const inRange = await ok({
      type: 'edge',
      groupBy: [{ field: 'at', interval: 'year', timezone: 'Asia/Tokyo' }],
      aggregate: { count: true },
      filter: { at: { lt: '9000-01-01T00:00:00Z' } },
    });
    expect(inRange.data).toEqual([
      { group: { at: '0001-01-01' }, count: 1 },
      { group: { at: '2024-01-01' }, count: 1 },
    ]);
  });

  it('answers 422 on groupBy.<n>, not 500, for a stored date the API could not have written', async () => {
    const [entry] = await createEntries(w, 'edge', [{ fields: { at: '2024-06-01T00:00:00Z' } }]);
    await s.server.app.db.query(
      `UPDATE entry_contents SET data = jsonb_set(data, '{at}', '"2024-13-45T99:00:00Z"') WHERE entry_pk = (SELECT id FROM entries WHERE entry_id = $1)`,
      [entry.id],
    );
    expectErrors(await q({ type: 'edge', groupBy: [{ field: 'at', interval: 'month' }], aggregate: { count: true } }), ['groupBy.0']);
    await s.server.app.db.query(
      `UPDATE entry_contents SET data = jsonb_set(data, '{at}', '"not a date"') WHERE entry_pk = (SELECT id FROM entries WHERE entry_id = $1)`,
      [entry.id],
    );
    // A value of another shape is no date at all: the null group.
    const res = await ok({
      type: 'edge',
      groupBy: [{ field: 'at', interval: 'year' }],
      aggregate: { count: true },
      filter: { '@id': { eq: entry.id } },
    });
    expect(res.data).toEqual([{ group: { at: null }, count: 1 }]);
  });

  it('refuses the same field twice, even with different intervals', async () => {
    expectErrors(
      await q({
        type: 'event',
        groupBy: [
          { field: 'at', interval: 'month' },
          { field: 'at', interval: 'year' },
        ],
        aggregate: { count: true },
      }),
      ['groupBy.1'],
    );
    expectErrors(await q({ type: 'event', groupBy: ['at', { field: 'at', interval: 'year' }], aggregate: { count: true } }), ['groupBy.1']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('batch queries', () => {
  beforeAll(() => ensureItems());
  const batch = (body: unknown, api: Api = w.api, bucket = 'general') => api.post(queryBatchPath(w.ws, bucket), body);
  const member = (extra: Record<string, unknown> = {}) => ({ type: 'item', fields: ['name'], ...extra });

  it('answers each member as the single query would, in one results object', async () => {
    const a = { type: 'item', fields: ['name', 'n'], filter: { n: { ne: null } }, sort: [{ field: 'n', direction: 'desc' }], limit: 2 };
    const b = { type: 'book', aggregate: { count: true } };
    const c = { type: 'sale', groupBy: ['region'], aggregate: { count: true }, limit: 2 };
    const d = { type: 'item', locale: 'de-DE', fields: ['name'], filter: { '@id': { eq: items.i1.id } } };
    const res = await batch({ queries: { a, b, 'c-1_x': c, D: d } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ results: { a: await ok(a), b: await ok(b), 'c-1_x': await ok(c), D: await ok(d) } });
    expect(res.body.results.a).toEqual({
      data: [
        { name: 'i2', n: 2.5 },
        { name: 'i1', n: 1 },
      ],
      pagination: { offset: 0, limit: 2, hasMore: true },
    });
    expect(res.body.results.D.data).toEqual([{ name: 'i1-de' }]);
    expect(Object.keys(res.body.results).sort()).toEqual(['D', 'a', 'b', 'c-1_x']);
  });

  it('takes names case-sensitively, up to 64 characters', async () => {
    const long = 'q' + 'x'.repeat(63);
    const res = await batch({ queries: { ab: member({ limit: 1 }), aB: member({ limit: 2 }), [long]: member({ limit: 3 }) } });
    expect(res.status).toBe(200);
    expect([res.body.results.ab.data.length, res.body.results.aB.data.length, res.body.results[long].data.length]).toEqual([1, 2, 3]);
  });

  it.each([
    ['a name starting with a digit', { '1a': member() }, ['queries.1a']],
    ['a name starting with an underscore', { _a: member() }, ['queries._a']],
    ['a name with a dot', { 'a.b': member() }, ['queries.a.b']],
    ['a name with a space', { 'a b': member() }, ['queries.a b']],
    ['a non-ASCII name', { é: member() }, ['queries.é']],
    ['a name of 65 characters', { ['q' + 'x'.repeat(64)]: member() }, [`queries.q${'x'.repeat(64)}`]],
    ['no queries', {}, ['queries']],
    ['11 queries', Object.fromEntries(Array.from({ length: 11 }, (_x, i) => [`q${i}`, member({ limit: 1 })])), ['queries']],
  ])('refuses %s with 422 and no results', async (_label, queries, keys) => {
    const res = await batch({ queries });
    expectErrors(res, keys);
    expect(res.body.results).toBeUndefined();
  });

  it('refuses names that are equal once JSON escapes are read', async () => {
    const res = await rawJson(w.api, 'POST', queryBatchPath(w.ws), '{"queries":{"ab":{"type":"item"},"\\u0061b":{"type":"item"}}}');
    expectErrors(res, [/^queries/]);
  });

  it('accepts 10 queries', async () => {
    const res = await batch({ queries: Object.fromEntries(Array.from({ length: 10 }, (_x, i) => [`q${i}`, member({ limit: 1 })])) });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.results)).toHaveLength(10);
  });

  it.each([
    ['another root property', { queries: { a: member() }, locale: 'en-US' }, ['locale']],
    ['queries that are not an object', { queries: [member()] }, ['queries']],
    ['a member that is not an object', { queries: { a: member(), b: 5 } }, ['queries.b']],
    ['a member without type', { queries: { a: member(), b: { fields: ['name'] } } }, ['queries.b.type']],
    ['an unknown field in a member', { queries: { a: member(), b: member({ fields: ['name', 'nope'] }) } }, ['queries.b.fields.1']],
    ['a bad operand in a member', { queries: { a: member(), b: member({ filter: { n: { gt: 'x' } } }) } }, ['queries.b.filter.n.gt']],
    ['a bad limit in a member', { queries: { b: member({ limit: 101 }) } }, ['queries.b.limit']],
    ['an unknown member property', { queries: { b: member({ colour: 1 }) } }, ['queries.b.colour']],
  ])('refuses %s with 422 and no results', async (_label, body, keys) => {
    const res = await batch(body);
    expectErrors(res, keys);
    expect(res.body.results).toBeUndefined();
  });

  it('refuses a root without queries with 422 naming queries or the unknown property', async () => {
    const res = await batch({ a: member() });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).length).toBeGreaterThan(0);
    for (const k of Object.keys(res.body.errors)) expect(k).toMatch(/^(queries|a)$/);
  });

  it('allows 500 rows across the members and refuses more; an ungrouped aggregate counts one row', async () => {
    const big = (n: number) => Object.fromEntries(Array.from({ length: n }, (_x, i) => [`big${i}`, member({ limit: 100 })]));
    const defaults = (n: number) => Object.fromEntries(Array.from({ length: n }, (_x, i) => [`def${i}`, member()]));
    expect((await batch({ queries: big(5) })).status).toBe(200);
    // 4 x 100 + 5 x 20 (the default page) = 500.
    expect((await batch({ queries: { ...big(4), ...defaults(5) } })).status).toBe(200);
    expectErrors(await batch({ queries: { ...big(4), ...defaults(6) } }), [/^queries/]);
    expectErrors(await batch({ queries: { ...big(5), count: { type: 'item', aggregate: { count: true } } } }), [/^queries/]);
    // 4 x 100 + 99 + 1 aggregate row = 500.
    expect(
      (await batch({ queries: { ...big(4), near: member({ limit: 99 }), count: { type: 'item', aggregate: { count: true } } } })).status,
    ).toBe(200);
    // A grouped aggregate counts its page.
    expectErrors(
      await batch({
        queries: {
          ...big(4),
          near: member({ limit: 99 }),
          grouped: { type: 'item', groupBy: ['flag'], aggregate: { count: true }, limit: 2 },
        },
      }),
      [/^queries/],
    );
  });

  it('answers 404 for a missing type naming the query, or a missing bucket; no results', async () => {
    const res = await batch({ queries: { good: member(), lostQuery: { type: 'nope' } } });
    expect(res.status).toBe(404);
    expect(res.body.message).toEqual(expect.stringContaining('lostQuery'));
    expect(res.body.results).toBeUndefined();
    // The bucket is what is missing, not the query's type.
    const bucket = await batch({ queries: { good: member() } }, w.api, 'nobucket');
    expect(bucket).toMatchObject({ status: 404, body: NOT_FOUND });
    // A member may only target types of the URL's bucket.
    const other = await batch({ queries: { good: member(), elsewhereQ: { type: 'elsewhere' } } });
    expect(other.status).toBe(404);
    expect(other.body.message).toEqual(expect.stringContaining('elsewhereQ'));
  });

  it('measures the 2 MiB result budget on the whole answer, names and wrapper included', async () => {
    await createContentType(s, w.ws, 'general', { name: 'blob', fields: [{ name: 't', type: 'text' }] });
    const blobs: any[] = [];
    for (let i = 0; i < 33; i++) blobs.push(await createEntry(w, 'blob', { fields: { t: 'x'.repeat(65_000) } }));
    const query = { type: 'blob', fields: ['t'], limit: 100 };
    const last = blobs[blobs.length - 1];
    // `{"results":{"a":` + the member's answer + `}}`.
    const whole = async () => (await q(query)).text.length + '{"results":{"a":}}'.length;
    let size = 65_000;
    const resize = async (bytes: number) => {
      size += bytes - (await whole());
      await updateEntry(w, last.id, { fields: { t: 'x'.repeat(size) } });
    };
    await resize(2 * 1024 * 1024 + 1);
    expectErrors(await batch({ queries: { a: query } }), ['queries']);
    await resize(2 * 1024 * 1024);
    const fits = await batch({ queries: { a: query } });
    expect(fits.status).toBe(200);
    expect(Buffer.byteLength(fits.text)).toBe(2 * 1024 * 1024);
  });

  it('answers invalid JSON with 400, a body over 64 KiB with 413, a non-JSON body with 415', async () => {
    const bad = await rawJson(w.api, 'POST', queryBatchPath(w.ws), '{"queries": {"a": ');
    expect(bad.status).toBe(400);
    expect(bad.body.results).toBeUndefined();
    const big = await batch({ queries: { a: member({ filter: { code: { eq: 'x'.repeat(64 * 1024) } } }) } });
    expect(big.status).toBe(413);
    const text = await w.api.post(queryBatchPath(w.ws), undefined, { raw: 'queries=a', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
  });

  it('needs entries:query and list-entries: 403', async () => {
    const reader = await keyFor(s, w.ws, ['entries:read', 'entries:write'], [...ENTRY_PERMISSIONS]);
    expect(await batch({ queries: { a: member() } }, reader)).toMatchObject({ status: 403, body: NOT_PERMITTED });
    const noList = await keyFor(
      s,
      w.ws,
      ['entries:query'],
      ENTRY_PERMISSIONS.filter((p) => p !== 'list-entries'),
    );
    expect(await batch({ queries: { a: member() } }, noList)).toMatchObject({ status: 403, body: NOT_PERMITTED });
    const exact = await keyFor(s, w.ws, ['entries:query'], ['list-entries']);
    expect((await batch({ queries: { a: member() } }, exact)).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the entries quota', () => {
  let limited: TestServer;
  let lw: EntriesWorkspace;
  beforeAll(async () => {
    limited = await startTestServer({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ENTRIES_PER_MINUTE: '5' });
    lw = await entriesWorkspace(limited);
    await createContentType(limited, lw.ws, 'general', { name: 'item', fields: [{ name: 'name', type: 'text' }] });
  });
  afterAll(() => limited?.close());

  const freshKey = () => keyFor(limited, lw.ws, ['*'], ENTRY_PERMISSIONS);
  const members = (n: number) => ({ queries: Object.fromEntries(Array.from({ length: n }, (_x, i) => [`q${i}`, { type: 'item' }])) });
  const batch = (api: Api, n: number) => api.post(queryBatchPath(lw.ws), members(n));
  const single = (api: Api) => api.post(queryPath(lw.ws), { type: 'item' });
  const expect429 = (res: TestResponse) => {
    expect(res.status).toBe(429);
    expect(typeof res.body.message).toBe('string');
    const retry = Number(res.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
  };

  it('costs one unit per member, reserved before execution', async () => {
    const a = await freshKey();
    expect((await batch(a, 5)).status).toBe(200);
    expect429(await single(a));
    const b = await freshKey();
    expect((await batch(b, 2)).status).toBe(200);
    expect((await batch(b, 2)).status).toBe(200);
    expect((await single(b)).status).toBe(200);
    expect429(await single(b));
    const c = await freshKey();
    expect((await batch(c, 3)).status).toBe(200);
    expect429(await batch(c, 3));
    // The refused batch ran nothing and kept only the unit every request costs: one is left.
    expect((await single(c)).status).toBe(200);
    expect429(await single(c));
    const d = await freshKey();
    expect429(await batch(d, 6));
  });
});

describe('the projection written by PostgreSQL (entries:render)', () => {
  let leaves: any[];
  let file: { id: number };
  beforeAll(async () => {
    await createContentType(s, w.ws, 'general', {
      name: 'rleaf',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'pic', type: 'attachment' },
      ],
    });
    await createContentType(s, w.ws, 'general', {
      name: 'rmid',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'leaf', type: 'relation', targets: ['rleaf'] },
        { name: 'leaves', type: 'relation', targets: ['rleaf'], multiple: true },
      ],
    });
    await createContentType(s, w.ws, 'general', {
      name: 'rtop',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'mids', type: 'relation', targets: ['rmid'], multiple: true },
      ],
    });
    await createContentType(s, w.ws, 'general', {
      name: 'rhub',
      fields: [
        { name: 'links', type: 'relation', targets: ['rleaf'], multiple: true },
        { name: 'extra', type: 'relation', targets: ['rleaf'] },
      ],
    });
    file = await uploadFile(w.api, w.ws, 'pic.txt', 'pic');
    leaves = await createEntries(
      w,
      'rleaf',
      Array.from({ length: 1001 }, (_, i) => ({ fields: { name: `leaf ${i}`, ...(i < 3 ? { pic: file.id } : {}) }, status: 'published' })),
    );
  });

  it('reads a page with relations two levels deep and their files in one statement, whatever its size', async () => {
    const mids = await createEntries(
      w,
      'rmid',
      [0, 1, 2].map((i) => ({
        fields: { name: `mid ${i}`, leaf: leaves[i].id, leaves: [leaves[i].id, leaves[(i + 1) % 3].id] },
        status: 'published',
      })),
    );
    const tops = await createEntries(
      w,
      'rtop',
      Array.from({ length: 6 }, (_, i) => ({
        fields: { title: `top ${i}`, mids: [mids[i % 3].id, mids[(i + 1) % 3].id] },
        status: 'published',
      })),
    );
    const body = (limit: number) => ({
      type: 'rtop',
      fields: ['@id', 'title', 'mids.name', 'mids.leaf.name', 'mids.leaves.pic.id', 'mids.leaves.pic.temporary_url'],
      sort: [{ field: 'title', direction: 'asc' }],
      limit,
    });
    const page = await queryOk(w.api, w.ws, body(6));
    expect(page.data.map((r) => r['@id'])).toEqual(tops.map((t) => t.id));
    const row = page.data[1];
    expect(row.mids.map((m: any) => [m.name, m.leaf.name, m.leaves.map((l: any) => l.pic.id)])).toEqual([
      ['mid 1', 'leaf 1', [file.id, file.id]],
      ['mid 2', 'leaf 2', [file.id, file.id]],
    ]);
    expect(row.mids[0].leaves[0].pic.temporary_url).toMatch(/\/files\/\d+\/temporary\?uuid=.+&expires=\d+&signature=[0-9a-f]{64}$/);
    const count = (limit: number) =>
      fewestStatements(
        s,
        async () => expect((await w.api.post(queryPath(w.ws), body(limit))).status).toBe(200),
        () => s.server.app.responses?.drop(),
      );
    expect([await count(1), await count(6)]).toEqual([1, 1]);
  });

  const over = (path: string) =>
    `The ${path} field references more than 1000 entries and files in one response; narrow the selection or the page.`;

  it('counts referenced entries against the 1,000 budget, refusing a page past it (422), alone or across a batch', async () => {
    // A field holds at most 1,000 references: two fields reach past the budget, entries counted once each.
    const hub = async (links: string[], extra: string) =>
      (await createEntry(w, 'rhub', { fields: { links, extra }, status: 'published' })).id as string;
    const thousand = leaves.slice(0, 1000).map((l) => l.id);
    const [full, past, one] = [
      await hub(thousand, leaves[0].id),
      await hub(thousand, leaves[1000].id),
      await hub([leaves[5].id], leaves[5].id),
    ];
    const linksOf = (id: string) => ({ type: 'rhub', filter: { '@id': { eq: id } }, fields: ['links.@id', 'extra.@id'], limit: 1 });
    const fits = await queryOk(w.api, w.ws, linksOf(full));
    expect(fits.data[0]).toEqual({ links: thousand.map((id) => ({ '@id': id })), extra: { '@id': leaves[0].id } });
    const refused = await w.api.post(queryPath(w.ws), linksOf(past));
    expect([refused.status, refused.body]).toEqual([422, { message: over('fields'), errors: { fields: [over('fields')] } }]);
    // The files an attachment path shows count too: 1,000 entries and 3 files.
    const withFiles = await w.api.post(queryPath(w.ws), { ...linksOf(full), fields: ['links.@id', 'extra.@id', 'links.pic.id'] });
    expect([withFiles.status, withFiles.body.errors]).toEqual([422, { fields: [over('fields')] }]);
    // A batch's members share it: 1,000 and then 1 more.
    const batch = await w.api.post(queryBatchPath(w.ws), { queries: { a: linksOf(full), b: linksOf(one) } });
    expect([batch.status, batch.body.errors]).toEqual([422, { 'queries.b.fields': [over('queries.b.fields')] }]);
    expect((await w.api.post(queryBatchPath(w.ws), { queries: { a: linksOf(one), b: linksOf(one) } })).status).toBe(200);
  });
});
