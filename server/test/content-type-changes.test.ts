// Changing a content type (PATCH .../content-types/{type}): fields added, renamed and removed, their
// rules changed, while entries exist in several locales; every refusal changes nothing; reads,
// lists, queries, writes, kept texts and the response cache follow the new model at once.
import { startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, readEntry, updateEntry, type EntriesWorkspace } from './support/entries';
import { expectErrors, queryOk, queryPath } from './support/entries-query';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const typePath = (w: EntriesWorkspace, type: string) => `/admin/v1/workspaces/${w.ws}/buckets/general/content-types/${type}`;

/** A workspace with authors, and articles in en-US and de-DE that refer to them. */
async function site() {
  const w = await entriesWorkspace(s);
  await createContentType(s, w.ws, 'general', { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] });
  await createContentType(s, w.ws, 'general', { name: 'editor', fields: [{ name: 'name', type: 'text' }] });
  await createContentType(s, w.ws, 'general', {
    name: 'article',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'body', type: 'text' },
      { name: 'views', type: 'number' },
      { name: 'author', type: 'relation', targets: ['author', 'editor'] },
      { name: 'legacy', type: 'text' },
    ],
  });
  const ann = await createEntry(w, 'author', { fields: { name: 'Ann' }, status: 'published' });
  const eve = await createEntry(w, 'editor', { fields: { name: 'Eve' }, status: 'published' });
  const articles = [];
  for (let i = 0; i < 3; i++) {
    const a = await createEntry(w, 'article', {
      fields: { title: `Title ${i}`, body: `Body ${i}`, views: i * 10, author: ann.id, legacy: `old ${i}` },
      status: 'published',
    });
    await updateEntry(w, a.id, { fields: { title: `Titel ${i}`, body: `Text ${i}` } }, '?locale=de-DE');
    articles.push(a);
  }
  return { w, ann, eve, articles };
}

const fieldsOf = async (w: EntriesWorkspace, type: string) => (await s.admin.get(typePath(w, type))).body;

