// Entries batch writes (002, "Batch writes", "Errors", "Limits"), black-box: ordered creates,
// updates and deletes in one transaction, all or nothing (every refusal is checked to change
// nothing), versions, reviews, per-action authorization, cascades, conditional operations,
// symbolic references, idempotency, Server-Timing and webhooks after commit.
import pg from 'pg';
import { startTestServer, type TestServer } from './support/server';
import { describeWithPostgres } from './support/env';
import { client, type TestResponse } from './support/http';
import { createKey, createUser } from './support/fixtures';
import { startReceiver, type Receiver } from './support/receiver';
import {
  ENTRY_PERMISSIONS,
  NOT_PERMITTED,
  ULID,
  adminOk,
  createBucket,
  keyFor,
  openReview,
  resolveReview,
  type Api,
} from './support/objects';
import {
  FILE_PERMISSIONS,
  createContentType,
  createEntry,
  entriesWorkspace,
  readEntry,
  updateEntry,
  uploadFile,
  type EntriesWorkspace,
  type FieldDef,
} from './support/entries';
import { INVALID_LOCALE, NOT_FOUND, batchOk, batchPath, expectErrors, idemKey, postBatch, serverTiming } from './support/entries-query';

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

/** A well-formed ULID that names no entry. */
const UNKNOWN_ULID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const TYPES: Record<string, FieldDef[]> = {
  author: [
    { name: 'name', type: 'text', required: true },
    { name: 'email', type: 'text', unique: true },
    { name: 'score', type: 'number' },
    { name: 'born', type: 'date' },
    { name: 'mentor', type: 'relation', targets: ['author'] },
  ],
  book: [
    { name: 'title', type: 'text', required: true },
    { name: 'code', type: 'text', unique: true },
    { name: 'price', type: 'number' },
    { name: 'at', type: 'date', format: 'datetime' },
    { name: 'meta', type: 'json' },
    { name: 'labels', type: 'text', multiple: true },
    { name: 'author', type: 'relation', targets: ['author'] },
    { name: 'authors', type: 'relation', targets: ['author'], multiple: true },
    { name: 'cover', type: 'attachment' },
    { name: 'gallery', type: 'attachment', multiple: true },
  ],
  part: [{ name: 'name', type: 'text' }],
  owner: [
    { name: 'name', type: 'text' },
    { name: 'part', type: 'relation', targets: ['part'], cascade_on_delete: true },
    { name: 'parts', type: 'relation', targets: ['part'], multiple: true, cascade_on_delete: true },
    { name: 'keep', type: 'relation', targets: ['part'] },
    { name: 'doc', type: 'attachment', cascade_on_delete: true },
    { name: 'spare', type: 'attachment' },
  ],
  lonely: [{ name: 'name', type: 'text' }],
};
const GENERAL_TYPES = Object.keys(TYPES);

/** A workspace (en-US, de-DE, fr-FR) with the types above in General, and `other` with an author type. */
async function setup(): Promise<EntriesWorkspace> {
  const w = await entriesWorkspace(s);
  for (const [name, fields] of Object.entries(TYPES)) await createContentType(s, w.ws, 'general', { name, fields });
  await createBucket(s, w.ws, 'other');
  await createContentType(s, w.ws, 'other', { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] });
  await createContentType(s, w.ws, 'other', { name: 'elsewhere', fields: [{ name: 'name', type: 'text' }] });
  return w;
}

/** A rendered value without the temporary URLs that every read issues afresh. */
function stable(value: any): any {
  if (Array.isArray(value)) return value.map(stable);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.startsWith('temporary_'))
      .map(([k, v]) => [k, stable(v)]),
  );
}

/** Every published entry of every type (rendered), in both buckets. */
async function snapshot(w: EntriesWorkspace): Promise<Record<string, any[]>> {
  const out: Record<string, any[]> = {};
  for (const type of GENERAL_TYPES) out[type] = stable((await w.api.get(w.typed(type))).body);
  out['other/author'] = stable((await w.api.get(w.typed('author', '', 'other'))).body);
  return out;
}
const unchanged = async (w: EntriesWorkspace, before: Record<string, any[]>) => expect(await snapshot(w)).toEqual(before);

const batch = (w: EntriesWorkspace, body: unknown, opts: { key?: string | null; bucket?: string; api?: Api } = {}) =>
  postBatch(opts.api ?? w.api, w.ws, body, opts);
const ops = (...operations: unknown[]) => ({ operations });
const create = (type: string, fields: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  action: 'create',
  type,
  fields,
  status: 'published',
  ...extra,
});
const names = async (w: EntriesWorkspace, type: string) =>
  ((await w.api.get(w.typed(type))).body as any[]).map((e) => e.fields.name ?? e.fields.title);
/** The rendered entry, drafts included: an empty PATCH (which counts as a write). */
const peek = (w: EntriesWorkspace, id: string, extra = '') => updateEntry(w, id, {}, extra);

/** `leaf` inside `depth` nested `$and` groups. */
function nest(depth: number, leaf: unknown): unknown {
  let f = leaf;
  for (let i = 0; i < depth; i++) f = { $and: [f] };
  return f;
}

function expectConditionFailed(res: TestResponse, index: number) {
  expect([res.status, res.body]).toEqual([409, { message: expect.any(String), code: 'condition_failed', index, committed: false }]);
}

// ---------------------------------------------------------------------------------------------

