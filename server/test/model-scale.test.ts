// The largest content model the spec allows, through every delivery and query route: a type of
// 200 fields of every kind, a relation field with 50 targets, projections of as many fields as a
// query may name, every locale; and a workspace at its most content types (MAX_CONTENT_TYPES),
// refused past it. Every answer is checked, none may be a 5xx.
import { startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, uploadFile, type EntriesWorkspace } from './support/entries';
import { batchOk, inParallel, queryBatchPath, queryOk, queryPath } from './support/entries-query';
import { MAX_CONTENT_TYPES } from '../src/core/content/content-types';

let s: TestServer;
let w: EntriesWorkspace;

/** 49 small types (with the wide type itself, the 50 targets of its relations). */
const SMALL = Array.from({ length: 49 }, (_, i) => `t${i}`);
/** The wide type's 200 fields: every kind, single and multiple, in turn. */
const KINDS: { type: string; format?: string; multiple?: boolean; targets?: string[] }[] = [
  { type: 'text' },
  { type: 'number' },
  { type: 'boolean' },
  { type: 'date' },
  { type: 'date', format: 'datetime' },
  { type: 'date', format: 'time' },
  { type: 'json' },
  { type: 'text', multiple: true },
  { type: 'number', multiple: true },
  { type: 'relation', targets: [...SMALL, 'wide'] },
  { type: 'relation', targets: [...SMALL, 'wide'], multiple: true },
  { type: 'attachment' },
  { type: 'attachment', multiple: true },
];
const FIELDS = Array.from({ length: 200 }, (_, i) => ({ name: `f${String(i).padStart(3, '0')}`, ...KINDS[i % KINDS.length] }));

const byKind = (pick: (f: (typeof FIELDS)[number]) => boolean) => FIELDS.filter(pick).map((f) => f.name);

