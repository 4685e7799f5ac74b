// The Objects query route: every operator with the document's semantics (types, null and
// missing, byte order, literal string matching), groups, metadata selectors, projection, typed and
// untyped sorts, paging, locales, narrowing, and every limit with its error path.
import { startTestServer, type TestServer } from './support/server';
import {
  createBucket,
  createObject,
  createRaw,
  createSubmission,
  deleteObject,
  visibilityDrift,
  objectsWorkspace,
  rawJson,
  updateObject,
  type ObjectsWorkspace,
} from './support/objects';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

// One workspace of documents for the operators, created in this order (so ids ascend in it).
// Raw JSON text, so that `1.0` stays a decimal on the wire.
const DOCS: [string, string, 'draft' | 'published'][] = [
  [
    'd/int1',
    '{"v":1,"s":"B","t":"Hello World","status":"archived","k":"50%_off","n":{"x":{"y":5}},"date":"2026-01-15T10:00:00Z"}',
    'published',
  ],
  ['d/dec1', '{"v":1.0,"s":"a","t":"hello world","k":"50%Xoff","date":"2026-03-01T00:00:00Z"}', 'published'],
  ['d/str1', '{"v":"1","s":"C","t":" padded  ","k":"a_b","status":"published"}', 'published'],
  ['d/tru', '{"v":true,"s":"b","t":""}', 'draft'],
  ['d/nul', '{"v":null,"s":null,"t":null,"n":null}', 'draft'],
  ['d/none', '{}', 'draft'],
  ['d/dec25', '{"v":2.5,"s":"Ab","t":"emoji a\ud83d\ude00","k":"axb"}', 'draft'],
  ['d/neg', '{"v":-3,"s":"aa","n":{"x":"flat"}}', 'draft'],
  ['d/strtrue', '{"v":"true","s":"B"}', 'draft'],
  ['d/fals', '{"v":false}', 'draft'],
  ['x/arr', '{"v":[1,2],"s":["B"],"t":["Hello World"],"k":["a_b"]}', 'draft'],
  ['x/obj', '{"v":{"a":1},"s":{"x":"B"},"t":{"Hello World":true}}', 'draft'],
];
const ALL = DOCS.map(([ref]) => ref.slice(2));

let w: ObjectsWorkspace;
const objs: Record<string, any> = {};

beforeAll(async () => {
  w = await objectsWorkspace(s);
  for (const [ref, text, status] of DOCS) objs[ref.slice(2)] = await createRaw(w, ref, text, { status });
  // One object with a translation and one saved twice (lock_version 1, newest updated_at).
  objs.int1 = await updateObject(w, objs.int1, { data: objs.int1.data, translations: { 'de-DE': { v: 99, s: 'Z', t: 'Hallo Welt' } } });
  objs.fals = await updateObject(w, objs.fals, { data: { v: false } });
});

/** Runs a query on the shared workspace; insists on 200 and returns the names in result order. */
async function names(body: Record<string, unknown>, ws: ObjectsWorkspace = w): Promise<string[]> {
  const res = await ws.api.post(ws.at('query'), { limit: 100, ...body });
  if (res.status !== 200) throw new Error(`query ${JSON.stringify(body)}: ${res.status} ${res.text}`);
  return res.body.data.map((o: any) => o.ref.slice(2));
}

/** A query that must be refused with 422; returns the error paths. */
async function refused(body: unknown, ws: ObjectsWorkspace = w): Promise<string[]> {
  const res = await ws.api.post(ws.at('query'), body);
  expect(res.status).toBe(422);
  expect(res.body.message).toEqual(expect.any(String));
  return Object.keys(res.body.errors);
}

const where = (filter: Record<string, unknown>) => names({ filter });

