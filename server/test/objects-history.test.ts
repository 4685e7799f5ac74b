// Objects history: revisions (list, detail, compare), restoring a revision, the Trash and
// recovery from it, expiry after 30 days on the test clock, and the objects:prune-trash task.
import { startTestServer, type TestServer } from './support/server';
import type { TestResponse } from './support/http';
import { TIMESTAMP } from './support/fixtures';
import {
  createObject,
  createRaw,
  createSubmission,
  deleteObject,
  objectsWorkspace,
  openReview,
  queryAll,
  readAny,
  relative,
  resolveReview,
  updateObject,
  type ObjectsWorkspace,
} from './support/objects';

let s: TestServer;
beforeAll(async () => {
  // The scheduler ticks only when a write wakes it, so the hourly prune runs when a test says so.
  s = await startTestServer({ TEST_CLOCK: '1', SCHEDULER_TICK_MS: '3600000' });
});
afterEach(() => s.admin.delete('/admin/v1/clock'));
afterAll(() => s.close());

const DAY = 86_400;
const advance = (seconds: number) => s.admin.post('/admin/v1/clock', { advance_seconds: seconds });

async function revisions(w: ObjectsWorkspace, id: number): Promise<any[]> {
  const res = await w.api.get(`${w.at(id, 'revisions')}?per_page=100`);
  if (res.status !== 200) throw new Error(`revisions: ${res.status} ${res.text}`);
  return res.body.data;
}

async function compare(w: ObjectsWorkspace, id: number, from: number, to: number) {
  const res = await w.api.get(`${w.at(id, 'revisions', 'compare')}?from=${from}&to=${to}`);
  expect(res.status).toBe(200);
  return res;
}

