// The typed Entries API against its rules (002 and the project's OpenAPI decisions): the rendered
// entry, create with every field type's value rules, delivery reads, relation expansion limits,
// v1/v2 lists and cursor pages, partial updates with versions, locales and reviews, delete with
// cascades, file deletion, scheduled publication, abilities and permissions, conversion to an
// object, and events. Every refusal is checked to change nothing.
import { startTestServer, type TestServer } from './support/server';
import { client, type TestResponse } from './support/http';
import { TIMESTAMP } from './support/fixtures';
import { startReceiver, type Receiver } from './support/receiver';
import {
  ENTRY_PERMISSIONS,
  NOT_PERMITTED,
  ULID,
  adminOk,
  createBucket,
  createObject,
  keyFor,
  openReview,
  rawJson,
  relative,
  resolveReview,
  visibilityDrift,
  type Api,
} from './support/objects';
import {
  FILE_PERMISSIONS,
  createContentType,
  createEntry,
  entriesWorkspace,
  errorKeys,
  listedIds,
  readEntry,
  relatedOf,
  updateEntry,
  uploadFile,
  type EntriesWorkspace,
  type FieldDef,
} from './support/entries';

let s: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  s = await startTestServer({ TEST_CLOCK: '1', SCHEDULER_TICK_MS: '100' });
});
afterEach(async () => {
  await s.admin.delete('/admin/v1/clock');
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
// Closing checks that every write of the suite kept typed storage in step with the documents.
afterAll(async () => {
  await s?.close();
});

const NOT_FOUND = { message: 'Not Found' };
const INVALID_LOCALE = { message: 'Invalid locale.' };
/** A well-formed ULID that names no entry. */
const UNKNOWN_ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

const KITCHEN: FieldDef[] = [
  { name: 'title', type: 'text', required: true },
  { name: 'count', type: 'number' },
  { name: 'flag', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'clock', type: 'date', format: 'time' },
  { name: 'at', type: 'date', format: 'datetime' },
  { name: 'meta', type: 'json' },
  { name: 'author', type: 'relation', targets: ['author'] },
  { name: 'authors', type: 'relation', targets: ['author'], multiple: true },
  { name: 'cover', type: 'attachment' },
  { name: 'gallery', type: 'attachment', multiple: true },
  { name: 'code', type: 'text', unique: true },
  { name: 'labels', type: 'text', multiple: true },
];
/** The fields of a kitchen entry whose values were never given. */
const EMPTY_KITCHEN = {
  title: null,
  count: null,
  flag: null,
  day: null,
  clock: null,
  at: null,
  meta: null,
  author: null,
  authors: [],
  cover: null,
  gallery: [],
  code: null,
  labels: [],
};
const EMPTY_NODE = { name: null, next: null, many: [] };

/**
 * A workspace (locales en-US, de-DE, fr-FR) with the content types of these tests in its General
 * bucket, and a second bucket `other` with a type of the same name `author`.
 */
async function setup(): Promise<EntriesWorkspace> {
  const w = await entriesWorkspace(s);
  const type = (name: string, fields: FieldDef[], extra: Record<string, unknown> = {}, bucket = 'general') =>
    createContentType(s, w.ws, bucket, { name, fields, ...extra });
  await type('author', [
    { name: 'name', type: 'text', required: true },
    { name: 'email', type: 'text', unique: true },
    { name: 'mentor', type: 'relation', targets: ['author'] },
  ]);
  await type('kitchen', KITCHEN);
  await type('label', [{ name: 'code', type: 'text', unique: true }]);
  await type('node', [
    { name: 'name', type: 'text' },
    { name: 'next', type: 'relation', targets: ['node'] },
    { name: 'many', type: 'relation', targets: ['node'], multiple: true },
  ]);
  await type('owner', [
    { name: 'name', type: 'text' },
    { name: 'part', type: 'relation', targets: ['node'], cascade_on_delete: true },
    { name: 'parts', type: 'relation', targets: ['node'], multiple: true, cascade_on_delete: true },
    { name: 'keep', type: 'relation', targets: ['node'] },
    { name: 'doc', type: 'attachment', cascade_on_delete: true },
    { name: 'docs', type: 'attachment', multiple: true, cascade_on_delete: true },
    { name: 'spare', type: 'attachment' },
  ]);
  await type('untitled', [{ name: 'n', type: 'number' }]);
  await type(
    'titled',
    [
      { name: 'subtitle', type: 'text' },
      { name: 'title', type: 'text' },
    ],
    { name_field: 'title' },
  );
  await createBucket(s, w.ws, 'other');
  await type('author', [{ name: 'name', type: 'text', required: true }], {}, 'other');
  await type('elsewhere', [{ name: 'name', type: 'text' }], {}, 'other');
  return w;
}

const clockNow = async (): Promise<number> => Date.parse((await s.admin.get('/admin/v1/clock')).body.now);
const escapeRe = (x: string) => x.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
const sorted = (xs: string[]) => [...xs].sort();

/** A file object as an entry renders it: the details of the Files API with fresh temporary URLs. */
function asRenderedFile(w: EntriesWorkspace, details: any) {
  return {
    ...details,
    temporary_url: expect.stringMatching(
      new RegExp(`^${escapeRe(s.url)}/api/v1/${w.ws}/files/${details.id}/temporary\\?uuid=[^&]+&expires=\\d+&signature=.+$`),
    ),
    temporary_url_expires_at: expect.any(String),
  };
}

/** The compact reference to `e`, as relation expansion gives it when it stops. */
function compactOf(w: EntriesWorkspace, e: any, reason: 'cycle' | 'depth' | 'budget') {
  return {
    id: e.id,
    api_url: `${s.url}/api/v1/${w.ws}/entries/${e.id}`,
    name: e.name,
    status: e.status,
    status_label: e.status === 'published' ? 'Published' : 'Draft',
    _relation: { reason },
  };
}

function expect422(res: TestResponse, keys: (string | RegExp)[]) {
  expect([res.status, typeof res.body?.message]).toEqual([422, 'string']);
  const got = errorKeys(res);
  expect(got).toHaveLength(keys.length);
  const want = [...keys].sort((a, b) => String(a).localeCompare(String(b)));
  got.forEach((k, i) => (typeof want[i] === 'string' ? expect(k).toBe(want[i]) : expect(k).toMatch(want[i] as RegExp)));
  for (const k of got) {
    expect(Array.isArray(res.body.errors[k])).toBe(true);
    expect(res.body.errors[k].length).toBeGreaterThan(0);
    for (const m of res.body.errors[k]) expect(typeof m).toBe('string');
  }
}

// ---------------------------------------------------------------------------------------------

describe('create', () => {
  let w: EntriesWorkspace;
  let foreign: EntriesWorkspace;
  let fx: {
    author: any;
    draftAuthor: any;
    otherAuthor: any;
    node: any;
    file: any;
    file2: any;
    foreignFile: any;
    userFile: number;
  };
  beforeAll(async () => {
    w = await setup();
    foreign = await setup();
    const userFile = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/users/${w.userId}/files`, {
      file: { name: 'me.txt', content: Buffer.from('me').toString('base64') },
    });
    fx = {
      author: await createEntry(w, 'author', { fields: { name: 'Ann' }, status: 'published' }),
      draftAuthor: await createEntry(w, 'author', { fields: { name: 'Drafty' } }),
      otherAuthor: await createEntry(w, 'author', { fields: { name: 'Elsewhere' }, status: 'published' }, '', 'other'),
      node: await createEntry(w, 'node', { fields: { name: 'N' }, status: 'published' }),
      file: await uploadFile(w.api, w.ws, 'one.txt', 'one'),
      file2: await uploadFile(w.api, w.ws, 'two.txt', 'two'),
      foreignFile: await uploadFile(foreign.api, foreign.ws, 'foreign.txt', 'foreign'),
      userFile: userFile.id,
    };
  });

  it('answers 201 with the rendered entry: a draft by default, every field of the type, lock_version 0', async () => {
    const res = await w.api.post(w.typed('author'), { fields: { name: 'Ada' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const e = res.body;
    expect(e).toEqual({
      id: expect.stringMatching(ULID),
      api_url: `${s.url}/api/v1/${w.ws}/entries/${e.id}`,
      name: 'Ada',
      status: 'draft',
      status_label: 'Draft',
      publish_at: null,
      tags: [],
      locales: ['en-US'],
      fields: { name: 'Ada', email: null, mentor: null },
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      lock_version: 0,
    });
    expect(Math.abs(Date.parse(e.created_at) - (await clockNow()))).toBeLessThan(60_000);
    // A draft: delivery reads do not show it, even to this wildcard key.
    expect(await w.api.get(w.entry(e.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await listedIds(w, 'author')).not.toContain(e.id);
    // But it exists: publishing it through an update shows it as created.
    const published = await updateEntry(w, e.id, { status: 'published' });
    expect(published).toEqual({
      ...e,
      status: 'published',
      status_label: 'Published',
      lock_version: 1,
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(await readEntry(w, e.id)).toEqual(published);
  });

  it('creates a published entry with tags in their order; delivery reads return it exactly as created', async () => {
    const e = await createEntry(w, 'author', {
      fields: { name: 'Pub', email: 'pub@example.com' },
      status: 'published',
      tags: ['news', 'featured', 'a'],
    });
    expect(e).toMatchObject({
      name: 'Pub',
      status: 'published',
      status_label: 'Published',
      publish_at: null,
      tags: ['news', 'featured', 'a'],
      locales: ['en-US'],
      lock_version: 0,
    });
    expect(e.fields).toEqual({ name: 'Pub', email: 'pub@example.com', mentor: null });
    expect(await readEntry(w, e.id)).toEqual(e);
    expect(await listedIds(w, 'author')).toContain(e.id);
  });

  it('explicit status draft is a draft', async () => {
    const e = await createEntry(w, 'author', { fields: { name: 'Explicit' }, status: 'draft' });
    expect(e).toMatchObject({ status: 'draft', status_label: 'Draft' });
    expect((await w.api.get(w.entry(e.id))).status).toBe(404);
  });

  it('schedules a draft with publish_at, stored in UTC; the label stays Draft', async () => {
    const e = await createEntry(w, 'author', { fields: { name: 'Later' }, publish_at: '2031-05-06T10:20:30+02:00' });
    expect(e).toMatchObject({ status: 'draft', status_label: 'Draft', publish_at: '2031-05-06T08:20:30.000000Z' });
    expect((await w.api.get(w.entry(e.id))).status).toBe(404);
    const z = await createEntry(w, 'author', { fields: { name: 'Later Z' }, publish_at: '2031-05-06T08:20:30Z', status: 'draft' });
    expect(z.publish_at).toBe('2031-05-06T08:20:30.000000Z');
    // Offsets up to 14:00 either side, as for datetime fields.
    const east = await createEntry(w, 'author', { fields: { name: 'Kiribati' }, publish_at: '2031-05-06T14:00:00+14:00' });
    expect(east.publish_at).toBe('2031-05-06T00:00:00.000000Z');
    const none = await createEntry(w, 'author', { fields: { name: 'No schedule' }, publish_at: null });
    expect(none.publish_at).toBeNull();
  });

  it('keeps no schedule on an entry created published', async () => {
    const e = await createEntry(w, 'author', { fields: { name: 'Now' }, status: 'published', publish_at: '2031-01-01T00:00:00Z' });
    expect(e).toMatchObject({ status: 'published', publish_at: null });
    expect((await readEntry(w, e.id)).publish_at).toBeNull();
  });

  it.each([
    ['an invalid status', { status: 'scheduled' }, 'status'],
    ['an invalid publish_at', { publish_at: 'next tuesday' }, 'publish_at'],
    ['a publish_at offset beyond 14:00', { publish_at: '2031-01-01T10:00:00+14:01' }, 'publish_at'],
    ['a publish_at offset of -23:59', { publish_at: '2031-01-01T10:00:00-23:59' }, 'publish_at'],
    ['a publish_at in the year 0000', { publish_at: '0000-01-01T00:00:00Z' }, 'publish_at'],
    ['a publish_at in the year 0000 in UTC', { publish_at: '0001-01-01T00:00:00+14:00' }, 'publish_at'],
    ['a publish_at in the year 10000 in UTC', { publish_at: '9999-12-31T23:59:59-14:00' }, 'publish_at'],
    ['a non-string tag', { tags: [5] }, 'tags.0'],
    ['an empty tag', { tags: ['ok', ''] }, 'tags.1'],
    ['fields that are not an object', { fields: ['name'] }, 'fields'],
    ['an unknown body property', { colour: 'red' }, /colour/],
  ])('refuses %s with 422 and writes nothing', async (_label, extra, key) => {
    const before = await listedIds(w, 'author');
    const res = await w.api.post(w.typed('author'), { fields: { name: 'Bad body' }, status: 'published', ...extra });
    expect422(res, [key]);
    expect(await listedIds(w, 'author')).toEqual(before);
  });

  it('refuses a body without fields (422) and malformed JSON (400), writing nothing', async () => {
    const before = await listedIds(w, 'node');
    const missing = await w.api.post(w.typed('node'), { status: 'published' });
    expect422(missing, ['fields']);
    const malformed = await rawJson(w.api, 'POST', w.typed('node'), '{"fields": {"name": "x"}, "status": "published"');
    expect(malformed.status).toBe(400);
    expect(typeof malformed.body.message).toBe('string');
    expect(await listedIds(w, 'node')).toEqual(before);
  });

  it('refuses a body over 1 MiB (413) and a non-JSON body (415), writing nothing', async () => {
    const before = await listedIds(w, 'kitchen');
    const big = await w.api.post(w.typed('kitchen'), {
      fields: { title: 'big', meta: { blob: 'x'.repeat(1_100_000) } },
      status: 'published',
    });
    expect(big.status).toBe(413);
    const text = await w.api.post(w.typed('kitchen'), undefined, { raw: 'title=x', headers: { 'Content-Type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(await listedIds(w, 'kitchen')).toEqual(before);
  });

  it('enables the given locales, en-US always included', async () => {
    const both = await createEntry(w, 'node', { fields: { name: 'l' }, locales: ['fr-FR', 'de-DE'] });
    expect(sorted(both.locales)).toEqual(['de-DE', 'en-US', 'fr-FR']);
    const base = await createEntry(w, 'node', { fields: { name: 'l' }, locales: ['en-US'] });
    expect(base.locales).toEqual(['en-US']);
    const empty = await createEntry(w, 'node', { fields: { name: 'l' }, locales: [] });
    expect(empty.locales).toEqual(['en-US']);
    const withBase = await createEntry(w, 'node', { fields: { name: 'l' }, locales: ['de-DE', 'en-US'] });
    expect(sorted(withBase.locales)).toEqual(['de-DE', 'en-US']);
  });

  it.each([
    [['de-DE', 'it-IT'], 'locales.1'],
    [['es-ES'], 'locales.0'],
  ])('refuses the unconfigured locale in locales %j with 422 on %s, writing nothing', async (locales, key) => {
    const before = await listedIds(w, 'node');
    const res = await w.api.post(w.typed('node'), { fields: { name: 'x' }, locales, status: 'published' });
    expect422(res, [key]);
    expect(await listedIds(w, 'node')).toEqual(before);
  });

  it('writes the fields in the locale of the query; other locales have no values (no fallback)', async () => {
    const res = await w.api.post(w.typed('node', '&locale=de-DE'), { fields: { name: 'Knoten' }, locales: ['de-DE'], status: 'published' });
    expect(res.status).toBe(201);
    expect(res.body.fields).toEqual({ ...EMPTY_NODE, name: 'Knoten' });
    expect(sorted(res.body.locales)).toEqual(['de-DE', 'en-US']);
    const id = res.body.id;
    expect((await readEntry(w, id)).fields).toEqual(EMPTY_NODE);
    expect((await readEntry(w, id, '?locale=en-US')).fields).toEqual(EMPTY_NODE);
    expect((await readEntry(w, id, '?locale=de-DE')).fields).toEqual({ ...EMPTY_NODE, name: 'Knoten' });
    // A configured locale the entry has not enabled: no values either.
    expect((await readEntry(w, id, '?locale=fr-FR')).fields).toEqual(EMPTY_NODE);
    expect((await readEntry(w, id, '?locale=*')).fields).toEqual({ 'en-US': EMPTY_NODE, 'de-DE': { ...EMPTY_NODE, name: 'Knoten' } });
  });

  it.each(['xx-XX', 'it-IT', '*', 'not a locale'])(
    'refuses the write locale %j with 400 Invalid locale., writing nothing',
    async (locale) => {
      const before = await listedIds(w, 'node');
      const res = await w.api.post(w.typed('node', `&locale=${encodeURIComponent(locale)}`), {
        fields: { name: 'x' },
        status: 'published',
      });
      expect([res.status, res.body]).toEqual([400, INVALID_LOCALE]);
      expect(await listedIds(w, 'node')).toEqual(before);
    },
  );

  it('requires the required fields (missing, null or empty) with 422 on fields.<name>', async () => {
    const before = await listedIds(w, 'kitchen');
    expect422(await w.api.post(w.typed('kitchen'), { fields: {}, status: 'published' }), ['fields.title']);
    expect422(await w.api.post(w.typed('kitchen'), { fields: { count: 1 }, status: 'published' }), ['fields.title']);
    expect422(await w.api.post(w.typed('kitchen'), { fields: { title: null }, status: 'published' }), ['fields.title']);
    expect422(await w.api.post(w.typed('author'), { fields: { email: 'x@example.com' }, status: 'published' }), ['fields.name']);
    expect(await listedIds(w, 'kitchen')).toEqual(before);
  });

  it('refuses an unknown field with 422 on fields.<name>, and reports every bad field at once', async () => {
    const before = await listedIds(w, 'kitchen');
    expect422(await w.api.post(w.typed('kitchen'), { fields: { title: 'x', nope: 1 }, status: 'published' }), ['fields.nope']);
    expect422(await w.api.post(w.typed('kitchen'), { fields: { nope: 1, count: 'x', day: '2023-02-29' }, status: 'published' }), [
      'fields.count',
      'fields.day',
      'fields.nope',
      'fields.title',
    ]);
    expect(await listedIds(w, 'kitchen')).toEqual(before);
  });

  it('renders a kitchen entry with every field type, empty ones as null or []', async () => {
    const author2 = await createEntry(w, 'author', { fields: { name: 'Bo' }, status: 'published' });
    const fields = {
      title: 'Full',
      count: 4.5,
      flag: false,
      day: '2024-02-29',
      clock: '09:30',
      at: '2024-03-01 10:20:30',
      meta: { a: [1, { b: null }], s: 'x' },
      author: fx.author.id,
      authors: [author2.id, fx.author.id],
      cover: fx.file.id,
      gallery: [fx.file2.id, fx.file.id],
      code: 'FULL-1',
      labels: ['x', 'y'],
    };
    const e = await createEntry(w, 'kitchen', { fields, status: 'published' });
    const author = await readEntry(w, fx.author.id);
    const bo = await readEntry(w, author2.id);
    const d1 = (await w.api.get(`/api/v1/${w.ws}/files/${fx.file.id}`)).body;
    const d2 = (await w.api.get(`/api/v1/${w.ws}/files/${fx.file2.id}`)).body;
    const expected = {
      ...fields,
      at: '2024-03-01T10:20:30Z',
      author,
      authors: [bo, author],
      cover: asRenderedFile(w, d1),
      gallery: [asRenderedFile(w, d2), asRenderedFile(w, d1)],
    };
    expect(e.fields).toEqual(expected);
    expect(e.name).toBe('Full');
    expect((await readEntry(w, e.id)).fields).toEqual(expected);
    const sparse = await createEntry(w, 'kitchen', { fields: { title: 'Sparse' } });
    expect(sparse.fields).toEqual({ ...EMPTY_KITCHEN, title: 'Sparse' });
  });

  it.each([
    ['count', 0, 0],
    ['count', -12.5, -12.5],
    ['count', 1e21, 1e21],
    ['flag', true, true],
    ['flag', false, false],
    ['day', '2024-02-29', '2024-02-29'],
    ['day', '2000-02-29', '2000-02-29'],
    ['clock', '00:00', '00:00'],
    ['clock', '23:59', '23:59'],
    ['meta', { deep: { list: [1, 'two', null, true] } }, { deep: { list: [1, 'two', null, true] } }],
    ['meta', [1, 'x'], [1, 'x']],
    ['meta', 'text', 'text'],
    ['meta', 0, 0],
    ['meta', false, false],
    ['meta', null, null],
    ['labels', [], []],
    ['labels', ['a', 'b', 'a'], ['a', 'b', 'a']],
    ['labels', null, []],
    ['title', 'Ünïcødé ✓', 'Ünïcødé ✓'],
  ])('accepts %s = %j and renders %j', async (field, input, rendered) => {
    const base = field === 'title' ? {} : { title: 'v' };
    const e = await createEntry(w, 'kitchen', { fields: { ...base, [field]: input }, status: 'published' });
    expect(e.fields[field]).toEqual(rendered);
    expect((await readEntry(w, e.id)).fields[field]).toEqual(rendered);
  });

  it.each([
    ['2024-03-01 10:20', '2024-03-01T10:20:00Z'],
    ['2024-03-01 10:20:30', '2024-03-01T10:20:30Z'],
    ['2024-03-01T10:20', '2024-03-01T10:20:00Z'],
    ['2024-03-01T10:20:30', '2024-03-01T10:20:30Z'],
    ['2024-03-01T10:20:30Z', '2024-03-01T10:20:30Z'],
    ['2024-03-01 10:20Z', '2024-03-01T10:20:00Z'],
    ['2024-03-01 10:20:07Z', '2024-03-01T10:20:07Z'],
    ['2024-03-01T10:20:30+14:00', '2024-02-29T20:20:30Z'],
    ['2024-03-01T10:20:30-14:00', '2024-03-02T00:20:30Z'],
    ['2024-03-01 10:20:30-05:30', '2024-03-01T15:50:30Z'],
    ['2024-03-01T10:20-05:30', '2024-03-01T15:50:00Z'],
    ['2024-03-01T00:00+02:00', '2024-02-29T22:00:00Z'],
    ['2024-12-31T23:59:59-01:00', '2025-01-01T00:59:59Z'],
    ['2024-03-01T10:20:30+00:00', '2024-03-01T10:20:30Z'],
  ])('accepts the datetime %j, stored and rendered in UTC as %j', async (input, rendered) => {
    const e = await createEntry(w, 'kitchen', { fields: { title: 'dt', at: input }, status: 'published' });
    expect(e.fields.at).toBe(rendered);
    expect((await readEntry(w, e.id)).fields.at).toBe(rendered);
    expect((await readEntry(w, e.id, '?locale=*')).fields['en-US'].at).toBe(rendered);
  });

  describe('refused values', () => {
    const cases: [string, string, () => unknown, string | RegExp][] = [
      ['text', 'a number', () => ({ title: 5 }), 'fields.title'],
      ['text', 'a boolean', () => ({ title: true }), 'fields.title'],
      ['text', 'an array', () => ({ title: ['x'] }), 'fields.title'],
      ['number', 'a string', () => ({ count: 'x' }), 'fields.count'],
      ['number', 'a numeric string', () => ({ count: '4.5' }), 'fields.count'],
      ['number', 'a boolean', () => ({ count: true }), 'fields.count'],
      ['boolean', 'the string true', () => ({ flag: 'true' }), 'fields.flag'],
      ['boolean', '1', () => ({ flag: 1 }), 'fields.flag'],
      ['date', 'an invalid calendar date 2023-02-29', () => ({ day: '2023-02-29' }), 'fields.day'],
      ['date', '2024-02-30', () => ({ day: '2024-02-30' }), 'fields.day'],
      ['date', 'month 13', () => ({ day: '2024-13-01' }), 'fields.day'],
      ['date', 'the year 0000', () => ({ day: '0000-01-01' }), 'fields.day'],
      ['date', 'no zero padding', () => ({ day: '2024-2-29' }), 'fields.day'],
      ['date', 'a datetime', () => ({ day: '2024-02-29T00:00' }), 'fields.day'],
      ['date', 'another format', () => ({ day: '29.02.2024' }), 'fields.day'],
      ['date', 'a number', () => ({ day: 20240229 }), 'fields.day'],
      ['time', 'no zero padding', () => ({ clock: '9:30' }), 'fields.clock'],
      ['time', 'seconds', () => ({ clock: '09:30:00' }), 'fields.clock'],
      ['time', 'hour 25', () => ({ clock: '25:00' }), 'fields.clock'],
      ['time', 'minute 60', () => ({ clock: '09:60' }), 'fields.clock'],
      ['time', 'words', () => ({ clock: 'noon' }), 'fields.clock'],
      ['datetime', 'offset +14:30', () => ({ at: '2024-03-01T10:20:30+14:30' }), 'fields.at'],
      ['datetime', 'offset -14:01', () => ({ at: '2024-03-01T10:20:30-14:01' }), 'fields.at'],
      ['datetime', 'offset +15:00', () => ({ at: '2024-03-01 10:20+15:00' }), 'fields.at'],
      ['datetime', 'fractional seconds with Z', () => ({ at: '2024-03-01T10:20:30.5Z' }), 'fields.at'],
      ['datetime', 'fractional seconds', () => ({ at: '2024-03-01 10:20:30.123' }), 'fields.at'],
      ['datetime', 'fractional seconds with an offset', () => ({ at: '2024-03-01T10:20:30.000+02:00' }), 'fields.at'],
      ['datetime', 'an invalid calendar date', () => ({ at: '2023-02-29 10:00' }), 'fields.at'],
      ['datetime', 'April 31', () => ({ at: '2024-04-31T10:00' }), 'fields.at'],
      ['datetime', 'a date only', () => ({ at: '2024-03-01' }), 'fields.at'],
      ['datetime', 'hour 25', () => ({ at: '2024-03-01T25:00' }), 'fields.at'],
      ['datetime', 'minute 60', () => ({ at: '2024-03-01T10:60' }), 'fields.at'],
      ['datetime', 'a time only', () => ({ at: '10:20' }), 'fields.at'],
      ['datetime', 'words', () => ({ at: 'yesterday' }), 'fields.at'],
      ['datetime', 'a number', () => ({ at: 1709288400 }), 'fields.at'],
      ['relation', 'an entry of a type the field does not accept', () => ({ author: fx.node.id }), 'fields.author'],
      ['relation', 'an entry of another bucket (a type of the same name)', () => ({ author: fx.otherAuthor.id }), 'fields.author'],
      ['relation', 'an unknown ULID', () => ({ author: UNKNOWN_ULID }), 'fields.author'],
      ['relation', 'not a ULID', () => ({ author: 'ann' }), 'fields.author'],
      ['relation', 'a number', () => ({ author: 5 }), 'fields.author'],
      ['relation', 'an array on a single field', () => ({ author: [fx.author.id] }), 'fields.author'],
      ['multiple relation', 'a wrong type at index 1', () => ({ authors: [fx.author.id, fx.node.id] }), 'fields.authors.1'],
      ['multiple relation', 'another bucket at index 0', () => ({ authors: [fx.otherAuthor.id, fx.author.id] }), 'fields.authors.0'],
      [
        'multiple relation',
        'an unknown ULID at index 2',
        () => ({ authors: [fx.author.id, fx.author.id, UNKNOWN_ULID] }),
        'fields.authors.2',
      ],
      ['multiple relation', 'a single value', () => ({ authors: fx.author.id }), 'fields.authors'],
      ['attachment', "another workspace's file", () => ({ cover: fx.foreignFile.id }), 'fields.cover'],
      ['attachment', 'an unknown file id', () => ({ cover: 2147483000 }), 'fields.cover'],
      ['attachment', 'a user-owned file', () => ({ cover: fx.userFile }), 'fields.cover'],
      ['attachment', 'a string id', () => ({ cover: String(fx.file.id) }), 'fields.cover'],
      ['attachment', 'zero', () => ({ cover: 0 }), 'fields.cover'],
      ['attachment', 'a fraction', () => ({ cover: 1.5 }), 'fields.cover'],
      ['attachment', 'an array on a single field', () => ({ cover: [fx.file.id] }), 'fields.cover'],
      [
        'multiple attachment',
        "another workspace's file at index 1",
        () => ({ gallery: [fx.file.id, fx.foreignFile.id] }),
        /^fields\.gallery(\.1)?$/,
      ],
      ['multiple attachment', 'a single value', () => ({ gallery: fx.file.id }), 'fields.gallery'],
      ['multiple text', 'a single value', () => ({ labels: 'x' }), 'fields.labels'],
      ['multiple text', 'a number at index 1', () => ({ labels: ['x', 5] }), /^fields\.labels(\.1)?$/],
    ];
    it.each(cases)('%s: refuses %s with 422 and writes nothing', async (_type, _label, value, key) => {
      const before = await listedIds(w, 'kitchen');
      const res = await w.api.post(w.typed('kitchen'), { fields: { title: 'refused', ...(value() as object) }, status: 'published' });
      expect422(res, [key]);
      expect(await listedIds(w, 'kitchen')).toEqual(before);
    });
  });

  it('keeps numbers exactly as written', async () => {
    const res = await rawJson(
      w.api,
      'POST',
      w.typed('kitchen'),
      '{"fields":{"title":"exact","count":12345678901234567890123.5,"meta":{"p":0.1000000000000000055511151231257827}},"status":"published"}',
    );
    expect(res.status).toBe(201);
    expect(res.text).toContain('"count":12345678901234567890123.5');
    expect(res.text).toContain('0.1000000000000000055511151231257827');
    const read = await w.api.get(w.entry(res.body.id));
    expect(read.text).toContain('"count":12345678901234567890123.5');
    expect(read.text).toContain('0.1000000000000000055511151231257827');
  });

  it('accepts relations to drafts and stores references in order; write answers show drafts, delivery reads skip them', async () => {
    const e = await createEntry(w, 'kitchen', {
      fields: { title: 'rel', author: fx.draftAuthor.id, authors: [fx.draftAuthor.id, fx.author.id] },
      status: 'published',
    });
    // The answer of a write is not a delivery read: the draft is rendered.
    expect(e.fields.author).toMatchObject({
      id: fx.draftAuthor.id,
      status: 'draft',
      status_label: 'Draft',
      fields: { name: 'Drafty', email: null, mentor: null },
    });
    expect(e.fields.authors.map((a: any) => a.id)).toEqual([fx.draftAuthor.id, fx.author.id]);
    const read = await readEntry(w, e.id);
    expect(read.fields.author).toBeNull();
    expect(read.fields.authors).toEqual([await readEntry(w, fx.author.id)]);
  });

  it('accepts a ULID in lower case and renders the entry it names', async () => {
    const e = await createEntry(w, 'kitchen', { fields: { title: 'lower', author: fx.author.id.toLowerCase() }, status: 'published' });
    expect(e.fields.author).toMatchObject({ id: fx.author.id, name: 'Ann' });
  });

  it('refuses a value already taken in a unique field (drafts included), allows it in another content type', async () => {
    const first = await createEntry(w, 'kitchen', { fields: { title: 'u1', code: 'UNIQ-1' }, status: 'published' });
    const before = await listedIds(w, 'kitchen');
    expect422(await w.api.post(w.typed('kitchen'), { fields: { title: 'u2', code: 'UNIQ-1' }, status: 'published' }), ['fields.code']);
    expect(await listedIds(w, 'kitchen')).toEqual(before);
    // Another content type with a unique field of the same name: no conflict.
    const label = await createEntry(w, 'label', { fields: { code: 'UNIQ-1' }, status: 'published' });
    expect(label.fields).toEqual({ code: 'UNIQ-1' });
    // A draft holds its value too.
    await createEntry(w, 'kitchen', { fields: { title: 'draft', code: 'UNIQ-DRAFT' } });
    expect422(await w.api.post(w.typed('kitchen'), { fields: { title: 'u3', code: 'UNIQ-DRAFT' }, status: 'published' }), ['fields.code']);
    // Other values and empty values do not conflict.
    await createEntry(w, 'kitchen', { fields: { title: 'u4', code: 'UNIQ-2' } });
    await createEntry(w, 'kitchen', { fields: { title: 'u5' } });
    await createEntry(w, 'kitchen', { fields: { title: 'u6' } });
    expect(await listedIds(w, 'kitchen')).toEqual(before);
    expect((await readEntry(w, first.id)).fields.code).toBe('UNIQ-1');
  });

  it('frees a unique value when its entry is deleted', async () => {
    const a = await createEntry(w, 'kitchen', { fields: { title: 'free', code: 'FREE-1' }, status: 'published' });
    expect((await w.api.delete(w.entry(a.id))).status).toBe(204);
    const b = await createEntry(w, 'kitchen', { fields: { title: 'free again', code: 'FREE-1' }, status: 'published' });
    expect(b.fields.code).toBe('FREE-1');
  });

  it('lets exactly one of concurrent creates take a unique value', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_x, i) =>
        w.api.post(w.typed('kitchen'), { fields: { title: `race ${i}`, code: 'RACE-1' }, status: 'published' }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of results.filter((x) => x.status === 422)) expect(errorKeys(r)).toEqual(['fields.code']);
    const listed = (await w.api.get(w.typed('kitchen'))).body.filter((e: any) => e.fields.code === 'RACE-1');
    expect(listed).toHaveLength(1);
  });

  it('names an entry by its name field (default the first text field), or by its id when there is none', async () => {
    const titled = await createEntry(w, 'titled', { fields: { subtitle: 'Sub', title: 'Main' } });
    expect(titled.name).toBe('Main');
    const untitled = await createEntry(w, 'untitled', { fields: { n: 1 } });
    expect(untitled.name).toBe(untitled.id);
    const emptyName = await createEntry(w, 'node', { fields: {} });
    expect(emptyName.name).toBe(emptyName.id);
    const node = await createEntry(w, 'node', { fields: { name: 'Named' } });
    expect(node.name).toBe('Named');
  });

  it.each([
    ['an unknown bucket', 'node', 'nobucket'],
    ['an unknown type', 'nope', 'general'],
    ['a type of another bucket', 'elsewhere', 'general'],
  ])('answers 404 for %s and writes nothing', async (_label, type, bucket) => {
    const res = await w.api.post(w.typed(type, '', bucket), { fields: { name: 'x' }, status: 'published' });
    expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('delivery reads', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });

  it('answers 404 for a draft, even to a wildcard key, and 200 once it is published', async () => {
    const d = await createEntry(w, 'node', { fields: { name: 'd' } });
    expect(await w.api.get(w.entry(d.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await w.api.get(w.entry(d.id, '?locale=*'))).toMatchObject({ status: 404, body: NOT_FOUND });
    const p = await updateEntry(w, d.id, { status: 'published' });
    expect(await readEntry(w, d.id)).toEqual(p);
    await updateEntry(w, d.id, { status: 'draft' });
    expect((await w.api.get(w.entry(d.id))).status).toBe(404);
  });

  it("answers 404 for another workspace's entry, both ways", async () => {
    const other = await setup();
    const mine = await createEntry(w, 'node', { fields: { name: 'mine' }, status: 'published' });
    const theirs = await createEntry(other, 'node', { fields: { name: 'theirs' }, status: 'published' });
    expect(await w.api.get(w.entry(theirs.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await other.api.get(other.entry(mine.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    // Updates and deletes do not reach it either.
    expect((await w.api.patch(w.entry(theirs.id), { fields: { name: 'x' } })).status).toBe(404);
    expect((await w.api.delete(w.entry(theirs.id))).status).toBe(404);
    expect(await readEntry(other, theirs.id)).toEqual(theirs);
  });

  it.each(['nope', '01ARZ3NDEKTSV4RRFFQ69G5FAU', '01ARZ3NDEKTSV4RRFFQ69G5FA', '01ARZ3NDEKTSV4RRFFQ69G5FAVX', '1234', UNKNOWN_ULID])(
    'answers 404 for the entry id %j on read, update and delete',
    async (id) => {
      expect(await w.api.get(w.entry(id))).toMatchObject({ status: 404, body: NOT_FOUND });
      expect(await w.api.patch(w.entry(id), { fields: { name: 'x' } })).toMatchObject({ status: 404, body: NOT_FOUND });
      expect(await w.api.delete(w.entry(id))).toMatchObject({ status: 404, body: NOT_FOUND });
    },
  );

  it('accepts the ULID in lower case', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'lc' }, status: 'published' });
    expect(await readEntry(w, e.id.toLowerCase())).toEqual(e);
  });

  it('answers 404 for an object (a JSON entry) of the workspace', async () => {
    const o = await createObject(w, { ref: 'an-object', data: { name: 'o' }, status: 'published' });
    expect(await w.api.get(w.entry(o.entry_id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await w.api.patch(w.entry(o.entry_id), { fields: { name: 'x' } })).status).toBe(404);
    expect((await w.api.delete(w.entry(o.entry_id))).status).toBe(404);
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
  });

  it('gives every enabled locale with locale=*, null values where a translation is missing', async () => {
    const e = await createEntry(w, 'kitchen', {
      fields: { title: 'Hello', labels: ['en'], count: 1 },
      locales: ['de-DE', 'fr-FR'],
      status: 'published',
    });
    await updateEntry(w, e.id, { fields: { title: 'Hallo', labels: ['de'] } }, '?locale=de-DE');
    const all = await readEntry(w, e.id, '?locale=*');
    expect(all.fields).toEqual({
      'en-US': { ...EMPTY_KITCHEN, title: 'Hello', labels: ['en'], count: 1 },
      'de-DE': { ...EMPTY_KITCHEN, title: 'Hallo', labels: ['de'] },
      'fr-FR': EMPTY_KITCHEN,
    });
    expect(sorted(all.locales)).toEqual(['de-DE', 'en-US', 'fr-FR']);
    expect((await readEntry(w, e.id, '?locale=fr-FR')).fields).toEqual(EMPTY_KITCHEN);
    expect((await readEntry(w, e.id, '?locale=de-DE')).fields).toEqual({ ...EMPTY_KITCHEN, title: 'Hallo', labels: ['de'] });
    expect((await readEntry(w, e.id)).fields).toEqual({ ...EMPTY_KITCHEN, title: 'Hello', labels: ['en'], count: 1 });
    // The other properties do not depend on the locale.
    const { fields: _a, ...rest } = all;
    const { fields: _b, ...restEn } = await readEntry(w, e.id);
    expect(rest).toEqual(restEn);
  });

  it('renders related entries in the request locale', async () => {
    const a = await createEntry(w, 'author', { fields: { name: 'Ann' }, locales: ['de-DE'], status: 'published' });
    await updateEntry(w, a.id, { fields: { name: 'Anna' } }, '?locale=de-DE');
    const k = await createEntry(w, 'kitchen', { fields: { title: 'K', author: a.id }, locales: ['de-DE'], status: 'published' });
    await updateEntry(w, k.id, { fields: { title: 'K-de', author: a.id } }, '?locale=de-DE');
    expect((await readEntry(w, k.id, '?locale=de-DE')).fields.author.fields.name).toBe('Anna');
    expect((await readEntry(w, k.id)).fields.author.fields.name).toBe('Ann');
    const all = await readEntry(w, k.id, '?locale=*');
    expect(all.fields['de-DE'].author.fields).toEqual({
      'en-US': { name: 'Ann', email: null, mentor: null },
      'de-DE': { name: 'Anna', email: null, mentor: null },
    });
  });

  it.each(['xx-XX', 'it-IT', 'english', 'de_DE'])('answers 400 Invalid locale. for the read locale %j', async (locale) => {
    const e = await createEntry(w, 'node', { fields: { name: 'x' }, status: 'published' });
    expect(await w.api.get(w.entry(e.id, `?locale=${locale}`))).toMatchObject({ status: 400, body: INVALID_LOCALE });
    expect(await w.api.get(w.typed('node', `&locale=${locale}`))).toMatchObject({ status: 400, body: INVALID_LOCALE });
    expect(await w.api.get(w.typedV2('node', `&locale=${locale}`))).toMatchObject({ status: 400, body: INVALID_LOCALE });
  });
});

// ---------------------------------------------------------------------------------------------

describe('relation rendering', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });
  const node = (name: string, fields: Record<string, unknown> = {}, status = 'published') =>
    createEntry(w, 'node', { fields: { name, ...fields }, status });

  it('expands three nested levels; the fourth is a compact reference with reason depth', async () => {
    const e = await node('E');
    const d = await node('D', { next: e.id });
    const c = await node('C', { next: d.id });
    const b = await node('B', { next: c.id });
    const a = await node('A', { next: b.id });
    const read = await readEntry(w, a.id);
    const l1 = read.fields.next;
    const l2 = l1.fields.next;
    const l3 = l2.fields.next;
    expect([l1.id, l2.id, l3.id]).toEqual([b.id, c.id, d.id]);
    expect(l1).toEqual({ ...(await readEntry(w, b.id)), fields: { ...EMPTY_NODE, name: 'B', next: l2 } });
    expect(l3).toMatchObject({
      id: d.id,
      name: 'D',
      status: 'published',
      status_label: 'Published',
      lock_version: 0,
      fields: { name: 'D', many: [] },
    });
    expect(l3.fields.next).toEqual(compactOf(w, e, 'depth'));
    // Depth counts from each root: D read alone expands E.
    expect((await readEntry(w, d.id)).fields.next).toEqual(await readEntry(w, e.id));
    // The same limit in lists.
    const listed = (await w.api.get(w.typed('node'))).body.find((x: any) => x.id === a.id);
    expect(listed).toEqual(read);
  });

  it('stops cycles with a compact reference with reason cycle, the root included', async () => {
    const a = await node('A');
    const b = await node('B', { next: a.id });
    await updateEntry(w, a.id, { fields: { next: b.id } });
    const readA = await readEntry(w, a.id);
    expect(readA.fields.next.id).toBe(b.id);
    expect(readA.fields.next.fields.next).toEqual(compactOf(w, readA, 'cycle'));
    const readB = await readEntry(w, b.id);
    expect(readB.fields.next.id).toBe(a.id);
    expect(readB.fields.next.fields.next).toEqual(compactOf(w, readB, 'cycle'));
    // An entry that names itself.
    const self = await node('Self');
    const updated = await updateEntry(w, self.id, { fields: { next: self.id, many: [self.id, a.id] } });
    const readSelf = await readEntry(w, self.id);
    expect(readSelf.fields.next).toEqual(compactOf(w, updated, 'cycle'));
    expect(readSelf.fields.many[0]).toEqual(compactOf(w, updated, 'cycle'));
    expect(readSelf.fields.many[1]).toMatchObject({ id: a.id, fields: { next: { id: b.id } } });
    expect(readSelf.fields.many[1].fields.next.fields.next).toEqual(compactOf(w, readA, 'cycle'));
  });

  it('examines the first 25 references only, skipping invalid ones inside that window', async () => {
    const refs: any[] = [];
    for (let i = 0; i < 30; i++) refs.push(await node(`r${i}`, {}, i === 2 ? 'draft' : 'published'));
    const root = await node('root', { many: refs.map((r) => r.id) });
    // The answer of a write includes drafts: exactly the first 25 references.
    expect(root.fields.many.map((r: any) => r.id)).toEqual(refs.slice(0, 25).map((r) => r.id));
    // A reference inside the window to an entry deleted since.
    expect((await w.api.delete(w.entry(refs[7].id))).status).toBe(204);
    const read = await readEntry(w, root.id);
    const expected = refs.slice(0, 25).filter((_r, i) => i !== 2 && i !== 7);
    expect(read.fields.many.map((r: any) => r.id)).toEqual(expected.map((r) => r.id));
    expect(read.fields.many).toHaveLength(23);
    expect(read.fields.many[0]).toEqual(await readEntry(w, refs[0].id));
    // Once the draft is published it appears in its place.
    await updateEntry(w, refs[2].id, { status: 'published' });
    const again = await readEntry(w, root.id);
    expect(again.fields.many.map((r: any) => r.id)).toEqual(
      refs
        .slice(0, 25)
        .filter((_r, i) => i !== 7)
        .map((r) => r.id),
    );
  });

  it('skips draft references on delivery reads (single and multiple), in lists too', async () => {
    const draft = await node('draft', {}, 'draft');
    const pub = await node('pub');
    const root = await node('root-d', { next: draft.id, many: [draft.id, pub.id, draft.id] });
    expect(root.fields.next).toMatchObject({ id: draft.id, status: 'draft' });
    const read = await readEntry(w, root.id);
    expect(read.fields.next).toBeNull();
    expect(read.fields.many).toEqual([await readEntry(w, pub.id)]);
    const listed = (await w.api.get(w.typed('node'))).body.find((x: any) => x.id === root.id);
    expect(listed.fields.next).toBeNull();
    expect(listed.fields.many.map((x: any) => x.id)).toEqual([pub.id]);
  });

  it('expands at most 100 related entries per root entry; the rest are compact references with reason budget', async () => {
    const children: any[] = [];
    for (let c = 0; c < 25; c++) {
      const grandchildren: string[] = [];
      for (let g = 0; g < 4; g++) grandchildren.push((await node(`g${c}.${g}`)).id);
      children.push(await node(`c${c}`, { many: grandchildren }));
    }
    const root = await node('budget-root', { many: children.map((c) => c.id) });
    const read = await readEntry(w, root.id);
    const { full, compact } = relatedOf(read);
    expect(full).toHaveLength(100);
    expect(compact.length).toBeGreaterThan(0);
    expect(full.length + compact.length).toBeLessThanOrEqual(125);
    for (const c of compact)
      expect(c).toEqual({
        id: expect.stringMatching(ULID),
        api_url: `${s.url}/api/v1/${w.ws}/entries/${c.id}`,
        name: expect.stringMatching(/^[cg]\d+/),
        status: 'published',
        status_label: 'Published',
        _relation: { reason: 'budget' },
      });
    // The budget is per root: a second root over the same children gets its own 100, in a list as well.
    const root2 = await node('budget-root-2', { many: children.map((c) => c.id) });
    const list = await w.api.get(w.typed('node'));
    const r1 = list.body.find((x: any) => x.id === root.id);
    const r2 = list.body.find((x: any) => x.id === root2.id);
    expect(relatedOf(r1).full).toHaveLength(100);
    expect(relatedOf(r2).full).toHaveLength(100);
  });

  it('skips a reference to an entry converted to an object since', async () => {
    const a = await node('will convert');
    const b = await node('stays');
    const root = await node('root-c', { next: a.id, many: [a.id, b.id] });
    expect(root.fields.many).toHaveLength(2);
    await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/entries/${a.id}/convert`);
    const read = await readEntry(w, root.id);
    expect(read.fields.next).toBeNull();
    expect(read.fields.many.map((x: any) => x.id)).toEqual([b.id]);
  });

  it('renders image attachments with image URLs and a fresh temporary image URL', async () => {
    const sharp = (await import('sharp')).default;
    const png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#ff0000' } })
      .png()
      .toBuffer();
    const up = await w.api.post(`/api/v1/${w.ws}/files`, { file: { name: 'red.png', type: 'image/png', content: png.toString('base64') } });
    expect(up.status).toBe(201);
    const k = await createEntry(w, 'kitchen', { fields: { title: 'img', cover: up.body.id }, status: 'published' });
    const details = (await w.api.get(`/api/v1/${w.ws}/files/${up.body.id}`)).body;
    expect(details.mime_type).toBe('image/png');
    const cover = (await readEntry(w, k.id)).fields.cover;
    expect(cover).toEqual({
      ...asRenderedFile(w, details),
      temporary_image_url: expect.stringMatching(
        new RegExp(`^${escapeRe(s.url)}/api/v1/${w.ws}/files/${details.id}/temporary-image\\?uuid=[^&]+&expires=\\d+&signature=.+$`),
      ),
      temporary_image_url_expires_at: expect.any(String),
    });
    expect(cover.image_url).toEqual(expect.any(String));
    expect(Math.abs(Date.parse(cover.temporary_image_url_expires_at) - ((await clockNow()) + 600_000))).toBeLessThan(10_000);
  });

  it('renders attachments as file objects with fresh temporary URLs valid 600 seconds', async () => {
    const f = await uploadFile(w.api, w.ws, 'note.txt', 'attached content');
    const g = await uploadFile(w.api, w.ws, 'other.txt', 'other');
    const k = await createEntry(w, 'kitchen', { fields: { title: 'att', cover: f.id, gallery: [g.id, f.id] }, status: 'published' });
    const details = (await w.api.get(`/api/v1/${w.ws}/files/${f.id}`)).body;
    const gDetails = (await w.api.get(`/api/v1/${w.ws}/files/${g.id}`)).body;
    const read = await readEntry(w, k.id);
    expect(read.fields.cover).toEqual(asRenderedFile(w, details));
    expect(read.fields.gallery).toEqual([asRenderedFile(w, gDetails), asRenderedFile(w, details)]);
    const now = await clockNow();
    const expires = Date.parse(read.fields.cover.temporary_url_expires_at);
    expect(Math.abs(expires - (now + 600_000))).toBeLessThan(10_000);
    const download = await client(s.url).get(relative(s, read.fields.cover.temporary_url));
    expect(download.status).toBe(200);
    expect(download.text).toBe('attached content');
    // Fresh on every read: a later read (10 minutes on) issues a later expiry.
    await s.admin.post('/admin/v1/clock', { advance_seconds: 600 });
    const later = await readEntry(w, k.id);
    expect(Date.parse(later.fields.cover.temporary_url_expires_at)).toBeGreaterThan(expires + 500_000);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the two ways of expanding relations (core/content/render.ts)', () => {
  // Entries whose expansion the content model bounds within the budget are rendered by nested
  // expressions; a read by id, whose entry may be of any type, is rendered by the breadth first
  // expansion once the workspace has an unbounded type (a multiple relation to its own type, as
  // `node` above). Both must write the same text: the same entries, read before and after such a
  // type is added (lists of a bounded type stay nested: their type alone decides).
  // render-choice.test.ts checks which way each model takes.
  let w: EntriesWorkspace;
  let ids: Record<string, string>;
  let files: number[];
  beforeAll(async () => {
    w = await setup0();
  });
  async function setup0(): Promise<EntriesWorkspace> {
    const x = await entriesWorkspace(s);
    const type = (name: string, fields: FieldDef[], extra: Record<string, unknown> = {}) =>
      createContentType(s, x.ws, 'general', { name, fields, ...extra });
    await type('author', [
      { name: 'name', type: 'text', required: true },
      { name: 'mentor', type: 'relation', targets: ['author'] },
    ]);
    await type('kitchen', KITCHEN);
    await type('label', [{ name: 'code', type: 'text' }]);
    await type(
      'chain',
      [
        { name: 'name', type: 'text' },
        { name: 'next', type: 'relation', targets: ['chain'] },
        { name: 'labels', type: 'relation', targets: ['label'], multiple: true },
      ],
      { name_field: 'name' },
    );
    return x;
  }

  /** Every answer that renders these entries, as text, its temporary URLs' times left out (they move with the clock). */
  async function answers(): Promise<string[]> {
    const paths = [
      ...Object.values(ids).flatMap((id) => [w.entry(id), w.entry(id, '?locale=de-DE'), w.entry(id, '?locale=*')]),
      ...['author', 'kitchen', 'label', 'chain'].flatMap((t) => [
        w.typed(t),
        w.typed(t, '&per_page=2'),
        w.typedV2(t),
        w.typedV2(t, '&view=full&per_page=3'),
      ]),
    ];
    const texts: string[] = [];
    for (const path of paths) {
      const res = await w.api.get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      texts.push(
        `${path} ${res.text.replace(/expires=\d+&signature=[^"&]+/g, 'expires=&signature=').replace(/"temporary(_image)?_url_expires_at":"[^"]+"/g, '"temporary$1_url_expires_at":""')}`,
      );
    }
    return texts;
  }

  it('writes the same answers', async () => {
    const f1 = await uploadFile(w.api, w.ws, 'one.txt', 'one');
    const f2 = await uploadFile(w.api, w.ws, 'two.txt', 'two');
    files = [f1.id, f2.id];
    const author = (name: string, fields: Record<string, unknown> = {}, status = 'published') =>
      createEntry(w, 'author', { fields: { name, ...fields }, status });
    const a1 = await author('Ann');
    const a2 = await author('Bob', { mentor: a1.id });
    await updateEntry(w, a1.id, { fields: { mentor: a2.id } });
    const draft = await author('Draft', {}, 'draft');
    const gone = await author('Gone');
    const labels = [];
    for (let i = 0; i < 30; i++)
      labels.push(await createEntry(w, 'label', { fields: { code: `l${i}` }, status: i === 3 ? 'draft' : 'published' }));
    const full = await createEntry(w, 'kitchen', {
      fields: {
        title: 'Full "quoted" \\ ünïcode',
        count: 1.1,
        flag: false,
        day: '2024-02-29',
        clock: '23:59',
        at: '2024-02-29T23:59:59Z',
        meta: { nested: [1, 'x', { deep: null }], big: 12345678901234567890 },
        author: a1.id,
        authors: [a2.id, draft.id, gone.id, a1.id],
        cover: f1.id,
        gallery: [f2.id, f1.id, f2.id],
        code: 'full',
        labels: ['x', 'y'],
      },
      status: 'published',
      tags: ['t1', 't2'],
      locales: ['de-DE'],
    });
    await updateEntry(w, full.id, { fields: { title: 'Voll', author: a2.id, authors: [a1.id] } }, '?locale=de-DE');
    const empty = await createEntry(w, 'kitchen', { fields: { title: 'Empty' }, status: 'published' });
    const goneOnly = await createEntry(w, 'kitchen', { fields: { title: 'Gone', author: gone.id }, status: 'published' });
    expect((await w.api.delete(w.entry(gone.id))).status).toBe(204);
    // A chain of five (the fourth level is compact: depth), one that loops on itself (cycle), one of 30 labels (25 looked at).
    let next: string | undefined;
    const chain: any[] = [];
    for (const name of ['c5', 'c4', 'c3', 'c2', 'c1']) {
      const c = await createEntry(w, 'chain', { fields: { name, next: next ?? null, labels: [labels[0].id] }, status: 'published' });
      chain.push(c);
      next = c.id;
    }
    const self = await createEntry(w, 'chain', { fields: { name: 'self' }, status: 'published' });
    await updateEntry(w, self.id, { fields: { next: self.id } });
    const many = await createEntry(w, 'chain', { fields: { name: '', labels: labels.map((l) => l.id) }, status: 'published' });
    ids = { a1: a1.id, a2: a2.id, full: full.id, empty: empty.id, goneOnly: goneOnly.id, c1: chain[4].id, self: self.id, many: many.id };

    const written = (await w.api.patch(w.entry(full.id), { fields: { code: 'full' } })).text;
    const nested = await answers();
    // `loop` makes the model unbounded: from now on the breadth first expansion renders.
    await createContentType(s, w.ws, 'general', {
      name: 'loop',
      fields: [{ name: 'many', type: 'relation', targets: ['loop'], multiple: true }],
    });
    const breadthFirst = await answers();
    // Where they differ, around the first difference (the answers are long).
    const differences = nested.flatMap((text, i) => {
      const other = breadthFirst[i];
      let at = 0;
      while (at < text.length && text[at] === other[at]) at++;
      return text === other
        ? []
        : [`${text.slice(0, 80)}\n  nested: ${text.slice(at - 100, at + 100)}\n  breadth first: ${other.slice(at - 100, at + 100)}`];
    });
    expect(differences).toEqual([]);
    // A write's answer (drafts shown) too, but for the version the write itself moved.
    const rewritten = (await w.api.patch(w.entry(full.id), { fields: { code: 'full' } })).text;
    const version = (text: string) =>
      text
        .replace(/"updated_at":"[^"]+","lock_version":\d+}$/, '')
        .replace(/expires=\d+&signature=[^"&]+/g, '')
        .replace(/"temporary(_image)?_url_expires_at":"[^"]+"/g, '');
    expect(version(rewritten)).toEqual(version(written));
    expect(written).toContain('"name":"Draft"');
    // What the answers hold: the cases the two ways must agree on are there.
    const c1 = await readEntry(w, ids.c1);
    expect(c1.fields.next.fields.next.fields.next.fields.next).toEqual(compactOf(w, chain[0], 'depth'));
    expect((await readEntry(w, self.id)).fields.next).toEqual(compactOf(w, { ...self, name: 'self' }, 'cycle'));
    expect((await readEntry(w, many.id)).fields.labels.map((l: any) => l.fields.code)).toEqual(
      [0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24].map((i) => `l${i}`),
    );
    const read = await readEntry(w, full.id);
    expect(read.fields.authors.map((a: any) => a.name)).toEqual(['Bob', 'Ann']);
    expect(read.fields.gallery.map((f: any) => f.id)).toEqual([files[1], files[0], files[1]]);
    expect((await readEntry(w, goneOnly.id)).fields.author).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------

describe('lists', () => {
  let w: EntriesWorkspace;
  let published: any[];
  let draft: any;
  beforeAll(async () => {
    w = await setup();
    published = [];
    published.push(await createEntry(w, 'node', { fields: { name: 'p0' }, status: 'published' }));
    draft = await createEntry(w, 'node', { fields: { name: 'draft' } });
    for (let i = 1; i < 5; i++) published.push(await createEntry(w, 'node', { fields: { name: `p${i}` }, status: 'published' }));
    // Another type's entries are never listed with node.
    await createEntry(w, 'label', { fields: { code: 'x' }, status: 'published' });
  });
  const reads = () => Promise.all(published.map((p) => readEntry(w, p.id)));

  it('v1 without per_page, cursor and view: a plain array of rendered published entries, oldest first', async () => {
    const res = await w.api.get(w.typed('node'));
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body).toEqual(await reads());
    expect(res.body.map((e: any) => e.id)).not.toContain(draft.id);
    // skipWebhooks and locale do not make it a page.
    const skip = await w.api.get(w.typed('node', '&skipWebhooks=true&locale=en-US'));
    expect(skip.body).toEqual(res.body);
  });

  it('v1 with per_page: a cursor page; following next_page_url visits every published entry once, prev_page_url goes back', async () => {
    const first = await w.api.get(w.typed('node', '&per_page=2'));
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(['data', 'next_page_url', 'prev_page_url']);
    expect(first.body.prev_page_url).toBeNull();
    expect(first.body.next_page_url).toEqual(expect.stringMatching(new RegExp(`^${escapeRe(s.url)}/api/v1/${w.ws}/entries\\?`)));
    const all = await reads();
    // A page without view holds rendered entries.
    expect(first.body.data).toEqual(all.slice(0, 2));
    const second = await w.api.get(relative(s, first.body.next_page_url));
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(all.slice(2, 4));
    expect(second.body.prev_page_url).toEqual(expect.any(String));
    const third = await w.api.get(relative(s, second.body.next_page_url));
    expect(third.body.data).toEqual(all.slice(4));
    expect(third.body.next_page_url).toBeNull();
    const back = await w.api.get(relative(s, second.body.prev_page_url));
    expect(back.body.data).toEqual(all.slice(0, 2));
  });

  it('v1 with view or cursor alone is paged too', async () => {
    const summary = await w.api.get(w.typed('node', '&view=summary'));
    expect(summary.body).toEqual({
      data: published.map((p) => ({
        id: p.id,
        api_url: `${s.url}/api/v1/${w.ws}/entries/${p.id}`,
        name: p.name,
        status: 'published',
        updated_at: p.updated_at,
      })),
      next_page_url: null,
      prev_page_url: null,
    });
    for (const e of summary.body.data) expect(Object.keys(e).sort()).toEqual(['api_url', 'id', 'name', 'status', 'updated_at']);
    const full = await w.api.get(w.typed('node', '&view=full'));
    expect(full.body).toEqual({ data: await reads(), next_page_url: null, prev_page_url: null });
    const page = await w.api.get(w.typed('node', '&per_page=3'));
    const cursor = new URL(page.body.next_page_url).searchParams.get('cursor');
    expect(cursor).toEqual(expect.any(String));
    const byCursor = await w.api.get(w.typed('node', `&cursor=${encodeURIComponent(cursor!)}`));
    expect(byCursor.status).toBe(200);
    expect(Object.keys(byCursor.body).sort()).toEqual(['data', 'next_page_url', 'prev_page_url']);
    expect(byCursor.body.data).toEqual((await reads()).slice(3));
  });

  it('v2: always a page, summary form and 50 per page by default, view=full for rendered entries', async () => {
    const res = await w.api.get(w.typedV2('node'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      data: published.map((p) => ({
        id: p.id,
        api_url: `${s.url}/api/v1/${w.ws}/entries/${p.id}`,
        name: p.name,
        status: 'published',
        updated_at: p.updated_at,
      })),
      next_page_url: null,
      prev_page_url: null,
    });
    const full = await w.api.get(w.typedV2('node', '&view=full&per_page=2'));
    expect(full.body.data).toEqual((await reads()).slice(0, 2));
    const next = await w.api.get(relative(s, full.body.next_page_url));
    expect(next.body.data).toEqual((await reads()).slice(2, 4));
    expect(new URL(full.body.next_page_url).pathname).toBe(`/api/v2/${w.ws}/entries`);
    const all = await w.api.get(w.typedV2('node', '&view=full&locale=*'));
    expect(all.body.data[0].fields).toEqual({ 'en-US': { ...EMPTY_NODE, name: 'p0' } });
  });

  it('v2 pages 50 by default and v1 paged lists follow to the end without overlap', async () => {
    const big = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 53; i++) {
      const e = await createEntry(big, 'node', { fields: { name: `n${i}` }, status: i % 10 === 5 ? 'draft' : 'published' });
      if (e.status === 'published') ids.push(e.id);
    }
    expect(ids).toHaveLength(48);
    const more: string[] = [];
    for (let i = 0; i < 5; i++) more.push((await createEntry(big, 'node', { fields: { name: `m${i}` }, status: 'published' })).id);
    const everything = [...ids, ...more];
    const first = await big.api.get(big.typedV2('node'));
    expect(first.body.data).toHaveLength(50);
    expect(first.body.data.map((e: any) => e.id)).toEqual(everything.slice(0, 50));
    const second = await big.api.get(relative(s, first.body.next_page_url));
    expect(second.body.data.map((e: any) => e.id)).toEqual(everything.slice(50));
    expect(second.body.next_page_url).toBeNull();
    // v1 paged: per_page 7, to the end.
    const seen: string[] = [];
    let url: string | null = big.typed('node', '&per_page=7&view=summary');
    let pages = 0;
    while (url) {
      const res: TestResponse = await big.api.get(url);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(7);
      seen.push(...res.body.data.map((e: any) => e.id));
      url = res.body.next_page_url ? relative(s, res.body.next_page_url) : null;
      if (++pages > 20) throw new Error('no end');
    }
    expect(seen).toEqual(everything);
    // The plain list: all of them.
    expect(await listedIds(big, 'node')).toEqual(everything);
  });

  it.each(['per_page=0', 'per_page=101', 'per_page=-1', 'per_page=abc', 'per_page=1.5', 'cursor=nonsense', 'view=compact'])(
    'refuses %s with 422 (v1 and v2)',
    async (param) => {
      for (const path of [w.typed('node', `&${param}`), w.typedV2('node', `&${param}`)]) {
        const res = await w.api.get(path);
        expect422(res, [param.split('=')[0]]);
      }
    },
  );

  it('accepts per_page 1 and 100', async () => {
    expect((await w.api.get(w.typed('node', '&per_page=1'))).body.data).toHaveLength(1);
    expect((await w.api.get(w.typedV2('node', '&per_page=100'))).body.data).toHaveLength(5);
  });

  it.each([
    ['an unknown bucket', 'node', 'nobucket'],
    ['an unknown type', 'nope', 'general'],
    ['a type of another bucket', 'elsewhere', 'general'],
  ])('answers 404 for %s (v1 plain and paged, v2)', async (_label, type, bucket) => {
    for (const path of [w.typed(type, '', bucket), w.typed(type, '&per_page=2', bucket), w.typedV2(type, '', bucket)]) {
      expect(await w.api.get(path)).toMatchObject({ status: 404, body: NOT_FOUND });
    }
  });

  it('keeps the other parameters when following next_page_url (locale, view)', async () => {
    const first = await w.api.get(w.typed('node', '&per_page=2&locale=*'));
    expect(first.body.data.map((e: any) => e.fields)).toEqual([
      { 'en-US': { ...EMPTY_NODE, name: 'p0' } },
      { 'en-US': { ...EMPTY_NODE, name: 'p1' } },
    ]);
    const next = await w.api.get(relative(s, first.body.next_page_url));
    expect(next.body.data.map((e: any) => e.fields)).toEqual([
      { 'en-US': { ...EMPTY_NODE, name: 'p2' } },
      { 'en-US': { ...EMPTY_NODE, name: 'p3' } },
    ]);
    const summary = await w.api.get(w.typedV2('node', '&per_page=2&view=summary'));
    const summary2 = await w.api.get(relative(s, summary.body.next_page_url));
    expect(summary2.body.data.map((e: any) => Object.keys(e).sort())).toEqual([
      ['api_url', 'id', 'name', 'status', 'updated_at'],
      ['api_url', 'id', 'name', 'status', 'updated_at'],
    ]);
    expect(summary2.body.data.map((e: any) => e.id)).toEqual(published.slice(2, 4).map((p) => p.id));
  });

  it('lists one bucket only: a type of the same name in another bucket is a different list', async () => {
    const general = await createEntry(w, 'author', { fields: { name: 'general' }, status: 'published' });
    const other = await createEntry(w, 'author', { fields: { name: 'other' }, status: 'published' }, '', 'other');
    expect(await listedIds(w, 'author')).toEqual([general.id]);
    expect(await listedIds(w, 'author', 'other')).toEqual([other.id]);
    expect((await w.api.get(w.typedV2('author', '', 'other'))).body.data.map((e: any) => e.id)).toEqual([other.id]);
  });

  it('lists fields keyed by locale with locale=*', async () => {
    const e = published[0];
    const res = await w.api.get(w.typed('node', '&locale=*'));
    expect(res.body.find((x: any) => x.id === e.id).fields).toEqual({ 'en-US': { ...EMPTY_NODE, name: 'p0' } });
  });

  it('drops an entry moved back to draft and shows entries of another locale without values', async () => {
    const fresh = await setup();
    const a = await createEntry(fresh, 'node', { fields: { name: 'a' }, status: 'published' });
    const b = await createEntry(fresh, 'node', { fields: { name: 'b' }, status: 'published' });
    await updateEntry(fresh, a.id, { status: 'draft' });
    expect(await listedIds(fresh, 'node')).toEqual([b.id]);
    expect((await fresh.api.get(fresh.typed('node', '&locale=de-DE'))).body.map((x: any) => x.fields)).toEqual([EMPTY_NODE]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('update', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });

  it('changes only the given fields and answers 200 with the rendered entry and the next lock_version', async () => {
    const e = await createEntry(w, 'kitchen', {
      fields: { title: 'T', count: 1, flag: true, labels: ['a'], code: 'UP-1' },
      status: 'published',
      tags: ['a', 'b'],
    });
    const res = await w.api.patch(w.entry(e.id), { fields: { count: 2 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...e, fields: { ...e.fields, count: 2 }, lock_version: 1, updated_at: expect.stringMatching(TIMESTAMP) });
    expect(Date.parse(res.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(e.updated_at));
    expect(await readEntry(w, e.id)).toEqual(res.body);
    // null empties an optional field ([] for a multiple one).
    const emptied = await updateEntry(w, e.id, { fields: { flag: null, labels: null } });
    expect(emptied).toMatchObject({ lock_version: 2, fields: { ...e.fields, count: 2, flag: null, labels: [] } });
    // Tags are replaced, fields kept.
    const tagged = await updateEntry(w, e.id, { tags: ['c'] });
    expect(tagged).toEqual({ ...emptied, tags: ['c'], lock_version: 3, updated_at: expect.stringMatching(TIMESTAMP) });
    const untagged = await updateEntry(w, e.id, { tags: [] });
    expect(untagged.tags).toEqual([]);
    // An empty update still counts as a write.
    const empty = await updateEntry(w, e.id, {});
    expect(empty).toMatchObject({ lock_version: 5, fields: emptied.fields, tags: [] });
    expect(await readEntry(w, e.id)).toEqual(empty);
  });

  it('preserves the seconds of a datetime written by an update, and refuses malformed JSON (400) changing nothing', async () => {
    const e = await createEntry(w, 'kitchen', { fields: { title: 'dt', at: '2024-01-01 10:00' }, status: 'published' });
    expect(e.fields.at).toBe('2024-01-01T10:00:00Z');
    const up = await updateEntry(w, e.id, { fields: { at: '2024-06-30T23:59:58+01:00' } });
    expect(up.fields.at).toBe('2024-06-30T22:59:58Z');
    const bad = await rawJson(w.api, 'PATCH', w.entry(e.id), '{"fields": {"title": "x"');
    expect(bad.status).toBe(400);
    expect(await readEntry(w, e.id)).toEqual(up);
  });

  it('answers a draft too, rendered', async () => {
    const d = await createEntry(w, 'node', { fields: { name: 'd' } });
    const res = await w.api.patch(w.entry(d.id), { fields: { name: 'd2' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...d,
      name: 'd2',
      fields: { ...EMPTY_NODE, name: 'd2' },
      lock_version: 1,
      updated_at: expect.stringMatching(TIMESTAMP),
    });
  });

  it.each([
    ['a required field emptied', { fields: { title: null } }, ['fields.title']],
    ['an unknown field', { fields: { nope: 1 } }, ['fields.nope']],
    ['a wrong value', { fields: { day: '2023-02-29', count: 'x' } }, ['fields.count', 'fields.day']],
    ['a fractional datetime', { fields: { at: '2024-01-01T10:00:00.5Z' } }, ['fields.at']],
    ['a relation to an unknown entry', { fields: { author: UNKNOWN_ULID } }, ['fields.author']],
    ['an unconfigured locale', { locales: ['de-DE', 'it-IT'] }, ['locales.1']],
    ['an invalid status', { status: 'archived' }, ['status']],
    ['an invalid publish_at', { publish_at: 'soon' }, ['publish_at']],
    ['a negative expected_version', { expected_version: -1 }, ['expected_version']],
    ['an unknown property', { colour: 'red' }, [/colour/]],
  ])('refuses %s with 422 and changes nothing', async (_label, body, keys) => {
    const e = await createEntry(w, 'kitchen', { fields: { title: 'keep', count: 1 }, status: 'published' });
    const res = await w.api.patch(w.entry(e.id), body);
    expect422(res, keys as (string | RegExp)[]);
    expect(await readEntry(w, e.id)).toEqual(e);
  });

  it('checks unique values against other entries, not the entry itself', async () => {
    const a = await createEntry(w, 'author', { fields: { name: 'A', email: 'a@example.com' }, status: 'published' });
    const b = await createEntry(w, 'author', { fields: { name: 'B', email: 'b@example.com' }, status: 'published' });
    expect422(await w.api.patch(w.entry(b.id), { fields: { email: 'a@example.com' } }), ['fields.email']);
    expect(await readEntry(w, b.id)).toEqual(b);
    const same = await updateEntry(w, a.id, { fields: { email: 'a@example.com', name: 'A2' } });
    expect(same.fields).toEqual({ name: 'A2', email: 'a@example.com', mentor: null });
    // Freed values can be taken.
    await updateEntry(w, a.id, { fields: { email: null } });
    expect((await updateEntry(w, b.id, { fields: { email: 'a@example.com' } })).fields.email).toBe('a@example.com');
  });

  it('refuses a stale expected_version with 422 naming the current version, and changes nothing', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'v0' }, status: 'published' });
    const v1 = await updateEntry(w, e.id, { fields: { name: 'v1' }, expected_version: 0 });
    expect(v1.lock_version).toBe(1);
    const stale = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, expected_version: 0 });
    expect422(stale, ['expected_version']);
    expect(stale.body.errors.expected_version).toEqual(['The expected_version is stale: the current version is 1.']);
    const ahead = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, expected_version: 7 });
    expect422(ahead, ['expected_version']);
    expect(await readEntry(w, e.id)).toEqual(v1);
    const v2 = await updateEntry(w, e.id, { fields: { name: 'v2' }, expected_version: 1 });
    expect(v2).toMatchObject({ lock_version: 2, name: 'v2' });
    // Without a version, supplied properties overwrite.
    expect((await updateEntry(w, e.id, { fields: { name: 'v3' } })).lock_version).toBe(3);
  });

  it('lets exactly one of concurrent updates with the same expected_version through', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'race' }, status: 'published' });
    const results = await Promise.all(
      Array.from({ length: 6 }, (_x, i) => w.api.patch(w.entry(e.id), { fields: { name: `race ${i}` }, expected_version: 0 })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 422, 422, 422, 422, 422]);
    const winner = results.find((r) => r.status === 200)!;
    for (const r of results.filter((x) => x.status === 422)) expect(errorKeys(r)).toEqual(['expected_version']);
    expect(await readEntry(w, e.id)).toEqual(winner.body);
    expect(winner.body.lock_version).toBe(1);
  });

  it('answers each of concurrent updates without a version with its own result: its values and its new lock_version', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'count' }, status: 'published' });
    const results = await Promise.all(Array.from({ length: 6 }, (_x, i) => w.api.patch(w.entry(e.id), { fields: { name: `n${i}` } })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    // Every update was applied (none lost): the final version is 6.
    const final = await readEntry(w, e.id);
    expect(final.lock_version).toBe(6);
    // Each answer is the entry after that update: the name it wrote, and a version of its own.
    expect(results.map((r, i) => [i, r.body.fields.name])).toEqual(results.map((_r, i) => [i, `n${i}`]));
    expect(results.map((r) => r.body.lock_version).sort()).toEqual([1, 2, 3, 4, 5, 6]);
    // The last one applied is what reads show.
    expect(results.find((r) => r.body.lock_version === 6)!.body).toEqual(final);
  });

  it('answers an update racing a delete with 200 (applied before) or 404 (after), never an error', async () => {
    const outcomes: number[][] = [];
    for (let i = 0; i < 12; i++) {
      const e = await createEntry(w, 'node', { fields: { name: `race-delete ${i}` }, status: 'published' });
      const [up, del] = await Promise.all([w.api.patch(w.entry(e.id), { fields: { name: 'updated' } }), w.api.delete(w.entry(e.id))]);
      outcomes.push([up.status, del.status]);
      if (up.status === 200) expect(up.body).toMatchObject({ id: e.id, lock_version: 1, fields: { name: 'updated' } });
      expect((await w.api.get(w.entry(e.id))).status).toBe(404);
    }
    for (const [up, del] of outcomes) {
      expect([200, 404]).toContain(up);
      expect(del).toBe(204);
    }
  });

  it('takes check as another name for expected_version', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'c0' }, status: 'published' });
    const stale = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, check: 5 });
    expect422(stale, ['check']);
    expect(stale.body.errors.check[0]).toContain('current version is 0');
    expect(await readEntry(w, e.id)).toEqual(e);
    const c1 = await updateEntry(w, e.id, { fields: { name: 'c1' }, check: 0 });
    expect(c1.lock_version).toBe(1);
    // Both, different: 422 on check.
    const both = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, check: 1, expected_version: 0 });
    expect422(both, ['check']);
    const both2 = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, check: 0, expected_version: 1 });
    expect422(both2, ['check']);
    expect(await readEntry(w, e.id)).toEqual(c1);
    // Both, equal but stale: the error is on expected_version.
    const staleBoth = await w.api.patch(w.entry(e.id), { fields: { name: 'lost' }, check: 0, expected_version: 0 });
    expect422(staleBoth, ['expected_version']);
    expect(await readEntry(w, e.id)).toEqual(c1);
    // Both, equal and current: accepted.
    const c2 = await updateEntry(w, e.id, { fields: { name: 'c2' }, check: 1, expected_version: 1 });
    expect(c2).toMatchObject({ lock_version: 2, name: 'c2' });
  });

  it('sets, replaces and clears publish_at on a draft; publishing clears it', async () => {
    const d = await createEntry(w, 'node', { fields: { name: 'sched' }, publish_at: '2031-01-01T00:00:00Z' });
    expect(d.publish_at).toBe('2031-01-01T00:00:00.000000Z');
    const replaced = await updateEntry(w, d.id, { publish_at: '2032-02-02T02:02:02-01:00' });
    expect(replaced).toMatchObject({ status: 'draft', status_label: 'Draft', publish_at: '2032-02-02T03:02:02.000000Z', lock_version: 1 });
    const cleared = await updateEntry(w, d.id, { publish_at: null });
    expect(cleared.publish_at).toBeNull();
    const kept = await updateEntry(w, d.id, { publish_at: '2033-03-03T00:00:00Z' });
    expect((await updateEntry(w, d.id, { fields: { name: 'sched2' } })).publish_at).toBe(kept.publish_at);
    const published = await updateEntry(w, d.id, { status: 'published' });
    expect(published).toMatchObject({ status: 'published', status_label: 'Published', publish_at: null, name: 'sched2' });
    expect(await readEntry(w, d.id)).toEqual(published);
    // Publishing with a publish_at in the same request still clears it.
    const d2 = await createEntry(w, 'node', { fields: { name: 'both' } });
    const both = await updateEntry(w, d2.id, { status: 'published', publish_at: '2031-01-01T00:00:00Z' });
    expect(both).toMatchObject({ status: 'published', publish_at: null });
    // Back to draft: gone from delivery.
    await updateEntry(w, d.id, { status: 'draft' });
    expect((await w.api.get(w.entry(d.id))).status).toBe(404);
    expect(await listedIds(w, 'node')).not.toContain(d.id);
  });

  it('replaces the enabled locales and deletes the translations of removed locales for good', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'en' }, locales: ['de-DE', 'fr-FR'], status: 'published' });
    await updateEntry(w, e.id, { fields: { name: 'de' } }, '?locale=de-DE');
    const fr = await updateEntry(w, e.id, { fields: { name: 'fr' } }, '?locale=fr-FR');
    expect(fr.fields).toEqual({ ...EMPTY_NODE, name: 'fr' });
    const before = await readEntry(w, e.id, '?locale=*');
    expect(before.fields).toEqual({
      'en-US': { ...EMPTY_NODE, name: 'en' },
      'de-DE': { ...EMPTY_NODE, name: 'de' },
      'fr-FR': { ...EMPTY_NODE, name: 'fr' },
    });
    const narrowed = await updateEntry(w, e.id, { locales: ['de-DE'] });
    expect(sorted(narrowed.locales)).toEqual(['de-DE', 'en-US']);
    expect(narrowed.lock_version).toBe(before.lock_version + 1);
    const after = await readEntry(w, e.id, '?locale=*');
    expect(after.fields).toEqual({ 'en-US': { ...EMPTY_NODE, name: 'en' }, 'de-DE': { ...EMPTY_NODE, name: 'de' } });
    expect((await readEntry(w, e.id, '?locale=fr-FR')).fields).toEqual(EMPTY_NODE);
    // Enabled again: the French values are gone.
    const again = await updateEntry(w, e.id, { locales: ['fr-FR', 'de-DE'] });
    expect(sorted(again.locales)).toEqual(['de-DE', 'en-US', 'fr-FR']);
    expect((await readEntry(w, e.id, '?locale=*')).fields).toEqual({
      'en-US': { ...EMPTY_NODE, name: 'en' },
      'de-DE': { ...EMPTY_NODE, name: 'de' },
      'fr-FR': EMPTY_NODE,
    });
    // en-US cannot be removed.
    const base = await updateEntry(w, e.id, { locales: [] });
    expect(base.locales).toEqual(['en-US']);
    expect((await readEntry(w, e.id, '?locale=*')).fields).toEqual({ 'en-US': { ...EMPTY_NODE, name: 'en' } });
    expect((await readEntry(w, e.id, '?locale=de-DE')).fields).toEqual(EMPTY_NODE);
  });

  it('writes the fields of the query locale only', async () => {
    const e = await createEntry(w, 'kitchen', { fields: { title: 'en', count: 1 }, locales: ['de-DE'], status: 'published' });
    const de = await updateEntry(w, e.id, { fields: { title: 'de', count: 2 } }, '?locale=de-DE');
    expect(de.fields).toEqual({ ...EMPTY_KITCHEN, title: 'de', count: 2 });
    const de2 = await updateEntry(w, e.id, { fields: { count: 3 } }, '?locale=de-DE');
    expect(de2.fields).toEqual({ ...EMPTY_KITCHEN, title: 'de', count: 3 });
    expect((await readEntry(w, e.id)).fields).toEqual({ ...EMPTY_KITCHEN, title: 'en', count: 1 });
    for (const locale of ['*', 'it-IT', 'xx']) {
      expect(await w.api.patch(w.entry(e.id, `?locale=${locale}`), { fields: { count: 9 } })).toMatchObject({
        status: 400,
        body: INVALID_LOCALE,
      });
    }
    expect((await readEntry(w, e.id, '?locale=*')).fields).toEqual({
      'en-US': { ...EMPTY_KITCHEN, title: 'en', count: 1 },
      'de-DE': { ...EMPTY_KITCHEN, title: 'de', count: 3 },
    });
  });

  it('is refused with 422 on review while a review is pending, for update and delete; allowed once resolved', async () => {
    const e = await createEntry(w, 'node', { fields: { name: 'reviewed' }, status: 'published' });
    const review = await openReview(s, w.ws, e.id);
    expect(review).toMatchObject({ entry_id: e.id, status: 'pending' });
    const up = await w.api.patch(w.entry(e.id), { fields: { name: 'changed' } });
    expect422(up, ['review']);
    expect(up.body.errors.review).toEqual(['The entry has a pending review.']);
    const del = await w.api.delete(w.entry(e.id));
    expect422(del, ['review']);
    expect(await readEntry(w, e.id)).toEqual(e);
    await resolveReview(s, w.ws, review.id);
    expect((await updateEntry(w, e.id, { fields: { name: 'changed' } })).lock_version).toBe(1);
    expect((await w.api.delete(w.entry(e.id))).status).toBe(204);
  });
});