describe('results', () => {
  it('returns full envelopes of drafts and published objects by id, with the page position', async () => {
    const res = await w.api.post(w.at('query'), {});
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ offset: 0, limit: 20, hasMore: false });
    expect(res.body.data.map((o: any) => o.ref.slice(2))).toEqual(ALL);
    const byName = Object.fromEntries(res.body.data.map((o: any) => [o.ref.slice(2), o]));
    for (const name of ALL) expect(byName[name]).toEqual(objs[name]);
    expect(new Set(res.body.data.map((o: any) => o.status))).toEqual(new Set(['draft', 'published']));
  });

  it('leaves out deleted objects and legacy submissions, and sees changes at once', async () => {
    const v = await objectsWorkspace(s);
    const a = await createObject(v, { ref: 'a', data: { n: 1 } });
    const b = await createObject(v, { ref: 'b', data: { n: 1 }, status: 'published' });
    await createSubmission(s, v.ws, 'c', { n: 1 });
    expect((await v.api.post(v.at('query'), { filter: { n: { eq: 1 } } })).body.data.map((o: any) => o.id)).toEqual([a.id, b.id]);
    await deleteObject(v, a.id, 0);
    expect((await v.api.post(v.at('query'), {})).body.data.map((o: any) => o.id)).toEqual([b.id]);
    await updateObject(v, b, { data: { n: 2 } });
    expect((await v.api.post(v.at('query'), { filter: { n: { eq: 1 } } })).body.data).toEqual([]);
  });

  it('sees Trash and recovery in filters answered from documents alone (their visibility copies follow the entry)', async () => {
    const v = await objectsWorkspace(s);
    let a = await createObject(v, { ref: 'a', data: { n: 7 } });
    a = await updateObject(v, a, { data: { n: 7 }, translations: { 'de-DE': { n: 8 } } });
    const ids = async (body: Record<string, unknown>) => (await v.api.post(v.at('query'), body)).body.data.map((o: any) => o.id);
    expect(await ids({ filter: { n: { eq: 7 } } })).toEqual([a.id]);
    await deleteObject(v, a.id, a.lock_version);
    expect(await ids({ filter: { n: { eq: 7 } } })).toEqual([]);
    expect(await ids({ locale: 'de-DE', filter: { n: { gte: 8 } } })).toEqual([]);
    const row = (await v.api.get(v.at('trash'))).body.data[0];
    expect((await v.api.post(v.at(a.id, 'restore'), { lock_version: row.lock_version })).status).toBe(200);
    expect(await ids({ filter: { n: { eq: 7 } } })).toEqual([a.id]);
    expect(await ids({ locale: 'de-DE', filter: { n: { gte: 8 } } })).toEqual([a.id]);
    expect(await visibilityDrift(s)).toBe(0);
  });

  it('narrows by bucket, bucket_id, exact ref and folder prefix (literal % and _)', async () => {
    const v = await objectsWorkspace(s);
    const blog = await createBucket(s, v.ws, 'blog');
    for (const ref of ['articles', 'articles/x', 'articles-old/y', 'a_b/1', 'axb/1', 'a%b/1']) await createObject(v, { ref, data: {} });
    await createObject(v, { ref: 'articles/z', data: {}, bucket_id: blog.id });
    const refs = async (body: Record<string, unknown>) => {
      const res = await v.api.post(v.at('query'), body);
      expect(res.status).toBe(200);
      return res.body.data.map((o: any) => `${o.bucket}:${o.ref}`);
    };
    expect(await refs({ prefix: 'articles' })).toEqual(['general:articles', 'general:articles/x', 'blog:articles/z']);
    expect(await refs({ prefix: '/articles/' })).toEqual(['general:articles', 'general:articles/x', 'blog:articles/z']);
    expect(await refs({ prefix: 'a_b' })).toEqual(['general:a_b/1']);
    expect(await refs({ prefix: 'a%b' })).toEqual(['general:a%b/1']);
    expect(await refs({ prefix: 'a%' })).toEqual([]);
    expect(await refs({ ref: 'articles' })).toEqual(['general:articles']);
    expect(await refs({ bucket: 'blog' })).toEqual(['blog:articles/z']);
    expect(await refs({ bucket_id: blog.id })).toEqual(['blog:articles/z']);
    expect(await refs({ prefix: 'articles', bucket: 'general' })).toEqual(['general:articles', 'general:articles/x']);
    expect(await refs({ ref: 'articles/z', bucket: 'general' })).toEqual([]);
  });
});

describe('eq and ne', () => {
  it.each([
    [{ eq: 1 }, ['int1', 'dec1']],
    [{ eq: 1.5 }, []],
    [{ eq: -3 }, ['neg']],
    [{ eq: '1' }, ['str1']],
    [{ eq: true }, ['tru']],
    [{ eq: 'true' }, ['strtrue']],
    [{ eq: false }, ['fals']],
    [{ eq: null }, ['nul', 'none']],
    [{ ne: null }, ['int1', 'dec1', 'str1', 'tru', 'dec25', 'neg', 'strtrue', 'fals', 'arr', 'obj']],
    [{ ne: 1 }, ['dec25', 'neg']],
    [{ ne: '1' }, ['strtrue']],
    [{ ne: true }, ['fals']],
    [{ ne: false }, ['tru']],
  ])('v %j', async (condition, expected) => {
    expect(await where({ v: condition })).toEqual(expected);
  });

  it('matches 1.0 with eq 1 written as 1.0, and compares strings exactly', async () => {
    const res = await rawJson(w.api, 'POST', w.at('query'), '{"filter":{"v":{"eq":1.0}},"limit":100}');
    expect(res.body.data.map((o: any) => o.ref)).toEqual(['d/int1', 'd/dec1']);
    expect(await where({ s: { eq: 'B' } })).toEqual(['int1', 'strtrue']);
    expect(await where({ s: { eq: 'b' } })).toEqual(['tru']);
    expect(await where({ s: { ne: 'B' } })).toEqual(['dec1', 'str1', 'tru', 'dec25', 'neg']);
    expect(await where({ t: { eq: '' } })).toEqual(['tru']);
    expect(await where({ t: { eq: ' padded  ' } })).toEqual(['str1']);
    expect(await where({ t: { eq: 'padded' } })).toEqual([]);
  });

  it('never matches inside arrays or objects (no array membership)', async () => {
    expect(await where({ t: { eq: 'Hello World' } })).toEqual(['int1']);
    expect(await where({ k: { eq: 'a_b' } })).toEqual(['str1']);
    expect(await where({ s: { in: ['B'] } })).toEqual(['int1', 'strtrue']);
    expect(await where({ 's.x': { eq: 'B' } })).toEqual(['obj']);
  });

  it('never indexes into arrays with a path step', async () => {
    expect(await where({ 'v.0': { eq: 1 } })).toEqual([]);
    expect(await where({ 't.0': { ne: null } })).toEqual([]);
    const res = await w.api.post(w.at('query'), { fields: ['v.0'], filter: { '@ref': { eq: 'x/arr' } } });
    expect(res.body.data[0].data).toEqual({ v: { '0': null } });
  });

  it('matches numbers a double cannot hold exactly', async () => {
    const v = await objectsWorkspace(s);
    const big = await createRaw(v, 'big', '{"n":12345678901234567890123}');
    await createRaw(v, 'near', '{"n":12345678901234567890124}');
    const res = await rawJson(v.api, 'POST', v.at('query'), '{"filter":{"n":{"eq":12345678901234567890123}}}');
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: any) => o.id)).toEqual([big.id]);
    expect(res.text).toContain('12345678901234567890123');
  });
});

