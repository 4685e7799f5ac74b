// Typed storage (prisma/migrations/20261127100000_typed_storage): a content type gets a table of
// typed columns when it is created, and every write of its entries (creates, updates, locales,
// batches, deletes, conversion to a JSON entry, SQL run by hand) keeps the table in step with the
// documents, in the same transaction. Checked on the table itself and with the suites' helper.
import { startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, updateEntry, uploadFile, type EntriesWorkspace } from './support/entries';
import { batchOk, postBatch, queryOk } from './support/entries-query';
import { rawJson } from './support/objects';
import { typedStorageDifferences } from './support/typed-storage';

let s: TestServer;
let w: EntriesWorkspace;
let typeId: number;
let fieldIds: Record<string, number>;
beforeAll(async () => {
  s = await startTestServer();
  w = await entriesWorkspace(s);
  await createContentType(s, w.ws, 'general', { name: 'author', fields: [{ name: 'name', type: 'text' }] });
  const type = await createContentType(s, w.ws, 'general', {
    name: 'article',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'amount', type: 'number' },
      { name: 'flag', type: 'boolean' },
      { name: 'day', type: 'date' },
      { name: 'at', type: 'date', format: 'datetime' },
      { name: 'time', type: 'date', format: 'time' },
      { name: 'meta', type: 'json' },
      { name: 'tags', type: 'text', multiple: true },
      { name: 'author', type: 'relation', targets: ['author'] },
      { name: 'authors', type: 'relation', targets: ['author'], multiple: true },
      { name: 'cover', type: 'attachment' },
    ],
  });
  typeId = type.id;
  const rows = await s.server.app.db.query<{ id: number; name: string }>(
    `SELECT id, name FROM field_definitions WHERE content_type_id = $1`,
    [typeId],
  );
  fieldIds = Object.fromEntries(rows.rows.map((r) => [r.name, r.id]));
});
// Closing checks typed storage against the documents (support/server.ts).
afterAll(async () => {
  await s?.close();
});

const col = (name: string) => `f${fieldIds[name]}`;
/** The typed row of an entry in a locale, each field as text (undefined: no row). */
async function typedRow(entryId: string, locale = 'en-US'): Promise<Record<string, unknown> | undefined> {
  const names = Object.keys(fieldIds);
  const { rows } = await s.server.app.db.query(
    `SELECT live, ${names.map((n) => `${col(n)}::text AS "${n}"`).join(', ')} FROM typed_${typeId} t WHERE t.entry_id = $1 AND t.locale = $2`,
    [entryId, locale],
  );
  return rows[0];
}

it('creates a table with a typed column per field when the content type is created', async () => {
  const { rows } = await s.server.app.db.query<{ column_name: string; data_type: string; udt_name: string; collation_name: string | null }>(
    `SELECT column_name, data_type, udt_name, collation_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
    [`typed_${typeId}`],
  );
  const byName = Object.fromEntries(rows.map((r) => [r.column_name, `${r.udt_name}${r.collation_name ? ` ${r.collation_name}` : ''}`]));
  expect(byName).toEqual({
    entry_pk: 'int4',
    locale: 'text',
    live: 'bool',
    entry_id: 'text C',
    [col('title')]: 'text C',
    [col('amount')]: 'numeric',
    [col('flag')]: 'bool',
    [col('day')]: 'date',
    [col('at')]: 'timestamptz',
    [col('time')]: 'time',
    [col('meta')]: 'jsonb',
    [col('tags')]: '_text C',
    [col('author')]: 'text C',
    [col('authors')]: '_text C',
    [col('cover')]: 'int4',
  });
  const indexes = (
    await s.server.app.db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = $1 ORDER BY indexname`, [
      `typed_${typeId}`,
    ])
  ).rows.map((r) => r.indexname);
  // Number, date and datetime fields (and times) are indexed for sorts in both directions.
  for (const name of ['amount', 'day', 'at', 'time'])
    expect(indexes).toEqual(expect.arrayContaining([`typed_${typeId}_${col(name)}_asc`, `typed_${typeId}_${col(name)}_desc`]));
  expect(indexes).toHaveLength(9);
});

