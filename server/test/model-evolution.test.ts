// A site's content model changed five times over its first week (fields added, renamed, removed,
// rules tightened, a type deleted) while its entries are written and read: after each change,
// every read of the caching server (response cache, kept texts, cached model: the defaults), warm
// from the reads before the change, must equal the same read after a restart with every cache off.
import { createTestDatabase, type TestDatabase } from './support/database';
import { startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, updateEntry, type EntriesWorkspace } from './support/entries';
import { client } from './support/http';
import { queryPath } from './support/entries-query';

/** One base URL for every server of the test, so that their answers compare (and share kept texts). */
const SITE = { BASE_URL: 'http://site.example' };
let db: TestDatabase;
let s: TestServer;
let w: EntriesWorkspace;

beforeAll(async () => {
  db = await createTestDatabase();
  s = await startTestServer(SITE, db);
  w = await entriesWorkspace(s);
});
afterAll(async () => {
  await s?.close();
  await db?.drop();
});

const typePath = (type: string) => `/admin/v1/workspaces/${w.ws}/buckets/general/content-types/${type}`;
const ids: Record<string, string[]> = { author: [], post: [], tag: [] };

/** Every read of the site's entries: each by id in every locale, each type's lists, a query of all its fields. */
async function reads(server: TestServer): Promise<[string, number, unknown][]> {
  const api = client(server.url, w.key);
  const out: [string, number, unknown][] = [];
  const types = (await server.admin.get(`/admin/v1/workspaces/${w.ws}/buckets/general/content-types`)).body.data as {
    name: string;
    fields: { name: string }[];
  }[];
  const paths: string[] = [];
  for (const list of Object.values(ids))
    for (const id of list) paths.push(w.entry(id), w.entry(id, '?locale=de-DE'), w.entry(id, '?locale=*'));
  for (const t of types) paths.push(w.typed(t.name), w.typed(t.name, '&locale=de-DE'), w.typedV2(t.name, '&view=full'));
  for (const path of paths) {
    const res = await api.get(path);
    out.push([path, res.status, res.body]);
  }
  for (const t of types) {
    const res = await api.post(queryPath(w.ws), {
      type: t.name,
      fields: ['@id', ...t.fields.map((f) => f.name)],
      sort: [{ field: '@id', direction: 'asc' }],
    });
    out.push([`query ${t.name}`, res.status, res.body]);
  }
  return out;
}

/**
 * The caching server's reads after a change (warm from the reads before it), twice (the second
 * from its caches), equal to those of the server restarted with every cache off; then the caching
 * server again, warmed for the next change.
 */
async function expectFresh(day: string): Promise<void> {
  await reads(s);
  const again = await reads(s);
  await s.close();
  const fresh = await startTestServer({ ...SITE, RESPONSE_CACHE_MB: '0', KEEP_RENDERED_ENTRIES: 'false' }, db);
  let truth: Awaited<ReturnType<typeof reads>>;
  try {
    truth = await reads(fresh);
  } finally {
    await fresh.close();
  }
  s = await startTestServer(SITE, db);
  w.api = client(s.url, w.key);
  await reads(s);
  expect({ day, reads: again }).toEqual({ day, reads: truth });
  expect(truth.every(([, status]) => status === 200 || status === 404)).toBe(true);
}

it('answers as a fresh server after each of five changes of the model, with writes between them', async () => {
  await createContentType(s, w.ws, 'general', { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] });
  await createContentType(s, w.ws, 'general', { name: 'tag', fields: [{ name: 'label', type: 'text' }] });
  await createContentType(s, w.ws, 'general', {
    name: 'post',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'body', type: 'text' },
      { name: 'legacy', type: 'number' },
      { name: 'author', type: 'relation', targets: ['author'] },
      { name: 'tags', type: 'relation', targets: ['tag'], multiple: true },
    ],
  });
  /** An author, a tag while the type exists, and a post with a value for each field it has today. */
  const write = async (n: number) => {
    const author = await createEntry(w, 'author', { fields: { name: `Author ${n}` }, status: 'published' });
    ids.author.push(author.id);
    const tag =
      (await s.admin.get(typePath('tag'))).status === 200
        ? await createEntry(w, 'tag', { fields: { label: `tag ${n}` }, status: 'published' })
        : undefined;
    if (tag) ids.tag.push(tag.id);
    const fields = (await s.admin.get(typePath('post'))).body.fields.map((f: { name: string }) => f.name) as string[];
    const values: Record<string, unknown> = {
      title: `Post ${n}`,
      body: `Body ${n}`,
      content: `Content ${n}`,
      legacy: n,
      author: author.id,
      tags: tag ? [tag.id] : [],
      summary: `Summary ${n}`,
    };
    const post = await createEntry(w, 'post', { fields: Object.fromEntries(fields.map((f) => [f, values[f]])), status: 'published' });
    await updateEntry(w, post.id, { fields: { title: `Beitrag ${n}` } }, '?locale=de-DE');
    ids.post.push(post.id);
  };
  await write(1);
  await write(2);
  await expectFresh('day 0');

  // Day 1: a summary field; the posts get one.
  const day1 = (await s.admin.get(typePath('post'))).body.fields.map(({ format, targets, ...f }: Record<string, unknown>) => ({
    ...f,
    ...(f.type === 'relation' ? { targets } : {}),
  }));
  expect((await s.admin.patch(typePath('post'), { fields: [...day1, { name: 'summary', type: 'text' }] })).status).toBe(200);
  await updateEntry(w, ids.post[0], { fields: { summary: 'First' } });
  await write(3);
  await expectFresh('day 1');

  // Day 2: body becomes content.
  expect((await s.admin.patch(typePath('post'), { rename_fields: { body: 'content' } })).status).toBe(200);
  await updateEntry(w, ids.post[1], { fields: { content: 'Rewritten' } });
  await write(4);
  await expectFresh('day 2');

  // Day 3: legacy goes (its values with it, in the background).
  expect((await s.admin.patch(typePath('post'), { remove_fields: ['legacy'] })).status).toBe(200);
  await write(5);
  await expectFresh('day 3');
  expect((await s.admin.post('/admin/v1/tasks/entries:field-cleanup', {})).status).toBe(200);
  await expectFresh('day 3, cleaned');

  // Day 4: authors get a bio, posts are named by their content.
  expect(
    (
      await s.admin.patch(typePath('author'), {
        fields: [
          { name: 'name', type: 'text', required: true },
          { name: 'bio', type: 'text' },
        ],
      })
    ).status,
  ).toBe(200);
  await updateEntry(w, ids.author[0], { fields: { bio: 'Writes.' } });
  expect((await s.admin.patch(typePath('post'), { name_field: 'content' })).status).toBe(200);
  await expectFresh('day 4');

  // Day 5: tags are dropped: the field, then the type with its entries.
  expect((await s.admin.patch(typePath('post'), { remove_fields: ['tags'] })).status).toBe(200);
  expect((await s.admin.delete(`${typePath('tag')}?purge=true`)).status).toBe(204);
  await write(6);
  await expectFresh('day 5');
}, 180_000);