describe('lt, lte, gt, gte', () => {
  it.each([
    [{ lt: 2 }, ['int1', 'dec1', 'neg']],
    [{ lte: 1 }, ['int1', 'dec1', 'neg']],
    [{ lt: 1 }, ['neg']],
    [{ gt: 1 }, ['dec25']],
    [{ gte: 1 }, ['int1', 'dec1', 'dec25']],
    [{ gte: -3 }, ['int1', 'dec1', 'dec25', 'neg']],
    [{ gt: 2.4999 }, ['dec25']],
    [{ gt: 0, lt: 2 }, ['int1', 'dec1']],
    [{ gt: '1' }, ['strtrue']],
    [{ gte: '1' }, ['str1', 'strtrue']],
  ])('numeric for numbers, lexical for strings: v %j', async (condition, expected) => {
    expect(await where({ v: condition })).toEqual(expected);
  });

  it.each([
    [{ lt: 'a' }, ['int1', 'str1', 'dec25', 'strtrue']],
    [{ gt: 'B' }, ['dec1', 'str1', 'tru', 'neg']],
    [{ gte: 'B' }, ['int1', 'dec1', 'str1', 'tru', 'neg', 'strtrue']],
    [{ lte: 'Ab' }, ['dec25']],
    [{ gt: 'a', lt: 'b' }, ['neg']],
    [{ gt: 5 }, []],
  ])('case-sensitive byte order for strings ("B" < "a"): s %j', async (condition, expected) => {
    expect(await where({ s: condition })).toEqual(expected);
  });

  it.each([[null], [true], ['high'], [[1]], [{ a: 1 }]])('compares numbers while another object holds %j at the path', async (other) => {
    const v = await objectsWorkspace(s);
    const one = await createObject(v, { ref: 'one', data: { rank: 1 } });
    const three = await createObject(v, { ref: 'three', data: { rank: 3 } });
    await createObject(v, { ref: 'other', data: { rank: other } });
    for (const [filter, expected] of [
      [{ rank: { lt: 2 } }, [one.id]],
      [{ rank: { gte: 1 } }, [one.id, three.id]],
      [{ $and: [{ rank: { gt: 0 } }, { '@ref': { ne: 'one' } }] }, [three.id]],
    ] as const) {
      const res = await v.api.post(v.at('query'), { filter });
      expect([filter, res.status]).toEqual([filter, 200]);
      expect(res.body.data.map((o: any) => o.id)).toEqual(expected);
    }
  });

  it("compares only this workspace's numbers, whatever other workspaces store at the path", async () => {
    const a = await objectsWorkspace(s);
    const b = await objectsWorkspace(s);
    await createObject(b, { ref: 'str', data: { rank: 'high' } });
    const one = await createObject(a, { ref: 'one', data: { rank: 1 } });
    await createObject(a, { ref: 'three', data: { rank: 3 } });
    const res = await a.api.post(a.at('query'), { filter: { rank: { lt: 2 } } });
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: any) => o.id)).toEqual([one.id]);
  });

  it('compares consistently formatted ISO dates', async () => {
    expect(await where({ date: { gte: '2026-02-01' } })).toEqual(['dec1']);
    expect(await where({ date: { lt: '2026-02-01T00:00:00Z' } })).toEqual(['int1']);
  });
});

describe('in', () => {
  it.each([
    [
      [1, 'true', null],
      ['int1', 'dec1', 'nul', 'none', 'strtrue'],
    ],
    [[false], ['fals']],
    [
      ['1', 2.5],
      ['str1', 'dec25'],
    ],
    [[null], ['nul', 'none']],
    [['nothing', 7], []],
  ])('v in %j', async (operands, expected) => {
    expect(await where({ v: { in: operands } })).toEqual(expected);
  });
});