const byPath = (changes: any[]) => [...changes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

async function trash(w: ObjectsWorkspace): Promise<any[]> {
  const res = await w.api.get(`${w.at('trash')}?per_page=100`);
  if (res.status !== 200) throw new Error(`trash: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Microseconds since the epoch of a wire timestamp (Date keeps only milliseconds). */
function micros(t: string): bigint {
  const [whole, fraction] = t.slice(0, -1).split('.');
  return BigInt(Date.parse(`${whole}Z`)) * 1000n + BigInt(fraction);
}

describe('revisions', () => {
  it('records a revision per real change and none for a no-op save, newest first', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, { ref: 'h/a', data: { a: 1, b: { c: [1, 2] } } });
    const created = await revisions(w, o.id);
    expect(created).toEqual([
      {
        id: expect.any(Number),
        object_id: o.id,
        entry_id: o.entry_id,
        event: 'created',
        restored_from: null,
        actor: `api_key:${w.keyId}`,
        source: 'api',
        created_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    o = await updateObject(w, o, { data: { a: 2, b: { c: [1, 2] } } });
    expect(await revisions(w, o.id)).toHaveLength(2);
    // The same document again (keys in another order): the version moves, the history does not.
    o = await updateObject(w, o, { data: { b: { c: [1, 2] }, a: 2 } });
    expect(o.lock_version).toBe(2);
    expect(await revisions(w, o.id)).toHaveLength(2);
    // Status, translations and the ref are versioned: each is a real change.
    o = await updateObject(w, o, { data: o.data, status: 'published' });
    o = await updateObject(w, o, { data: o.data, translations: { 'de-DE': { a: 'zwei' } } });
    o = await updateObject(w, o, { data: o.data, ref: 'h/renamed' });
    o = await updateObject(w, o, { data: o.data });
    expect(o.lock_version).toBe(6);
    const list = await revisions(w, o.id);
    expect(list.map((r) => r.event)).toEqual(['updated', 'updated', 'updated', 'updated', 'created']);
    const ids = list.map((r) => r.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
    for (const r of list) expect(r).toEqual({ ...created[0], id: r.id, event: r.event, created_at: expect.stringMatching(TIMESTAMP) });
    // Reading history changes nothing.
    expect((await readAny(w, o.id)).lock_version).toBe(6);
  });

  it('records no revision for a save that repeats the translations, in whatever key order', async () => {
    const w = await objectsWorkspace(s, { locales: ['de-DE', 'fr-FR'] });
    let o = await createObject(w, { ref: 'tr', data: { t: 'en' } });
    o = await updateObject(w, o, { data: { t: 'en' }, translations: { 'fr-FR': { t: 'fr' }, 'de-DE': { t: 'de' } } });
    const count = (await revisions(w, o.id)).length;
    expect(count).toBe(2);
    // Omitted translations are kept: nothing changes.
    o = await updateObject(w, o, { data: { t: 'en' } });
    expect(await revisions(w, o.id)).toHaveLength(count);
    // The same map in another key order: nothing changes either.
    o = await updateObject(w, o, { data: { t: 'en' }, translations: { 'de-DE': { t: 'de' }, 'fr-FR': { t: 'fr' } } });
    o = await updateObject(w, o, { data: { t: 'en' }, translations: { 'fr-FR': { t: 'fr' }, 'de-DE': { t: 'de' } } });
    expect(await revisions(w, o.id)).toHaveLength(count);
    expect(o.lock_version).toBe(4);
  });

  it('pages revisions with per_page and a cursor', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, { ref: 'p', data: { n: 0 } });
    for (let n = 1; n <= 4; n++) o = await updateObject(w, o, { data: { n } });
    const all = await revisions(w, o.id);
    expect(all).toHaveLength(5);
    const first = await w.api.get(w.at(o.id, 'revisions'));
    expect(first.body).toEqual({ data: all, next_cursor: null, next_page_url: null });
    const seen: any[] = [];
    let url: string | null = `${w.at(o.id, 'revisions')}?per_page=2`;
    let pages = 0;
    while (url) {
      const res: TestResponse = await w.api.get(url);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.data);
      url = res.body.next_page_url ? relative(s, res.body.next_page_url) : null;
      if (++pages > 5) throw new Error('no end');
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(all);
    for (const bad of ['per_page=0', 'per_page=101', 'cursor=nonsense']) {
      const res = await w.api.get(`${w.at(o.id, 'revisions')}?${bad}`);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual([bad.split('=')[0]]);
    }
  });

  it('pages 25 revisions by default', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, { ref: 'many', data: { n: 0 } });
    for (let n = 1; n <= 25; n++) o = await updateObject(w, o, { data: { n } });
    const first = await w.api.get(w.at(o.id, 'revisions'));
    expect(first.body.data).toHaveLength(25);
    expect(first.body.next_page_url).not.toBeNull();
    const rest = await w.api.get(relative(s, first.body.next_page_url));
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.data[0].event).toBe('created');
    expect(rest.body.next_page_url).toBeNull();
  });

  it('shows a revision with its snapshot: content, translations, locales, bucket, ref, contract, status, schedule', async () => {
    const w = await objectsWorkspace(s);
    const o = await createRaw(
      w,
      'snap/a',
      '{"big":12345678901234567890123,"precise":0.1000000000000000055511151231257827,"e":{},"l":[],"z":null,"t":true}',
      { contract: false },
    );
    expect(o.contract).toBeNull();
    const u = await updateObject(w, o, {
      data: { v: 2 },
      translations: { 'de-DE': { v: 'zwei', x: [] } },
      status: 'published',
      ref: 'snap/b',
    });
    const [second, first] = await revisions(w, o.id);
    const one = await w.api.get(w.at(o.id, 'revisions', first.id));
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      ...first,
      snapshot: {
        data: { big: expect.any(Number), precise: expect.any(Number), e: {}, l: [], z: null, t: true },
        translations: {},
        locales: ['en-US'],
        bucket_id: o.bucket_id,
        ref: 'snap/a',
        contract: false,
        status: 'draft',
        publish_at: null,
      },
    });
    expect(one.text).toContain('12345678901234567890123');
    expect(one.text).toContain('0.1000000000000000055511151231257827');
    const two = await w.api.get(w.at(o.id, 'revisions', second.id));
    expect(two.body.snapshot).toEqual({
      data: { v: 2 },
      translations: { 'de-DE': { v: 'zwei', x: [] } },
      locales: expect.arrayContaining(['en-US', 'de-DE']),
      bucket_id: o.bucket_id,
      ref: 'snap/b',
      contract: false,
      status: 'published',
      publish_at: null,
    });
    expect(two.body.snapshot.locales).toHaveLength(2);
    expect(u.lock_version).toBe(1);
  });

  it('answers 404 for revisions of another object or workspace, missing ones, and objects without history here', async () => {
    const w = await objectsWorkspace(s);
    const other = await objectsWorkspace(s);
    const a = await createObject(w, { ref: 'a', data: {} });
    const b = await createObject(w, { ref: 'b', data: {} });
    const f = await createObject(other, { ref: 'f', data: {} });
    const [ra] = await revisions(w, a.id);
    const [rb] = await revisions(w, b.id);
    const [rf] = await revisions(other, f.id);
    const sub = await createSubmission(s, w.ws, 'forms/1');
    const notFound = [
      w.at(a.id, 'revisions', rb.id),
      w.at(a.id, 'revisions', rf.id),
      w.at(a.id, 'revisions', 2147483647),
      `${w.at(a.id, 'revisions', 'compare')}?from=${ra.id}&to=${rb.id}`,
      `${w.at(a.id, 'revisions', 'compare')}?from=${rb.id}&to=${ra.id}`,
      `${w.at(a.id, 'revisions', 'compare')}?from=${rf.id}&to=${ra.id}`,
      w.at(f.id, 'revisions'),
      w.at(f.id, 'revisions', rf.id),
      w.at(2147483647, 'revisions'),
      w.at(sub.id, 'revisions'),
    ];
    for (const path of notFound) {
      const res = await w.api.get(path);
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect((await w.api.get(w.at(a.id, 'revisions', ra.id))).status).toBe(200);
  });
});

describe('compare', () => {
  it('lists changes as JSON Pointers, with absent distinct from null and arrays compared whole', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, {
      ref: 'c',
      data: { 'a/b': 1, 'c~d': 2, keep: 1, gone: 1, nul: 1, arr: [1, 2], obj: { x: 1 }, same: [1, { z: 1 }] },
    });
    o = await updateObject(w, o, {
      data: { 'a/b': 2, 'c~d': 3, keep: 1, nul: null, arr: [2, 1], obj: { x: 1, y: null }, new: null, same: [1, { z: 1 }] },
    });
    o = await updateObject(w, o, {
      data: { 'a/b': 2, 'c~d': 3, keep: 1, arr: [2, 1], obj: { x: 1, y: null }, new: null, same: [1, { z: 1 }] },
    });
    const [r3, r2, r1] = await revisions(w, o.id);
    const res = await compare(w, o.id, r1.id, r2.id);
    expect(res.body.from).toBe(r1.id);
    expect(res.body.to).toBe(r2.id);
    expect(res.body.truncated).toBe(false);
    expect(byPath(res.body.changes)).toEqual(
      byPath([
        { path: '/data/a~1b', operation: 'changed', before: 1, after: 2 },
        { path: '/data/arr', operation: 'changed', before: [1, 2], after: [2, 1] },
        { path: '/data/c~0d', operation: 'changed', before: 2, after: 3 },
        { path: '/data/gone', operation: 'removed', before: 1 },
        { path: '/data/new', operation: 'added', after: null },
        { path: '/data/nul', operation: 'changed', before: 1, after: null },
        { path: '/data/obj/y', operation: 'added', after: null },
      ]),
    );
    const raw = JSON.parse(res.text).changes;
    for (const c of raw) {
      if (c.operation === 'added') expect(Object.keys(c).sort()).toEqual(['after', 'operation', 'path']);
      if (c.operation === 'removed') expect(Object.keys(c).sort()).toEqual(['before', 'operation', 'path']);
      if (c.operation === 'changed') expect(Object.keys(c).sort()).toEqual(['after', 'before', 'operation', 'path']);
    }
    // null to absent is a removal of null; the reverse an addition of null.
    expect((await compare(w, o.id, r2.id, r3.id)).body.changes).toEqual([{ path: '/data/nul', operation: 'removed', before: null }]);
    expect((await compare(w, o.id, r3.id, r2.id)).body.changes).toEqual([{ path: '/data/nul', operation: 'added', after: null }]);
    expect((await compare(w, o.id, r2.id, r2.id)).body).toEqual({ from: r2.id, to: r2.id, changes: [], truncated: false });
  });

  it('reports status, translations, locales and ref changes, and keeps exact numbers', async () => {
    const w = await objectsWorkspace(s);
    const o = await createRaw(w, 'x/a', '{"n":12345678901234567890123}');
    await updateObject(w, o, { data: { n: 1 }, translations: { 'de-DE': { t: 'x' } }, status: 'published', ref: 'x/b' });
    const [r2, r1] = await revisions(w, o.id);
    const res = await compare(w, o.id, r1.id, r2.id);
    const changes = byPath(res.body.changes);
    expect(changes).toEqual(
      expect.arrayContaining([
        { path: '/data/n', operation: 'changed', before: expect.any(Number), after: 1 },
        { path: '/ref', operation: 'changed', before: 'x/a', after: 'x/b' },
        { path: '/status', operation: 'changed', before: 'draft', after: 'published' },
        { path: '/translations/de-DE', operation: 'added', after: { t: 'x' } },
        { path: '/locales', operation: 'changed', before: ['en-US'], after: expect.arrayContaining(['en-US', 'de-DE']) },
      ]),
    );
    expect(changes).toHaveLength(5);
    expect(res.text).toContain('"before":12345678901234567890123');
  });

  it('stops at 500 changes with truncated: true', async () => {
    const w = await objectsWorkspace(s);
    const keys = (n: number, v: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(3, '0')}`, v]));
    let o = await createObject(w, { ref: 'many', data: keys(600, 0) });
    o = await updateObject(w, o, { data: keys(600, 1) });
    const [r2, r1] = await revisions(w, o.id);
    const res = await compare(w, o.id, r1.id, r2.id);
    expect(res.body.truncated).toBe(true);
    expect(res.body.changes).toHaveLength(500);
    expect(new Set(res.body.changes.map((c: any) => c.path)).size).toBe(500);
    for (const c of res.body.changes)
      expect(c).toEqual({ path: expect.stringMatching(/^\/data\/k\d{3}$/), operation: 'changed', before: 0, after: 1 });
    // Exactly 500: complete.
    let p = await createObject(w, { ref: 'five-hundred', data: keys(500, 0) });
    p = await updateObject(w, p, { data: keys(500, 1) });
    const [p2, p1] = await revisions(w, p.id);
    const full = await compare(w, p.id, p1.id, p2.id);
    expect(full.body.truncated).toBe(false);
    expect(full.body.changes).toHaveLength(500);
  });

  it('needs both revision ids', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'c', data: {} });
    const [r] = await revisions(w, o.id);
    const res = await w.api.get(`${w.at(o.id, 'revisions', 'compare')}?from=${r.id}`);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['to']);
  });
});