describe('PATCH a content type', () => {
  it('renames a field: its values stay, in every locale, and every route knows it by its new name only', async () => {
    const { w, articles } = await site();
    // A list keeps its texts (kept-texts.ts) and the response cache its answer: both must follow.
    expect((await w.api.get(w.typed('article'))).status).toBe(200);
    const res = await s.admin.patch(typePath(w, 'article'), { rename_fields: { body: 'text' } });
    expect(res.status).toBe(200);
    expect(res.body.fields.map((f: { name: string }) => f.name)).toEqual(['title', 'text', 'views', 'author', 'legacy']);
    const read = await readEntry(w, articles[1].id);
    expect(read.fields).toMatchObject({ title: 'Title 1', text: 'Body 1' });
    expect(read.fields).not.toHaveProperty('body');
    expect((await readEntry(w, articles[1].id, '?locale=de-DE')).fields).toMatchObject({ title: 'Titel 1', text: 'Text 1' });
    const listed = (await w.api.get(w.typed('article'))).body as { fields: Record<string, unknown> }[];
    expect(listed.map((e) => e.fields.text).sort()).toEqual(['Body 0', 'Body 1', 'Body 2']);
    expect(listed.every((e) => !('body' in e.fields))).toBe(true);
    const v2 = (await w.api.get(w.typedV2('article', '&view=full'))).body;
    expect(v2.data.map((e: { fields: Record<string, unknown> }) => e.fields.text).sort()).toEqual(['Body 0', 'Body 1', 'Body 2']);
    // Queries filter, sort and project by the new name (the typed column) and refuse the old one.
    const q = await queryOk(w.api, w.ws, { type: 'article', fields: ['text', 'author.name'], filter: { text: { eq: 'Body 2' } } });
    expect(q.data).toEqual([{ text: 'Body 2', author: { name: 'Ann' } }]);
    expectErrors(await w.api.post(queryPath(w.ws), { type: 'article', filter: { body: { eq: 'Body 2' } } }), ['filter.body']);
    // Writes take the new name, refuse the old one, and keep the other locale's value.
    await updateEntry(w, articles[0].id, { fields: { text: 'New body' } });
    expectErrors(await w.api.patch(w.entry(articles[0].id), { fields: { body: 'x' } }), ['fields.body']);
    expect((await readEntry(w, articles[0].id)).fields.text).toBe('New body');
    expect((await readEntry(w, articles[0].id, '?locale=de-DE')).fields.text).toBe('Text 0');
    const made = await createEntry(w, 'article', { fields: { title: 'Fresh', text: 'Fresh body' }, status: 'published' });
    expect((await queryOk(w.api, w.ws, { type: 'article', fields: ['title'], filter: { text: { eq: 'Fresh body' } } })).data).toEqual([
      { title: 'Fresh' },
    ]);
    expect((await readEntry(w, made.id)).fields.text).toBe('Fresh body');
    // Renamed back and forth in one change (a swap), values follow their fields.
    expect((await s.admin.patch(typePath(w, 'article'), { rename_fields: { text: 'legacy', legacy: 'text' } })).status).toBe(200);
    expect((await readEntry(w, articles[2].id)).fields).toMatchObject({ legacy: 'Body 2', text: 'old 2' });
  });

  it('adds fields anywhere in the list: existing entries read them empty, new writes fill and query them', async () => {
    const { w, articles } = await site();
    const before = await fieldsOf(w, 'article');
    const res = await s.admin.patch(typePath(w, 'article'), {
      fields: [
        { name: 'subtitle', type: 'text', indexed: true },
        ...before.fields.map(({ format, targets, ...f }: Record<string, unknown>) => ({
          ...f,
          ...(f.type === 'date' ? { format } : {}),
          ...(f.type === 'relation' ? { targets } : {}),
        })),
        { name: 'topics', type: 'text', multiple: true },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.fields.map((f: { name: string }) => f.name)).toEqual([
      'subtitle',
      'title',
      'body',
      'views',
      'author',
      'legacy',
      'topics',
    ]);
    expect(res.body.fields[0]).toMatchObject({ name: 'subtitle', indexed: true });
    const read = await readEntry(w, articles[0].id);
    expect(Object.keys(read.fields)).toEqual(['subtitle', 'title', 'body', 'views', 'author', 'legacy', 'topics']);
    expect(read.fields).toMatchObject({ subtitle: null, topics: [], title: 'Title 0' });
    await updateEntry(w, articles[0].id, { fields: { subtitle: 'Sub', topics: ['a', 'b'] } });
    const q = await queryOk(w.api, w.ws, {
      type: 'article',
      fields: ['subtitle', 'topics'],
      sort: [{ field: 'subtitle', direction: 'asc' }],
      limit: 1,
    });
    expect(q.data).toEqual([{ subtitle: 'Sub', topics: ['a', 'b'] }]);
  });

  it('removes a field: no route shows or takes it, its values leave the documents, and its name is free at once', async () => {
    const { w, articles } = await site();
    const res = await s.admin.patch(typePath(w, 'article'), { remove_fields: ['legacy'] });
    expect(res.status).toBe(200);
    expect(res.body.fields.map((f: { name: string }) => f.name)).toEqual(['title', 'body', 'views', 'author']);
    expect((await readEntry(w, articles[0].id)).fields).not.toHaveProperty('legacy');
    expectErrors(await w.api.post(queryPath(w.ws), { type: 'article', fields: ['legacy'] }), ['fields.0']);
    expectErrors(await w.api.patch(w.entry(articles[0].id), { fields: { legacy: 'x' } }), ['fields.legacy']);
    // A field of the same name added before the cleanup ran reads empty: it is another field.
    const again = await s.admin.patch(typePath(w, 'article'), {
      fields: [...(await fieldsOf(w, 'article')).fields.map(definition), { name: 'legacy', type: 'number' }],
    });
    expect(again.status).toBe(200);
    expect((await readEntry(w, articles[1].id)).fields.legacy).toBeNull();
    await updateEntry(w, articles[1].id, { fields: { legacy: 7 } });
    expect((await queryOk(w.api, w.ws, { type: 'article', fields: ['legacy'], filter: { legacy: { eq: 7 } } })).data).toEqual([
      { legacy: 7 },
    ]);
    // The cleanup takes the old values out of every document (the new field's stay).
    const stored = async () =>
      (
        await s.server.app.db.query<{ data: Record<string, unknown> }>(
          `SELECT data FROM entry_contents c JOIN entries e ON e.id = c.entry_pk WHERE e.entry_id = ANY($1::text[]) ORDER BY e.id, c.locale`,
          [articles.map((a) => a.id)],
        )
      ).rows.map((r) => r.data);
    const task = await s.admin.post('/admin/v1/tasks/entries:field-cleanup', {});
    expect(task.status).toBe(200);
    const docs = await stored();
    expect(docs).toHaveLength(6);
    expect(docs.some((d) => Object.values(d).some((v) => typeof v === 'string' && v.startsWith('old ')))).toBe(false);
    expect((await s.server.app.db.query('SELECT key, finished FROM field_removals')).rows).toEqual([{ key: 'legacy', finished: true }]);
    expect((await readEntry(w, articles[1].id)).fields.legacy).toBe(7);
  });

  it('changes rules, indexes and name_field, and publishes content_type.updated', async () => {
    const { w, articles, eve } = await site();
    const current = (await fieldsOf(w, 'article')).fields.map(definition);
    const changed = current.map((f: Record<string, unknown>) =>
      f.name === 'views'
        ? { ...f, unique: true }
        : f.name === 'body'
          ? { ...f, required: true, indexed: true }
          : f.name === 'author'
            ? { ...f, cascade_on_delete: true }
            : f,
    );
    const res = await s.admin.patch(typePath(w, 'article'), { fields: changed, name_field: 'body' });
    const ids = await s.server.app.db.query<{ id: number; name: string }>(
      `SELECT id, name FROM field_definitions WHERE content_type_id = $1`,
      [res.body.id],
    );
    const fieldIds = Object.fromEntries(ids.rows.map((r) => [r.name, r.id]));
    expect(res.status).toBe(200);
    expect(res.body.name_field).toBe('body');
    expect(res.body.fields.find((f: { name: string }) => f.name === 'views')).toMatchObject({ required: false, unique: true });
    expect(res.body.fields.find((f: { name: string }) => f.name === 'body')).toMatchObject({ required: true, indexed: true });
    expect(res.body.fields.find((f: { name: string }) => f.name === 'author')).toMatchObject({ cascade_on_delete: true });
    expect((await readEntry(w, articles[0].id)).name).toBe('Body 0');
    // The new rules hold for writes.
    expectErrors(await w.api.post(w.typed('article'), { fields: { title: 'x', body: 'y', views: 10 }, status: 'published' }), [
      'fields.views',
    ]);
    expectErrors(await w.api.post(w.typed('article'), { fields: { title: 'x' }, status: 'published' }), ['fields.body']);
    // Typed storage follows `indexed`: the body's sort indexes beside the views' (a number's, by default).
    const { rows } = await s.server.app.db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexname <> $1 || '_pkey' ORDER BY indexname`,
      [`typed_${res.body.id}`],
    );
    // ASC NULLS LAST is the default order: the definition names DESC alone.
    const sortOf = (def: string) => /\(locale, (f\d+)( DESC NULLS LAST)?, entry_id\)/.exec(def);
    expect(
      rows
        .map((r) => sortOf(r.indexdef))
        .map((m) => m && `${m[1]} ${m[2] ? 'DESC' : 'ASC'}`)
        .sort(),
    ).toEqual(['body', 'views'].flatMap((name) => [`f${fieldIds[name]} ASC`, `f${fieldIds[name]} DESC`]).sort());
    // Dropping a target no entry refers to is allowed.
    const fewer = changed.map((f: Record<string, unknown>) => (f.name === 'author' ? { ...f, targets: ['author'] } : f));
    expect((await s.admin.patch(typePath(w, 'article'), { fields: fewer })).status).toBe(200);
    expectErrors(await w.api.patch(w.entry(articles[0].id), { fields: { author: eve.id } }), ['fields.author']);
    const events = await s.server.app.db.query<{ data: unknown }>(
      `SELECT data FROM outbox_events WHERE event = 'content_type.updated' AND data ->> 'id' = $1`,
      [String(res.body.id)],
    );
    expect(events.rows.map((r) => r.data)).toEqual([
      { id: res.body.id, name: 'article', bucket: 'general' },
      { id: res.body.id, name: 'article', bucket: 'general' },
    ]);
  });

  it('refuses what the existing entries would break, counting them, and changes nothing', async () => {
    const { w, articles, eve } = await site();
    const extra = await createEntry(w, 'article', { fields: { title: 'No body', views: 0, author: eve.id }, status: 'draft' });
    const before = await fieldsOf(w, 'article');
    const current = before.fields.map(definition);
    const withRule = (name: string, rule: Record<string, unknown>) =>
      current.map((f: Record<string, unknown>) => (f.name === name ? { ...f, ...rule } : f));
    const ids = (list: { id: string }[]) =>
      list
        .map((e) => e.id)
        .sort()
        .join(', ');
    const cases: [unknown, Record<string, string[]>][] = [
      [
        { fields: withRule('body', { required: true }) },
        { 'fields.1.required': [`Entries of the type without a value for it in a document: 1 (${extra.id}).`] },
      ],
      [
        { fields: withRule('views', { unique: true }) },
        { 'fields.2.unique': [`Live entries of the type that share a value of it in one locale: 2 (${ids([articles[0], extra])}).`] },
      ],
      [
        { fields: withRule('author', { targets: ['author'] }) },
        { 'fields.3.targets': [`Entries of the type that refer to entries of editor in it: 1 (${extra.id}).`] },
      ],
      [
        { fields: withRule('views', { type: 'text' }) },
        { 'fields.2.type': ["A field's type does not change: remove the field and add another."] },
      ],
      [
        { fields: withRule('title', { multiple: true }) },
        { 'fields.0.multiple': ["A field's multiple does not change: remove the field and add another."] },
      ],
      [
        { fields: current.slice(1) },
        { fields: ['The field title is not listed: list every field the type keeps, or name it in remove_fields.'] },
      ],
      [{ rename_fields: { nope: 'x' } }, { 'rename_fields.nope': ['The field nope is not a field of this content type.'] }],
      [{ rename_fields: { body: 'title' } }, { 'rename_fields.body': ['The field name title is used more than once.'] }],
      [
        { rename_fields: { body: 'x' }, remove_fields: ['body'] },
        { 'rename_fields.body': ['The field body cannot be both renamed and removed.'] },
      ],
      [{ remove_fields: ['nope'] }, { 'remove_fields.0': ['The field nope is not a field of this content type.'] }],
      [{ name_field: 'views' }, { name_field: ['The name_field must name a single-value text field of this content type.'] }],
      [
        { fields: [...current, { name: 'more', type: 'relation', targets: ['nope'] }] },
        { 'fields.5.targets.0': ['The content type nope does not exist in this bucket.'] },
      ],
      [
        { fields: [...current, { name: 'must', type: 'text', required: true }] },
        { 'fields.5.required': [`Entries of the type without a value for it in a document: 4 (${ids([...articles, extra])}).`] },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await s.admin.patch(typePath(w, 'article'), body);
      expect({ body, status: res.status, errors: res.body.errors }).toEqual({ body, status: 422, errors });
    }
    for (const body of [{}, { rename_fields: { body: 'Bad Name' } }, { fields: 'x' }, { nope: 1 }]) {
      expect({ body, status: (await s.admin.patch(typePath(w, 'article'), body)).status }).toEqual({ body, status: 422 });
    }
    expect(await fieldsOf(w, 'article')).toEqual(before);
    expect((await readEntry(w, articles[0].id)).fields).toMatchObject({ title: 'Title 0', body: 'Body 0', legacy: 'old 0' });
    expect((await s.admin.patch(typePath(w, 'nope'), { remove_fields: ['x'] })).status).toBe(404);
  });

  it("turns a JSON-backed conversion of a renamed type's entry into data by the fields' names", async () => {
    const { w, articles } = await site();
    expect((await s.admin.patch(typePath(w, 'article'), { rename_fields: { body: 'text' }, remove_fields: ['legacy'] })).status).toBe(200);
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/entries/${articles[0].id}/convert`, {})).status).toBe(200);
    const { rows } = await s.server.app.db.query<{ locale: string; data: Record<string, unknown> }>(
      `SELECT c.locale, c.data FROM entry_contents c JOIN entries e ON e.id = c.entry_pk WHERE e.entry_id = $1 ORDER BY c.locale`,
      [articles[0].id],
    );
    expect(rows.map((r) => [r.locale, Object.keys(r.data).sort()])).toEqual([
      ['de-DE', ['text', 'title']],
      ['en-US', ['author', 'text', 'title', 'views']],
    ]);
    expect(rows[1].data.text).toBe('Body 0');
  });
});