/** A value of each field, `n` varying them; relations and attachments to `refs`. */
function values(n: number, refs: { small: string[]; wide?: string; file: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  FIELDS.forEach((f, i) => {
    const k = KINDS[i % KINDS.length];
    const many = k.multiple === true;
    switch (k.type) {
      case 'text':
        out[f.name] = many ? [`a${n}`, `b${i}`] : `text ${n} ${i}`;
        break;
      case 'number':
        out[f.name] = many ? [n, i] : n * 1000 + i;
        break;
      case 'boolean':
        out[f.name] = (n + i) % 2 === 0;
        break;
      case 'date':
        out[f.name] =
          k.format === 'datetime'
            ? `2024-0${1 + (n % 9)}-1${i % 10}T10:00:00Z`
            : k.format === 'time'
              ? `1${i % 10}:30`
              : `2024-0${1 + (n % 9)}-1${i % 10}`;
        break;
      case 'json':
        out[f.name] = { n, i, nested: { list: [1, 2, 3] } };
        break;
      case 'relation': {
        const targets = refs.wide ? [...refs.small, refs.wide] : refs.small;
        out[f.name] = many ? targets.slice(0, 3) : targets[i % targets.length];
        break;
      }
      case 'attachment':
        out[f.name] = many ? [refs.file] : refs.file;
        break;
    }
  });
  return out;
}

let small: string[];
let file: number;
let wide: { id: string }[];
beforeAll(async () => {
  s = await startTestServer();
  w = await entriesWorkspace(s);
  await inParallel(SMALL, 8, (name) =>
    createContentType(s, w.ws, 'general', {
      name,
      fields: [
        { name: 'title', type: 'text' },
        { name: 'back', type: 'relation', targets: [name] },
      ],
    }),
  );
  const created = await createContentType(s, w.ws, 'general', { name: 'wide', fields: FIELDS });
  expect(created.fields).toHaveLength(200);
  small = (
    await inParallel(SMALL.slice(0, 5), 5, (name) => createEntry(w, name, { fields: { title: `${name} entry` }, status: 'published' }))
  ).map((e) => e.id);
  file = (await uploadFile(w.api, w.ws)).id;
  const first = await createEntry(w, 'wide', { fields: values(1, { small, file }), status: 'published' });
  wide = [first];
  for (let n = 2; n <= 4; n++)
    wide.push(await createEntry(w, 'wide', { fields: values(n, { small, wide: first.id, file }), status: 'published' }));
  // Every locale has its values.
  for (const locale of ['de-DE', 'fr-FR']) {
    const res = await w.api.patch(w.entry(first.id, `?locale=${locale}`), { fields: values(9, { small, wide: wide[1].id, file }) });
    expect(res.status).toBe(200);
  }
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('a type of 200 fields of every kind, relations with 50 targets', () => {
  it('reads an entry in full in each locale and in every locale at once', async () => {
    for (const locale of ['en-US', 'de-DE', 'fr-FR']) {
      const res = await w.api.get(w.entry(wide[0].id, `?locale=${locale}`));
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.fields)).toEqual(FIELDS.map((f) => f.name));
      // A relation to an entry of another type is expanded (in the locale: the small entries
      // have en-US values only); an attachment is a file object.
      const en = locale === 'en-US';
      const targets = en ? small : [...small, wide[1].id];
      expect(res.body.fields.f009).toMatchObject({
        id: targets[9 % targets.length],
        fields: { title: en ? `t${9 % targets.length} entry` : null },
      });
      expect(res.body.fields.f011).toMatchObject({ id: file });
    }
    const all = await w.api.get(w.entry(wide[0].id, '?locale=*'));
    expect(all.status).toBe(200);
    expect(Object.keys(all.body.fields)).toEqual(['en-US', 'de-DE', 'fr-FR']);
    expect(Object.keys(all.body.fields['de-DE'])).toHaveLength(200);
    // An entry whose relations name another wide entry renders it below, in full.
    const second = await w.api.get(w.entry(wide[1].id));
    expect(second.status).toBe(200);
    expect(second.body.fields.f010.map((e: { id: string }) => e.id)).toEqual(small.slice(0, 3));
  });

  it('lists the type in every form: v1 plain and paged, v2 summaries and full, each locale', async () => {
    const plain = await w.api.get(w.typed('wide'));
    expect(plain.status).toBe(200);
    expect(plain.body.map((e: { id: string }) => e.id)).toEqual(wide.map((e) => e.id));
    expect(Object.keys(plain.body[0].fields)).toHaveLength(200);
    for (const extra of ['&per_page=2', '&per_page=2&locale=de-DE', '&locale=*']) {
      const res = await w.api.get(w.typed('wide', extra));
      expect(res.status).toBe(200);
    }
    const summaries = await w.api.get(w.typedV2('wide'));
    expect(summaries.status).toBe(200);
    expect(summaries.body.data).toHaveLength(4);
    const full = await w.api.get(w.typedV2('wide', '&view=full&per_page=3'));
    expect(full.status).toBe(200);
    expect(full.body.data).toHaveLength(3);
  });

  it('answers a query naming 100 fields, through relations too, with filters, sorts and groups on every kind', async () => {
    const own = FIELDS.filter((f) => f.name !== 'f009' && f.name !== 'f010')
      .slice(0, 97)
      .map((f) => f.name);
    const res = await queryOk(w.api, w.ws, {
      type: 'wide',
      fields: ['@id', ...own, 'f009.@id', 'f010.@id'],
      filter: { f001: { gte: 1000 }, f000: { ne: 'x' }, f002: { in: [true, false] } },
      sort: [{ field: 'f001', direction: 'desc' }],
      limit: 10,
    });
    expect(res.data.map((r: { '@id': string }) => r['@id'])).toEqual([...wide].reverse().map((e) => e.id));
    expect(Object.keys(res.data[0])).toHaveLength(100);
    const json = await queryOk(w.api, w.ws, {
      type: 'wide',
      fields: ['@id', ...byKind((f) => f.type === 'json').map((n) => `${n}.n`)],
      limit: 1,
    });
    expect(json.data).toHaveLength(1);
    const numbers = byKind((f) => f.type === 'number' && !f.multiple).slice(0, 10);
    const grouped = await queryOk(w.api, w.ws, {
      type: 'wide',
      aggregate: { count: true, sum: numbers, avg: numbers.slice(0, 3), min: numbers.slice(0, 2), max: numbers.slice(0, 2) },
      groupBy: ['f002', { field: 'f004', interval: 'month' }, 'f000'],
      limit: 100,
    });
    expect(grouped.data.reduce((n: number, g: { count: number }) => n + g.count, 0)).toBe(4);
    for (const locale of ['de-DE', 'fr-FR']) {
      const de = await queryOk(w.api, w.ws, { type: 'wide', locale, fields: own.slice(0, 60), filter: { f000: { eq: 'text 9 0' } } });
      expect(de.data).toHaveLength(1);
    }
  });

  it('answers a batch of queries and an atomic batch of writes on the type', async () => {
    const batch = await w.api.post(queryBatchPath(w.ws), {
      queries: Object.fromEntries(
        ['a', 'b', 'c'].map((k, i) => [k, { type: 'wide', fields: FIELDS.slice(i * 60, i * 60 + 60).map((f) => f.name), limit: 4 }]),
      ),
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results.c.data).toHaveLength(4);
    const results = await batchOk(w.api, w.ws, {
      operations: [
        { action: 'create', type: 'wide', ref: 'x', fields: values(7, { small, wide: wide[0].id, file }), status: 'published' },
        { action: 'update', id: wide[3].id, fields: { f000: 'changed' } },
      ],
    });
    expect(results).toHaveLength(2);
    const read = await w.api.get(w.entry(results[0].id));
    expect(read.status).toBe(200);
    expect(Object.keys(read.body.fields)).toHaveLength(200);
    expect((await w.api.delete(w.entry(results[0].id))).status).toBe(204);
  });

  it('reads any other entry of the workspace beside the wide type', async () => {
    const res = await w.api.get(w.entry(small[0]));
    expect(res.status).toBe(200);
    expect(res.body.fields.title).toBe('t0 entry');
    expect((await w.api.get(w.typed('t0'))).status).toBe(200);
    expect((await w.api.post(queryPath(w.ws), { type: 't0', fields: ['title', 'back.title'] })).status).toBe(200);
  });
});

describe('the most content types a workspace holds', () => {
  it(`holds ${MAX_CONTENT_TYPES}, refuses one more with a 422 and creates nothing, and reads as fast as its request needs`, async () => {
    const full = await entriesWorkspace(s);
    const names = Array.from({ length: MAX_CONTENT_TYPES }, (_, i) => `k${i}`);
    // Each type relates to itself and the first. The first and the last through the API; the
    // 498 between written as the API writes them, in SQL (the API's 498 creations
    // would take a minute of the suite: each builds its table under the workspace's lock).
    const make = (name: string) =>
      createContentType(s, full.ws, 'general', {
        name,
        fields: [
          { name: 'title', type: 'text' },
          { name: 'n', type: 'number' },
          { name: 'next', type: 'relation', targets: [...new Set([name, 'k0'])] },
        ],
      });
    const first = await make('k0');
    // In steps of 50, each followed by a turn of the event loop: the embedded database runs on
    // this thread, and one statement of all 498 blocked it for about 5 s, past the server's
    // keep-alive timeout, so that the server closed the client's idle connection only as the next
    // request was sent on it (ECONNRESET). Between steps the client's own timer closes it first.
    for (let from = 1; from < MAX_CONTENT_TYPES - 1; from += 50) {
      await s.server.app.db.query(
        `WITH t AS (INSERT INTO content_types (bucket_id, name, name_field, created_at, updated_at)
                    SELECT b.id, 'k' || g, 'title', now(), now() FROM buckets b, generate_series($2::int, $3::int) g WHERE b.id = (SELECT bucket_id FROM content_types WHERE id = $1) RETURNING id, name)
         INSERT INTO field_definitions (content_type_id, position, name, type, format, multiple, required, "unique", targets, cascade_on_delete)
         SELECT t.id, f.position, f.name, f.type, f.format, false, false, false, CASE f.name WHEN 'next' THEN ARRAY[t.name, 'k0'] ELSE '{}' END, false
           FROM t CROSS JOIN (VALUES (0, 'title', 'text', NULL), (1, 'n', 'number', NULL), (2, 'next', 'relation', NULL)) f(position, name, type, format)`,
        [first.id, from, Math.min(from + 49, MAX_CONTENT_TYPES - 2)],
      );
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect((await make(names[MAX_CONTENT_TYPES - 1])).fields).toHaveLength(3);
    // Written around the API, the same definitions as the API's (the first's fields).
    const middle = await s.admin.get(`/admin/v1/workspaces/${full.ws}/buckets/general/content-types/k1`);
    expect(middle.body.fields.map((f: Record<string, unknown>) => ({ ...f }))).toEqual(
      first.fields.map((f: Record<string, unknown>) => (f.name === 'next' ? { ...f, targets: ['k1', 'k0'] } : f)),
    );
    const over = await s.admin.post(`/admin/v1/workspaces/${full.ws}/buckets/general/content-types`, {
      name: 'one_more',
      fields: [{ name: 'title', type: 'text' }],
    });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({
      message: expect.any(String),
      errors: { name: [`The workspace holds ${MAX_CONTENT_TYPES} content types, the most it may.`] },
    });
    expect((await s.admin.get(`/admin/v1/workspaces/${full.ws}/buckets/general/content-types/one_more`)).status).toBe(404);
    // Another bucket of the same workspace counts too.
    expect((await s.admin.post(`/admin/v1/workspaces/${full.ws}/buckets`, { name: 'other' })).status).toBe(201);
    expect(
      (
        await s.admin.post(`/admin/v1/workspaces/${full.ws}/buckets/other/content-types`, {
          name: 'x',
          fields: [{ name: 'title', type: 'text' }],
        })
      ).status,
    ).toBe(422);
    const a = await createEntry(full, 'k0', { fields: { title: 'first', n: 1 }, status: 'published' });
    const b = await createEntry(full, `k${MAX_CONTENT_TYPES - 1}`, { fields: { title: 'last', n: 2 }, status: 'published' });
    const c = await createEntry(full, 'k1', { fields: { title: 'middle', n: 3, next: a.id }, status: 'published' });
    expect((await full.api.get(full.entry(a.id))).body.fields).toEqual({ title: 'first', n: 1, next: null });
    expect((await full.api.get(full.entry(b.id))).body.fields.title).toBe('last');
    expect((await full.api.get(full.entry(c.id))).body.fields.next).toMatchObject({ id: a.id, fields: { title: 'first' } });
    expect((await full.api.get(full.typed('k1'))).body.map((e: { id: string }) => e.id)).toEqual([c.id]);
    expect((await queryOk(full.api, full.ws, { type: 'k1', fields: ['title', 'next.title'] })).data).toEqual([
      { title: 'middle', next: { title: 'first' } },
    ]);
    // A read of a model this large finds its entry's type first, kept per process (lookups.entryTypes):
    // the kept answer is the uncached one, and an entry gone or unpublished since reads as 404.
    const types = s.server.app.lookups.entryTypes;
    const cachedRead = await full.api.get(full.entry(c.id));
    expect(types.kept().some((k) => k.key.endsWith(`:${c.id}`))).toBe(true);
    types.drop();
    expect((await full.api.get(full.entry(c.id))).body).toEqual(cachedRead.body);
    expect((await full.api.get(full.entry(b.id))).status).toBe(200);
    expect((await full.api.patch(full.entry(b.id), { status: 'draft' })).status).toBe(200);
    expect((await full.api.get(full.entry(b.id))).status).toBe(404);
    expect((await full.api.delete(full.entry(c.id))).status).toBe(204);
    expect((await full.api.get(full.entry(c.id))).status).toBe(404);
  }, 300_000);
});