describe('startsWith, endsWith, contains', () => {
  it.each([
    ['t', { startsWith: 'Hello' }, ['int1']],
    ['t', { startsWith: 'hello' }, ['dec1']],
    ['t', { contains: 'o W' }, ['int1']],
    ['t', { contains: 'o w' }, ['dec1']],
    ['t', { endsWith: 'World' }, ['int1']],
    ['t', { contains: '' }, ['int1', 'dec1', 'str1', 'tru', 'dec25']],
    ['t', { startsWith: '' }, ['int1', 'dec1', 'str1', 'tru', 'dec25']],
    ['t', { endsWith: '' }, ['int1', 'dec1', 'str1', 'tru', 'dec25']],
    ['t', { startsWith: ' ' }, ['str1']],
    ['t', { endsWith: '  ' }, ['str1']],
    ['t', { endsWith: 'd ' }, []],
    ['t', { contains: 'padded' }, ['str1']],
    ['k', { contains: '%_' }, ['int1']],
    ['k', { contains: '%' }, ['int1', 'dec1']],
    ['k', { contains: '_' }, ['int1', 'str1']],
    ['k', { startsWith: '50%' }, ['int1', 'dec1']],
    ['k', { startsWith: '50%_' }, ['int1']],
    ['k', { endsWith: '%Xoff' }, ['dec1']],
    ['k', { startsWith: 'a_' }, ['str1']],
    ['k', { startsWith: 'a%' }, []],
    ['k', { endsWith: '_b' }, ['str1']],
    ['s', { startsWith: 'A' }, ['dec25']],
    ['s', { startsWith: 'a' }, ['dec1', 'neg']],
    ['s', { contains: 'b' }, ['tru', 'dec25']],
    ['v', { contains: '1' }, ['str1']],
    ['v', { startsWith: 't' }, ['strtrue']],
  ])('%s %j (case-sensitive, literal, non-strings never match)', async (path, condition, expected) => {
    expect(await where({ [path]: condition })).toEqual(expected);
  });

  it.each([
    [{ endsWith: '\u{1F600}' }],
    [{ endsWith: 'a\u{1F600}' }],
    [{ contains: '\u{1F600}' }],
    [{ startsWith: 'emoji a\u{1F600}' }],
    [{ endsWith: 'emoji a\u{1F600}' }],
  ])('matches characters outside the BMP as text: t %j', async (condition) => {
    expect(await where({ t: condition })).toEqual(['dec25']);
  });
});

describe('groups and combinations', () => {
  it('combines keys and operators with AND, and $and/$or groups as said', async () => {
    expect(await where({ v: { eq: 1 }, s: { eq: 'a' } })).toEqual(['dec1']);
    expect(await where({ $or: [{ v: { eq: true } }, { s: { eq: 'a' } }] })).toEqual(['dec1', 'tru']);
    expect(await where({ $and: [{ v: { in: [1, 2.5] } }, { s: { lt: 'a' } }] })).toEqual(['int1', 'dec25']);
    expect(await where({ $or: [{ $and: [{ v: { eq: 1 } }, { s: { eq: 'B' } }] }, { v: { eq: false } }] })).toEqual(['int1', 'fals']);
    expect(await where({ v: { ne: null }, $or: [{ s: { eq: 'B' } }, { s: { eq: 'b' } }] })).toEqual(['int1', 'tru', 'strtrue']);
    expect(await where({ $and: [{ v: { eq: 1 } }], $or: [{ s: { eq: 'a' } }] })).toEqual(['dec1']);
    expect(await where({})).toEqual(ALL);
  });

  it('reads nested paths and treats a missing parent as missing', async () => {
    expect(await where({ 'n.x.y': { eq: 5 } })).toEqual(['int1']);
    expect(await where({ 'n.x.y': { gt: 4 } })).toEqual(['int1']);
    expect(await where({ 'n.x.y': { ne: null } })).toEqual(['int1']);
    expect(await where({ 'n.x': { ne: null } })).toEqual(['int1', 'neg']);
    expect(await where({ 'n.x': { eq: 'flat' } })).toEqual(['neg']);
    expect(await where({ 'n.x.y': { eq: null } })).toEqual(ALL.filter((n) => n !== 'int1'));
    expect(await where({ n: { eq: null } })).toEqual(ALL.filter((n) => !['int1', 'neg'].includes(n)));
  });
});

describe('metadata selectors', () => {
  it('filters on @status, separately from a data property named status', async () => {
    expect(await where({ '@status': { eq: 'published' } })).toEqual(['int1', 'dec1', 'str1']);
    expect(await where({ '@status': { ne: 'published' } })).toEqual(ALL.filter((n) => !['int1', 'dec1', 'str1'].includes(n)));
    expect(await where({ '@status': { in: ['draft'] } })).toEqual(ALL.filter((n) => !['int1', 'dec1', 'str1'].includes(n)));
    expect(await where({ status: { eq: 'archived' } })).toEqual(['int1']);
    expect(await where({ status: { eq: 'published' } })).toEqual(['str1']);
    expect(await where({ status: { eq: 'draft' } })).toEqual([]);
    expect(await where({ '@status': { eq: 'published' }, status: { eq: null } })).toEqual(['dec1']);
  });

  it('filters on @id, @entry_id, @bucket_id, @ref and @lock_version', async () => {
    expect(await where({ '@id': { eq: objs.neg.id } })).toEqual(['neg']);
    expect(await where({ '@id': { in: [objs.neg.id, objs.tru.id] } })).toEqual(['tru', 'neg']);
    expect(await where({ '@id': { gt: objs.arr.id } })).toEqual(['obj']);
    expect(await where({ '@id': { lte: objs.dec1.id } })).toEqual(['int1', 'dec1']);
    expect(await where({ '@entry_id': { eq: objs.dec25.entry_id } })).toEqual(['dec25']);
    expect(await where({ '@bucket_id': { eq: objs.int1.bucket_id } })).toEqual(ALL);
    expect(await where({ '@bucket_id': { ne: objs.int1.bucket_id } })).toEqual([]);
    expect(await where({ '@ref': { eq: 'd/int1' } })).toEqual(['int1']);
    expect(await where({ '@ref': { startsWith: 'x/' } })).toEqual(['arr', 'obj']);
    expect(await where({ '@ref': { endsWith: '1' } })).toEqual(['int1', 'dec1', 'str1']);
    expect(await where({ '@ref': { contains: 'tr' } })).toEqual(['str1', 'tru', 'strtrue']);
    expect(await where({ '@lock_version': { eq: 1 } })).toEqual(['int1', 'fals']);
    expect(await where({ '@lock_version': { gte: 1 }, v: { eq: false } })).toEqual(['fals']);
  });

  it('filters on @created_at and @updated_at with timestamps', async () => {
    expect(await where({ '@created_at': { gte: objs.neg.created_at } })).toEqual(['neg', 'strtrue', 'fals', 'arr', 'obj']);
    expect(await where({ '@created_at': { lt: objs.int1.created_at } })).toEqual([]);
    expect(await where({ '@created_at': { eq: objs.dec25.created_at } })).toEqual(['dec25']);
    expect(await where({ '@updated_at': { gt: objs.obj.created_at } })).toEqual(['int1', 'fals']);
    expect(await where({ '@updated_at': { gte: objs.fals.updated_at } })).toEqual(['fals']);
  });

  it.each([
    [{ '@id': { eq: 'x' } }, 'filter.@id.eq'],
    [{ '@status': { eq: 'archived' } }, 'filter.@status.eq'],
    [{ '@created_at': { gt: 'yesterday' } }, 'filter.@created_at.gt'],
    [{ '@lock_version': { eq: true } }, 'filter.@lock_version.eq'],
    [{ '@nope': { eq: 1 } }, 'filter.@nope'],
  ])('refuses %j with 422 on its path', async (filter, path) => {
    expect(await refused({ filter })).toContain(path);
  });
});