describe('batch writes', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });

  it('applies creates, updates and deletes in order and answers each result in operation order', async () => {
    const old = await createEntry(w, 'author', { fields: { name: 'Old', email: 'old@example.com' }, status: 'published' });
    const book0 = await createEntry(w, 'book', { fields: { title: 'Old book', price: 1, labels: ['k'] }, status: 'published' });
    const gone = await createEntry(w, 'part', { fields: { name: 'gone' }, status: 'published' });
    const res = await batch(
      w,
      ops(
        {
          action: 'create',
          type: 'author',
          ref: 'ann',
          fields: { name: 'Ann', email: 'ann@example.com' },
          status: 'published',
          tags: ['t1', 't2'],
        },
        {
          action: 'create',
          type: 'book',
          fields: { title: 'New', price: 2.5, at: '2024-03-01 10:20:30', author: { $ref: 'ann' }, authors: [{ $ref: 'ann' }, old.id] },
          status: 'published',
        },
        { action: 'update', id: book0.id, fields: { price: 3 } },
        { action: 'create', type: 'author', fields: { name: 'Drafty' } },
        { action: 'delete', id: gone.id },
      ),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      data: [
        { index: 0, action: 'create', id: expect.stringMatching(ULID), lock_version: 0, ref: 'ann' },
        { index: 1, action: 'create', id: expect.stringMatching(ULID), lock_version: 0 },
        { index: 2, action: 'update', id: book0.id, lock_version: 1 },
        { index: 3, action: 'create', id: expect.stringMatching(ULID), lock_version: 0 },
        { index: 4, action: 'delete', id: gone.id },
      ],
    });
    // New entries get ascending IDs in operation order (after the entries created before).
    const inOrder = [old.id, res.body.data[0].id, res.body.data[1].id, res.body.data[3].id];
    expect([...inOrder].sort()).toEqual(inOrder);
    const [annId, newId, , draftId] = res.body.data.map((r: any) => r.id);
    const ann = await readEntry(w, annId);
    expect(ann).toMatchObject({
      id: annId,
      name: 'Ann',
      status: 'published',
      tags: ['t1', 't2'],
      locales: ['en-US'],
      lock_version: 0,
      publish_at: null,
    });
    expect(ann.fields).toEqual({ name: 'Ann', email: 'ann@example.com', score: null, born: null, mentor: null });
    const created = await readEntry(w, newId);
    expect(created.fields).toMatchObject({ title: 'New', price: 2.5, at: '2024-03-01T10:20:30Z', code: null, meta: null });
    expect(created.fields.author.id).toBe(annId);
    expect(created.fields.authors.map((a: any) => a.id)).toEqual([annId, old.id]);
    const updated = await readEntry(w, book0.id);
    expect(updated).toEqual({ ...book0, fields: { ...book0.fields, price: 3 }, lock_version: 1, updated_at: expect.any(String) });
    // Creates default to draft: not delivered, but there.
    expect((await w.api.get(w.entry(draftId))).status).toBe(404);
    expect(await peek(w, draftId)).toMatchObject({ id: draftId, status: 'draft', name: 'Drafty', lock_version: 1 });
    expect((await w.api.get(w.entry(gone.id))).status).toBe(404);
  });

  it('replaces only supplied properties on update, in the batch locale; locales, tags, publish_at as documented', async () => {
    const e = await createEntry(w, 'author', { fields: { name: 'E', score: 1 }, status: 'published', locales: ['de-DE'], tags: ['a'] });
    await updateEntry(w, e.id, { fields: { name: 'E-de', score: 2 } }, '?locale=de-DE');
    expect(await batchOk(w.api, w.ws, { locale: 'de-DE', operations: [{ action: 'update', id: e.id, fields: { score: 7 } }] })).toEqual([
      { index: 0, action: 'update', id: e.id, lock_version: 2 },
    ]);
    expect((await readEntry(w, e.id)).fields).toMatchObject({ name: 'E', score: 1 });
    expect((await readEntry(w, e.id, '?locale=de-DE')).fields).toMatchObject({ name: 'E-de', score: 7 });
    // locales replace the enabled locales (en-US kept) and remove the values of removed ones; tags replace.
    await batchOk(w.api, w.ws, ops({ action: 'update', id: e.id, locales: ['fr-FR'], tags: ['b', 'c'] }));
    const after = await readEntry(w, e.id, '?locale=*');
    expect([...after.locales].sort()).toEqual(['en-US', 'fr-FR']);
    expect(after.tags).toEqual(['b', 'c']);
    expect(Object.keys(after.fields).sort()).toEqual(['en-US', 'fr-FR']);
    expect(after.fields['en-US']).toMatchObject({ name: 'E', score: 1 });
    expect(after.lock_version).toBe(3);
    // A schedule on a draft is set and replaced; publishing clears it.
    const d = await createEntry(w, 'author', { fields: { name: 'S' }, publish_at: '2031-01-01T00:00:00Z' });
    await batchOk(w.api, w.ws, ops({ action: 'update', id: d.id, publish_at: '2032-02-02T02:02:02Z' }));
    expect(Date.parse((await peek(w, d.id)).publish_at)).toBe(Date.parse('2032-02-02T02:02:02Z'));
    await batchOk(w.api, w.ws, ops({ action: 'update', id: d.id, status: 'published' }));
    expect(await readEntry(w, d.id)).toMatchObject({ status: 'published', publish_at: null });
    // Datetime seconds are preserved by batch updates.
    const b = await createEntry(w, 'book', { fields: { title: 'dt' }, status: 'published' });
    await batchOk(w.api, w.ws, ops({ action: 'update', id: b.id, fields: { at: '2024-06-30T23:59:58+01:00' } }));
    expect((await readEntry(w, b.id)).fields.at).toBe('2024-06-30T22:59:58Z');
  });

  it('targets draft entries by ID', async () => {
    const d = await createEntry(w, 'part', { fields: { name: 'draft part' } });
    expect(await batchOk(w.api, w.ws, ops({ action: 'update', id: d.id, fields: { name: 'now published' }, status: 'published' }))).toEqual(
      [{ index: 0, action: 'update', id: d.id, lock_version: 1 }],
    );
    expect((await readEntry(w, d.id)).fields.name).toBe('now published');
    const d2 = await createEntry(w, 'part', { fields: { name: 'draft to delete' } });
    expect(await batchOk(w.api, w.ws, ops({ action: 'delete', id: d2.id }))).toEqual([{ index: 0, action: 'delete', id: d2.id }]);
    expect((await w.api.patch(w.entry(d2.id), {})).status).toBe(404);
  });

  it('enforces unique fields against other entries and earlier operations of the batch', async () => {
    await createEntry(w, 'book', { fields: { title: 'taken', code: 'TAKEN' } });
    const before = await snapshot(w);
    expectErrors(await batch(w, ops(create('book', { title: 'x', code: 'NEW-1' }), create('book', { title: 'y', code: 'NEW-1' }))), [
      'operations.1.fields.code',
    ]);
    expectErrors(await batch(w, ops(create('book', { title: 'x', code: 'NEW-2' }), create('book', { title: 'y', code: 'TAKEN' }))), [
      'operations.1.fields.code',
    ]);
    // Among several refusals in a run of creates, the first operation's is answered.
    const run = ops(
      create('author', { name: 'A', email: 'same@example.com' }),
      create('book', { title: 'ok', code: 'NEW-3' }),
      create('book', { title: 'bad relation', author: UNKNOWN_ULID }),
      create('author', { name: 'B', email: 'same@example.com' }),
    );
    expectErrors(await batch(w, run), ['operations.2.fields.author']);
    await unchanged(w, before);
    // A value freed earlier in the batch can be taken later in it.
    const owner = await createEntry(w, 'book', { fields: { title: 'holder', code: 'MOVE' }, status: 'published' });
    const res = await batchOk(
      w.api,
      w.ws,
      ops({ action: 'update', id: owner.id, fields: { code: null } }, create('book', { title: 'taker', code: 'MOVE' })),
    );
    expect((await readEntry(w, res[1].id)).fields.code).toBe('MOVE');
  });
});

// ---------------------------------------------------------------------------------------------