it('holds every value of a create and an update exactly, and follows locales and deletes', async () => {
  const grace = await createEntry(w, 'author', { fields: { name: 'Grace' }, status: 'published' });
  const ada = await createEntry(w, 'author', { fields: { name: 'Ada' }, status: 'published' });
  const file = await uploadFile(w.api, w.ws);
  // A number no double holds, sent as written (the API keeps numbers exact).
  const fields = {
    title: 'Hello',
    amount: '__AMOUNT__',
    flag: true,
    day: '2024-02-29',
    at: '2024-01-01T10:00:00+02:00',
    time: '23:59',
    meta: { a: [1, { b: null }] },
    tags: ['x', 'y'],
    author: grace.id,
    authors: [grace.id, ada.id],
    cover: file.id,
  };
  const raw = JSON.stringify({ fields }).replace('"__AMOUNT__"', '123456789012345678901234567890.123456789');
  const res = await w.api.post(w.typed('article'), undefined, { raw, headers: { 'Content-Type': 'application/json' } });
  expect(res.status).toBe(201);
  const created = res.body;
  expect(await typedRow(created.id)).toEqual({
    live: true,
    title: 'Hello',
    amount: '123456789012345678901234567890.123456789',
    flag: 'true',
    day: '2024-02-29',
    at: '2024-01-01 08:00:00+00',
    time: '23:59:00',
    meta: '{"a": [1, {"b": null}]}',
    tags: '{x,y}',
    author: grace.id,
    authors: `{${grace.id},${ada.id}}`,
    cover: String(file.id),
  });
  await updateEntry(w, created.id, { fields: { title: 'Hallo', amount: 1.5, tags: [], author: null } }, '?locale=de-DE');
  const de = await typedRow(created.id, 'de-DE');
  expect(de).toMatchObject({ title: 'Hallo', amount: '1.5', tags: '{}', author: null, flag: null });
  expect((await typedRow(created.id))!.title).toBe('Hello');
  expect(await typedStorageDifferences(s)).toEqual([]);
  expect((await w.api.delete(w.entry(created.id))).status).toBe(204);
  expect(await typedRow(created.id)).toBeUndefined();
  expect(await typedRow(created.id, 'de-DE')).toBeUndefined();
});

it('follows a batch of creates and updates in the statements the batch runs anyway', async () => {
  const results = await batchOk(w.api, w.ws, {
    operations: [
      { action: 'create', type: 'author', ref: 'a', fields: { name: 'Linus' } },
      { action: 'create', type: 'article', fields: { title: 'One', amount: 1, author: { $ref: 'a' } } },
      { action: 'create', type: 'article', fields: { title: 'Two', amount: 2 } },
    ],
  });
  const [author, one, two] = results.map((r: { id: string }) => r.id);
  expect(await typedRow(one)).toMatchObject({ title: 'One', amount: '1', author });
  await batchOk(w.api, w.ws, {
    operations: [
      { action: 'update', id: two, fields: { amount: 2.25 } },
      { action: 'delete', id: one },
    ],
  });
  expect(await typedRow(two)).toMatchObject({ title: 'Two', amount: '2.25' });
  expect(await typedRow(one)).toBeUndefined();
});

