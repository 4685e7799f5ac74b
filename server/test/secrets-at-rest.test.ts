// Secrets kept where they should not be (security review "Hardening II", finding 9): download
// tokens in request logs and rate-limit counters, one-time codes in the local outbox, the admin
// token printed at every start, and a rate-limit row for every random bearer token sent.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, spawnServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { createWorkspace, setupWorkspace } from './support/fixtures';
import { createTestDatabase } from './support/database';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ TEST_CLOCK: '1', RATE_LIMIT_ENABLED: 'true' });
});
afterEach(async () => {
  await s.admin.delete('/admin/v1/clock');
});
afterAll(() => s.close());

const b64 = (t: string) => Buffer.from(t).toString('base64');
const pathOf = (url: string) => url.replace(/^https?:\/\/[^/]+/, '');
const advance = (seconds: number) => s.admin.post('/admin/v1/clock', { advance_seconds: seconds });
const runTask = async (task: string) => {
  const res = await s.admin.post(`/admin/v1/tasks/${task}`);
  expect(res.status).toBe(200);
};
type Counter = { key: string; points: number };
const rateLimitRows = async () => (await s.server.app.db.query<Counter>('SELECT key, points FROM rate_limits ORDER BY key')).rows;
/** Counters that were not there before (the hourly prune may remove old ones meanwhile). */
const addedRows = async (before: Counter[]) => (await rateLimitRows()).filter((r) => !before.some((b) => b.key === r.key));

async function uploadedFile() {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['create-file'] });
  const up = await client(s.url, key.key).post(`/api/v1/${workspace.name}/files`, {
    file: { name: 'a.txt', content: b64('secret report') },
  });
  expect(up.status).toBe(201);
  const [uuid, token] = pathOf(up.body.download_url).split('/').slice(-2);
  return { ws: workspace.name, id: up.body.id as number, uuid, token, download: pathOf(up.body.download_url) };
}

describe('tokenized downloads', () => {
  it('keep the token out of the request logs: the segment reads [redacted]', async () => {
    const { ws, id, uuid, token, download } = await uploadedFile();
    const wrongToken = randomBytes(16).toString('base64url');
    const otherUuid = '00000000-0000-4000-8000-000000000000';
    expect((await request(s.url, 'GET', download)).status).toBe(200);
    expect((await request(s.url, 'GET', `/api/v1/${ws}/files/${id}/${uuid}/${wrongToken}`)).status).toBe(404);
    expect((await request(s.url, 'GET', `/api/v1/${ws}/files/${id}/${otherUuid}/${token}`)).status).toBe(404);
    const logs = (await s.admin.get(`/admin/v1/workspaces/${ws}/request-logs`)).body.data as {
      method: string;
      path: string;
      status: number;
    }[];
    expect(logs.filter((l) => l.method === 'GET').map(({ path, status }) => ({ path, status }))).toEqual([
      { path: `/api/v1/${ws}/files/${id}/${otherUuid}/[redacted]`, status: 404 },
      { path: `/api/v1/${ws}/files/${id}/${uuid}/[redacted]`, status: 404 },
      { path: `/api/v1/${ws}/files/${id}/${uuid}/[redacted]`, status: 200 },
    ]);
    expect(JSON.stringify(logs)).not.toContain(token);
    expect(JSON.stringify(logs)).not.toContain(wrongToken);
  });

  it('are counted without the token in the counter, and wrong tokens add no counter', async () => {
    const { ws, id, uuid, token, download } = await uploadedFile();
    const before = await rateLimitRows();
    for (let i = 0; i < 20; i++) {
      const res = await request(s.url, 'GET', `/api/v1/${ws}/files/${id}/${uuid}/${randomBytes(16).toString('base64url')}`);
      expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
    }
    expect(await addedRows(before)).toEqual([]);
    expect((await request(s.url, 'GET', download)).status).toBe(200);
    expect((await request(s.url, 'GET', download)).status).toBe(200);
    expect(await addedRows(before)).toEqual([{ key: `token-downloads:file:${id}`, points: 2 }]);
    expect(JSON.stringify(await rateLimitRows())).not.toContain(token);
  });
});