describe('restore a revision', () => {
  async function history(w: ObjectsWorkspace) {
    let o = await createObject(w, { ref: 'r/one', data: { v: 1 } });
    o = await updateObject(w, o, { data: { v: 2 }, translations: { 'de-DE': { v: 'zwei' } }, ref: 'r/two', status: 'published' });
    o = await updateObject(w, o, { data: { v: 3 } });
    const [r3, r2, r1] = await revisions(w, o.id);
    return { o, r1, r2, r3 };
  }

  it('restores content, translations, locales and ref as a new revision, keeping the current status', async () => {
    const w = await objectsWorkspace(s);
    const { o, r1, r2, r3 } = await history(w);
    const res = await w.api.post(w.at(o.id, 'restore'), { revision_id: r1.id, lock_version: o.lock_version });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: o.id, entry_id: o.entry_id, ref: 'r/one', lock_version: o.lock_version + 1, status: 'published' });
    // Delivered at once: the object is published, with the old content and no translation.
    const read = await w.api.get(`${w.at(o.id)}?locale=*`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      data: { v: 1 },
      translations: {},
      locales: ['en-US'],
      ref: 'r/one',
      status: 'published',
      lock_version: o.lock_version + 1,
    });
    const list = await revisions(w, o.id);
    expect(list).toHaveLength(4);
    expect(list[0]).toMatchObject({ event: 'restored', restored_from: r1.id, actor: `api_key:${w.keyId}`, source: 'api' });
    expect(list[0].id).toBeGreaterThan(r3.id);
    expect(list.slice(1).map((r) => r.id)).toEqual([r3.id, r2.id, r1.id]);
    // History is not rewritten.
    expect((await w.api.get(w.at(o.id, 'revisions', r2.id))).body.snapshot).toMatchObject({
      data: { v: 2 },
      ref: 'r/two',
      translations: { 'de-DE': { v: 'zwei' } },
    });
    // And back to the translated state.
    const again = await w.api.post(w.at(o.id, 'restore'), { revision_id: r2.id, lock_version: res.body.lock_version });
    expect(again.body).toMatchObject({ ref: 'r/two', status: 'published' });
    expect((await w.api.get(`${w.at(o.id)}?locale=de-DE`)).body.data).toEqual({ v: 'zwei' });
  });

  it('restores the bucket and the contract selection', async () => {
    const w = await objectsWorkspace(s);
    const blog = (await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets`, { name: 'blog' })).body;
    let o = await createObject(w, { ref: 'b/one', data: { v: 1 }, contract: false });
    const general = o.bucket_id;
    o = await updateObject(w, o, { data: { v: 2 }, bucket_id: blog.id, contract: null });
    expect(o).toMatchObject({ bucket: 'blog', bucket_id: blog.id });
    const [r2, r1] = await revisions(w, o.id);
    expect((await w.api.get(w.at(o.id, 'revisions', r2.id))).body.snapshot).toMatchObject({ bucket_id: blog.id, contract: null });
    const res = await w.api.post(w.at(o.id, 'restore'), { revision_id: r1.id, lock_version: o.lock_version });
    expect(res.status).toBe(200);
    const back = await readAny(w, o.id);
    expect(back).toMatchObject({ bucket: 'general', bucket_id: general, ref: 'b/one', data: { v: 1 } });
    const [latest] = await revisions(w, o.id);
    expect(latest).toMatchObject({ event: 'restored', restored_from: r1.id });
    expect((await w.api.get(w.at(o.id, 'revisions', latest.id))).body.snapshot).toMatchObject({
      bucket_id: general,
      contract: false,
      ref: 'b/one',
      data: { v: 1 },
    });
  });

  describe('refusals change neither content nor history', () => {
    let w: ObjectsWorkspace;
    let h: Awaited<ReturnType<typeof history>>;
    let before: any;
    beforeAll(async () => {
      w = await objectsWorkspace(s);
      h = await history(w);
      before = await readAny(w, h.o.id);
    });
    afterEach(async () => {
      expect(await readAny(w, h.o.id)).toEqual(before);
      expect((await revisions(w, h.o.id)).map((r) => r.id)).toEqual([h.r3.id, h.r2.id, h.r1.id]);
    });

    it('a stale lock_version: 422', async () => {
      for (const lock of [h.o.lock_version - 1, h.o.lock_version + 1]) {
        const res = await w.api.post(w.at(h.o.id, 'restore'), { revision_id: h.r1.id, lock_version: lock });
        expect(res.status).toBe(422);
        expect(Object.keys(res.body.errors)).toEqual(['lock_version']);
      }
    });

    it('no lock_version: 422', async () => {
      const res = await w.api.post(w.at(h.o.id, 'restore'), { revision_id: h.r1.id });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['lock_version']);
    });

    it('no revision_id for a live object: 422', async () => {
      const res = await w.api.post(w.at(h.o.id, 'restore'), { lock_version: h.o.lock_version });
      expect(res.status).toBe(422);
    });

    it('a pending review: 422', async () => {
      const review = await openReview(s, w.ws, h.o.entry_id);
      const res = await w.api.post(w.at(h.o.id, 'restore'), { revision_id: h.r1.id, lock_version: h.o.lock_version });
      expect(res.status).toBe(422);
      await resolveReview(s, w.ws, review.id);
    });

    it('a revision of another object: refused', async () => {
      const other = await createObject(w, { ref: 'other', data: { other: true } });
      const [ro] = await revisions(w, other.id);
      const res = await w.api.post(w.at(h.o.id, 'restore'), { revision_id: ro.id, lock_version: h.o.lock_version });
      expect([404, 422]).toContain(res.status);
      expect((await readAny(w, other.id)).data).toEqual({ other: true });
    });

    it('a reference occupied by another object: 422', async () => {
      const squatter = await createObject(w, { ref: 'r/one', data: { squatter: true } });
      const res = await w.api.post(w.at(h.o.id, 'restore'), { revision_id: h.r1.id, lock_version: h.o.lock_version });
      expect(res.status).toBe(422);
      expect((await readAny(w, squatter.id)).data).toEqual({ squatter: true });
      await deleteObject(w, squatter.id, 0);
    });
  });

  it('answers 404 for missing and foreign objects', async () => {
    const w = await objectsWorkspace(s);
    const other = await objectsWorkspace(s);
    const f = await createObject(other, { ref: 'f', data: {} });
    const [rf] = await revisions(other, f.id);
    for (const id of [f.id, 2147483647]) {
      const res = await w.api.post(w.at(id, 'restore'), { revision_id: rf.id, lock_version: 0 });
      expect(res.status).toBe(404);
    }
    expect((await readAny(other, f.id)).lock_version).toBe(0);
  });
});

describe('Trash and recovery', () => {
  it('keeps a deleted object in Trash for 30 days and recovers it as a draft with the same ids', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, { ref: 'tr/a', data: { v: 1 }, status: 'published' });
    o = await updateObject(w, o, { data: { v: 2 }, translations: { 'de-DE': { v: 'zwei' } } });
    const clock = Date.parse((await s.admin.get('/admin/v1/clock')).body.now);
    await deleteObject(w, o.id, o.lock_version);
    const rows = await trash(w);
    expect(rows).toEqual([
      {
        object_id: o.id,
        entry_id: o.entry_id,
        bucket_id: o.bucket_id,
        ref: 'tr/a',
        lock_version: expect.any(Number),
        deleted_at: expect.stringMatching(TIMESTAMP),
        expires_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    const row = rows[0];
    expect(row.lock_version).toBeGreaterThanOrEqual(o.lock_version);
    expect(Math.abs(Date.parse(row.deleted_at) - clock)).toBeLessThan(5_000);
    expect(micros(row.expires_at) - micros(row.deleted_at)).toBe(30n * 86_400n * 1_000_000n);
    // While in Trash its history stays readable.
    const history = await revisions(w, o.id);
    expect(history.length).toBeGreaterThanOrEqual(2);

    const res = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: o.id, entry_id: o.entry_id, ref: 'tr/a', lock_version: expect.any(Number), status: 'draft' });
    expect(res.body.lock_version).toBeGreaterThan(row.lock_version);
    expect(res.body.lock_version).toBeGreaterThan(o.lock_version);
    expect(await trash(w)).toEqual([]);
    // A draft now: not delivered, but there with its content and translations.
    expect((await w.api.get(w.at(o.id))).status).toBe(404);
    const back = await readAny(w, o.id);
    expect(back).toMatchObject({
      id: o.id,
      entry_id: o.entry_id,
      ref: 'tr/a',
      data: { v: 2 },
      status: 'draft',
      lock_version: res.body.lock_version,
    });
    expect((await readAny(w, o.id, 'de-DE')).data).toEqual({ v: 'zwei' });
    const after = await revisions(w, o.id);
    expect(after[0]).toMatchObject({ event: 'recovered', object_id: o.id });
    expect(after.length).toBeGreaterThan(history.length);
    // Versions keep increasing: the recovered version is the one to write with.
    const saved = await updateObject(w, back, { data: { v: 3 }, status: 'published' });
    expect(saved.lock_version).toBe(res.body.lock_version + 1);
    expect((await w.api.get(w.at(o.id))).body.data).toEqual({ v: 3 });
  });

  it('recovers an older revision from Trash when one is named', async () => {
    const w = await objectsWorkspace(s);
    let o = await createObject(w, { ref: 'tr/b', data: { v: 1 } });
    o = await updateObject(w, o, { data: { v: 2 } });
    const [, r1] = await revisions(w, o.id);
    await deleteObject(w, o.id, o.lock_version);
    const [row] = await trash(w);
    const res = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version, revision_id: r1.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: o.id, status: 'draft' });
    expect((await readAny(w, o.id)).data).toEqual({ v: 1 });
  });

  it('refuses a stale lock_version and an occupied reference with 422, leaving the object in Trash', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'tr/c', data: { v: 1 } });
    await deleteObject(w, o.id, 0);
    const [row] = await trash(w);
    const stale = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version + 1 });
    expect(stale.status).toBe(422);
    expect(Object.keys(stale.body.errors)).toEqual(['lock_version']);
    expect(await trash(w)).toEqual([row]);
    const newer = await createObject(w, { ref: 'tr/c', data: { newer: true } });
    const taken = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version });
    expect(taken.status).toBe(422);
    expect(await trash(w)).toEqual([row]);
    expect((await readAny(w, newer.id)).data).toEqual({ newer: true });
    expect(await readAny(w, o.id)).toBeUndefined();
    // Once the reference is free again, recovery works.
    await deleteObject(w, newer.id, 0);
    const ok = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version });
    expect(ok.status).toBe(200);
    expect((await trash(w)).map((r) => r.object_id)).toEqual([newer.id]);
  });

  it('lists the Trash newest deletion first, one cursor page at a time', async () => {
    const w = await objectsWorkspace(s);
    const ids: number[] = [];
    for (const ref of ['a', 'b', 'c']) {
      const o = await createObject(w, { ref, data: {} });
      ids.push(o.id);
    }
    await deleteObject(w, ids[1], 0);
    await deleteObject(w, ids[0], 0);
    await deleteObject(w, ids[2], 0);
    const first = await w.api.get(`${w.at('trash')}?per_page=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((r: any) => r.object_id)).toEqual([ids[2], ids[0]]);
    expect(first.body.next_page_url).not.toBeNull();
    const second = await w.api.get(relative(s, first.body.next_page_url));
    expect(second.body.data.map((r: any) => r.object_id)).toEqual([ids[1]]);
    expect(second.body.next_page_url).toBeNull();
    expect(second.body.next_cursor).toBeNull();
    const all = await w.api.get(w.at('trash'));
    expect(all.body.data.map((r: any) => r.object_id)).toEqual([ids[2], ids[0], ids[1]]);
    expect(all.body.next_page_url).toBeNull();
    for (const bad of ['per_page=0', 'per_page=101', 'cursor=nonsense']) {
      expect((await w.api.get(`${w.at('trash')}?${bad}`)).status).toBe(422);
    }
    // Only this workspace's Trash.
    const other = await objectsWorkspace(s);
    expect(await trash(other)).toEqual([]);
    expect((await other.api.post(other.at(ids[0], 'restore'), { lock_version: 1 })).status).toBe(404);
  });

  it('makes an object unrecoverable after 30 days even before the prune task runs, which then purges it', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'tr/old', data: { v: 1 } });
    const [rev] = await revisions(w, o.id);
    await deleteObject(w, o.id, 0);
    const [row] = await trash(w);
    await advance(29 * DAY);
    expect((await trash(w)).map((r) => r.object_id)).toEqual([o.id]);
    await advance(2 * DAY);
    expect(await trash(w)).toEqual([]);
    const restore = await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version });
    expect(restore.status).toBe(404);
    expect((await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version, revision_id: rev.id })).status).toBe(404);
    // Expired items do not appear in history.
    expect((await w.api.get(w.at(o.id, 'revisions'))).status).toBe(404);
    expect((await w.api.get(w.at(o.id, 'revisions', rev.id))).status).toBe(404);
    const task = await s.admin.post('/admin/v1/tasks/objects:prune-trash');
    expect(task.status).toBe(200);
    expect(task.body).toEqual({ task: 'objects:prune-trash', processed: expect.any(Number) });
    expect(task.body.processed).toBeGreaterThanOrEqual(1);
    expect((await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version })).status).toBe(404);
    expect(await trash(w)).toEqual([]);
    expect(await queryAll(w)).toEqual([]);
    // A second run has nothing left of it.
    const again = await s.admin.post('/admin/v1/tasks/objects:prune-trash');
    expect(again.body.processed).toBe(0);
  });

  it('keeps an object deleted 29 days ago through a prune run', async () => {
    const w = await objectsWorkspace(s);
    const o = await createObject(w, { ref: 'tr/young', data: { v: 1 } });
    await deleteObject(w, o.id, 0);
    const [row] = await trash(w);
    await advance(29 * DAY);
    expect((await s.admin.post('/admin/v1/tasks/objects:prune-trash')).status).toBe(200);
    expect(await trash(w)).toEqual([row]);
    expect((await w.api.post(w.at(o.id, 'restore'), { lock_version: row.lock_version })).status).toBe(200);
  });
});