it('drops the rows of an entry converted to a JSON entry, and follows documents written by hand', async () => {
  const entry = await createEntry(w, 'article', { fields: { title: 'Convert me', amount: 3 } });
  const converted = await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${entry.id}/convert`);
  expect(converted.status).toBe(200);
  expect(await typedRow(entry.id)).toBeUndefined();
  const other = await createEntry(w, 'article', { fields: { title: 'By hand', amount: 4 } });
  await s.server.app.db.query(`UPDATE entry_contents SET data = data || '{"amount": 5, "day": "2023-02-30"}'::jsonb WHERE entry_id = $1`, [
    other.id,
  ]);
  // A value the API would never store (no 30 February) reads as none instead of failing the write.
  expect(await typedRow(other.id)).toMatchObject({ title: 'By hand', amount: '5', day: null });
  // The suite's check reads that document the same way: it is in step.
  expect(await typedStorageDifferences(s)).toEqual([]);
});

it('reports a typed row that differs from its document (the suites rely on it)', async () => {
  const entry = await createEntry(w, 'article', { fields: { title: 'Watched', amount: 7 } });
  await s.server.app.db.query(`UPDATE typed_${typeId} SET ${col('amount')} = 8 WHERE entry_id = $1`, [entry.id]);
  expect(await typedStorageDifferences(s)).toEqual([
    expect.stringMatching(new RegExp(`^typed_${typeId} entry \\d+ en-US: field amount: "#8" <> "#7"$`)),
  ]);
  await s.server.app.db.query(`DELETE FROM typed_${typeId} WHERE entry_id = $1`, [entry.id]);
  expect(await typedStorageDifferences(s)).toEqual([expect.stringMatching(/: no typed row$/)]);
  // Any write of the document puts it right.
  await updateEntry(w, entry.id, { fields: { amount: 9 } });
  expect(await typedStorageDifferences(s)).toEqual([]);
});

it('answers structured queries from the typed columns: filters, sorts, groups and sums read them', async () => {
  const a = await createEntry(w, 'article', { fields: { title: 'q-a', amount: 10, at: '2024-01-15T00:00:00Z' } });
  const b = await createEntry(w, 'article', { fields: { title: 'q-b', amount: 20, at: '2024-02-15T00:00:00Z' } });
  const query = (body: Record<string, unknown>) => w.api.post(`/api/v1/${w.ws}/general/entries/query`, { type: 'article', ...body });
  const mine = { title: { startsWith: 'q-' } };
  // The typed row of `a` says something else than its document: the answers follow the row.
  await s.server.app.db.query(
    `UPDATE typed_${typeId} SET ${col('amount')} = 30, ${col('at')} = '2024-03-15T00:00:00Z' WHERE entry_id = $1`,
    [a.id],
  );
  const filtered = await query({ fields: ['@id'], filter: { ...mine, amount: { gt: 25 } } });
  expect(filtered.body.data).toEqual([{ '@id': a.id }]);
  const sorted = await query({ fields: ['@id'], filter: mine, sort: [{ field: 'amount', direction: 'desc' }] });
  expect(sorted.body.data).toEqual([{ '@id': a.id }, { '@id': b.id }]);
  const grouped = await query({ filter: mine, aggregate: { count: true, sum: ['amount'] }, groupBy: [{ field: 'at', interval: 'month' }] });
  expect(grouped.body.data).toEqual([
    { group: { at: '2024-02-01' }, count: 1, sum: { amount: '20' } },
    { group: { at: '2024-03-01' }, count: 1, sum: { amount: '30' } },
  ]);
  // Rewriting the document puts the row back in step (the suite's check then passes).
  await updateEntry(w, a.id, { fields: { amount: 10 } });
  expect((await query({ fields: ['@id'], filter: { ...mine, amount: { gt: 25 } } })).body.data).toEqual([]);
});

it("checks a batch operation's condition on the typed columns, its own earlier writes included", async () => {
  const entry = await createEntry(w, 'article', { fields: { title: 'check-me', amount: 5 } });
  const check = (amount: number, exists: boolean) => ({ filter: { title: { eq: 'check-me' }, amount: { eq: amount } }, exists });
  // The typed row says 7 where the document says 5: the condition reads the row.
  await s.server.app.db.query(`UPDATE typed_${typeId} SET ${col('amount')} = 7 WHERE entry_id = $1`, [entry.id]);
  const refused = await postBatch(w.api, w.ws, {
    operations: [{ action: 'update', id: entry.id, fields: { amount: 6 }, check: check(5, true) }],
  });
  expect([refused.status, refused.body.code]).toEqual([409, 'condition_failed']);
  // An update earlier in the batch writes the row the next condition reads.
  const [, created] = await batchOk(w.api, w.ws, {
    operations: [
      { action: 'update', id: entry.id, fields: { amount: 8 }, check: check(7, true) },
      { action: 'create', type: 'article', fields: { title: 'checked' }, check: check(8, true) },
    ],
  });
  expect(await typedRow(entry.id)).toMatchObject({ amount: '8' });
  expect(await typedRow(created.id)).toMatchObject({ title: 'checked' });
});

it('follows relations through the typed columns: filters, some, sorts and sums read the rows of both ends', async () => {
  const authorType = (
    await s.server.app.db.query<{ id: number }>(
      `SELECT id FROM content_types WHERE name = 'author' AND bucket_id = (SELECT bucket_id FROM content_types WHERE id = $1)`,
      [typeId],
    )
  ).rows[0].id;
  const nameColumn = `f${(await s.server.app.db.query<{ id: number }>(`SELECT id FROM field_definitions WHERE content_type_id = $1 AND name = 'name'`, [authorType])).rows[0].id}`;
  const [ann, bob] = [
    await createEntry(w, 'author', { fields: { name: 'rel-ann' } }),
    await createEntry(w, 'author', { fields: { name: 'rel-bob' } }),
  ];
  const one = await createEntry(w, 'article', { fields: { title: 'rel-1', amount: 1, author: ann.id, authors: [ann.id] } });
  const two = await createEntry(w, 'article', { fields: { title: 'rel-2', amount: 2, author: bob.id, authors: [bob.id] } });
  let limit = 20; // a new body each time: no answer kept by the response cache
  const ids = async (body: Record<string, unknown>) =>
    (
      await w.api.post(`/api/v1/${w.ws}/general/entries/query`, { type: 'article', fields: ['@id'], limit: limit--, ...body })
    ).body.data.map((r: { '@id': string }) => r['@id']);
  const mine = { title: { startsWith: 'rel-' } };
  // The related entry's typed row (ann's name) and the root's (one's references) say something
  // else than their documents: the answers follow the rows.
  await s.server.app.db.query(`UPDATE typed_${authorType} SET ${nameColumn} = 'rel-zed' WHERE entry_id = $1`, [ann.id]);
  expect(await ids({ filter: { ...mine, 'author.name': { eq: 'rel-zed' } } })).toEqual([one.id]);
  expect(await ids({ filter: { ...mine, authors: { some: { name: { eq: 'rel-zed' } } } } })).toEqual([one.id]);
  expect(await ids({ filter: mine, sort: [{ field: 'author.name', direction: 'desc' }] })).toEqual([one.id, two.id]);
  await s.server.app.db.query(`UPDATE typed_${typeId} SET ${col('author')} = $2, ${col('authors')} = ARRAY[$2] WHERE entry_id = $1`, [
    two.id,
    ann.id,
  ]);
  expect(await ids({ filter: { ...mine, 'author.name': { eq: 'rel-zed' } } })).toEqual([one.id, two.id].sort());
  expect(await ids({ filter: { ...mine, authors: { some: { name: { eq: 'rel-zed' } } } } })).toEqual([one.id, two.id].sort());
  // Groups through a relation read the related entries' rows.
  const grouped = await w.api.post(`/api/v1/${w.ws}/general/entries/query`, {
    type: 'article',
    filter: mine,
    aggregate: { count: true, sum: ['amount'] },
    groupBy: ['author.name'],
  });
  expect(grouped.body.data).toEqual([{ group: { 'author.name': 'rel-zed' }, count: 2, sum: { amount: '3' } }]);
  // Writing the documents puts the rows back in step.
  await updateEntry(w, ann.id, { fields: { name: 'rel-ann' } });
  await updateEntry(w, two.id, { fields: { author: bob.id, authors: [bob.id] } });
  expect(await ids({ filter: { ...mine, 'author.name': { eq: 'rel-zed' } } })).toEqual([]);
  expect(await ids({ filter: { ...mine, 'authors.name': { eq: 'rel-bob' } } })).toEqual([two.id]);
});

it('keeps a base locale row for an entry without a document there, so base locale queries read the table alone', async () => {
  const entry = await createEntry(w, 'article', { fields: { title: 'nur deutsch', amount: 11 } }, '&locale=de-DE');
  expect(await typedRow(entry.id, 'de-DE')).toMatchObject({ title: 'nur deutsch', amount: '11' });
  expect(await typedRow(entry.id)).toEqual(Object.fromEntries([['live', true], ...Object.keys(fieldIds).map((n) => [n, null])]));
  // Its en-US values are all missing: an empty filter finds it, a condition on a value does not.
  const query = (filter: Record<string, unknown>) =>
    w.api.post(`/api/v1/${w.ws}/general/entries/query`, { type: 'article', fields: ['@id'], filter, limit: 100 });
  expect((await query({ '@id': { eq: entry.id } })).body.data).toEqual([{ '@id': entry.id }]);
  expect((await query({ '@id': { eq: entry.id }, amount: { eq: null } })).body.data).toEqual([{ '@id': entry.id }]);
  expect((await query({ '@id': { eq: entry.id }, amount: { eq: 11 } })).body.data).toEqual([]);
  const counted = await w.api.post(`/api/v1/${w.ws}/general/entries/query`, {
    type: 'article',
    aggregate: { count: true },
    filter: { '@id': { eq: entry.id } },
  });
  expect(counted.body.data).toEqual([{ count: 1 }]);
  // An en-US document fills the row; removing the entry removes both.
  await updateEntry(w, entry.id, { fields: { title: 'auch englisch' } });
  expect(await typedRow(entry.id)).toMatchObject({ title: 'auch englisch', amount: null });
  expect((await w.api.delete(w.entry(entry.id))).status).toBe(204);
  expect(await typedRow(entry.id)).toBeUndefined();
  expect(await typedRow(entry.id, 'de-DE')).toBeUndefined();
});

describe('typed rows never outlive their entry or locale', () => {
  // An entry written in one locale only has a base locale (en-US) row without a document there;
  // deleting the entry must take that row too, whichever way it is deleted.
  it('deletes every row of entries written in each locale, deleted alone, in a batch (with its locale) and by cascade', async () => {
    await createContentType(s, w.ws, 'general', {
      name: 'note',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'amount', type: 'number' },
        { name: 'part', type: 'relation', targets: ['note'], cascade_on_delete: true },
      ],
    });
    const query = (body: Record<string, unknown>, locale = 'en-US') => queryOk(w.api, w.ws, { type: 'note', locale, ...body });
    const made: Record<string, string> = {};
    for (const locale of ['en-US', 'de-DE', 'fr-FR']) {
      for (const way of ['alone', 'batch', 'cascade', 'kept']) {
        const entry = await createEntry(
          w,
          'note',
          { fields: { title: `${way} ${locale}`, amount: 1 }, status: 'published' },
          `&locale=${locale}`,
        );
        made[`${way} ${locale}`] = entry.id;
      }
    }
    // One written in two locales, the base one second.
    const both = await createEntry(w, 'note', { fields: { title: 'both', amount: 2 }, status: 'published' }, '&locale=de-DE');
    await updateEntry(w, both.id, { fields: { title: 'both en' } });
    // Cascade: a root (en-US) whose part is the entry.
    for (const locale of ['en-US', 'de-DE', 'fr-FR']) {
      const root = await createEntry(w, 'note', {
        fields: { title: `root ${locale}`, part: made[`cascade ${locale}`] },
        status: 'published',
      });
      made[`root ${locale}`] = root.id;
    }
    expect((await query({ aggregate: { count: true } })).data).toEqual([{ count: 16 }]);
    for (const locale of ['en-US', 'de-DE', 'fr-FR']) {
      expect((await w.api.delete(w.entry(made[`alone ${locale}`]))).status).toBe(204);
      await batchOk(w.api, w.ws, { locale, operations: [{ action: 'delete', id: made[`batch ${locale}`] }] });
      expect((await w.api.delete(w.entry(made[`root ${locale}`]))).status).toBe(204);
    }
    expect((await w.api.delete(w.entry(both.id))).status).toBe(204);
    // A locale removed from an entry takes its row; the base locale's stays, empty.
    const dropped = await createEntry(w, 'note', { fields: { title: 'dropped de' }, status: 'published' }, '&locale=de-DE');
    await updateEntry(w, dropped.id, { locales: ['en-US'] });
    expect(await typedStorageDifferences(s)).toEqual([]);
    expect((await w.api.delete(w.entry(dropped.id))).status).toBe(204);
    expect(await typedStorageDifferences(s)).toEqual([]);
    const left = Object.entries(made)
      .filter(([k]) => k.startsWith('kept'))
      .map(([, id]) => id)
      .sort();
    const remaining = await s.server.app.db.query<{ entry_id: string; n: number }>(
      `SELECT t.entry_id, count(*)::int AS n FROM typed_${(await s.server.app.db.query<{ id: number }>(`SELECT id FROM content_types WHERE name = 'note'`)).rows[0].id} t GROUP BY 1 ORDER BY 1`,
    );
    // The kept ones: en-US alone has one row, the others their locale's and the base one.
    expect(remaining.rows.map((r) => r.entry_id)).toEqual(left);
    expect(remaining.rows.map((r) => r.n).sort()).toEqual([1, 2, 2]);
    // Counts, groups and pages see only the entries that are left, in every locale.
    for (const locale of ['en-US', 'de-DE', 'fr-FR']) {
      expect((await query({ aggregate: { count: true } }, locale)).data).toEqual([{ count: 3 }]);
      expect((await query({ aggregate: { count: true }, groupBy: ['@status'] }, locale)).data).toEqual([
        { group: { '@status': 'published' }, count: 3 },
      ]);
      const page = await query({ fields: ['@id'], sort: [{ field: '@id', direction: 'asc' }], limit: 3 }, locale);
      expect(page.data.map((r: { '@id': string }) => r['@id'])).toEqual(left);
      expect(page.pagination.hasMore).toBe(false);
    }
  });
});

describe("a field definition's indexed", () => {
  const contentTypes = `/admin/v1/workspaces/${'{ws}'}/buckets/general/content-types`;
  const create = (body: Record<string, unknown>) => s.admin.post(contentTypes.replace('{ws}', w.ws), body);
  const indexesOf = async (id: number) =>
    (
      await s.server.app.db.query<{ indexname: string }>(
        `SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexname <> $2 ORDER BY indexname`,
        [`typed_${id}`, `typed_${id}_pkey`],
      )
    ).rows.map((r) => r.indexname);

  it('adds sort indexes to a text field, removes the defaults of number and date fields, and is echoed only when given', async () => {
    const res = await create({
      name: 'indexed',
      fields: [
        { name: 'slug', type: 'text', indexed: true },
        { name: 'note', type: 'text' },
        { name: 'rank', type: 'number', indexed: false },
        { name: 'score', type: 'number' },
        { name: 'day', type: 'date', indexed: true },
        { name: 'flag', type: 'boolean', indexed: false },
      ],
    });
    expect(res.status).toBe(201);
    const field = (name: string) => res.body.fields.find((f: { name: string }) => f.name === name);
    expect(field('slug')).toMatchObject({ indexed: true });
    expect(field('rank')).toMatchObject({ indexed: false });
    expect(field('flag')).toMatchObject({ indexed: false });
    for (const name of ['note', 'score']) expect(field(name)).not.toHaveProperty('indexed');
    const ids = Object.fromEntries(
      (
        await s.server.app.db.query<{ id: number; name: string }>(`SELECT id, name FROM field_definitions WHERE content_type_id = $1`, [
          res.body.id,
        ])
      ).rows.map((r) => [r.name, r.id]),
    );
    const both = (name: string) => [`typed_${res.body.id}_f${ids[name]}_asc`, `typed_${res.body.id}_f${ids[name]}_desc`];
    expect(await indexesOf(res.body.id)).toEqual([...both('slug'), ...both('score'), ...both('day')].sort());
    expect((await s.admin.get(`${contentTypes.replace('{ws}', w.ws)}/indexed`)).body.fields).toEqual(res.body.fields);

    // Sorts read the same either way.
    const slugs = ['b', 'a', 'c'];
    for (const [i, slug] of slugs.entries()) await createEntry(w, 'indexed', { fields: { slug, note: slug, rank: i, score: i } });
    const sorted = async (field: string) =>
      (
        await w.api.post(`/api/v1/${w.ws}/general/entries/query`, {
          type: 'indexed',
          fields: ['slug'],
          sort: [{ field, direction: 'asc' }],
        })
      ).body.data.map((r: { slug: string }) => r.slug);
    expect(await sorted('slug')).toEqual(['a', 'b', 'c']);
    expect(await sorted('note')).toEqual(['a', 'b', 'c']);
    expect(await sorted('rank')).toEqual(['b', 'a', 'c']);
  });

  it.each([
    [{ name: 'j', type: 'json', indexed: true }],
    [{ name: 'b', type: 'boolean', indexed: true }],
    [{ name: 'r', type: 'relation', targets: ['author'], indexed: true }],
    [{ name: 'm', type: 'text', multiple: true, indexed: true }],
  ])('refuses indexed true on %j with 422 and creates nothing', async (field) => {
    const res = await create({ name: `refused-${field.name}`, fields: [field] });
    expect(res.status).toBe(422);
    const message = 'The indexed field is only allowed on single-value text, number and date fields.';
    expect(res.body).toEqual({ message, errors: { 'fields.0.indexed': [message] } });
    expect((await s.admin.get(`${contentTypes.replace('{ws}', w.ws)}/refused-${field.name}`)).status).toBe(404);
  });

  // Aggregates check the DECIMAL(38,12) contract from the sums first, and each value only where
  // that cannot clear them: both passes answer as the precise one, indexed or not.
  it.each([true, false])('refuses contract-breaking sums and accepts trailing zeros (number field indexed: %s)', async (indexed) => {
    const name = `sums-${indexed}`;
    expect(
      (
        await create({
          name,
          fields: [
            { name: 'g', type: 'text' },
            { name: 'v', type: 'number', indexed },
          ],
        })
      ).status,
    ).toBe(201);
    for (const [g, v] of [
      ['ok', '1.5000000000000000'],
      ['ok', '2'],
      ['big', '1e26'],
      ['neg', '-1e26'],
      ['frac', '0.0000000000001'],
    ]) {
      const res = await rawJson(w.api, 'POST', w.typed(name), `{"fields":{"g":"${g}","v":${v}},"status":"published"}`);
      if (res.status !== 201) throw new Error(`${g}: ${res.status} ${res.text}`);
    }
    const sum = (g: string) =>
      w.api.post(`/api/v1/${w.ws}/general/entries/query`, {
        type: name,
        filter: { g: { eq: g } },
        aggregate: { sum: ['v'] },
        groupBy: ['g'],
      });
    expect((await sum('ok')).body).toEqual({
      data: [{ group: { g: 'ok' }, sum: { v: '3.5' } }],
      pagination: { offset: 0, limit: 20, hasMore: false },
    });
    for (const g of ['big', 'neg', 'frac']) {
      const res = await sum(g);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({
        'aggregate.sum.0': ['The aggregate.sum.0 field has contributing values that are not decimals within DECIMAL(38,12).'],
      });
    }
  });
});

describe('the backfill of entries stored before typed storage (entries:typed-storage)', () => {
  it('answers from the documents until the table is complete, fills it in resumable batches beside writes, then reads it', async () => {
    const created = await createContentType(s, w.ws, 'general', {
      name: 'legacy',
      fields: [
        { name: 'n', type: 'number' },
        { name: 'label', type: 'text' },
      ],
    });
    const entries = [];
    for (let i = 1; i <= 7; i++) entries.push(await createEntry(w, 'legacy', { fields: { n: i, label: `l${i}` }, status: 'published' }));
    const german = await createEntry(w, 'legacy', { fields: { n: 100, label: 'nur deutsch' } }, '&locale=de-DE');
    // A deleted entry leaves nothing to fill.
    expect((await w.api.delete(w.entry(entries[6].id))).status).toBe(204);
    // (`limit` varies where an answer kept by the response cache would hide a change made by hand.)
    const query = async (limit = 20) =>
      (
        await w.api.post(`/api/v1/${w.ws}/general/entries/query`, {
          type: 'legacy',
          fields: ['@id', 'n'],
          filter: { n: { gte: 2 } },
          sort: [{ field: 'n', direction: 'desc' }],
          limit,
        })
      ).body;
    const sums = async () =>
      (await w.api.post(`/api/v1/${w.ws}/general/entries/query`, { type: 'legacy', aggregate: { count: true, sum: ['n'] } })).body;
    const answers = { page: await query(), sums: await sums() };
    expect(answers.page.data.map((r: { n: number }) => r.n)).toEqual([6, 5, 4, 3, 2]);
    expect(answers.sums.data).toEqual([{ count: 7, sum: { n: '21' } }]);

    // The scheduler's own minutely run (a job it queues) would race the batches run by hand below.
    await s.server.app.scheduler.stop();
    await s.server.app.jobs.stop();
    // As the migration leaves a type that has entries: an empty table, to be filled from 0.
    const table = `typed_${created.id}`;
    const backfillAfter = async () =>
      (
        await s.server.app.db.query<{ b: number | null }>(`SELECT backfill_after AS b FROM typed_tables WHERE content_type_id = $1`, [
          created.id,
        ])
      ).rows[0].b;
    await s.server.app.db.query(`DELETE FROM ${table}`);
    await s.server.app.db.query(`UPDATE typed_tables SET backfill_after = 0 WHERE content_type_id = $1`, [created.id]);
    // The change notifies the processes' content type caches; by hand, nothing waits for them to hear it.
    await s.server.app.lookups.keys.confirmDropped();
    expect(await query(19)).toEqual({ ...answers.page, pagination: { ...answers.page.pagination, limit: 19 } });
    expect(await sums()).toEqual(answers.sums);

    // A first batch of 3 entries, then a write (through the triggers) and a stop.
    const [{ filled }] = (await s.server.app.db.query<{ filled: number }>(`SELECT typed_storage_fill($1, 3) AS filled`, [created.id])).rows;
    expect(filled).toBe(3);
    const pks = (
      await s.server.app.db.query<{ id: number }>(`SELECT id FROM entries WHERE content_type_id = $1 ORDER BY id`, [created.id])
    ).rows.map((r) => r.id);
    expect(await backfillAfter()).toBe(pks[2]);
    await updateEntry(w, entries[4].id, { fields: { n: 50 } });
    expect((await query()).data.map((r: { n: number }) => r.n)).toEqual([50, 6, 4, 3, 2]);

    // The task resumes after the first batch and completes the table; queries read it from then on.
    const run = await s.admin.post('/admin/v1/tasks/entries:typed-storage');
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ task: 'entries:typed-storage', processed: pks.length - 3 });
    expect(await backfillAfter()).toBeNull();
    expect(await typedStorageDifferences(s)).toEqual([]);
    const rowsOf = (
      await s.server.app.db.query<{ entry_id: string; locale: string; live: boolean }>(
        `SELECT entry_id, locale, live FROM ${table} ORDER BY entry_pk, locale`,
      )
    ).rows;
    expect(rowsOf).toEqual([
      ...entries.slice(0, 6).map((e) => ({ entry_id: e.id, locale: 'en-US', live: true })),
      { entry_id: german.id, locale: 'de-DE', live: true },
      { entry_id: german.id, locale: 'en-US', live: true },
    ]);
    // The rows are read now: one changed by hand shows in the answers (the filter reads it; the
    // values shown are the document's).
    await s.server.app.db.query(
      `UPDATE ${table} SET f${(await s.server.app.db.query<{ id: number }>(`SELECT id FROM field_definitions WHERE content_type_id = $1 AND name = 'n'`, [created.id])).rows[0].id} = 1 WHERE entry_id = $1`,
      [entries[4].id],
    );
    expect((await query(18)).data.map((r: { n: number }) => r.n)).toEqual([6, 4, 3, 2]);
    await updateEntry(w, entries[4].id, { fields: { n: 5 } });
    expect(await query()).toEqual(answers.page);
    expect((await s.admin.post('/admin/v1/tasks/entries:typed-storage')).body).toEqual({ task: 'entries:typed-storage', processed: 0 });
  });
});