describe('fields', () => {
  it('projects data paths into data, null for missing ones, keeping the envelope complete', async () => {
    const res = await w.api.post(w.at('query'), {
      fields: ['n.x.y', 't', 'missing', 'v'],
      filter: { '@ref': { in: ['d/int1', 'd/none', 'd/neg', 'x/arr'] } },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { ...objs.int1, data: { n: { x: { y: 5 } }, t: 'Hello World', missing: null, v: 1 } },
      { ...objs.none, data: { n: { x: { y: null } }, t: null, missing: null, v: null } },
      { ...objs.neg, data: { n: { x: { y: null } }, t: null, missing: null, v: -3 } },
      { ...objs.arr, data: { n: { x: { y: null } }, t: ['Hello World'], missing: null, v: [1, 2] } },
    ]);
  });

  it('selects objects whole, gives {} for [] and the whole document when omitted', async () => {
    const one = { filter: { '@ref': { eq: 'd/int1' } } };
    expect((await w.api.post(w.at('query'), { ...one, fields: ['n'] })).body.data[0].data).toEqual({ n: { x: { y: 5 } } });
    expect((await w.api.post(w.at('query'), { ...one, fields: [] })).body.data[0].data).toEqual({});
    expect((await w.api.post(w.at('query'), one)).body.data[0].data).toEqual(objs.int1.data);
    expect((await w.api.post(w.at('query'), { ...one, fields: ['n.x', 'n.xy'] })).body.data[0].data).toEqual({
      n: { x: { y: 5 }, xy: null },
    });
  });

  it.each([
    [['n', 'n.x'], 'fields.1'],
    [['n.x.y', 'n'], 'fields.1'],
    [['t', 't'], 'fields.1'],
    [['a', 'b', 'a.b.c', 'a'], 'fields.2'],
    [['@id'], 'fields.0'],
    [['a..b'], 'fields.0'],
    [['a b'], 'fields.0'],
    [['a[0]'], 'fields.0'],
    [[''], 'fields.0'],
  ])('refuses fields %j with 422 on %s', async (fields, path) => {
    expect(await refused({ fields })).toContain(path);
  });
});

