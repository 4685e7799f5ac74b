// The content model as code: GET .../model (a stable snapshot with a version), POST .../model/plan
// (the changes, safe or destructive, with the entries each touches; nothing changed) and POST
// .../model/apply (one transaction, refused when stale, destructive steps only when asked). Every
// refusal is checked to change nothing: the model's version and the entries stay as they were.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, readEntry, type EntriesWorkspace } from './support/entries';
import { client } from './support/http';
import { createObject } from './support/objects';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

const base = (ws: string) => `/admin/v1/workspaces/${ws}`;
const getModel = async (ws: string) => {
  const res = await s.admin.get(`${base(ws)}/model`);
  expect(res.status).toBe(200);
  return res.body;
};
const plan = (ws: string, model: unknown) => s.admin.post(`${base(ws)}/model/plan`, model);
const apply = (ws: string, body: unknown) => s.admin.post(`${base(ws)}/model/apply`, body);
/** Plans `model` and applies the plan (destructively when asked); insists on both succeeding. */
async function planAndApply(ws: string, model: any, allowDestructive = false) {
  const planned = await plan(ws, model);
  expect(planned.status).toBe(200);
  const applied = await apply(ws, { version: planned.body.version, model, allow_destructive: allowDestructive });
  if (applied.status !== 200) throw new Error(`apply: ${applied.status} ${applied.text}`);
  expect(applied.body.changes).toEqual(planned.body.changes);
  return applied.body;
}
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const typeIn = (model: any, bucket: string, type: string) =>
  model.buckets.find((b: any) => b.name === bucket).content_types.find((t: any) => t.name === type);
const summaries = (changes: any[]) => changes.map((c) => `${c.kind} ${c.action} ${c.target}${c.destructive ? ' !' : ''} ${c.entries}`);

