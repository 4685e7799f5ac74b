// Concurrent writes to one object or one address: exactly one wins, the others get the documented
// 422, and nothing is half-written (one revision per winning write).
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { setupWorkspace } from './support/fixtures';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry'];

async function objectsApi() {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: PERMISSIONS });
  return { api: client(s.url, key.key), base: `/api/v1/${workspace.name}/objects` };
}

it('lets one of ten concurrent updates with the same lock_version win', async () => {
  const { api, base } = await objectsApi();
  const created = await api.post(base, { data: { n: 0 }, ref: 'race', status: 'published' });
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api.patch(`${base}/${created.body.id}`, { lock_version: 0, data: { n: i + 1 }, ref: 'race' })),
  );
  const winners = results.filter((r) => r.status === 200);
  expect(winners).toHaveLength(1);
  for (const loser of results.filter((r) => r.status !== 200)) {
    expect(loser.status).toBe(422);
    expect(Object.keys(loser.body.errors)).toEqual(['lock_version']);
  }
  const now = await api.get(`${base}/${created.body.id}`);
  expect(now.body.lock_version).toBe(1);
  expect(now.body.data).toEqual(winners[0].body.data);
  const revisions = await api.get(`${base}/${created.body.id}/revisions`);
  expect(revisions.body.data.map((r: { event: string }) => r.event)).toEqual(['updated', 'created']);
});

it('gives a ref to one of ten concurrent creates', async () => {
  const { api, base } = await objectsApi();
  const results = await Promise.all(
    Array.from({ length: 10 }, (_, i) => api.post(base, { data: { i }, ref: 'same/place', status: 'published' })),
  );
  expect(results.filter((r) => r.status === 201)).toHaveLength(1);
  for (const loser of results.filter((r) => r.status !== 201))
    expect(loser.body.errors).toEqual({ ref: ['The ref has already been taken.'] });
  expect((await api.get(`${base}?ref=same/place`)).body.data).toHaveLength(1);
});

it('deletes once when a delete and an update race', async () => {
  const { api, base } = await objectsApi();
  const created = await api.post(base, { data: { n: 0 }, ref: 'race2', status: 'published' });
  const [del, upd] = await Promise.all([
    api.delete(`${base}/${created.body.id}`, { body: { lock_version: 0 } }),
    api.patch(`${base}/${created.body.id}`, { lock_version: 0, data: { n: 1 }, ref: 'race2' }),
  ]);
  // Delete first: the update finds no live object. Update first: the delete's version is stale.
  expect([
    [204, 404],
    [422, 200],
  ]).toContainEqual([del.status, upd.status]);
  const trash = await api.get(`${base}/trash`);
  expect(trash.body.data.length).toBe(del.status === 204 ? 1 : 0);
});