describe('sort', () => {
  const inD = { prefix: 'd' };
  it('orders untyped values by type (booleans, numbers, strings) then value, missing and null last, ties by id', async () => {
    expect(await names({ ...inD, sort: [{ field: 'v', direction: 'asc' }] })).toEqual([
      'fals',
      'tru',
      'neg',
      'int1',
      'dec1',
      'dec25',
      'str1',
      'strtrue',
      'nul',
      'none',
    ]);
    expect(await names({ ...inD, sort: [{ field: 'v', direction: 'desc' }] })).toEqual([
      'strtrue',
      'str1',
      'dec25',
      'int1',
      'dec1',
      'neg',
      'tru',
      'fals',
      'nul',
      'none',
    ]);
  });

  it('sorts typed strings in byte order and numbers numerically, missing and null last in both directions', async () => {
    expect(await names({ ...inD, sort: [{ field: 's', direction: 'asc', type: 'string' }] })).toEqual([
      'dec25',
      'int1',
      'strtrue',
      'str1',
      'dec1',
      'neg',
      'tru',
      'nul',
      'none',
      'fals',
    ]);
    expect(await names({ ...inD, sort: [{ field: 's', direction: 'desc', type: 'string' }] })).toEqual([
      'tru',
      'neg',
      'dec1',
      'str1',
      'int1',
      'strtrue',
      'dec25',
      'nul',
      'none',
      'fals',
    ]);
    const numbers = { filter: { '@ref': { in: ['d/int1', 'd/dec1', 'd/dec25', 'd/neg', 'd/nul', 'd/none'] } } };
    expect(await names({ ...numbers, sort: [{ field: 'v', direction: 'asc', type: 'number' }] })).toEqual([
      'neg',
      'int1',
      'dec1',
      'dec25',
      'nul',
      'none',
    ]);
    expect(await names({ ...numbers, sort: [{ field: 'v', direction: 'desc', type: 'number' }] })).toEqual([
      'dec25',
      'int1',
      'dec1',
      'neg',
      'nul',
      'none',
    ]);
    const booleans = { filter: { '@ref': { in: ['d/tru', 'd/fals', 'd/nul'] } } };
    expect(await names({ ...booleans, sort: [{ field: 'v', direction: 'asc', type: 'boolean' }] })).toEqual(['fals', 'tru', 'nul']);
    expect(await names({ ...booleans, sort: [{ field: 'v', direction: 'desc', type: 'boolean' }] })).toEqual(['tru', 'fals', 'nul']);
  });

  it('applies keys in order and sorts by metadata', async () => {
    expect(
      await names({
        ...inD,
        sort: [
          { field: '@status', direction: 'asc' },
          { field: 'v', direction: 'desc' },
        ],
      }),
    ).toEqual(['strtrue', 'dec25', 'neg', 'tru', 'fals', 'nul', 'none', 'str1', 'int1', 'dec1']);
    expect(await names({ sort: [{ field: '@id', direction: 'desc' }] })).toEqual([...ALL].reverse());
    expect(await names({ sort: [{ field: '@updated_at', direction: 'desc' }], limit: 2 })).toEqual(['fals', 'int1']);
    expect(await names({ sort: [{ field: '@ref', direction: 'asc' }], filter: { '@ref': { startsWith: 'd/s' } } })).toEqual([
      'str1',
      'strtrue',
    ]);
    expect(await names({ sort: [] })).toEqual(ALL);
  });

  it('refuses a typed sort over values of another type, and arrays or objects, with 422', async () => {
    expect((await refused({ ...inD, sort: [{ field: 'v', direction: 'asc', type: 'number' }] })).some((k) => k.startsWith('sort'))).toBe(
      true,
    );
    expect((await refused({ ...inD, sort: [{ field: 'v', direction: 'asc', type: 'string' }] })).some((k) => k.startsWith('sort'))).toBe(
      true,
    );
    expect((await refused({ ...inD, sort: [{ field: 's', direction: 'desc', type: 'boolean' }] })).some((k) => k.startsWith('sort'))).toBe(
      true,
    );
    expect((await refused({ prefix: 'x', sort: [{ field: 'v', direction: 'asc' }] })).some((k) => k.startsWith('sort'))).toBe(true);
    expect(
      (await refused({ sort: [{ field: 'n', direction: 'asc' }], filter: { '@ref': { eq: 'd/int1' } } })).some((k) => k.startsWith('sort')),
    ).toBe(true);
  });

  it('refuses a value no page shows: the whole matching set is checked, key by key', async () => {
    const x = await objectsWorkspace(s);
    for (const [ref, text] of [
      ['a', '{"n":1,"t":"x"}'],
      ['b', '{"n":2,"t":"y"}'],
      ['c', '{"n":"3","t":5}'],
      ['d', '{"n":4,"t":"z"}'],
    ])
      await createRaw(x, ref, text);
    const byNumber = { field: 'n', direction: 'asc', type: 'number' };
    const byString = { field: 't', direction: 'asc', type: 'string' };
    expect(await refused({ sort: [byNumber], limit: 1 }, x)).toEqual(['sort.0.field']);
    expect(await refused({ sort: [byNumber], limit: 1, offset: 3 }, x)).toEqual(['sort.0.field']);
    // Both keys fail on the same row: the first key is reported; only the second fails elsewhere.
    expect(await refused({ sort: [byString, byNumber], limit: 1 }, x)).toEqual(['sort.0.field']);
    expect(await refused({ sort: [{ field: '@id', direction: 'asc' }, byString], limit: 1 }, x)).toEqual(['sort.1.field']);
    const fine = await x.api.post(x.at('query'), { sort: [byNumber], limit: 2, filter: { '@ref': { in: ['a', 'b', 'd'] } } });
    expect(fine.status).toBe(200);
    expect(fine.body.data.map((o: any) => o.ref)).toEqual(['a', 'b']);
  });

  it('needs exact DECIMAL(38,12) numbers for a numeric sort', async () => {
    const v = await objectsWorkspace(s);
    await createRaw(v, 'a', '{"n":1.5}');
    await createRaw(v, 'b', '{"n":0.1234567890123}');
    expect(await refused({ sort: [{ field: 'n', direction: 'asc', type: 'number' }] }, v)).toEqual(['sort.0.field']);
    const u = await objectsWorkspace(s);
    await createRaw(u, 'a', '{"n":1}');
    await createRaw(u, 'b', '{"n":1e30}');
    expect((await refused({ sort: [{ field: 'n', direction: 'asc', type: 'number' }] }, u)).some((k) => k.startsWith('sort'))).toBe(true);
    const negative = await objectsWorkspace(s);
    await createRaw(negative, 'a', '{"n":-100000000000000000000000000}');
    expect(await refused({ sort: [{ field: 'n', direction: 'asc', type: 'number' }] }, negative)).toEqual(['sort.0.field']);
    const fine = await objectsWorkspace(s);
    await createRaw(fine, 'a', '{"n":12345678901234567890123456.123456789012}');
    await createRaw(fine, 'b', '{"n":-0.000000000001}');
    await createRaw(fine, 'c', '{"n":2}');
    // Written with more places than 12, the value itself still has 12 at most.
    await createRaw(fine, 'd', '{"n":1.50000000000000000000}');
    await createRaw(fine, 'e', '{"n":-99999999999999999999999999.999999999999}');
    const res = await fine.api.post(fine.at('query'), { sort: [{ field: 'n', direction: 'desc', type: 'number' }] });
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: any) => o.ref)).toEqual(['a', 'c', 'd', 'b', 'e']);
    expect(res.text).toContain('12345678901234567890123456.123456789012');
  });
});