describe('one-time codes in the local outbox', () => {
  const outbox = async (ws: string) => (await s.admin.get(`/admin/v1/workspaces/${ws}/outbox`)).body.data as Record<string, unknown>[];

  async function authWorkspace() {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['send-email'] });
    expect((await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { auth_enabled: true })).status).toBe(200);
    return { ws: workspace.name, api: client(s.url, key.key) };
  }

  it('lose the code once it has expired (10 minutes); other mail keeps its body', async () => {
    const { ws, api } = await authWorkspace();
    expect((await client(s.url).post(`/api/v1/${ws}/auth/login`, { email: 'ada@example.com' })).status).toBe(204);
    expect(
      (await api.post(`/api/v1/${ws}/emails`, { to: 'bob@example.com', subject: 'Hi', text: 'Hello Bob', html: '<p>Hello Bob</p>' }))
        .status,
    ).toBe(204);
    const [mail, code] = await outbox(ws);
    const otp = /is (\d{6})\./.exec(code.text as string)![1];

    // Within the code's lifetime the outbox is its delivery: kept.
    await advance(599);
    await runTask('email:redact-codes');
    expect(await outbox(ws)).toEqual([mail, code]);

    await advance(2);
    await runTask('email:redact-codes');
    expect(await outbox(ws)).toEqual([mail, { ...code, text: null, html: null }]);
    const { rows } = await s.server.app.db.query<{ dump: string }>(
      'SELECT string_agg(m::text, $2) AS dump FROM email_messages m JOIN workspaces w ON w.id = m.workspace_id WHERE w.name = $1',
      [ws, '|'],
    );
    expect(rows[0].dump).toContain('Hello Bob');
    expect(rows[0].dump).not.toContain(otp);
  });

  it('and every message leaves the outbox after 30 days', async () => {
    const { ws, api } = await authWorkspace();
    expect((await client(s.url).post(`/api/v1/${ws}/auth/login`, { email: 'ada@example.com' })).status).toBe(204);
    expect((await api.post(`/api/v1/${ws}/emails`, { to: 'bob@example.com', subject: 'Old', text: 'x' })).status).toBe(204);
    await advance(30 * 86_400 - 60);
    await runTask('email:prune');
    expect((await outbox(ws)).map((m) => m.subject)).toEqual(['Old', `Your sign-in code for ${ws}`]);
    expect((await api.post(`/api/v1/${ws}/emails`, { to: 'bob@example.com', subject: 'New', text: 'y' })).status).toBe(204);
    await advance(120);
    await runTask('email:prune');
    expect((await outbox(ws)).map((m) => m.subject)).toEqual(['New']);
  });
});

describe('per-token limits of /auth/session', () => {
  const session = (ws: string, token: string) => request(s.url, 'GET', `/api/v1/${ws}/auth/session`, { token });

  it('add no counter for a bearer that is not a valid access token, however many are sent', async () => {
    const ws = (await createWorkspace(s.admin)).name;
    expect((await s.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true })).status).toBe(200);
    const before = await rateLimitRows();
    const random = () => randomBytes(24).toString('base64url');
    const forged = () => `wsat_${randomBytes(16).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    for (let i = 0; i < 25; i++) {
      for (const token of [random(), forged()]) {
        const res = await session(ws, token);
        expect([res.status, res.body]).toEqual([403, { message: 'Forbidden' }]);
      }
    }
    expect(await addedRows(before)).toEqual([]);
  });

  it('count a valid token once per request, under its id and not the token', async () => {
    const ws = (await createWorkspace(s.admin)).name;
    expect((await s.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true })).status).toBe(200);
    const anon = client(s.url);
    await anon.post(`/api/v1/${ws}/auth/login`, { email: 'ada@example.com' });
    const otp = /is (\d{6})\./.exec((await s.admin.get(`/admin/v1/workspaces/${ws}/outbox`)).body.data[0].text)![1];
    const { code } = (await anon.post(`/api/v1/${ws}/auth/verify`, { email: 'ada@example.com', otp })).body;
    const token: string = (await anon.post(`/api/v1/${ws}/auth/token`, { code })).body.access_token;
    const before = await rateLimitRows();
    expect((await session(ws, token)).status).toBe(200);
    expect((await session(ws, token)).status).toBe(200);
    expect(await addedRows(before)).toEqual([{ key: expect.stringMatching(/^auth-session-token:token:\d+$/), points: 2 }]);
    expect(JSON.stringify(await rateLimitRows())).not.toContain(token.split('.')[1]);
  });
});

describe('the generated admin token', () => {
  it('is printed at the first start only; later starts say where it is kept', async () => {
    const db = await createTestDatabase();
    try {
      const first = await spawnServer(db, { ADMIN_TOKEN: '' });
      expect(await first.stop()).toBe(0);
      const file = path.join(db.dataDir, 'admin_token.secret');
      const token = readFileSync(file, 'utf8').trim();
      expect(first.output()).toContain(`management API token (ADMIN_TOKEN, kept in ${db.dataDir}): ${token}\n`);

      const second = await spawnServer(db, { ADMIN_TOKEN: '' });
      expect((await client(second.url, token).get('/admin/v1/workspaces/none')).status).toBe(404);
      expect(await second.stop()).toBe(0);
      expect(second.output()).not.toContain(token);
      expect(second.output()).toContain(`management API token (ADMIN_TOKEN): not shown again; it is kept in ${file}\n`);
    } finally {
      await db.drop();
    }
  });
});