// ---------------------------------------------------------------------------------------------

describe('delete', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });

  it('answers 204 with no body; the entry is gone for reads, updates, deletes and lists', async () => {
    const keep = await createEntry(w, 'node', { fields: { name: 'keep' }, status: 'published' });
    const e = await createEntry(w, 'node', { fields: { name: 'gone' }, status: 'published' });
    const res = await w.api.delete(w.entry(e.id));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await w.api.get(w.entry(e.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await w.api.patch(w.entry(e.id), { fields: { name: 'x' } })).status).toBe(404);
    expect((await w.api.delete(w.entry(e.id))).status).toBe(404);
    expect(await listedIds(w, 'node')).toEqual([keep.id]);
    // A draft is deleted the same way.
    const d = await createEntry(w, 'node', { fields: { name: 'draft' } });
    expect((await w.api.delete(w.entry(d.id))).status).toBe(204);
    expect((await w.api.patch(w.entry(d.id), { status: 'published' })).status).toBe(404);
    // The lower-case id works; the entry is gone in every locale.
    const l = await createEntry(w, 'node', { fields: { name: 'lower' }, locales: ['de-DE'], status: 'published' });
    expect((await w.api.delete(w.entry(l.id.toLowerCase()))).status).toBe(204);
    expect((await w.api.get(w.entry(l.id, '?locale=de-DE'))).status).toBe(404);
    expect(await readEntry(w, keep.id)).toEqual(keep);
  });

  it('keeps entries that reference a deleted entry (the reference is skipped)', async () => {
    const target = await createEntry(w, 'node', { fields: { name: 'target' }, status: 'published' });
    const ref = await createEntry(w, 'node', { fields: { name: 'ref', next: target.id, many: [target.id] }, status: 'published' });
    expect((await w.api.delete(w.entry(target.id))).status).toBe(204);
    const read = await readEntry(w, ref.id);
    expect(read.fields).toEqual({ name: 'ref', next: null, many: [] });
  });

  it('deletes the entries and files of cascade_on_delete fields (every locale), and keeps the others', async () => {
    const n = await Promise.all(
      ['part', 'parts1', 'parts2', 'keep', 'part-de'].map((name) => createEntry(w, 'node', { fields: { name }, status: 'published' })),
    );
    const files = await Promise.all(['doc', 'docs1', 'spare', 'doc-de'].map((name) => uploadFile(w.api, w.ws, `${name}.txt`, name)));
    const [doc, docs1, spare, docDe] = files;
    const o = await createEntry(w, 'owner', {
      fields: { name: 'owner', part: n[0].id, parts: [n[1].id, n[2].id], keep: n[3].id, doc: doc.id, docs: [docs1.id], spare: spare.id },
      locales: ['de-DE'],
      status: 'published',
    });
    await updateEntry(w, o.id, { fields: { part: n[4].id, doc: docDe.id } }, '?locale=de-DE');
    const res = await w.api.delete(w.entry(o.id));
    expect(res.status).toBe(204);
    expect((await w.api.get(w.entry(o.id))).status).toBe(404);
    for (const gone of [n[0], n[1], n[2], n[4]])
      expect([gone.fields.name, (await w.api.get(w.entry(gone.id))).status]).toEqual([gone.fields.name, 404]);
    expect(await readEntry(w, n[3].id)).toEqual(n[3]);
    for (const gone of [doc, docs1, docDe]) {
      expect([gone.name, (await w.api.get(`/api/v1/${w.ws}/files/${gone.id}`)).status]).toEqual([gone.name, 404]);
      // The permanent download URL is gone too.
      expect((await client(s.url).get(relative(s, gone.download_url))).status).toBe(404);
    }
    expect((await w.api.get(`/api/v1/${w.ws}/files/${spare.id}`)).status).toBe(200);
  });

  it('does not cascade through fields without cascade_on_delete', async () => {
    const f = await uploadFile(w.api, w.ws, 'kept.txt', 'kept');
    const a = await createEntry(w, 'author', { fields: { name: 'kept author' }, status: 'published' });
    const k = await createEntry(w, 'kitchen', {
      fields: { title: 'k', cover: f.id, gallery: [f.id], author: a.id, authors: [a.id] },
      status: 'published',
    });
    expect((await w.api.delete(w.entry(k.id))).status).toBe(204);
    expect((await w.api.get(`/api/v1/${w.ws}/files/${f.id}`)).status).toBe(200);
    expect(await readEntry(w, a.id)).toEqual(a);
  });
});