describe('paging', () => {
  it('pages with offset and limit after sorting; hasMore says whether more match', async () => {
    const sort = [{ field: 'v', direction: 'desc' }];
    const all = await names({ prefix: 'd', sort });
    const pages: string[][] = [];
    for (let offset = 0; offset < 12; offset += 3) {
      const res = await w.api.post(w.at('query'), { prefix: 'd', sort, offset, limit: 3 });
      expect(res.body.pagination).toEqual({ offset, limit: 3, hasMore: offset + 3 < all.length });
      pages.push(res.body.data.map((o: any) => o.ref.slice(2)));
    }
    expect(pages.flat()).toEqual(all);
    expect(pages[3]).toEqual(all.slice(9));
    const past = await w.api.post(w.at('query'), { offset: 10000, limit: 100 });
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { offset: 10000, limit: 100, hasMore: false } });
    const exact = await w.api.post(w.at('query'), { offset: 0, limit: 12 });
    expect(exact.body.pagination.hasMore).toBe(false);
    const one = await w.api.post(w.at('query'), { offset: 0, limit: 11 });
    expect(one.body.pagination.hasMore).toBe(true);
  });
});

describe('locale', () => {
  it('filters, sorts and returns the data of the selected language only, without fallback', async () => {
    const res = await w.api.post(w.at('query'), { locale: 'de-DE', filter: { v: { eq: 99 } } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([{ ...objs.int1, locale: 'de-DE', data: { v: 99, s: 'Z', t: 'Hallo Welt' } }]);
    expect(await names({ locale: 'de-DE', filter: { v: { eq: 1 } } })).toEqual([]);
    expect(await names({ locale: 'de-DE', filter: { v: { eq: null } } })).toEqual(ALL.filter((n) => n !== 'int1'));
    const all = await w.api.post(w.at('query'), { locale: 'de-DE', limit: 100 });
    for (const o of all.body.data) {
      expect(o.locale).toBe('de-DE');
      if (o.ref !== 'd/int1') expect(o.data).toBeNull();
    }
    const projected = await w.api.post(w.at('query'), { locale: 'de-DE', fields: ['t'], filter: { '@ref': { in: ['d/int1', 'd/dec1'] } } });
    expect(projected.body.data.map((o: any) => o.data)).toEqual([{ t: 'Hallo Welt' }, { t: null }]);
    expect((await names({ locale: 'de-DE', sort: [{ field: 's', direction: 'asc' }], limit: 2 }))[0]).toBe('int1');
    expect(await names({ locale: 'en-US', filter: { v: { eq: 99 } } })).toEqual([]);
  });

  it.each(['fr-FR', '*', 'de_DE', 'xx'])('refuses locale %s with 422 on locale', async (locale) => {
    expect(await refused({ locale })).toContain('locale');
  });
});

describe('limits and invalid queries: 422 with the error path', () => {
  const nest = (depth: number): Record<string, unknown> => {
    let f: Record<string, unknown> = { v: { eq: 1 } };
    for (let i = 0; i < depth; i++) f = { $and: [f] };
    return f;
  };
  const path = (steps: number) => Array.from({ length: steps }, (_, i) => `p${i}`).join('.');

  it('allows 8 nested groups and refuses 9', async () => {
    expect(await where(nest(8))).toEqual(['int1', 'dec1']);
    expect((await refused({ filter: nest(9) })).some((k) => k.startsWith('filter'))).toBe(true);
    const mixed = { $or: [{ $and: [nest(7)] }] };
    expect((await refused({ filter: mixed })).some((k) => k.startsWith('filter'))).toBe(true);
  });

  it('allows 100 groups, operators and in operands in total, and refuses more', async () => {
    const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, { ne: i }]));
    expect(await where(keys(100))).toEqual([]);
    expect((await refused({ filter: keys(101) })).some((k) => k.startsWith('filter'))).toBe(true);
    // One group and 100 operators.
    expect((await refused({ filter: { $and: [keys(100)] } })).some((k) => k.startsWith('filter'))).toBe(true);
    // One group of 50 operators: 51.
    expect(await where({ $or: Array.from({ length: 49 }, (_, i) => ({ v: { eq: i + 100 } })).concat([{ v: { eq: 1 } }]) })).toEqual([
      'int1',
      'dec1',
    ]);
    // in operands count too: 2 operators with 60 operands each.
    const operands = Array.from({ length: 60 }, (_, i) => i);
    expect((await refused({ filter: { a: { in: operands }, b: { in: operands } } })).some((k) => k.startsWith('filter'))).toBe(true);
  });

  it('allows paths of 12 steps and 256 characters, and refuses 13 steps or 257 characters', async () => {
    const long = (n: number) => 'a'.repeat(n);
    expect(await where({ [path(12)]: { eq: 1 } })).toEqual([]);
    expect(await where({ [long(256)]: { eq: 1 } })).toEqual([]);
    expect(await names({ sort: [{ field: path(12), direction: 'asc' }], limit: 1 })).toEqual(['int1']);
    expect(await names({ fields: [path(12), long(256)], limit: 1 })).toEqual(['int1']);
    expect(await refused({ filter: { [path(13)]: { eq: 1 } } })).toContain(`filter.${path(13)}`);
    expect(await refused({ filter: { [long(257)]: { eq: 1 } } })).toContain(`filter.${long(257)}`);
    expect((await refused({ filter: { $or: [{ [path(13)]: { eq: 1 } }] } })).some((k) => k.startsWith('filter.$or.0'))).toBe(true);
    expect((await refused({ sort: [{ field: path(13), direction: 'asc' }] })).some((k) => k.startsWith('sort.0'))).toBe(true);
    expect((await refused({ sort: [{ field: long(257), direction: 'asc' }] })).some((k) => k.startsWith('sort.0'))).toBe(true);
    expect(await refused({ fields: ['ok', path(13)] })).toContain('fields.1');
    expect(await refused({ fields: [long(257)] })).toContain('fields.0');
  });

  it('refuses an invalid data path in a filter key or sort', async () => {
    for (const bad of ['a b', 'a..b', '.a', 'a.', 'a[0]', 'a/b', '']) {
      expect(await refused({ filter: { [bad]: { eq: 1 } } })).toContain(`filter.${bad}`);
      expect((await refused({ sort: [{ field: bad, direction: 'asc' }] })).some((k) => k.startsWith('sort.0'))).toBe(true);
    }
  });

  it.each([
    ['in with 101 operands', { filter: { v: { in: Array.from({ length: 101 }, (_, i) => i) } } }, 'filter.v.in'],
    ['in with no operands', { filter: { v: { in: [] } } }, 'filter.v.in'],
    ['in with an array operand', { filter: { v: { in: [[1]] } } }, 'filter.v.in.0'],
    ['6 sort keys', { sort: Array.from({ length: 6 }, () => ({ field: 'v', direction: 'asc' })) }, 'sort'],
    ['a sort direction', { sort: [{ field: 'v', direction: 'up' }] }, 'sort.0.direction'],
    ['a sort type', { sort: [{ field: 'v', direction: 'asc', type: 'date' }] }, 'sort.0.type'],
    ['a sort key without field', { sort: [{ direction: 'asc' }] }, 'sort.0.field'],
    ['101 fields', { fields: Array.from({ length: 101 }, (_, i) => `f${i}`) }, 'fields'],
    ['limit 101', { limit: 101 }, 'limit'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['offset 10001', { offset: 10001 }, 'offset'],
    ['offset -1', { offset: -1 }, 'offset'],
    ['a string limit', { limit: '10' }, 'limit'],
    ['an unknown operator', { filter: { t: { like: 'x%' } } }, 'filter.t.like'],
    ['an unknown top-level property', { where: { t: { eq: 'x' } } }, 'where'],
    ['a bare value instead of a condition', { filter: { title: 'x' } }, 'filter.title'],
    ['null instead of a condition', { filter: { title: null } }, 'filter.title'],
    ['an empty condition', { filter: { title: {} } }, 'filter.title'],
    ['an object operand', { filter: { v: { eq: { a: 1 } } } }, 'filter.v.eq'],
    ['an array operand', { filter: { v: { eq: [1] } } }, 'filter.v.eq'],
    ['a boolean lt', { filter: { v: { lt: true } } }, 'filter.v.lt'],
    ['a null gt', { filter: { v: { gt: null } } }, 'filter.v.gt'],
    ['a number startsWith', { filter: { v: { startsWith: 1 } } }, 'filter.v.startsWith'],
    ['a filter that is an array', { filter: [{ v: { eq: 1 } }] }, 'filter'],
    ['a filter that is a string', { filter: 'v = 1' }, 'filter'],
    ['a group that is not an array', { filter: { $and: { v: { eq: 1 } } } }, 'filter.$and'],
    ['an empty group', { filter: { $or: [] } }, 'filter.$or'],
    ['a group item that is not an object', { filter: { $or: [1] } }, 'filter.$or.0'],
    ['$not', { filter: { $not: { v: { eq: 1 } } } }, 'filter.$not'],
    ['fields that are not an array', { fields: 'title' }, 'fields'],
    ['a body that is an array', [], 'body'],
  ])('%s', async (_label, body, key) => {
    expect(await refused(body)).toContain(key);
  });

  it('answers malformed JSON with 422 on this route', async () => {
    for (const text of ['{"filter": {', 'not json', '{"a":1}}']) {
      const res = await rawJson(w.api, 'POST', w.at('query'), text);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).length).toBeGreaterThan(0);
    }
  });

  it('refuses a body over 64 KiB with 413 and accepts one just under', async () => {
    const over = await w.api.post(w.at('query'), { filter: { t: { eq: 'x'.repeat(64 * 1024) } } });
    expect(over.status).toBe(413);
    const under = await w.api.post(w.at('query'), { filter: { t: { eq: 'x'.repeat(64 * 1024 - 100) } } });
    expect(under.status).toBe(200);
    expect(under.body.data).toEqual([]);
  });
});
