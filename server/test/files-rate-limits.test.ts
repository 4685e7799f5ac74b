// The rate limits of the file groups, each with Retry-After.
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace } from './support/fixtures';
import { presentFile } from '../src/core/file-urls';
import { expectLimited } from './support/rate-limits';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    RATE_LIMIT_ENABLED: 'true',
    RATE_LIMIT_FILE_UPLOADS_PER_MINUTE: '2',
    RATE_LIMIT_FILE_DELETES_PER_MINUTE: '1',
    RATE_LIMIT_FILES_PER_MINUTE: '3',
    RATE_LIMIT_TOKEN_DOWNLOADS_PER_MINUTE: '2',
  });
});
afterAll(() => s.close());

const ALL = ['create-file', 'view-file', 'delete-file'];
const b64 = (t: string) => Buffer.from(t).toString('base64');
const path = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');

it('limits uploads per API key, separately from deletions and downloads', async () => {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
  const api = client(s.url, key.key);
  const a = await api.post(`/api/v1/${workspace.name}/files`, { file: { name: 'a.txt', content: b64('a') } });
  await api.post(`/api/v1/${workspace.name}/files`, { file: { name: 'b.txt', content: b64('b') } });
  expectLimited(await api.post(`/api/v1/${workspace.name}/files`, { file: { name: 'c.txt', content: b64('c') } }));
  // Another key of the same workspace has its own count.
  const other = await setupWorkspace(s.admin, { permissions: ALL });
  expect(
    (await client(s.url, other.key.key).post(`/api/v1/${other.workspace.name}/files`, { file: { name: 'a.txt', content: b64('a') } }))
      .status,
  ).toBe(201);
  // Deletions count apart: one per minute.
  expect((await api.delete(`/api/v1/${workspace.name}/files/${a.body.id}`)).status).toBe(204);
  expectLimited(await api.delete(`/api/v1/${workspace.name}/files/${a.body.id}`));
});

it('limits details per key, temporary downloads per file, tokenized downloads per URL', async () => {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: ALL });
  const api = client(s.url, key.key);
  const up = await api.post(`/api/v1/${workspace.name}/files`, { file: { name: 'a.txt', content: b64('a') } });
  const file = up.body;
  for (let i = 0; i < 3; i++) expect((await api.get(`/api/v1/${workspace.name}/files/${file.id}`)).status).toBe(200);
  expectLimited(await api.get(`/api/v1/${workspace.name}/files/${file.id}`));

  // Shared by every signed link of the file: the first link's two uses and the second link's one use the three.
  expect((await request(s.url, 'GET', path(file.temporary_url))).status).toBe(200);
  expect((await request(s.url, 'GET', path(file.temporary_url))).status).toBe(200);
  const other = await s.server.app.db.prisma.file.findUniqueOrThrow({ where: { id: file.id } });
  const second = presentFile(s.server.app.config, workspace.name, other, new Date(Date.now() + 1000), 300);
  expect(second.temporary_url).not.toBe(file.temporary_url);
  expect((await request(s.url, 'GET', path(second.temporary_url!))).status).toBe(200);
  expectLimited(await request(s.url, 'GET', path(second.temporary_url!)));

  expect((await request(s.url, 'GET', path(file.download_url))).status).toBe(200);
  expect((await request(s.url, 'GET', path(file.download_url))).status).toBe(200);
  expectLimited(await request(s.url, 'GET', path(file.download_url)));
});