/** A field of the answer as the request gives it. */
function definition(f: Record<string, unknown>): Record<string, unknown> {
  const { format, targets, ...rest } = f;
  return { ...rest, ...(f.type === 'date' ? { format } : {}), ...(f.type === 'relation' ? { targets } : {}) };
}

describe('DELETE a content type or a bucket', () => {
  it('refuses a type that holds entries or that other types accept, purges on request, and leaves nothing of it', async () => {
    const { w, ann, articles } = await site();
    const types = await s.server.app.db.query<{ id: number; name: string }>(
      `SELECT t.id, t.name FROM content_types t JOIN buckets b ON b.id = t.bucket_id JOIN workspaces w ON w.id = b.workspace_id WHERE w.name = $1`,
      [w.ws],
    );
    const idOf = Object.fromEntries(types.rows.map((t) => [t.name, t.id]));
    const accepted = await s.admin.delete(typePath(w, 'author'));
    expect(accepted.status).toBe(409);
    expect(accepted.body).toEqual({
      message: 'Relation fields of other content types accept this type: article.author. Change their targets first.',
    });
    const held = await s.admin.delete(typePath(w, 'article'));
    expect(held.status).toBe(409);
    expect(held.body).toEqual({
      message: 'The content type holds 3 entries: delete them first, or pass purge=true.',
      counts: { entries: 3 },
    });
    expect((await s.admin.get(typePath(w, 'article'))).status).toBe(200);
    expect((await readEntry(w, articles[0].id)).fields.title).toBe('Title 0');
    expect((await s.admin.delete(`${typePath(w, 'article')}?purge=yes`)).status).toBe(422);
    const purged = await s.admin.delete(`${typePath(w, 'article')}?purge=true`);
    expect(purged.status).toBe(204);
    expect((await s.admin.get(typePath(w, 'article'))).status).toBe(404);
    expect((await w.api.get(w.entry(articles[0].id))).status).toBe(404);
    expect((await w.api.get(w.typed('article'))).status).toBe(404);
    const left = await s.server.app.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM entries WHERE content_type_id = $1) + (SELECT count(*) FROM entry_contents WHERE content_type_id = $1)
            + (SELECT count(*) FROM field_definitions WHERE content_type_id = $1) + (SELECT count(*) FROM typed_tables WHERE content_type_id = $1)
            + (SELECT count(*) FROM field_removals WHERE content_type_id = $1) + (CASE WHEN to_regclass('typed_' || $1) IS NULL THEN 0 ELSE 1 END) AS n`,
      [idOf.article],
    );
    expect(Number(left.rows[0].n)).toBe(0);
    // Nothing accepts the authors now: an empty type goes without purge, one with entries with it.
    expect((await s.admin.delete(typePath(w, 'editor'))).status).toBe(409);
    expect((await s.admin.delete(`${typePath(w, 'author')}?purge=true`)).status).toBe(204);
    expect((await w.api.get(w.entry(ann.id))).status).toBe(404);
    await createContentType(s, w.ws, 'general', { name: 'empty', fields: [{ name: 'x', type: 'text' }] });
    expect((await s.admin.delete(typePath(w, 'empty'))).status).toBe(204);
    // The name is free again at once, with a new table.
    const again = await createContentType(s, w.ws, 'general', { name: 'article', fields: [{ name: 'title', type: 'text' }] });
    expect(again.id).not.toBe(idOf.article);
    expect((await w.api.get(w.typed('article'))).body).toEqual([]);
    const events = await s.server.app.db.query<{ data: { name: string } }>(
      `SELECT data FROM outbox_events WHERE event = 'content_type.deleted' AND data ->> 'id' = ANY($1::text[]) ORDER BY created_at, data ->> 'name'`,
      [Object.values(idOf).map(String)],
    );
    expect(events.rows.map((r) => r.data.name)).toEqual(['article', 'author']);
    expect((await s.admin.delete(typePath(w, 'nope'))).status).toBe(404);
  });

  it('refuses a bucket that holds content, and the default bucket; purges on request, and its name is free again', async () => {
    const w = await entriesWorkspace(s);
    const bucketPath = (name: string) => `/admin/v1/workspaces/${w.ws}/buckets/${name}`;
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets`, { name: 'blog' })).status).toBe(201);
    expect((await s.admin.get(bucketPath('blog'))).body).toMatchObject({ name: 'blog' });
    await createContentType(s, w.ws, 'blog', { name: 'post', fields: [{ name: 'title', type: 'text' }] });
    await createContentType(s, w.ws, 'blog', { name: 'tag', fields: [{ name: 'label', type: 'text' }] });
    const post = await createEntry(w, 'post', { fields: { title: 'Hello' }, status: 'published' }, '', 'blog');
    await createEntry(w, 'post', { fields: { title: 'Draft' } }, '', 'blog');
    const held = await s.admin.delete(bucketPath('blog'));
    expect(held.status).toBe(409);
    expect(held.body).toEqual({
      message: 'The bucket holds 2 content types, 2 entries: delete them first, or pass purge=true.',
      counts: { content_types: 2, entries: 2, objects: 0 },
    });
    expect((await readEntry(w, post.id)).fields.title).toBe('Hello');
    const general = await s.admin.delete(`${bucketPath('general')}?purge=true`);
    expect(general.status).toBe(409);
    expect(general.body).toEqual({
      message: "The general bucket is the workspace's default bucket: it is deleted with its workspace only.",
    });
    const ids = await s.server.app.db.query<{ bucket: number; types: number[] }>(
      `SELECT b.id AS bucket, array_agg(t.id) AS types FROM buckets b JOIN workspaces w ON w.id = b.workspace_id JOIN content_types t ON t.bucket_id = b.id WHERE w.name = $1 AND b.name = 'blog' GROUP BY b.id`,
      [w.ws],
    );
    const { bucket, types } = ids.rows[0];
    expect((await s.admin.delete(`${bucketPath('blog')}?purge=true`)).status).toBe(204);
    expect((await s.admin.get(bucketPath('blog'))).status).toBe(404);
    expect((await w.api.get(w.entry(post.id))).status).toBe(404);
    const left = await s.server.app.db.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM entries WHERE bucket_id = $1) + (SELECT count(*) FROM entry_contents WHERE bucket_id = $1) + (SELECT count(*) FROM content_types WHERE bucket_id = $1)
            + (SELECT count(*) FROM contracts WHERE bucket_id = $1) + (SELECT count(*) FROM idempotency_records WHERE bucket_id = $1)
            + (SELECT count(*) FROM field_definitions WHERE content_type_id = ANY($2::int[])) + (SELECT count(*) FROM unnest($2::int[]) t WHERE to_regclass('typed_' || t) IS NOT NULL) AS n`,
      [bucket, types],
    );
    expect(Number(left.rows[0].n)).toBe(0);
    expect((await s.admin.post(`/admin/v1/workspaces/${w.ws}/buckets`, { name: 'blog' })).status).toBe(201);
    expect((await s.admin.delete(bucketPath('blog'))).status).toBe(204);
    expect((await s.admin.delete(bucketPath('blog'))).status).toBe(404);
  });
});