/** A site: authors and articles in general, posts in a blog bucket, a contract, a webhook and a pipeline. */
async function site() {
  const w = await entriesWorkspace(s);
  await createContentType(s, w.ws, 'general', { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] });
  await createContentType(s, w.ws, 'general', {
    name: 'article',
    fields: [
      { name: 'title', type: 'text', required: true },
      { name: 'body', type: 'text' },
      { name: 'views', type: 'number' },
      { name: 'published_on', type: 'date' },
      { name: 'author', type: 'relation', targets: ['author'] },
    ],
  });
  expect((await s.admin.post(`${base(w.ws)}/buckets`, { name: 'blog' })).status).toBe(201);
  await createContentType(s, w.ws, 'blog', { name: 'post', fields: [{ name: 'headline', type: 'text' }] });
  expect(
    (await s.admin.post(`${base(w.ws)}/contracts`, { name: 'page', schema: { type: 'object', required: ['title'] }, prefix: 'pages' }))
      .status,
  ).toBe(201);
  expect(
    (await s.admin.post(`${base(w.ws)}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['entry.created'], secret: 'first-secret' }))
      .status,
  ).toBe(201);
  const pipeline = { name: 'touch', steps: [{ id: 'read', type: 'entries.query', with: { bucket: 'general', type: 'article' } }] };
  expect((await s.admin.post(`${base(w.ws)}/pipelines`, pipeline)).status).toBe(201);
  const ann = await createEntry(w, 'author', { fields: { name: 'Ann' }, status: 'published' });
  const articles = [];
  for (let i = 0; i < 3; i++) {
    articles.push(
      await createEntry(w, 'article', {
        fields: { title: `T${i}`, body: i < 2 ? `B${i}` : null, views: i, author: ann.id },
        status: 'published',
      }),
    );
  }
  await createEntry(w, 'post', { fields: { headline: 'Hello' }, status: 'published' }, '', 'blog');
  await createObject(w, { ref: 'pages/home', data: { title: 'Home' } });
  return { w, ann, articles };
}

describe('GET .../model', () => {
  it('is a stable snapshot of the whole model with a version, webhooks without secrets', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    expect(model.workspace).toBe(w.ws);
    expect(model.version).toMatch(/^[0-9a-f]{32}$/);
    expect(model.locales).toEqual(['en-US', 'de-DE', 'fr-FR']);
    expect(model.buckets.map((b: any) => b.name)).toEqual(['blog', 'general']);
    expect(typeIn(model, 'general', 'article')).toEqual({
      name: 'article',
      name_field: 'title',
      fields: [
        { name: 'title', key: 'title', type: 'text', multiple: false, required: true, unique: false, cascade_on_delete: false },
        { name: 'body', key: 'body', type: 'text', multiple: false, required: false, unique: false, cascade_on_delete: false },
        { name: 'views', key: 'views', type: 'number', multiple: false, required: false, unique: false, cascade_on_delete: false },
        {
          name: 'published_on',
          key: 'published_on',
          type: 'date',
          format: 'date',
          multiple: false,
          required: false,
          unique: false,
          cascade_on_delete: false,
        },
        {
          name: 'author',
          key: 'author',
          type: 'relation',
          multiple: false,
          required: false,
          unique: false,
          targets: ['author'],
          cascade_on_delete: false,
        },
      ],
    });
    expect(model.buckets[1].content_types.map((t: any) => t.name)).toEqual(['article', 'author']);
    expect(model.contracts).toEqual([
      { name: 'page', schema: { type: 'object', required: ['title'] }, mode: 'enforce', bucket: null, prefix: 'pages' },
    ]);
    expect(model.webhooks).toEqual([{ url: 'http://127.0.0.1:9/hook', events: ['entry.created'] }]);
    expect(model.pipelines).toEqual([
      { name: 'touch', description: null, steps: [{ id: 'read', type: 'entries.query', with: { bucket: 'general', type: 'article' } }] },
    ]);
    // The same model, the same bytes; a change, another version.
    expect(await getModel(w.ws)).toEqual(model);
    expect(
      (await s.admin.patch(`${base(w.ws)}/buckets/general/content-types/author`, { rename_fields: { name: 'full_name' } })).status,
    ).toBe(200);
    const changed = await getModel(w.ws);
    expect(changed.version).not.toBe(model.version);
    expect(typeIn(changed, 'general', 'author').fields[0]).toMatchObject({ name: 'full_name', key: 'name' });
  });

  it('answers 404 for an unknown workspace and 403 without the admin token', async () => {
    expect((await s.admin.get('/admin/v1/workspaces/no-such-workspace/model')).body).toEqual({ message: 'Not Found' });
    const res = await client(s.url).get('/admin/v1/workspaces/whatever/model');
    expect(res.status).toBe(403);
    expect(
      (
        await s.admin.post('/admin/v1/workspaces/no-such-workspace/model/plan', {
          locales: [],
          buckets: [{ name: 'general', content_types: [] }],
        })
      ).status,
    ).toBe(404);
  });
});

describe('plan and apply', () => {
  it('plans nothing for the model itself, and applies that as nothing', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const planned = await plan(w.ws, model);
    expect(planned.status).toBe(200);
    expect(planned.body).toEqual({ version: model.version, destructive: false, changes: [] });
    const applied = await apply(w.ws, { version: model.version, model });
    expect(applied.status).toBe(200);
    expect(applied.body).toEqual({ version: model.version, changes: [] });
  });

  it("copies a workspace's model into an empty one: same model, same version (webhooks need their secrets)", async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const target = (await s.admin.post('/admin/v1/workspaces', { name: `copy-${w.ws}`.slice(0, 60) })).body.name as string;
    const refused = await plan(target, model);
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({
      'webhooks.0.secret': ['The webhooks.0.secret field is required for a webhook the workspace does not have.'],
    });
    const withSecret = clone(model);
    withSecret.webhooks[0].secret = 'copied-secret';
    const applied = await planAndApply(target, withSecret);
    expect(summaries(applied.changes)).toEqual([
      'locale create de-DE 0',
      'locale create fr-FR 0',
      'bucket create blog 0',
      'content_type create blog/post 0',
      'content_type create general/article 0',
      'content_type create general/author 0',
      'contract create page 0',
      'webhook create http://127.0.0.1:9/hook 0',
      'pipeline create touch 0',
    ]);
    const copied = await getModel(target);
    expect({ ...copied, workspace: w.ws }).toEqual(model);
    expect(applied.version).toBe(model.version);
    // The copy works: its types take entries, its relations resolve.
    const user = (
      await s.admin.post(`${base(target)}/users`, { email: 'x@example.com', permissions: ['create-entry', 'view-entry', 'list-entries'] })
    ).body.id;
    const key = (await s.admin.post(`${base(target)}/api-keys`, { name: 'k', user_id: user, abilities: ['*'] })).body.key;
    const created = await client(s.url, key).post(`/api/v1/${target}/entries?contentBucket=general&contentType=author`, {
      fields: { name: 'Zed' },
    });
    expect(created.status).toBe(201);
  });

  it('renames a field when its name changes and its key stays: values kept, not destructive', async () => {
    const { w, articles } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    typeIn(edited, 'general', 'article').fields[1].name = 'text';
    const planned = await plan(w.ws, edited);
    expect(planned.body).toEqual({
      version: model.version,
      destructive: false,
      changes: [
        {
          kind: 'field',
          action: 'rename',
          target: 'general/article.body',
          destructive: false,
          entries: 2,
          summary: 'Rename field general/article.body to text (2 entries hold a value; values are kept).',
        },
      ],
    });
    // The plan changed nothing.
    expect((await getModel(w.ws)).version).toBe(model.version);
    const applied = await apply(w.ws, { version: planned.body.version, model: edited });
    expect(applied.status).toBe(200);
    const after = await getModel(w.ws);
    expect(applied.body.version).toBe(after.version);
    expect(typeIn(after, 'general', 'article').fields[1]).toMatchObject({ name: 'text', key: 'body' });
    expect((await readEntry(w, articles[0].id)).fields).toMatchObject({ title: 'T0', text: 'B0' });
    // The generated types follow.
    const types = await s.admin.get(`${base(w.ws)}/types.ts`);
    expect(types.text).toContain('text?:');
    expect(types.text).not.toMatch(/\bbody\??:/);
  });

  it('adds, changes, replaces and removes fields and types; destructive steps only when asked', async () => {
    const { w, articles, ann } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    const article = typeIn(edited, 'general', 'article');
    article.fields = [
      article.fields[0],
      { name: 'views', type: 'text' }, // a number before: replaced
      { ...article.fields[3], required: false, indexed: false },
      { ...article.fields[4], required: false },
      { name: 'summary', type: 'text', indexed: true },
    ];
    edited.buckets = edited.buckets.filter((b: any) => b.name !== 'blog');
    const general = edited.buckets.find((b: any) => b.name === 'general');
    general.content_types.push({
      name: 'tag',
      fields: [
        { name: 'label', type: 'text', unique: true },
        { name: 'parent', type: 'relation', targets: ['tag'] },
      ],
    });
    const planned = await plan(w.ws, edited);
    expect(planned.status).toBe(200);
    expect(planned.body.destructive).toBe(true);
    expect(summaries(planned.body.changes)).toEqual([
      'content_type create general/tag 0',
      'field replace general/article.views ! 3',
      'field update general/article.published_on 0',
      'field create general/article.summary 0',
      'field delete general/article.body ! 2',
      'bucket delete blog ! 1',
    ]);
    expect(planned.body.changes[1].summary).toBe(
      'Replace field general/article.views with another of that name (number/false → text/false): the values of 3 entries are removed.',
    );
    expect(planned.body.changes[2].summary).toBe(
      'Change field general/article.published_on: indexed: null → false (0 entries hold a value).',
    );
    // Not asked: refused, nothing changed.
    const refused = await apply(w.ws, { version: planned.body.version, model: edited });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.allow_destructive[0]).toBe(
      'The plan holds 3 destructive changes (replace field general/article.views; delete field general/article.body; delete bucket blog): pass allow_destructive: true to apply them.',
    );
    expect((await getModel(w.ws)).version).toBe(model.version);
    expect((await readEntry(w, articles[0].id)).fields.views).toBe(0);

    const applied = await apply(w.ws, { version: planned.body.version, model: edited, allow_destructive: true });
    expect(applied.status).toBe(200);
    const after = await getModel(w.ws);
    expect(typeIn(after, 'general', 'article').fields.map((f: any) => `${f.name}:${f.key}:${f.type}`)).toEqual([
      'title:title:text',
      'views:views~2:text',
      'published_on:published_on:date',
      'author:author:relation',
      'summary:summary:text',
    ]);
    expect(after.buckets.map((b: any) => b.name)).toEqual(['general']);
    const read = await readEntry(w, articles[0].id);
    expect(read.fields).toEqual({
      title: 'T0',
      views: null,
      published_on: null,
      author: expect.objectContaining({ id: ann.id }),
      summary: null,
    });
    // The new types work, relations to themselves included; the new text field sorts.
    const root = await createEntry(w, 'tag', { fields: { label: 'root' } });
    expect((await w.api.post(w.typed('tag'), { fields: { label: 'child', parent: root.id } })).status).toBe(201);
    expect((await w.api.post(w.typed('tag'), { fields: { label: 'root' } })).status).toBe(422);
    expect((await w.api.patch(w.entry(articles[1].id), { fields: { views: 'many', summary: 'b' } })).status).toBe(200);
    const sorted = await w.api.get(w.typed('article', '&sort=-summary&limit=1'));
    expect(sorted.status).toBe(200);
    // The plan of the model now is empty: the apply made exactly the snapshot.
    expect((await plan(w.ws, edited)).body.changes).toEqual([]);
  });

  it('refuses a stale plan with 409 and changes nothing', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    typeIn(edited, 'general', 'author').fields.push({ name: 'bio', type: 'text' });
    const planned = await plan(w.ws, edited);
    expect(
      (
        await s.admin.patch(`${base(w.ws)}/buckets/general/content-types/author`, {
          fields: [
            { name: 'name', type: 'text', required: true },
            { name: 'site', type: 'text' },
          ],
        })
      ).status,
    ).toBe(200);
    const now = (await getModel(w.ws)).version;
    const stale = await apply(w.ws, { version: planned.body.version, model: edited });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ message: `The model changed since the plan (version ${model.version}, now ${now}): plan again.` });
    expect((await getModel(w.ws)).version).toBe(now);
  });

  it('refuses what existing entries would break, on the snapshot paths, with counts and IDs', async () => {
    const { w, articles } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    typeIn(edited, 'general', 'article').fields[1].required = true; // body: article 2 has none
    const planned = await plan(w.ws, edited);
    expect(planned.status).toBe(422);
    expect(planned.body.errors).toEqual({
      'buckets.1.content_types.0.fields.1.required': [`Entries of the type without a value for it in a document: 1 (${articles[2].id}).`],
    });
    const applied = await apply(w.ws, { version: model.version, model: edited });
    expect(applied.status).toBe(422);
    expect(Object.keys(applied.body.errors)).toEqual(['model.buckets.1.content_types.0.fields.1.required']);
    expect((await getModel(w.ws)).version).toBe(model.version);
  });

  it('refuses a snapshot that breaks the rules of the model, on its paths', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const bad = clone(model);
    bad.buckets = bad.buckets.filter((b: any) => b.name !== 'general');
    bad.buckets[0].content_types.push({ name: 'post', fields: [] });
    bad.buckets[0].content_types[0].fields.push(
      { name: 'link', type: 'relation', targets: ['article'] },
      { name: 'again', key: 'headline', type: 'text' },
    );
    bad.contracts[0].bucket = 'nowhere';
    bad.pipelines.push({ name: 'touch', steps: [{ id: 'x', type: 'entries.query', with: { bucket: 'general', type: 'article' } }] });
    const res = await plan(w.ws, bad);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      buckets: ["The bucket general is the workspace's default bucket, deleted with the workspace only: list it."],
      'buckets.0.content_types.1.name': ['The content type post is listed more than once.'],
      'buckets.0.content_types.0.fields.1.targets.0': ['The content type article does not exist in this bucket.'],
      'buckets.0.content_types.0.fields.2.key': ['The key headline is the key of another field of the content type.'],
      'contracts.0.bucket': ['The bucket nowhere is not a bucket of the snapshot.'],
      'pipelines.1.name': ['The pipeline touch is listed more than once.'],
    });
    // The schema's own rules: a 422 from request validation.
    expect(
      (
        await plan(w.ws, {
          locales: [],
          buckets: [{ name: 'general', content_types: [{ name: 'x', fields: [{ name: 'a', type: 'color' }] }] }],
        })
      ).status,
    ).toBe(422);
    expect((await getModel(w.ws)).version).toBe(model.version);
  });

  it('changes contracts, webhooks, pipelines and locales; leaves out what the snapshot leaves out', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    edited.locales = ['en-US', 'de-DE', 'it-IT'];
    edited.contracts[0].mode = 'report';
    edited.contracts.push({ name: 'post', schema: { type: 'object' }, bucket: 'blog' });
    edited.webhooks = [
      { url: 'http://127.0.0.1:9/hook', events: ['entry.created', 'entry.deleted'] },
      { url: 'http://127.0.0.1:9/other', events: ['*'], secret: 'other-secret' },
    ];
    edited.pipelines = [];
    const applied = await planAndApply(w.ws, edited, true);
    expect(summaries(applied.changes)).toEqual([
      'locale create it-IT 0',
      'locale delete fr-FR ! 0',
      'contract update page 1',
      'contract create post 1',
      'webhook update http://127.0.0.1:9/hook 0',
      'webhook create http://127.0.0.1:9/other 0',
      'pipeline delete touch ! 0',
    ]);
    const after = await getModel(w.ws);
    expect(after.locales).toEqual(['en-US', 'de-DE', 'it-IT']);
    expect(after.contracts.map((c: any) => `${c.name}:${c.mode}:${c.bucket}`)).toEqual(['page:report:null', 'post:enforce:blog']);
    expect(after.webhooks).toEqual([
      { url: 'http://127.0.0.1:9/hook', events: ['entry.created', 'entry.deleted'] },
      { url: 'http://127.0.0.1:9/other', events: ['*'] },
    ]);
    expect(after.pipelines).toEqual([]);
    // Omitted sections stay as they are.
    const { contracts: _c, webhooks: _h, pipelines: _p, ...contentOnly } = after;
    contentOnly.buckets = contentOnly.buckets.filter((b: any) => b.name === 'general');
    const planned = await plan(w.ws, contentOnly);
    // (The contract of the blog bucket goes with it: said as a change.)
    expect(summaries(planned.body.changes)).toEqual(['contract delete post ! 1', 'bucket delete blog ! 1']);
  });
});

describe('steps that depend on one another', () => {
  it('deletes types that refer to one another together, and moves a contract off a bucket it deletes', async () => {
    const { w } = await site();
    expect((await s.admin.post(`${base(w.ws)}/contracts`, { name: 'blogged', schema: { type: 'object' }, bucket: 'blog' })).status).toBe(
      201,
    );
    expect((await s.admin.post(`${base(w.ws)}/contracts`, { name: 'moved', schema: { type: 'object' }, bucket: 'blog' })).status).toBe(201);
    const model = await getModel(w.ws);
    const edited = clone(model);
    const general = edited.buckets.find((b: any) => b.name === 'general');
    general.content_types = general.content_types.filter((t: any) => t.name !== 'article' && t.name !== 'author');
    edited.buckets = [general];
    edited.contracts = edited.contracts.filter((c: any) => c.name !== 'blogged');
    edited.contracts.find((c: any) => c.name === 'moved').bucket = 'general';
    const applied = await planAndApply(w.ws, edited, true);
    expect(summaries(applied.changes)).toEqual([
      'content_type delete general/article ! 3',
      'content_type delete general/author ! 1',
      'contract delete blogged ! 1',
      'contract update moved 1',
      'bucket delete blog ! 1',
    ]);
    const after = await getModel(w.ws);
    expect(after.contracts.map((c: any) => `${c.name}:${c.bucket}`)).toEqual(['moved:general', 'page:null']);
    expect(after.buckets).toEqual([{ name: 'general', content_types: [] }]);
  });

  it('says so when a bucket it deletes takes contracts the snapshot leaves out', async () => {
    const { w } = await site();
    expect((await s.admin.post(`${base(w.ws)}/contracts`, { name: 'blogged', schema: { type: 'object' }, bucket: 'blog' })).status).toBe(
      201,
    );
    const { contracts: _c, ...model } = await getModel(w.ws);
    model.buckets = model.buckets.filter((b: any) => b.name !== 'blog');
    const applied = await planAndApply(w.ws, model, true);
    expect(summaries(applied.changes)).toEqual(['contract delete blogged ! 1', 'bucket delete blog ! 1']);
    expect((await getModel(w.ws)).contracts.map((c: any) => c.name)).toEqual(['page']);
  });

  it('refuses two fields that would have one key, new type or not', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    const edited = clone(model);
    edited.buckets[0].content_types.push({
      name: 'fresh',
      fields: [
        { name: 'a', key: 'b', type: 'text' },
        { name: 'b', type: 'text' },
      ],
    });
    typeIn(edited, 'general', 'author').fields.push(
      { name: 'b', type: 'text' },
      { name: 'a', key: 'b', type: 'text' },
      { name: 'c', key: 'name', type: 'text' },
    );
    const res = await plan(w.ws, edited);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({
      'buckets.0.content_types.1.fields.1.key': ['The key b is the key of another field of the content type.'],
      'buckets.1.content_types.1.fields.2.key': ['The key b is the key of another field of the content type.'],
      'buckets.1.content_types.1.fields.3.key': ['The key name is the key of another field of the content type.'],
    });
  });

  it('sets a webhook secret given in the snapshot each time, never telling whether it was the same', async () => {
    const { w } = await site();
    const model = await getModel(w.ws);
    model.webhooks[0].secret = 'first-secret'; // the one it has
    const applied = await planAndApply(w.ws, model);
    expect(summaries(applied.changes)).toEqual(['webhook update http://127.0.0.1:9/hook 0']);
    expect((await getModel(w.ws)).version).toBe(model.version);
  });
});

describe('the CLI (npx @workspace-api/sdk model pull, plan, apply)', () => {
  const cli = path.join(__dirname, '../../sdk/dist/cli.js');
  const run = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [cli, ...args],
        { env: { PATH: process.env.PATH ?? '', WORKSPACE_API_ADMIN_TOKEN: ADMIN_TOKEN }, timeout: 60_000 },
        (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
        },
      );
    });

  it('pulls the snapshot, plans an edit of it, applies it (destructive only when asked) and rewrites the types', async () => {
    const { w, articles } = await site();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'wsapi-model-'));
    const file = path.join(dir, 'model.json');
    const conn = ['--url', s.url, '--workspace', w.ws];
    const pulled = await run(['model', 'pull', ...conn, '--out', file]);
    expect(pulled).toMatchObject({ code: 0, stdout: '' });
    const model = await getModel(w.ws);
    expect(pulled.stderr).toBe(`wrote ${file}: workspace "${w.ws}", 2 buckets, 3 content types (version ${model.version})\n`);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(model);

    const edited = clone(model);
    typeIn(edited, 'general', 'article').fields[1].name = 'text';
    edited.buckets = edited.buckets.filter((b: any) => b.name !== 'blog');
    writeFileSync(file, JSON.stringify(edited));
    const planned = await run(['model', 'plan', ...conn, '--file', file]);
    expect(planned).toEqual({
      code: 0,
      stderr: '',
      stdout:
        `Plan for workspace "${w.ws}" at version ${model.version}: 2 changes, destructive\n` +
        '  ~ Rename field general/article.body to text (2 entries hold a value; values are kept).\n' +
        '  - Delete bucket blog with its content types, contracts and 1 entry or object.  [destructive]\n',
    });
    const json = await run(['model', 'plan', ...conn, '--file', file, '--json']);
    expect(JSON.parse(json.stdout)).toEqual((await plan(w.ws, edited)).body);

    // Destructive without --allow-destructive: nothing applied, exit 1.
    const refused = await run(['model', 'apply', ...conn, '--file', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the plan is destructive: nothing applied\. Run again with --allow-destructive to apply it\.\n$/);
    expect((await getModel(w.ws)).version).toBe(model.version);

    const types = path.join(dir, 'content.ts');
    const applied = await run(['model', 'apply', ...conn, '--file', file, '--allow-destructive', '--types', types]);
    expect(applied.code).toBe(0);
    const after = await getModel(w.ws);
    expect(applied.stdout).toContain(`Applied 2 changes: workspace "${w.ws}" is at version ${after.version}.\n`);
    expect(readFileSync(types, 'utf8')).toBe((await s.admin.get(`${base(w.ws)}/types.ts`)).text);
    expect((await readEntry(w, articles[0].id)).fields.text).toBe('B0');

    // A plan's version that is no longer the model's: 409, said as such.
    const stale = await run(['model', 'apply', ...conn, '--file', file, '--version', model.version]);
    expect(stale).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: applying the model failed: the server answered 409 (The model changed since the plan (version ${model.version}, now ${after.version}): plan again.)\n`,
    });
    // A refusal lists its paths.
    typeIn(edited, 'general', 'article').fields[3].required = true;
    writeFileSync(file, JSON.stringify(edited));
    const invalid = await run(['model', 'plan', ...conn, '--file', file]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      /^error: planning the model failed: the server answered 422 \(.*\)\n {2}buckets\.0\.content_types\.0\.fields\.3\.required: Entries of the type without a value for it in a document: 3 /,
    );
    // Wrong invocations: exit 2 with the usage.
    const usage = await run(['model', 'plan', ...conn]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^error: --file is required\n\nUsage: npx @workspace-api\/sdk model pull/);
    expect((await run(['model', 'push', ...conn])).stderr).toMatch(/^error: unknown model command "push"/);
  });
});
