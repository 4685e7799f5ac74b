// Contracts governing objects: Automatic selection, explicit and disabled selections, `enforce`
// refusing invalid writes in every language with errors keyed by request path, `report` storing
// diagnostics, and the recheck after a contract changes.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { TIMESTAMP, setupWorkspace } from './support/fixtures';
import { eventually } from './support/receiver';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry'];
const TITLE_REQUIRED = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } };

async function workspace() {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: PERMISSIONS });
  await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { locales: ['de-DE'] });
  const api = client(s.url, key.key);
  const contract = (body: Record<string, unknown>) => s.admin.post(`/admin/v1/workspaces/${workspace.name}/contracts`, body);
  return { ws: workspace.name, api, base: `/api/v1/${workspace.name}/objects`, contract };
}

it('enforces the Automatic contract of a prefix in every language, keyed by request path, and writes nothing', async () => {
  const { api, base, contract } = await workspace();
  expect((await contract({ name: 'article', schema: TITLE_REQUIRED, prefix: 'articles' })).status).toBe(201);
  const refused = await api.post(base, { data: { title: 5 }, ref: 'articles/a' });
  expect(refused.status).toBe(422);
  expect(refused.body).toEqual({
    message: 'The data.title field must be a string.',
    errors: { 'data.title': ['The data.title field must be a string.'] },
  });
  expect((await api.get(`${base}?ref=articles/a`)).body.data).toEqual([]);

  const outside = await api.post(base, { data: { title: 5 }, ref: 'pages/a', status: 'published' });
  expect(outside.status).toBe(201);
  expect(outside.body.contract).toBeNull();
  expect(outside.body.validation).toEqual({ mode: 'none', issues: [], checked_at: null, pending: false, failed: false });

  const ok = await api.post(base, { data: { title: 'Hello' }, ref: 'articles/b', status: 'published' });
  expect(ok.body.contract).toBe('article');
  expect(ok.body.validation).toEqual({
    mode: 'enforce',
    issues: [],
    checked_at: expect.stringMatching(TIMESTAMP),
    pending: false,
    failed: false,
  });
  const translated = await api.patch(`${base}/${ok.body.id}`, {
    lock_version: 0,
    data: { title: 'Hello' },
    ref: 'articles/b',
    translations: { 'de-DE': {} },
  });
  expect(translated.status).toBe(422);
  expect(translated.body.errors).toEqual({ 'translations.de-DE.title': ['The translations.de-DE.title field is required.'] });
  expect((await api.get(`${base}/${ok.body.id}?locale=*`)).body).toMatchObject({ lock_version: 0, locales: ['en-US'] });
});

it('selects a bucket-specific contract over a general one, then the longest prefix; false and names override', async () => {
  const { ws, api, base, contract } = await workspace();
  await contract({ name: 'general', schema: { type: 'object' }, mode: 'report' });
  await contract({ name: 'docs', schema: { type: 'object' }, prefix: 'docs', mode: 'report' });
  await contract({ name: 'deep', schema: { type: 'object' }, prefix: 'docs/api', mode: 'report' });
  await contract({ name: 'bucketed', schema: { type: 'object' }, bucket: 'general', mode: 'report' });
  const contractOf = async (ref: string, extra: Record<string, unknown> = {}) =>
    (await api.post(base, { data: {}, ref, ...extra })).body.contract;
  expect(await contractOf('docs/api/x')).toBe('bucketed');
  const other = await s.admin.post(`/admin/v1/workspaces/${ws}/buckets`, { name: 'other' });
  const inOther = (ref: string, extra: Record<string, unknown> = {}) => contractOf(ref, { bucket_id: other.body.id, ...extra });
  expect(await inOther('docs/api/x')).toBe('deep');
  expect(await inOther('docs/x')).toBe('docs');
  expect(await inOther('docs-old/x')).toBe('general');
  expect(await inOther('x', { contract: false })).toBeNull();
  expect(await inOther('y', { contract: 'deep' })).toBe('deep');
  const unknown = await api.post(base, { data: {}, ref: 'z', contract: 'missing' });
  expect(unknown.status).toBe(422);
  expect(unknown.body.errors).toEqual({ contract: ['The selected contract is invalid.'] });
});

it('stores report-mode diagnostics as JSON Pointers, and rechecks objects when their contract changes', async () => {
  const { ws, api, base, contract } = await workspace();
  await contract({ name: 'article', schema: TITLE_REQUIRED, mode: 'report' });
  const created = await api.post(base, { data: { body: 'no title' }, ref: 'a', status: 'published' });
  expect(created.status).toBe(201);
  expect(created.body.validation).toEqual({
    mode: 'report',
    issues: [{ path: '/data/title', keyword: 'required', message: "must have required property 'title'" }],
    checked_at: expect.stringMatching(TIMESTAMP),
    pending: false,
    failed: false,
  });

  // The new schema accepts the document: once the queued recheck ran, the issue is gone.
  expect(
    (await s.admin.put(`/admin/v1/workspaces/${ws}/contracts/article`, { name: 'article', schema: { type: 'object' }, mode: 'report' }))
      .status,
  ).toBe(200);
  const after = await eventually(async () => {
    await s.admin.post('/admin/v1/tasks/objects:revalidate');
    const read = await api.get(`${base}/${created.body.id}`);
    return read.body.validation.pending === false && read.body.validation.issues.length === 0 && read.body;
  });
  expect(after.validation).toEqual({
    mode: 'report',
    issues: [],
    checked_at: expect.stringMatching(TIMESTAMP),
    pending: false,
    failed: false,
  });
  expect(after.lock_version).toBe(0);
  expect(after.data).toEqual({ body: 'no title' });
});