// ---------------------------------------------------------------------------------------------

describe('file deletion', () => {
  it('removes the file id from attachment fields of every entry in every locale: single becomes null, multiple loses only it', async () => {
    const w = await setup();
    const f1 = await uploadFile(w.api, w.ws, 'f1.txt', 'f1');
    const f2 = await uploadFile(w.api, w.ws, 'f2.txt', 'f2');
    const k = await createEntry(w, 'kitchen', {
      fields: { title: 'K', cover: f1.id, gallery: [f1.id, f2.id] },
      locales: ['de-DE'],
      status: 'published',
    });
    await updateEntry(w, k.id, { fields: { title: 'K-de', cover: f1.id, gallery: [f2.id, f1.id, f2.id] } }, '?locale=de-DE');
    const k2 = await createEntry(w, 'kitchen', { fields: { title: 'K2', cover: f2.id }, status: 'published' });
    const res = await w.api.delete(`/api/v1/${w.ws}/files/${f1.id}`);
    expect(res.status).toBe(204);
    expect((await w.api.get(`/api/v1/${w.ws}/files/${f1.id}`)).status).toBe(404);
    const f2Details = (await w.api.get(`/api/v1/${w.ws}/files/${f2.id}`)).body;
    const read = await readEntry(w, k.id, '?locale=*');
    expect(read.fields['en-US']).toMatchObject({ title: 'K', cover: null, gallery: [asRenderedFile(w, f2Details)] });
    expect(read.fields['de-DE']).toMatchObject({
      title: 'K-de',
      cover: null,
      gallery: [asRenderedFile(w, f2Details), asRenderedFile(w, f2Details)],
    });
    expect((await readEntry(w, k2.id)).fields.cover).toEqual(asRenderedFile(w, f2Details));
    // The stored values themselves lost the id (what a conversion copies as stored).
    const converted = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/entries/${k.id}/convert`);
    expect(converted.data).toMatchObject({ title: 'K', cover: null, gallery: [f2.id] });
    const all = await w.api.get(`${w.at(converted.id)}?locale=*`);
    expect(all.body.translations['de-DE']).toMatchObject({ title: 'K-de', cover: null, gallery: [f2.id, f2.id] });
  });
});

// ---------------------------------------------------------------------------------------------

describe('scheduled publication', () => {
  const runTask = async () => {
    const res = await s.admin.post('/admin/v1/tasks/entries:publish-scheduled');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ task: 'entries:publish-scheduled', processed: expect.any(Number) });
    return res.body.processed as number;
  };

  it('publishes a draft whose publish_at has passed and clears publish_at; not before', async () => {
    const w = await setup();
    const now = await clockNow();
    const d = await createEntry(w, 'node', { fields: { name: 'scheduled' }, publish_at: new Date(now + 3_600_000).toISOString() });
    const unscheduled = await createEntry(w, 'node', { fields: { name: 'unscheduled' } });
    await runTask();
    expect((await w.api.get(w.entry(d.id))).status).toBe(404);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 7200 });
    await runTask();
    const read = await readEntry(w, d.id);
    expect(read).toMatchObject({
      id: d.id,
      status: 'published',
      status_label: 'Published',
      publish_at: null,
      fields: { ...EMPTY_NODE, name: 'scheduled' },
    });
    expect(await listedIds(w, 'node')).toEqual([d.id]);
    expect((await w.api.get(w.entry(unscheduled.id))).status).toBe(404);
    // Running again changes nothing.
    await runTask();
    expect(await readEntry(w, d.id)).toEqual(read);
  });

  it('publishes a draft created with publish_at already in the past', async () => {
    const w = await setup();
    const now = await clockNow();
    const d = await createEntry(w, 'node', { fields: { name: 'overdue' }, publish_at: new Date(now - 60_000).toISOString() });
    expect(d).toMatchObject({ status: 'draft', publish_at: expect.stringMatching(TIMESTAMP) });
    await runTask();
    expect(await readEntry(w, d.id)).toMatchObject({ status: 'published', publish_at: null });
  });

  it('does not publish a draft whose schedule was cleared', async () => {
    const w = await setup();
    const now = await clockNow();
    const d = await createEntry(w, 'node', { fields: { name: 'cleared' }, publish_at: new Date(now + 60_000).toISOString() });
    await updateEntry(w, d.id, { publish_at: null });
    await s.admin.post('/admin/v1/clock', { advance_seconds: 3600 });
    await runTask();
    expect((await w.api.get(w.entry(d.id))).status).toBe(404);
  });
});

// ---------------------------------------------------------------------------------------------

describe('abilities and permissions', () => {
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
    call: (api: Api, w: EntriesWorkspace, e: any) => Promise<TestResponse>;
    ok: number;
  }
  const routes: Route[] = [
    { name: 'list v1', abilities: ['entries:read'], permissions: ['list-entries'], call: (api, w) => api.get(w.typed('node')), ok: 200 },
    {
      name: 'list v1 paged',
      abilities: ['entries:read'],
      permissions: ['list-entries'],
      call: (api, w) => api.get(w.typed('node', '&per_page=5')),
      ok: 200,
    },
    { name: 'list v2', abilities: ['entries:read'], permissions: ['list-entries'], call: (api, w) => api.get(w.typedV2('node')), ok: 200 },
    { name: 'read', abilities: ['entries:read'], permissions: ['view-entry'], call: (api, w, e) => api.get(w.entry(e.id)), ok: 200 },
    {
      name: 'create',
      abilities: ['entries:write'],
      permissions: ['create-entry'],
      call: (api, w) => api.post(w.typed('node'), { fields: { name: 'new' }, status: 'published' }),
      ok: 201,
    },
    {
      name: 'update',
      abilities: ['entries:write'],
      permissions: ['update-entry'],
      call: (api, w, e) => api.patch(w.entry(e.id), { fields: { name: 'changed' } }),
      ok: 200,
    },
    {
      name: 'delete',
      abilities: ['entries:delete'],
      permissions: ['delete-entry'],
      call: (api, w, e) => api.delete(w.entry(e.id)),
      ok: 204,
    },
  ];

  async function unchanged(w: EntriesWorkspace, e: any) {
    expect(await listedIds(w, 'node')).toEqual([e.id]);
    expect(await readEntry(w, e.id)).toEqual(e);
  }

  it('refuses requests without a key, with a wrong key or a key of another workspace: 403 Forbidden', async () => {
    const w = await setup();
    const other = await setup();
    const e = await createEntry(w, 'node', { fields: { name: 'auth' }, status: 'published' });
    for (const token of [undefined, 'wsk_nope', other.key]) {
      const api = client(s.url, token);
      for (const route of routes) {
        const res = await route.call(api, w, e);
        expect([route.name, res.status, res.body]).toEqual([route.name, 403, { message: 'Forbidden' }]);
      }
    }
    await unchanged(w, e);
  });

  it('needs the ability of each route: 403 with the documented message, nothing changed', async () => {
    const w = await setup();
    const e = await createEntry(w, 'node', { fields: { name: 'auth' }, status: 'published' });
    for (const route of routes) {
      for (const ability of route.abilities) {
        const api = await keyFor(
          s,
          w.ws,
          ALL_ABILITIES.filter((a) => a !== ability),
          [...ENTRY_PERMISSIONS, ...FILE_PERMISSIONS],
        );
        const res = await route.call(api, w, e);
        expect([route.name, ability, res.status, res.body]).toEqual([route.name, ability, 403, NOT_PERMITTED]);
      }
    }
    // entries:query is not a delivery ability; entries:read does not write; entries:write does not delete.
    const query = await keyFor(s, w.ws, ['entries:query']);
    for (const route of routes.filter((r) => r.abilities.includes('entries:read')))
      expect((await route.call(query, w, e)).status).toBe(403);
    const reader = await keyFor(s, w.ws, ['entries:read']);
    for (const route of routes.filter((r) => !r.abilities.includes('entries:read')))
      expect([route.name, (await route.call(reader, w, e)).status]).toEqual([route.name, 403]);
    const writer = await keyFor(s, w.ws, ['entries:write']);
    expect((await writer.delete(w.entry(e.id))).status).toBe(403);
    await unchanged(w, e);
  });

  it('needs the creator permission of each route: 403 with the documented message, nothing changed', async () => {
    const w = await setup();
    const e = await createEntry(w, 'node', { fields: { name: 'auth' }, status: 'published' });
    for (const route of routes) {
      for (const permission of route.permissions) {
        const api = await keyFor(
          s,
          w.ws,
          ['*'],
          ENTRY_PERMISSIONS.filter((p) => p !== permission),
        );
        const res = await route.call(api, w, e);
        expect([route.name, permission, res.status, res.body]).toEqual([route.name, permission, 403, NOT_PERMITTED]);
      }
    }
    await unchanged(w, e);
  });

  it('applies a permission change on the next request', async () => {
    const w = await setup();
    const e = await createEntry(w, 'node', { fields: { name: 'auth' }, status: 'published' });
    const user = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/users`, {
      email: `perm-${Date.now()}@example.com`,
      permissions: ['view-entry'],
    });
    const key = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/api-keys`, {
      name: 'k',
      user_id: user.id,
      abilities: ['entries:read'],
    });
    const api = client(s.url, key.key);
    expect((await api.get(w.entry(e.id))).status).toBe(200);
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}/users/${user.id}`, { permissions: ['list-entries'] });
    expect(await api.get(w.entry(e.id))).toMatchObject({ status: 403, body: NOT_PERMITTED });
    expect((await api.get(w.typed('node'))).status).toBe(200);
  });

  it('lets a key with exactly the route ability and a creator with exactly its permission through', async () => {
    const w = await setup();
    for (const route of routes) {
      const e = await createEntry(w, 'node', { fields: { name: route.name }, status: 'published' });
      const api = await keyFor(s, w.ws, route.abilities, route.permissions);
      const res = await route.call(api, w, e);
      expect([route.name, res.status]).toEqual([route.name, route.ok]);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('conversion to an object', () => {
  it('answers 200 with the object envelope; the Objects API reads it and the Entries API no longer does', async () => {
    const w = await setup();
    const generalId = (await adminOk(s, 'get', `/admin/v1/workspaces/${w.ws}/buckets`)).data.find((b: any) => b.name === 'general').id;
    const otherId = (await adminOk(s, 'get', `/admin/v1/workspaces/${w.ws}/buckets`)).data.find((b: any) => b.name === 'other').id;
    const mentor = await createEntry(w, 'author', { fields: { name: 'Mentor' }, status: 'published' });
    const e = await createEntry(w, 'author', {
      fields: { name: 'Ada', email: 'ada@example.com', mentor: mentor.id },
      locales: ['de-DE'],
      status: 'published',
    });
    await updateEntry(w, e.id, { fields: { name: 'Ada DE' } }, '?locale=de-DE');
    const res = await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${e.id}/convert`);
    expect(res.status).toBe(200);
    // The answer may carry the other locales as `translations` (the route says "the full envelope").
    const { translations, ...o } = res.body;
    if (translations !== undefined) expect(translations).toEqual({ 'de-DE': expect.objectContaining({ name: 'Ada DE' }) });
    expect(o).toEqual({
      id: expect.any(Number),
      entry_id: e.id,
      bucket_id: generalId,
      bucket: 'general',
      ref: expect.any(String),
      kind: 'entry',
      contract: null,
      data: { name: 'Ada', email: 'ada@example.com', mentor: mentor.id },
      locale: 'en-US',
      locales: expect.arrayContaining(['en-US', 'de-DE']),
      status: 'published',
      lock_version: expect.any(Number),
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
      validation: expect.any(Object),
    });
    expect(o.locales).toHaveLength(2);
    // The Objects API reads it.
    const read = await w.api.get(w.at(o.id));
    expect(read.status).toBe(200);
    expect(read.body).toEqual(o);
    const all = await w.api.get(`${w.at(o.id)}?locale=*`);
    expect(all.body).toEqual({ ...o, translations: { 'de-DE': expect.objectContaining({ name: 'Ada DE' }) } });
    if (translations !== undefined) expect(all.body.translations).toEqual(translations);
    // The Entries API does not.
    expect(await w.api.get(w.entry(e.id))).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await w.api.patch(w.entry(e.id), { fields: { name: 'x' } })).status).toBe(404);
    expect((await w.api.delete(w.entry(e.id))).status).toBe(404);
    expect(await listedIds(w, 'author')).toEqual([mentor.id]);
    // Converting again: 422 on entry_id.
    const again = await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${e.id}/convert`);
    expect422(again, ['entry_id']);
    // It cannot move to another bucket.
    const moved = await w.api.patch(w.at(o.id), { lock_version: o.lock_version, ref: o.ref, data: { name: 'moved' }, bucket_id: otherId });
    expect422(moved, ['bucket_id']);
    expect((await w.api.get(w.at(o.id))).body).toEqual(o);
    // An ordinary update works.
    const updated = await w.api.patch(w.at(o.id), { lock_version: o.lock_version, ref: o.ref, data: { name: 'Ada 2' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: o.id,
      entry_id: e.id,
      bucket_id: generalId,
      data: { name: 'Ada 2' },
      lock_version: o.lock_version + 1,
    });
    // A relation field no longer accepts it.
    const ref = await w.api.patch(w.entry(mentor.id), { fields: { mentor: e.id } });
    expect422(ref, ['fields.mentor']);
    // The mentor is still a typed entry.
    expect(await readEntry(w, mentor.id)).toEqual(mentor);
  });

  it('copies every field value as stored: relations as ULIDs, attachments as file IDs, dates as strings, never expanded', async () => {
    const w = await setup();
    const a = await createEntry(w, 'author', { fields: { name: 'A' }, status: 'published' });
    const f = await uploadFile(w.api, w.ws, 'c.txt', 'c');
    const g = await uploadFile(w.api, w.ws, 'g.txt', 'g');
    const fields = {
      title: 'Conv',
      count: 4.5,
      flag: true,
      day: '2024-02-29',
      clock: '09:30',
      at: '2024-03-01 10:20:30+02:00',
      meta: { a: [1, { b: null }] },
      author: a.id,
      authors: [a.id],
      cover: f.id,
      gallery: [g.id, f.id],
      code: 'C-1',
      labels: ['x'],
    };
    const k = await createEntry(w, 'kitchen', { fields, status: 'published' });
    const o = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/entries/${k.id}/convert`);
    expect(o.data).toEqual({ ...fields, at: '2024-03-01T08:20:30Z' });
    expect((await w.api.get(w.at(o.id))).body.data).toEqual(o.data);
  });

  it('converts a draft, and answers 404 for unknown ids, objects and entries of another workspace', async () => {
    const w = await setup();
    const other = await setup();
    const d = await createEntry(w, 'node', { fields: { name: 'draft' } });
    const res = await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${d.id}/convert`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ entry_id: d.id, status: 'draft', data: { name: 'draft' } });
    const obj = await createObject(w, { ref: 'plain', data: {} });
    const theirs = await createEntry(other, 'node', { fields: { name: 'theirs' }, status: 'published' });
    for (const id of [UNKNOWN_ULID, 'nope', obj.entry_id, theirs.id]) {
      const r = await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${id}/convert`);
      expect([id, r.status, r.body]).toEqual([id, 404, NOT_FOUND]);
    }
    expect(await readEntry(other, theirs.id)).toEqual(theirs);
  });
});

// ---------------------------------------------------------------------------------------------

describe('events', () => {
  it('dispatches entry.created, entry.updated and entry.deleted after commit; skipWebhooks and refused writes dispatch nothing', async () => {
    const w = await setup();
    const r = await startReceiver();
    receivers.push(r);
    const hook = await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/webhooks`, {
      url: r.url,
      events: ['*'],
      secret: 'a-long-enough-secret',
    });
    // Suppressed: create, update, delete and a list with skipWebhooks.
    const quiet = await createEntry(w, 'node', { fields: { name: 'quiet' }, status: 'published', skipWebhooks: true });
    await updateEntry(w, quiet.id, { fields: { name: 'quiet 2' }, skipWebhooks: true });
    expect((await w.api.get(w.typed('node', '&skipWebhooks=true'))).status).toBe(200);
    expect((await w.api.delete(w.entry(`${quiet.id}?skipWebhooks=true`))).status).toBe(204);
    // Refused writes.
    expect((await w.api.post(w.typed('node'), { fields: { nope: 1 } })).status).toBe(422);
    const loud = await createEntry(w, 'node', { fields: { name: 'loud' }, status: 'published' });
    expect((await w.api.patch(w.entry(loud.id), { fields: { name: 'x' }, expected_version: 9 })).status).toBe(422);
    await updateEntry(w, loud.id, { fields: { name: 'loud 2' } });
    await updateEntry(w, loud.id, { fields: { name: 'loud 3' }, skipWebhooks: false });
    expect((await w.api.delete(w.entry(`${loud.id}?skipWebhooks=false`))).status).toBe(204);
    const got = await r.waitFor(4);
    await new Promise((res) => setTimeout(res, 500));
    // Due deliveries are sent concurrently, so they may arrive in any order: order them by event time.
    const byTime = [...r.requests].sort((a, b) =>
      a.body.created_at < b.body.created_at ? -1 : a.body.created_at > b.body.created_at ? 1 : 0,
    );
    expect(byTime.map((x) => x.body.event)).toEqual(['entry.created', 'entry.updated', 'entry.updated', 'entry.deleted']);
    for (const x of r.requests) {
      expect(x.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        event: x.body.event,
        workspace: w.ws,
        created_at: expect.stringMatching(TIMESTAMP),
        data: expect.any(Object),
      });
      expect(x.headers['x-webhook-event']).toBe(x.body.event);
      expect(JSON.stringify(x.body.data)).toContain(loud.id);
      expect(JSON.stringify(x.body.data)).not.toContain(quiet.id);
    }
    expect(new Set(got.map((x) => x.body.id)).size).toBe(4);
    const deliveries = await adminOk(s, 'get', `/admin/v1/workspaces/${w.ws}/webhooks/${hook.id}/deliveries`);
    expect(deliveries.data).toHaveLength(4);
  });

  it('dispatches entry.deleted for the entries a cascade deletes', async () => {
    const w = await setup();
    const r = await startReceiver();
    receivers.push(r);
    const part = await createEntry(w, 'node', { fields: { name: 'part' }, status: 'published', skipWebhooks: true });
    const o = await createEntry(w, 'owner', { fields: { name: 'o', part: part.id }, status: 'published', skipWebhooks: true });
    await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/webhooks`, {
      url: r.url,
      events: ['entry.deleted'],
      secret: 'a-long-enough-secret',
    });
    expect((await w.api.delete(w.entry(o.id))).status).toBe(204);
    await r.waitFor(2);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.requests.map((x) => x.body.event)).toEqual(['entry.deleted', 'entry.deleted']);
    const texts = r.requests.map((x) => JSON.stringify(x.body.data));
    expect(texts.some((t) => t.includes(o.id))).toBe(true);
    expect(texts.some((t) => t.includes(part.id))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the plain v1 list bound', () => {
  it('holds at most 1000 entries, oldest first; pages reach the rest', async () => {
    const w = await setup();
    const ids: string[] = [];
    const batch = 20;
    for (let i = 0; i < 1001; i += batch) {
      const made = await Promise.all(
        Array.from({ length: Math.min(batch, 1001 - i) }, (_x, j) =>
          createEntry(w, 'untitled', { fields: { n: i + j }, status: 'published' }),
        ),
      );
      ids.push(...made.map((e) => e.id));
    }
    const plain = await w.api.get(w.typed('untitled'));
    expect(plain.status).toBe(200);
    expect(plain.body).toHaveLength(1000);
    const paged: string[] = [];
    let url: string | null = w.typedV2('untitled', '&per_page=100');
    while (url) {
      const res: TestResponse = await w.api.get(url);
      paged.push(...res.body.data.map((e: any) => e.id));
      url = res.body.next_page_url ? relative(s, res.body.next_page_url) : null;
    }
    expect(sorted(paged)).toEqual(sorted(ids));
    expect(plain.body.map((e: any) => e.id)).toEqual(paged.slice(0, 1000));
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------

describe('suspended workspaces', () => {
  it('refuses every entry route with 403 Workspace suspended, writing nothing, and resumes', async () => {
    const w = await setup();
    const e = await createEntry(w, 'node', { fields: { name: 's' }, status: 'published' });
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}`, { suspended: true });
    for (const res of [
      await w.api.get(w.typed('node')),
      await w.api.get(w.typedV2('node')),
      await w.api.get(w.entry(e.id)),
      await w.api.post(w.typed('node'), { fields: { name: 'new' }, status: 'published' }),
      await w.api.patch(w.entry(e.id), { fields: { name: 'changed' } }),
      await w.api.delete(w.entry(e.id)),
    ]) {
      expect([res.status, res.body]).toEqual([403, { message: 'Workspace suspended' }]);
    }
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}`, { suspended: false });
    expect(await listedIds(w, 'node')).toEqual([e.id]);
    expect(await readEntry(w, e.id)).toEqual(e);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the entries quota', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_ENTRIES_PER_MINUTE: '5' });
  });
  afterAll(() => limited.close());

  it('counts every entry operation per API key and answers 429 with Retry-After beyond it, changing nothing', async () => {
    const ws = (await adminOk(limited, 'post', '/admin/v1/workspaces', { name: `quota-${Date.now().toString(36)}`, locales: [] })).name;
    await createContentType(limited, ws, 'general', { name: 'node', fields: [{ name: 'name', type: 'text' }] });
    const user = await adminOk(limited, 'post', `/admin/v1/workspaces/${ws}/users`, {
      email: `q-${Date.now()}@example.com`,
      permissions: ENTRY_PERMISSIONS,
    });
    const keyOf = async () =>
      client(
        limited.url,
        (await adminOk(limited, 'post', `/admin/v1/workspaces/${ws}/api-keys`, { name: 'q', user_id: user.id, abilities: ['*'] })).key,
      );
    const api = await keyOf();
    const list = `/api/v1/${ws}/entries?contentBucket=general&contentType=node`;
    const created = await api.post(list, { fields: { name: 'q' }, status: 'published' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await api.get(`/api/v1/${ws}/entries/${id}`)).status).toBe(200);
    expect((await api.get(list)).status).toBe(200);
    expect((await api.get(`/api/v2/${ws}/entries?contentBucket=general&contentType=node`)).status).toBe(200);
    expect((await api.patch(`/api/v1/${ws}/entries/${id}`, { fields: { name: 'q2' } })).status).toBe(200);
    for (const res of [
      await api.delete(`/api/v1/${ws}/entries/${id}`),
      await api.post(list, { fields: { name: 'extra' }, status: 'published' }),
      await api.patch(`/api/v1/${ws}/entries/${id}`, { fields: { name: 'q3' } }),
      await api.get(list),
    ]) {
      expect(res.status).toBe(429);
      expect(typeof res.body.message).toBe('string');
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    // Another key has its own quota, and sees that nothing changed.
    const other = await keyOf();
    const after = await other.get(list);
    expect(after.status).toBe(200);
    expect(after.body.map((e: any) => [e.id, e.fields.name, e.lock_version])).toEqual([[id, 'q2', 1]]);
  });
});

// After every create, update, conversion, Trash and recovery above.
it("keeps each document's copies of its entry's visibility columns equal to the entry", async () => {
  expect(await visibilityDrift(s)).toBe(0);
});