describe('all or nothing', () => {
  let w: EntriesWorkspace;
  let fx: Record<string, any>;
  beforeAll(async () => {
    w = await setup();
    fx = {
      author: await createEntry(w, 'author', { fields: { name: 'Fixed', email: 'fixed@example.com' }, status: 'published' }),
      book: await createEntry(w, 'book', { fields: { title: 'Fixed book', price: 1 }, status: 'published' }),
      part: await createEntry(w, 'part', { fields: { name: 'p' }, status: 'published' }),
    };
  });

  const first = () => [create('author', { name: 'Should not exist' }), { action: 'update', id: fx.book.id, fields: { price: 99 } }];
  const cases: [string, () => unknown, (string | RegExp)[]][] = [
    ['a missing required field', () => ops(...first(), create('book', { price: 1 })), ['operations.2.fields.title']],
    ['a wrong value', () => ops(...first(), create('book', { title: 'x', price: 'x' })), ['operations.2.fields.price']],
    ['an unknown field', () => ops(...first(), { action: 'update', id: fx.part.id, fields: { nope: 1 } }), ['operations.2.fields.nope']],
    [
      'a required field emptied by an update',
      () => ops(...first(), { action: 'update', id: fx.author.id, fields: { name: null } }),
      ['operations.2.fields.name'],
    ],
    [
      'a relation to an unknown entry',
      () => ops(...first(), create('book', { title: 'x', author: UNKNOWN_ULID })),
      ['operations.2.fields.author'],
    ],
    [
      'a relation to a type the field does not accept',
      () => ops(...first(), create('book', { title: 'x', author: fx.part.id })),
      ['operations.2.fields.author'],
    ],
    ['an invalid calendar date', () => ops(...first(), create('author', { name: 'x', born: '2023-02-29' })), ['operations.2.fields.born']],
    ['fractional seconds', () => ops(...first(), create('book', { title: 'x', at: '2024-01-01T10:00:00.5Z' })), ['operations.2.fields.at']],
    ['an unconfigured locale', () => ops(...first(), { action: 'update', id: fx.part.id, locales: ['it-IT'] }), ['operations.2.locales.0']],
    ['an invalid status', () => ops(...first(), create('part', { name: 'x' }, { status: 'archived' })), ['operations.2.status']],
    ['an invalid publish_at', () => ops(...first(), { action: 'update', id: fx.part.id, publish_at: 'soon' }), ['operations.2.publish_at']],
    ['the same target twice', () => ops(...first(), { action: 'delete', id: fx.book.id }), ['operations.2.id']],
    ['an unknown action', () => ops(...first(), { action: 'upsert', type: 'part', fields: {} }), ['operations.2.action']],
    ['a create without type', () => ops(...first(), { action: 'create', fields: { name: 'x' } }), ['operations.2.type']],
    ['an update without id', () => ops(...first(), { action: 'update', fields: { name: 'x' } }), ['operations.2.id']],
    ['an id that is not a ULID', () => ops(...first(), { action: 'delete', id: 'abc' }), ['operations.2.id']],
    [
      'a client-assigned id on create',
      () => ops(...first(), { action: 'create', type: 'part', id: UNKNOWN_ULID, fields: { name: 'x' } }),
      ['operations.2.id'],
    ],
    [
      'expected_version on create',
      () => ops(...first(), { action: 'create', type: 'part', fields: { name: 'x' }, expected_version: 0 }),
      ['operations.2.expected_version'],
    ],
    ['ref on update', () => ops(...first(), { action: 'update', id: fx.part.id, ref: 'x', fields: {} }), ['operations.2.ref']],
    ['fields on delete', () => ops(...first(), { action: 'delete', id: fx.part.id, fields: { name: 'x' } }), ['operations.2.fields']],
    [
      'a per-operation locale',
      () => ops(...first(), { action: 'update', id: fx.part.id, locale: 'de-DE', fields: { name: 'x' } }),
      ['operations.2.locale'],
    ],
    ['an unknown operation property', () => ops(...first(), { action: 'update', id: fx.part.id, colour: 'red' }), ['operations.2.colour']],
    ['an operation that is not an object', () => ops(...first(), 'delete'), ['operations.2']],
    ['skipWebhooks', () => ({ ...ops(...first()), skipWebhooks: true }), ['skipWebhooks']],
    ['an unknown root property', () => ({ ...ops(...first()), colour: 'red' }), ['colour']],
    ['no operations', () => ops(), ['operations']],
    ['operations that are not an array', () => ({ operations: first()[0] }), ['operations']],
    ['a missing operations property', () => ({ locale: 'en-US' }), ['operations']],
    ['101 operations', () => ops(...Array.from({ length: 101 }, (_x, i) => create('part', { name: `p${i}` }))), ['operations']],
  ];
  it.each(cases)('refuses %s with 422 and changes nothing', async (_label, body, keys) => {
    const before = await snapshot(w);
    const res = await batch(w, body());
    expectErrors(res, keys);
    expect(res.body.data).toBeUndefined();
    await unchanged(w, before);
  });

  it('refuses a stale expected_version with 422 on operations.<n>.expected_version, and accepts the current one', async () => {
    const e = await createEntry(w, 'part', { fields: { name: 'v0' }, status: 'published' });
    await updateEntry(w, e.id, { fields: { name: 'v1' } });
    const before = await snapshot(w);
    expectErrors(await batch(w, ops(...first(), { action: 'update', id: e.id, fields: { name: 'lost' }, expected_version: 0 })), [
      'operations.2.expected_version',
    ]);
    expectErrors(await batch(w, ops(...first(), { action: 'delete', id: e.id, expected_version: 5 })), ['operations.2.expected_version']);
    expectErrors(await batch(w, ops({ action: 'update', id: e.id, expected_version: -1 })), ['operations.0.expected_version']);
    await unchanged(w, before);
    expect(await batchOk(w.api, w.ws, ops({ action: 'update', id: e.id, fields: { name: 'v2' }, expected_version: 1 }))).toEqual([
      { index: 0, action: 'update', id: e.id, lock_version: 2 },
    ]);
    expect(await batchOk(w.api, w.ws, ops({ action: 'delete', id: e.id, expected_version: 2 }))).toEqual([
      { index: 0, action: 'delete', id: e.id },
    ]);
    expect((await w.api.get(w.entry(e.id))).status).toBe(404);
  });

  it('refuses updates and deletes of an entry with a pending review with 422; allowed once resolved', async () => {
    const e = await createEntry(w, 'part', { fields: { name: 'reviewed' }, status: 'published' });
    const review = await openReview(s, w.ws, e.id);
    const before = await snapshot(w);
    expectErrors(await batch(w, ops(...first(), { action: 'update', id: e.id, fields: { name: 'x' } })), [/^operations\.2(\.\w+)?$/]);
    expectErrors(await batch(w, ops(...first(), { action: 'delete', id: e.id })), [/^operations\.2(\.\w+)?$/]);
    await unchanged(w, before);
    await resolveReview(s, w.ws, review.id);
    expect(await batchOk(w.api, w.ws, ops({ action: 'update', id: e.id, fields: { name: 'x' } }))).toEqual([
      { index: 0, action: 'update', id: e.id, lock_version: 1 },
    ]);
  });

  it('answers 404 for targets outside the bucket or missing, unknown types and buckets, changing nothing', async () => {
    const foreign = await createEntry(w, 'author', { fields: { name: 'other bucket' }, status: 'published' }, '', 'other');
    const before = await snapshot(w);
    const bodies = [
      ops(...first(), { action: 'update', id: UNKNOWN_ULID, fields: { name: 'x' } }),
      ops(...first(), { action: 'update', id: foreign.id, fields: { name: 'x' } }),
      ops(...first(), { action: 'delete', id: foreign.id }),
      ops(...first(), create('nope', { name: 'x' })),
      ops(...first(), create('elsewhere', { name: 'x' })),
    ];
    for (const body of bodies) {
      const res = await batch(w, body);
      expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    }
    const bucket = await batch(w, ops(create('part', { name: 'x' })), { bucket: 'nobucket' });
    expect([bucket.status, bucket.body]).toEqual([404, NOT_FOUND]);
    await unchanged(w, before);
  });

  it('refuses deletes that would cascade into an entry or a file with 422 on operations.<n>.id', async () => {
    const parts = await Promise.all(
      ['c1', 'c2', 'c3', 'k1'].map((name) => createEntry(w, 'part', { fields: { name }, status: 'published' })),
    );
    const file = await uploadFile(w.api, w.ws, 'doc.txt', 'doc');
    const spare = await uploadFile(w.api, w.ws, 'spare.txt', 'spare');
    const o1 = await createEntry(w, 'owner', { fields: { name: 'o1', part: parts[0].id }, status: 'published' });
    const o2 = await createEntry(w, 'owner', { fields: { name: 'o2', parts: [parts[1].id, parts[2].id] }, status: 'published' });
    const o3 = await createEntry(w, 'owner', { fields: { name: 'o3', doc: file.id }, status: 'published' });
    const o4 = await createEntry(w, 'owner', { fields: { name: 'o4', keep: parts[3].id, spare: spare.id }, status: 'published' });
    const before = await snapshot(w);
    expectErrors(await batch(w, ops(...first(), { action: 'delete', id: o1.id })), ['operations.2.id']);
    expectErrors(await batch(w, ops({ action: 'delete', id: o2.id })), ['operations.0.id']);
    expectErrors(await batch(w, ops(create('part', { name: 'x' }), { action: 'delete', id: o3.id })), ['operations.1.id']);
    await unchanged(w, before);
    expect((await w.api.get(`/api/v1/${w.ws}/files/${file.id}`)).status).toBe(200);
    // No cascade_on_delete values: deleted, keeping what it referenced.
    expect(await batchOk(w.api, w.ws, ops({ action: 'delete', id: o4.id }))).toEqual([{ index: 0, action: 'delete', id: o4.id }]);
    expect((await readEntry(w, parts[3].id)).id).toBe(parts[3].id);
    expect((await w.api.get(`/api/v1/${w.ws}/files/${spare.id}`)).status).toBe(200);
    // Once the cascade field is emptied, the delete goes through.
    await updateEntry(w, o1.id, { fields: { part: null } });
    expect(await batchOk(w.api, w.ws, ops({ action: 'delete', id: o1.id }))).toEqual([{ index: 0, action: 'delete', id: o1.id }]);
    expect((await readEntry(w, parts[0].id)).id).toBe(parts[0].id);
  });

  it('answers malformed JSON with 400, a body over 1 MiB with 413, a non-JSON body with 415, an invalid locale with 400; nothing changed', async () => {
    const before = await snapshot(w);
    const headers = { 'Idempotency-Key': idemKey(), 'Content-Type': 'application/json' };
    const bad = await w.api.post(batchPath(w.ws), undefined, { raw: '{"operations": [', headers });
    expect(bad.status).toBe(400);
    const big = await batch(w, ops(create('book', { title: 'big', meta: { blob: 'x'.repeat(1_100_000) } })));
    expect(big.status).toBe(413);
    const text = await w.api.post(batchPath(w.ws), undefined, {
      raw: 'operations=1',
      headers: { 'Idempotency-Key': idemKey(), 'Content-Type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    for (const locale of ['*', 'it-IT', 'xx']) {
      const res = await batch(w, { locale, ...ops(create('part', { name: 'x' })) });
      expect([locale, res.status, res.body]).toEqual([locale, 400, INVALID_LOCALE]);
    }
    await unchanged(w, before);
  });

  it('refuses JSON nested deeper than 32 levels with 422', async () => {
    const before = await snapshot(w);
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    const res = await batch(w, ops(create('book', { title: 'deep', meta: deep })));
    expect(res.status).toBe(422);
    await unchanged(w, before);
    let shallow: unknown = 1;
    for (let i = 0; i < 10; i++) shallow = [shallow];
    const ok = await batchOk(w.api, w.ws, ops(create('book', { title: 'shallow', meta: shallow })));
    expect((await readEntry(w, ok[0].id)).fields.meta).toEqual(shallow);
  });

  it('accepts 100 operations', async () => {
    const res = await batchOk(w.api, w.ws, ops(...Array.from({ length: 100 }, (_x, i) => create('lonely', { name: `l${i}` }))));
    expect(res.map((r) => [r.index, r.action])).toEqual(Array.from({ length: 100 }, (_x, i) => [i, 'create']));
    expect(new Set(res.map((r) => r.id)).size).toBe(100);
    expect((await names(w, 'lonely')).sort()).toEqual(Array.from({ length: 100 }, (_x, i) => `l${i}`).sort());
  });
});

// ---------------------------------------------------------------------------------------------

describe('authorization', () => {
  let w: EntriesWorkspace;
  let target: any;
  let victim: any;
  beforeAll(async () => {
    w = await setup();
    target = await createEntry(w, 'part', { fields: { name: 'target' }, status: 'published' });
    victim = await createEntry(w, 'part', { fields: { name: 'victim' }, status: 'published' });
  });
  const PERMS = [...ENTRY_PERMISSIONS, ...FILE_PERMISSIONS];
  const c = () => create('part', { name: 'created' });
  const u = () => ({ action: 'update', id: target.id, fields: { name: 'updated' } });
  const d = () => ({ action: 'delete', id: victim.id });
  const check = { filter: { name: { eq: 'nothing' } }, exists: false };

  it('refuses the whole request before any change when one operation is not authorized', async () => {
    const cases: [string[], string[], unknown[]][] = [
      [['entries:write'], PERMS, [c(), u(), d()]],
      [['entries:delete'], PERMS, [d(), c()]],
      [['entries:write', 'entries:delete'], PERMS.filter((p) => p !== 'delete-entry'), [c(), d()]],
      [['*'], PERMS.filter((p) => p !== 'update-entry'), [c(), u()]],
      [['*'], PERMS.filter((p) => p !== 'create-entry'), [u(), c()]],
      [['entries:read', 'entries:query'], PERMS, [c()]],
      // A check needs entries:query and list-entries besides the write rights.
      [['entries:write'], PERMS, [{ ...c(), check }]],
      [['entries:write', 'entries:query'], PERMS.filter((p) => p !== 'list-entries'), [{ ...c(), check }]],
    ];
    const before = await snapshot(w);
    for (const [abilities, permissions, operations] of cases) {
      const api = await keyFor(s, w.ws, abilities, permissions);
      const res = await batch(w, { operations }, { api });
      expect([abilities, permissions.length, res.status, res.body]).toEqual([abilities, permissions.length, 403, NOT_PERMITTED]);
    }
    await unchanged(w, before);
  });

  it('refuses no key, a wrong key and a key of another workspace with 403 Forbidden', async () => {
    const other = await setup();
    const before = await snapshot(w);
    for (const token of [undefined, 'wsk_nope', other.key]) {
      const res = await batch(w, ops(c()), { api: client(s.url, token) });
      expect([res.status, res.body]).toEqual([403, { message: 'Forbidden' }]);
    }
    await unchanged(w, before);
  });

  it('lets exactly the documented abilities and permissions through', async () => {
    const createOnly = await keyFor(s, w.ws, ['entries:write'], ['create-entry']);
    expect((await batch(w, ops(c()), { api: createOnly })).status).toBe(200);
    const updateOnly = await keyFor(s, w.ws, ['entries:write'], ['update-entry']);
    expect((await batch(w, ops(u()), { api: updateOnly })).status).toBe(200);
    const checked = await keyFor(s, w.ws, ['entries:write', 'entries:query'], ['create-entry', 'list-entries']);
    expect((await batch(w, ops({ ...c(), check }), { api: checked })).status).toBe(200);
    const deleteOnly = await keyFor(s, w.ws, ['entries:delete'], ['delete-entry']);
    expect(await batchOk(deleteOnly, w.ws, ops(d()))).toEqual([{ index: 0, action: 'delete', id: victim.id }]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('conditional operations', () => {
  let w: EntriesWorkspace;
  beforeAll(async () => {
    w = await setup();
  });

  it('exists: false passes when nothing matches and fails with 409 condition_failed when a draft matches', async () => {
    await createEntry(w, 'author', { fields: { name: 'Blocker', email: 'dup@example.com' } });
    const before = await snapshot(w);
    const res = await batch(
      w,
      ops(
        create('author', { name: 'C1', email: 'c1@example.com' }),
        create('author', { name: 'C2' }, { check: { filter: { email: { eq: 'dup@example.com' } }, exists: false } }),
      ),
    );
    expectConditionFailed(res, 1);
    await unchanged(w, before);
    const passes = await batchOk(
      w.api,
      w.ws,
      ops(create('author', { name: 'C3' }, { check: { filter: { email: { eq: 'free@example.com' } }, exists: false } })),
    );
    expect(passes).toEqual([{ index: 0, action: 'create', id: expect.stringMatching(ULID), lock_version: 0 }]);
    // exists: true needs a match, drafts included.
    expect(
      (await batch(w, ops(create('author', { name: 'C4' }, { check: { filter: { email: { eq: 'dup@example.com' } }, exists: true } }))))
        .status,
    ).toBe(200);
    expectConditionFailed(
      await batch(w, ops(create('author', { name: 'C5' }, { check: { filter: { email: { eq: 'nobody@example.com' } }, exists: true } }))),
      0,
    );
    expect(await names(w, 'author')).not.toContain('C5');
  });

  it('sees earlier writes of the same batch', async () => {
    expect(
      (
        await batch(
          w,
          ops(
            create('author', { name: 'Zed', email: 'zed@example.com' }),
            create('author', { name: 'Zed 2' }, { check: { filter: { email: { eq: 'zed@example.com' } }, exists: true } }),
          ),
        )
      ).status,
    ).toBe(200);
    const before = await snapshot(w);
    expectConditionFailed(
      await batch(
        w,
        ops(
          create('author', { name: 'Yan', email: 'yan@example.com' }),
          create('author', { name: 'Yan 2' }, { check: { filter: { email: { eq: 'yan@example.com' } }, exists: false } }),
        ),
      ),
      1,
    );
    await unchanged(w, before);
    // An earlier update and an earlier delete are seen too.
    const m = await createEntry(w, 'author', { fields: { name: 'Mover', score: 1 }, status: 'published' });
    const x = await createEntry(w, 'author', { fields: { name: 'Doomed', score: 1 }, status: 'published' });
    const res = await batch(
      w,
      ops(
        { action: 'update', id: m.id, fields: { score: 42 } },
        create('author', { name: 'After update' }, { check: { filter: { score: { eq: 42 } }, exists: true } }),
        { action: 'delete', id: x.id },
        create('author', { name: 'After delete' }, { check: { filter: { '@id': { eq: x.id } }, exists: false } }),
      ),
    );
    expect(res.status).toBe(200);
    expect(await names(w, 'author')).toEqual(expect.arrayContaining(['After update', 'After delete']));
  });

  it('excludes the target of an update or delete with @id ne', async () => {
    const a = await createEntry(w, 'author', { fields: { name: 'Self', email: 'self@example.com' }, status: 'published' });
    const check = { filter: { email: { eq: 'self@example.com' }, '@id': { ne: a.id } }, exists: false };
    expect(await batchOk(w.api, w.ws, ops({ action: 'update', id: a.id, fields: { score: 2 }, check }))).toEqual([
      { index: 0, action: 'update', id: a.id, lock_version: 1 },
    ]);
    const before = await snapshot(w);
    expectConditionFailed(
      await batch(
        w,
        ops({ action: 'update', id: a.id, fields: { score: 3 }, check: { filter: { email: { eq: 'self@example.com' } }, exists: false } }),
      ),
      0,
    );
    expectConditionFailed(
      await batch(
        w,
        ops(create('part', { name: 'x' }), {
          action: 'delete',
          id: a.id,
          check: { filter: { email: { eq: 'self@example.com' } }, exists: false },
        }),
      ),
      1,
    );
    await unchanged(w, before);
    expect(await batchOk(w.api, w.ws, ops({ action: 'delete', id: a.id, check }))).toEqual([{ index: 0, action: 'delete', id: a.id }]);
  });

  it("checks the operation's own content type; an empty filter asks whether any entry of it exists", async () => {
    expectConditionFailed(await batch(w, ops(create('lonely', { name: 'first' }, { check: { filter: {}, exists: true } }))), 0);
    expect(await names(w, 'lonely')).toEqual([]);
    expect(
      (
        await batch(
          w,
          ops(create('lonely', { name: 'first' }), create('lonely', { name: 'second' }, { check: { filter: {}, exists: true } })),
        )
      ).status,
    ).toBe(200);
    expectConditionFailed(await batch(w, ops(create('lonely', { name: 'third' }, { check: { filter: {}, exists: false } }))), 0);
    // Authors named first exist nowhere: the check of a lonely create does not look at authors.
    await createEntry(w, 'author', { fields: { name: 'only an author' }, status: 'published' });
    expectConditionFailed(
      await batch(w, ops(create('lonely', { name: 'x' }, { check: { filter: { name: { eq: 'only an author' } }, exists: true } }))),
      0,
    );
    // An update checks the type of its target.
    const b = await createEntry(w, 'book', { fields: { title: 'Checked book', price: 5 }, status: 'published' });
    expect(
      (
        await batch(
          w,
          ops({ action: 'update', id: b.id, fields: { price: 6 }, check: { filter: { title: { eq: 'Checked book' } }, exists: true } }),
        )
      ).status,
    ).toBe(200);
    expectErrors(
      await batch(w, ops({ action: 'update', id: b.id, fields: { price: 7 }, check: { filter: { email: { eq: 'x' } }, exists: true } })),
      ['operations.0.check.filter.email'],
    );
  });

  it('uses the filter operators, $and and $or, in the batch locale without fallback', async () => {
    const e = await createEntry(w, 'author', {
      fields: { name: 'Local', score: 10, born: '2000-01-01' },
      status: 'published',
      locales: ['de-DE'],
    });
    await updateEntry(w, e.id, { fields: { name: 'Lokal', score: 20 } }, '?locale=de-DE');
    // The checked operation: an empty update of another author (the check looks at authors).
    const holder = await createEntry(w, 'author', { fields: { name: 'Holder' }, status: 'published', locales: ['de-DE'] });
    const checkOp = (check: unknown) => ({ action: 'update', id: holder.id, check });
    expect((await batch(w, { locale: 'de-DE', ...ops(checkOp({ filter: { name: { eq: 'Lokal' } }, exists: true })) })).status).toBe(200);
    expectConditionFailed(await batch(w, ops(checkOp({ filter: { name: { eq: 'Lokal' } }, exists: true }))), 0);
    expectConditionFailed(await batch(w, { locale: 'de-DE', ...ops(checkOp({ filter: { name: { eq: 'Local' } }, exists: true })) }), 0);
    // born has no de-DE value: no fallback to en-US.
    expectConditionFailed(
      await batch(w, { locale: 'de-DE', ...ops(checkOp({ filter: { born: { eq: '2000-01-01' }, name: { eq: 'Lokal' } }, exists: true })) }),
      0,
    );
    expect(
      (
        await batch(
          w,
          ops(
            checkOp({
              filter: { $or: [{ score: { gt: 1000 } }, { name: { startsWith: 'Loc' } }], born: { gte: '1999-12-31' } },
              exists: true,
            }),
          ),
        )
      ).status,
    ).toBe(200);
    expect(
      (await batch(w, ops(checkOp({ filter: { $and: [{ score: { in: [10, 11] } }, { name: { contains: 'oca' } }] }, exists: true }))))
        .status,
    ).toBe(200);
    expectConditionFailed(await batch(w, ops(checkOp({ filter: { score: { ne: 10 }, name: { eq: 'Local' } }, exists: true }))), 0);
  });

  it('does not reserve the idempotency key of a batch whose check failed', async () => {
    const blocker = await createEntry(w, 'author', { fields: { name: 'Key blocker', email: 'keyblock@example.com' }, status: 'published' });
    const key = idemKey();
    const body = ops(
      create('author', { name: 'Key runner' }, { check: { filter: { email: { eq: 'keyblock@example.com' } }, exists: false } }),
    );
    expectConditionFailed(await batch(w, body, { key }), 0);
    expect((await w.api.delete(w.entry(blocker.id))).status).toBe(204);
    const res = await batch(w, body, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).not.toBe('true');
    expect(await names(w, 'author')).toContain('Key runner');
  });

  it('holds the content-type write lock until commit: of concurrent batches with the same check, one creates', async () => {
    const racer = () => batch(w, ops(create('lonely', { name: 'race' }, { check: { filter: { name: { eq: 'race' } }, exists: false } })));
    const results = await Promise.all(Array.from({ length: 6 }, racer));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectConditionFailed(r, 0);
    expect((await names(w, 'lonely')).filter((n) => n === 'race')).toHaveLength(1);
  });

  describe('refused checks', () => {
    const base = (check: unknown) =>
      ops(create('part', { name: 'never' }), { action: 'create', type: 'book', fields: { title: 'never' }, status: 'published', check });
    const f = (filter: unknown) => ({ filter, exists: true });
    it.each([
      ['a relation field', f({ author: { eq: UNKNOWN_ULID } }), /^operations\.1\.check\.filter\.author(\.eq)?$/],
      ['a related field', f({ 'author.name': { eq: 'x' } }), /^operations\.1\.check\.filter\.author\.name(\.eq)?$/],
      ['a JSON field', f({ meta: { eq: 1 } }), /^operations\.1\.check\.filter\.meta(\.eq)?$/],
      ['a JSON path', f({ 'meta.x': { eq: 1 } }), /^operations\.1\.check\.filter\.meta\.x(\.eq)?$/],
      ['an array field', f({ labels: { includes: 'x' } }), /^operations\.1\.check\.filter\.labels(\.includes)?$/],
      ['an attachment field', f({ cover: { eq: 1 } }), /^operations\.1\.check\.filter\.cover(\.eq)?$/],
      ['publication metadata', f({ '@status': { eq: 'draft' } }), /^operations\.1\.check\.filter\.@status(\.eq)?$/],
      ['a $ref operand', f({ title: { eq: { $ref: 'a' } } }), /^operations\.1\.check\.filter\.title(\.eq)?$/],
      ['an unknown field', f({ nope: { eq: 1 } }), /^operations\.1\.check\.filter\.nope$/],
      ['a bad operand', f({ price: { gt: 'x' } }), /^operations\.1\.check\.filter\.price\.gt$/],
      ['a bare value', f({ title: 'x' }), /^operations\.1\.check\.filter\.title$/],
      ['an empty $or', f({ $or: [] }), /^operations\.1\.check\.filter\.\$or$/],
      ['9 nested groups', f(nest(9, { title: { eq: 'x' } })), /^operations\.1\.check(\.filter)?$/],
      ['101 conditions', f({ $or: Array.from({ length: 101 }, (_x, i) => ({ price: { eq: i } })) }), /^operations\.1\.check(\.filter)?$/],
      ['aggregation', { filter: {}, exists: true, aggregate: { count: true } }, /^operations\.1\.check(\.aggregate)?$/],
      [
        'a check over 64 KiB',
        f({ $or: Array.from({ length: 4 }, (_x, i) => ({ title: { eq: `${i}`.padEnd(17_000, 'z') } })) }),
        /^operations\.1\.check$/,
      ],
      ['a check that is not an object', true, /^operations\.1\.check$/],
      ['a non-boolean exists', { filter: {}, exists: 'yes' }, /^operations\.1\.check\.exists$/],
    ])('refuses %s with 422 and changes nothing', async (_label, check, key) => {
      const before = await snapshot(w);
      expectErrors(await batch(w, base(check)), [key]);
      await unchanged(w, before);
    });

    it('accepts 8 nested groups and 100 conditions', async () => {
      const nested = nest(8, { title: { eq: 'no such title' } });
      expect(
        (
          await batch(
            w,
            ops(create('lonely', { name: 'n8' }), {
              action: 'create',
              type: 'book',
              fields: { title: 'nested 8' },
              check: { filter: nested, exists: false },
            }),
          )
        ).status,
      ).toBe(200);
      const many = { $or: Array.from({ length: 99 }, (_x, i) => ({ price: { eq: 100_000 + i } })) };
      expect(
        (await batch(w, ops({ action: 'create', type: 'book', fields: { title: 'many 100' }, check: { filter: many, exists: false } })))
          .status,
      ).toBe(200);
      // An `in` is one condition, whatever its 1 to 100 values.
      const values = Array.from({ length: 100 }, (_x, i) => 200_000 + i);
      expect(
        (
          await batch(
            w,
            ops({
              action: 'create',
              type: 'book',
              fields: { title: 'in 100' },
              check: { filter: { price: { in: values } }, exists: false },
            }),
          )
        ).status,
      ).toBe(200);
    });

    it('accepts a check of just under 64 KiB', async () => {
      const filter = { $or: Array.from({ length: 4 }, (_x, i) => ({ title: { eq: `${i}`.padEnd(16_000, 'z') } })) };
      expect(JSON.stringify({ filter, exists: false }).length).toBeLessThan(64 * 1024);
      expect(
        (await batch(w, ops({ action: 'create', type: 'book', fields: { title: 'big check' }, check: { filter, exists: false } }))).status,
      ).toBe(200);
    });
  });
});

// ---------------------------------------------------------------------------------------------

describeWithPostgres('lock contention', () => {
  it('waits 5 s for the content type write lock, then answers 409 with Retry-After; the key stays free', async () => {
    const w = await setup();
    const holder = new pg.Client({ connectionString: s.db.url });
    await holder.connect();
    try {
      const [type] = (
        await holder.query(
          `SELECT t.id FROM content_types t JOIN buckets b ON b.id = t.bucket_id JOIN workspaces ws ON ws.id = b.workspace_id
            WHERE ws.name = $1 AND b.name = 'general' AND t.name = 'author'`,
          [w.ws],
        )
      ).rows;
      // Another writer of the type holds its lock (as a batch does until it commits).
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [type.id]);
      const before = await snapshot(w);
      const key = idemKey();
      const body = ops(create('author', { name: 'Waiting' }));
      const started = Date.now();
      const res = await batch(w, body, { key });
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_500);
      expect(res.status).toBe(409);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.body).toEqual({ message: expect.any(String) });
      await unchanged(w, before);
      await holder.query('ROLLBACK');
      // Nothing was reserved: the same key runs the batch now.
      const again = await batch(w, body, { key });
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(await names(w, 'author')).toContain('Waiting');
    } finally {
      await holder.end();
    }
  }, 30_000);
});

describe('symbolic references', () => {
  let w: EntriesWorkspace;
  let fx: Record<string, any>;
  beforeAll(async () => {
    w = await setup();
    fx = {
      author: await createEntry(w, 'author', { fields: { name: 'Existing' }, status: 'published' }),
      book: await createEntry(w, 'book', { fields: { title: 'Existing book' }, status: 'published' }),
      file: await uploadFile(w.api, w.ws, 'f.txt', 'f'),
    };
  });

  it('resolves references to earlier creates in single and multiple relations, mixed with IDs, on create and update', async () => {
    const res = await batch(
      w,
      ops(
        create('author', { name: 'A' }, { ref: 'a' }),
        create('author', { name: 'B' }, { ref: 'B-2_x' }),
        create('book', { title: 'Refs', author: { $ref: 'B-2_x' }, authors: [{ $ref: 'a' }, fx.author.id, { $ref: 'B-2_x' }] }),
        { action: 'update', id: fx.book.id, fields: { author: { $ref: 'a' }, authors: [{ $ref: 'B-2_x' }] } },
        create('author', { name: 'C', mentor: { $ref: 'a' } }, { ref: 'c' }),
      ),
    );
    expect(res.status).toBe(200);
    const [a, b, refs, , c] = res.body.data;
    expect(res.body.data).toEqual([
      { index: 0, action: 'create', id: expect.stringMatching(ULID), lock_version: 0, ref: 'a' },
      { index: 1, action: 'create', id: expect.stringMatching(ULID), lock_version: 0, ref: 'B-2_x' },
      { index: 2, action: 'create', id: expect.stringMatching(ULID), lock_version: 0 },
      { index: 3, action: 'update', id: fx.book.id, lock_version: 1 },
      { index: 4, action: 'create', id: expect.stringMatching(ULID), lock_version: 0, ref: 'c' },
    ]);
    const read = await readEntry(w, refs.id);
    expect(read.fields.author.id).toBe(b.id);
    expect(read.fields.authors.map((x: any) => x.id)).toEqual([a.id, fx.author.id, b.id]);
    const updated = await readEntry(w, fx.book.id);
    expect(updated.fields.author.id).toBe(a.id);
    expect(updated.fields.authors.map((x: any) => x.id)).toEqual([b.id]);
    expect((await readEntry(w, c.id)).fields.mentor.id).toBe(a.id);
    // Reference names are not stored.
    expect(JSON.stringify(await readEntry(w, a.id))).not.toContain('"ref"');
  });

  it('keeps $ref data in ordinary JSON fields', async () => {
    const meta = { $ref: 'a', list: [{ $ref: 'zzz' }], nested: { $ref: 5 } };
    const res = await batchOk(w.api, w.ws, ops(create('author', { name: 'A' }, { ref: 'a' }), create('book', { title: 'json', meta })));
    expect((await readEntry(w, res[1].id)).fields.meta).toEqual(meta);
  });

  const A = () => create('author', { name: 'A' }, { ref: 'a' });
  const cases: [string, () => unknown, (string | RegExp)[]][] = [
    ['an unknown reference', () => ops(A(), create('book', { title: 'x', author: { $ref: 'nope' } })), ['operations.1.fields.author.$ref']],
    [
      'a forward reference',
      () => ops(create('book', { title: 'x', author: { $ref: 'later' } }), create('author', { name: 'L' }, { ref: 'later' })),
      ['operations.0.fields.author.$ref'],
    ],
    [
      'a self reference',
      () => ops(create('author', { name: 'Me', mentor: { $ref: 'me' } }, { ref: 'me' })),
      ['operations.0.fields.mentor.$ref'],
    ],
    ['a duplicate reference name', () => ops(A(), create('author', { name: 'A again' }, { ref: 'a' })), ['operations.1.ref']],
    [
      'names differing only in case are distinct: an unknown one',
      () => ops(A(), create('book', { title: 'x', author: { $ref: 'A' } })),
      ['operations.1.fields.author.$ref'],
    ],
    ['a name starting with a digit', () => ops(create('author', { name: 'x' }, { ref: '1a' })), ['operations.0.ref']],
    ['an empty name', () => ops(create('author', { name: 'x' }, { ref: '' })), ['operations.0.ref']],
    ['a name of 65 characters', () => ops(create('author', { name: 'x' }, { ref: 'r' + 'x'.repeat(64) })), ['operations.0.ref']],
    ['a name with a dot', () => ops(create('author', { name: 'x' }, { ref: 'a.b' })), ['operations.0.ref']],
    ['a name that is not a string', () => ops(create('author', { name: 'x' }, { ref: 5 })), ['operations.0.ref']],
    [
      'a reference object with another property',
      () => ops(A(), create('book', { title: 'x', author: { $ref: 'a', id: 'x' } })),
      [/^operations\.1\.fields\.author(\.\$ref|\.id)?$/],
    ],
    [
      'a reference that is not a string',
      () => ops(A(), create('book', { title: 'x', author: { $ref: 5 } })),
      [/^operations\.1\.fields\.author(\.\$ref)?$/],
    ],
    [
      'an unknown reference in a multiple relation',
      () => ops(A(), create('book', { title: 'x', authors: [fx.author.id, { $ref: 'nope' }] })),
      [/^operations\.1\.fields\.authors(\.1)?\.\$ref$/],
    ],
    [
      'a reference in a list on a single relation',
      () => ops(A(), create('book', { title: 'x', author: [{ $ref: 'a' }] })),
      [/^operations\.1\.fields\.author/],
    ],
    [
      'a reference to a type the field does not accept',
      () => ops(create('book', { title: 'bk' }, { ref: 'bk' }), create('book', { title: 'x', author: { $ref: 'bk' } })),
      [/^operations\.1\.fields\.author(\.\$ref)?$/],
    ],
    [
      'a reference in an attachment field',
      () => ops(A(), create('book', { title: 'x', cover: { $ref: 'a' } })),
      [/^operations\.1\.fields\.cover(\.\$ref)?$/],
    ],
    [
      'a reference in a multiple attachment field',
      () => ops(A(), create('book', { title: 'x', gallery: [fx.file.id, { $ref: 'a' }] })),
      [/^operations\.1\.fields\.gallery(\.1)?(\.\$ref)?$/],
    ],
    ['a reference in a text field', () => ops(A(), create('book', { title: { $ref: 'a' } })), [/^operations\.1\.fields\.title(\.\$ref)?$/]],
    ['a reference in an update ID', () => ops(A(), { action: 'update', id: { $ref: 'a' }, fields: { name: 'x' } }), ['operations.1.id']],
  ];
  it.each(cases)('refuses %s with 422 and changes nothing', async (_label, body, keys) => {
    const before = await snapshot(w);
    expectErrors(await batch(w, body()), keys);
    await unchanged(w, before);
  });

  it('lists every reference refusal of the batch at once, a repeated name among them', async () => {
    const before = await snapshot(w);
    const res = await batch(
      w,
      ops(
        create('book', { title: 'x', author: { $ref: 'fwd' }, authors: [{ $ref: 'nope' }] }),
        create('author', { name: 'F' }, { ref: 'fwd' }),
        create('author', { name: 'S', mentor: { $ref: 'self' } }, { ref: 'self' }),
        create('author', { name: 'F again' }, { ref: 'fwd' }),
      ),
    );
    expectErrors(res, [
      'operations.0.fields.author.$ref',
      'operations.0.fields.authors.0.$ref',
      'operations.2.fields.mentor.$ref',
      'operations.3.ref',
    ]);
    await unchanged(w, before);
  });

  it('accepts a reference name of 64 characters, case-sensitive names side by side', async () => {
    const long = 'r' + 'x'.repeat(63);
    const res = await batchOk(
      w.api,
      w.ws,
      ops(
        create('author', { name: 'Long' }, { ref: long }),
        create('author', { name: 'Upper' }, { ref: 'X' }),
        create('author', { name: 'Lower' }, { ref: 'x' }),
        create('book', { title: 'longref', authors: [{ $ref: long }, { $ref: 'x' }, { $ref: 'X' }] }),
      ),
    );
    expect(res[0].ref).toBe(long);
    expect((await readEntry(w, res[3].id)).fields.authors.map((a: any) => a.name)).toEqual(['Long', 'Lower', 'Upper']);
  });
});

// ---------------------------------------------------------------------------------------------

describe('idempotency', () => {
  let w: EntriesWorkspace;
  let target: any;
  beforeAll(async () => {
    w = await setup();
    target = await createEntry(w, 'part', { fields: { name: 'idem target' }, status: 'published' });
  });
  const body = (name: string) => ({
    operations: [
      { action: 'create', type: 'author', ref: 'r', fields: { name, score: 1 }, status: 'published', tags: ['a', 'b'] },
      { action: 'create', type: 'book', fields: { title: `${name} book`, authors: [{ $ref: 'r' }] }, status: 'published' },
    ],
  });
  const count = async (name: string) => (await names(w, 'author')).filter((n) => n === name).length;

  it.each([
    ['missing', null],
    ['empty', ''],
    ['129 characters', 'k'.repeat(129)],
    ['with a space', 'a b'],
    ['with a tab', 'a\tb'],
  ])('refuses a %s Idempotency-Key with 422 on Idempotency-Key, changing nothing', async (_label, key) => {
    const before = await snapshot(w);
    const res = await batch(w, body('Keyless'), { key });
    expectErrors(res, ['Idempotency-Key']);
    await unchanged(w, before);
  });

  it('accepts a key of 128 visible ASCII characters', async () => {
    const key = 'k'.repeat(100) + '!#$%&*+-./:;<=>?@[]^_{|}~()"';
    expect(key).toHaveLength(128);
    expect((await batch(w, body('Long key'), { key })).status).toBe(200);
  });

  it('replays the original response for the same request, even after the entries changed, executing nothing', async () => {
    const key = idemKey();
    const first = await batch(w, body('Replay'), { key });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).not.toBe('true');
    const [author] = first.body.data;
    await updateEntry(w, author.id, { fields: { name: 'Replay changed' } });
    const again = await batch(w, body('Replay'), { key });
    expect(again.status).toBe(200);
    // The original answer as it was written, property order included.
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await count('Replay')).toBe(0);
    expect(await readEntry(w, author.id)).toMatchObject({ lock_version: 1, fields: { name: 'Replay changed' } });
    // Even once the entry is gone.
    expect((await w.api.delete(w.entry(author.id))).status).toBe(204);
    expect((await batch(w, body('Replay'), { key })).body).toEqual(first.body);
    expect((await w.api.get(w.entry(author.id))).status).toBe(404);
  });

  it('ignores object property order and an omitted locale (en-US), not operation or array order', async () => {
    const plain = (name: string) => ({
      operations: [
        { action: 'create', type: 'author', fields: { name, score: 1 }, status: 'published', tags: ['a', 'b'] },
        { action: 'create', type: 'part', fields: { name: `${name} part` }, status: 'published' },
      ],
    });
    const key = idemKey();
    const first = await batch(w, plain('Order'), { key });
    expect(first.status).toBe(200);
    const reordered = {
      locale: 'en-US',
      operations: [
        { tags: ['a', 'b'], status: 'published', fields: { score: 1, name: 'Order' }, type: 'author', action: 'create' },
        { status: 'published', fields: { name: 'Order part' }, type: 'part', action: 'create' },
      ],
    };
    const replay = await batch(w, reordered, { key });
    expect([replay.status, replay.body]).toEqual([200, first.body]);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const [op0, op1] = plain('Order').operations;
    const before = await snapshot(w);
    const variants: unknown[] = [
      { operations: [op1, op0] },
      { operations: [{ ...op0, tags: ['b', 'a'] }, op1] },
      { operations: [{ ...op0, check: { filter: { name: { eq: 'no such author' } }, exists: false } }, op1] },
      { operations: [{ ...op0, ref: 's' }, op1] },
      { operations: [op0] },
      plain('Other payload'),
    ];
    for (const variant of variants) {
      const res = await batch(w, variant, { key });
      expect([res.status, res.body]).toEqual([409, { message: expect.any(String) }]);
    }
    await unchanged(w, before);
    expect(await count('Order')).toBe(1);
  });

  it('scopes keys to the API key and the bucket', async () => {
    const key = idemKey();
    const first = await batchOk(w.api, w.ws, body('Scoped'), { key });
    const otherKey = await keyFor(s, w.ws, ['*'], ENTRY_PERMISSIONS);
    const second = await batchOk(otherKey, w.ws, body('Scoped'), { key });
    expect(second[0].id).not.toBe(first[0].id);
    expect(await count('Scoped')).toBe(2);
    const inOther = await batchOk(w.api, w.ws, ops(create('author', { name: 'Scoped' })), { key, bucket: 'other' });
    expect(inOther).toEqual([{ index: 0, action: 'create', id: expect.stringMatching(ULID), lock_version: 0 }]);
    expect((await readEntry(w, inOther[0].id)).fields.name).toBe('Scoped');
  });

  it('does not reserve the key of a failed batch', async () => {
    const key = idemKey();
    expectErrors(await batch(w, ops(create('author', {})), { key }), ['operations.0.fields.name']);
    const res = await batch(w, body('After failure'), { key });
    expect(res.status).toBe(200);
    expect(await count('After failure')).toBe(1);
  });

  it('executes concurrent requests with one key once', async () => {
    const key = idemKey();
    const results = await Promise.all(Array.from({ length: 4 }, () => batch(w, body('Concurrent'), { key })));
    const statuses = results.map((r) => r.status);
    for (const status of statuses) expect([200, 409]).toContain(status);
    const oks = results.filter((r) => r.status === 200);
    expect(oks.length).toBeGreaterThan(0);
    for (const r of oks) expect(r.body).toEqual(oks[0].body);
    expect(await count('Concurrent')).toBe(1);
    const later = await batch(w, body('Concurrent'), { key });
    expect([later.status, later.body]).toEqual([200, oks[0].body]);
  });

  it('rechecks authentication and permissions before a replay', async () => {
    const user = await createUser(s.admin, w.ws, [...ENTRY_PERMISSIONS]);
    const k = await createKey(s.admin, w.ws, user.id, ['*']);
    const api = client(s.url, k.key);
    const key = idemKey();
    expect((await batch(w, body('Recheck'), { key, api })).status).toBe(200);
    await adminOk(s, 'patch', `/admin/v1/workspaces/${w.ws}/users/${user.id}`, {
      permissions: ENTRY_PERMISSIONS.filter((p) => p !== 'create-entry'),
    });
    expect(await batch(w, body('Recheck'), { key, api })).toMatchObject({ status: 403, body: NOT_PERMITTED });
    expect((await s.admin.delete(`/admin/v1/workspaces/${w.ws}/api-keys/${k.id}`)).status).toBe(204);
    expect(await batch(w, body('Recheck'), { key, api })).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
  });

  it('keeps results 24 hours', async () => {
    const key = idemKey();
    const first = await batch(w, body('Kept'), { key });
    expect(first.status).toBe(200);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 23 * 3600 });
    expect((await s.admin.post('/admin/v1/tasks/idempotency:prune')).status).toBe(200);
    const replay = await batch(w, body('Kept'), { key });
    expect([replay.status, replay.body, replay.headers.get('idempotent-replayed')]).toEqual([200, first.body, 'true']);
    await s.admin.post('/admin/v1/clock', { advance_seconds: 2 * 3600 });
    expect((await s.admin.post('/admin/v1/tasks/idempotency:prune')).status).toBe(200);
    const fresh = await batch(w, body('Kept'), { key });
    expect(fresh.status).toBe(200);
    expect(fresh.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(await count('Kept')).toBe(2);
  });

  it('carries Server-Timing with batch, batch_work, batch_finish and batch_sql, recomputed on replay', async () => {
    const key = idemKey();
    const first = await batch(w, ops({ action: 'update', id: target.id, fields: { name: 'timed' } }), { key });
    expect(first.status).toBe(200);
    const replay = await batch(w, ops({ action: 'update', id: target.id, fields: { name: 'timed' } }), { key });
    expect(replay.status).toBe(200);
    for (const res of [first, replay]) {
      const timing = serverTiming(res);
      for (const metric of ['batch', 'batch_work', 'batch_finish', 'batch_sql']) {
        expect([metric, Number.isFinite(timing[metric]) && timing[metric] >= 0]).toEqual([metric, true]);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('events', () => {
  it('dispatches the entry events of a committed batch after commit; refused batches and replays dispatch nothing', async () => {
    const w = await setup();
    const upd = await createEntry(w, 'part', { fields: { name: 'to update' }, status: 'published', skipWebhooks: true });
    const del = await createEntry(w, 'part', { fields: { name: 'to delete' }, status: 'published', skipWebhooks: true });
    const r = await startReceiver();
    receivers.push(r);
    await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/webhooks`, { url: r.url, events: ['*'], secret: 'a-long-enough-secret' });
    // Refused: validation, condition, authorization.
    expect((await batch(w, ops(create('part', { name: 'refused' }), create('author', {})))).status).toBe(422);
    expect(
      (await batch(w, ops(create('part', { name: 'refused' }), create('lonely', { name: 'x' }, { check: { filter: {}, exists: true } }))))
        .status,
    ).toBe(409);
    const key = idemKey();
    const body = ops(
      create('part', { name: 'hooked' }),
      { action: 'update', id: upd.id, fields: { name: 'updated' } },
      { action: 'delete', id: del.id },
    );
    const res = await batch(w, body, { key });
    expect(res.status).toBe(200);
    expect((await batch(w, body, { key })).headers.get('idempotent-replayed')).toBe('true');
    await r.waitFor(3);
    await new Promise((x) => setTimeout(x, 700));
    expect(r.requests.map((x) => x.body.event).sort()).toEqual(['entry.created', 'entry.deleted', 'entry.updated']);
    const byEvent = Object.fromEntries(r.requests.map((x) => [x.body.event, JSON.stringify(x.body.data)]));
    expect(byEvent['entry.created']).toContain(res.body.data[0].id);
    expect(byEvent['entry.updated']).toContain(upd.id);
    expect(byEvent['entry.deleted']).toContain(del.id);
    for (const x of r.requests) expect(JSON.stringify(x.body.data)).not.toContain('refused');
  });

  it('keeps the content when webhook delivery fails', async () => {
    const w = await setup();
    const r = await startReceiver(() => 500);
    receivers.push(r);
    await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/webhooks`, {
      url: r.url,
      events: ['entry.created'],
      secret: 'a-long-enough-secret',
    });
    const [made] = await batchOk(w.api, w.ws, ops(create('part', { name: 'survives' })));
    await r.waitFor(1);
    expect((await readEntry(w, made.id)).fields.name).toBe('survives');
  });
});
