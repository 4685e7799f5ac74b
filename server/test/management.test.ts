// The management API: workspaces, creators, keys, buckets, content types, contracts, tasks.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createWorkspace, createUser, setupWorkspace, uniqueName, TIMESTAMP, newWorkspaceBody } from './support/fixtures';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('authentication of the management API', () => {
  it.each([
    ['no header', undefined],
    ['a wrong token', 'nope'],
  ])('refuses %s with 403 Forbidden', async (_label, token) => {
    const res = await client(s.url, token).post('/admin/v1/workspaces', { name: uniqueName() });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Forbidden' });
  });

  it('refuses an API key', async () => {
    const { key } = await setupWorkspace(s.admin);
    const res = await client(s.url, key.key).get('/admin/v1/workspaces');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Forbidden' });
  });

  it('changes nothing when it refuses', async () => {
    const name = uniqueName();
    await client(s.url, 'nope').post('/admin/v1/workspaces', { name });
    expect((await s.admin.get(`/admin/v1/workspaces/${name}`)).status).toBe(404);
  });
});

describe('workspaces', () => {
  it('creates a workspace with en-US first and its General bucket', async () => {
    const name = uniqueName();
    const res = await s.admin.post('/admin/v1/workspaces', { name, locales: ['de-DE', 'en-US', 'de-DE'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(newWorkspaceBody(name, ['en-US', 'de-DE']));
    const buckets = await s.admin.get(`/admin/v1/workspaces/${name}/buckets`);
    expect(buckets.body.data).toEqual([{ id: expect.any(Number), name: 'general', created_at: expect.stringMatching(TIMESTAMP) }]);
    expect((await s.admin.get(`/admin/v1/workspaces/${name}`)).body).toEqual(res.body);
  });

  it('adds en-US when locales are omitted and honours objects_enabled', async () => {
    const res = await s.admin.post('/admin/v1/workspaces', { name: uniqueName(), objects_enabled: false });
    expect(res.body.locales).toEqual(['en-US']);
    expect(res.body.objects_enabled).toBe(false);
  });

  it('rejects a duplicate name with 422 on name', async () => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post('/admin/v1/workspaces', { name: ws.name });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: 'The name has already been taken.', errors: { name: ['The name has already been taken.'] } });
  });

  it('rejects concurrent duplicates: exactly one wins', async () => {
    const name = uniqueName();
    const results = await Promise.all(Array.from({ length: 6 }, () => s.admin.post('/admin/v1/workspaces', { name })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422, 422]);
  });

  it.each([
    [{ name: 'Upper' }, 'name'],
    [{ name: '-lead' }, 'name'],
    [{ name: 'a'.repeat(64) }, 'name'],
    [{}, 'name'],
    [{ name: 12 }, 'name'],
    [{ name: 'ok-name', locales: 'de-DE' }, 'locales'],
    [{ name: 'ok-name', locales: ['german'] }, 'locales.0'],
    [{ name: 'ok-name', objects_enabled: 'yes' }, 'objects_enabled'],
    [{ name: 'ok-name', color: 'red' }, 'color'],
  ])('rejects %j with 422 on %s', async (body, key) => {
    const res = await s.admin.post('/admin/v1/workspaces', body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(key);
    expect(res.body.errors[key]).toEqual([expect.any(String)]);
    expect(res.body.message).toEqual(expect.any(String));
  });

  it('updates settings, keeps en-US, and 404s an unknown workspace', async () => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.patch(`/admin/v1/workspaces/${ws.name}`, {
      locales: ['fr-FR'],
      suspended: true,
      objects_enabled: false,
      auth_enabled: true,
      auth_redirect_uris: ['https://app.example.com/callback'],
      mail_from: 'noreply@example.com',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      locales: ['en-US', 'fr-FR'],
      suspended: true,
      objects_enabled: false,
      auth_enabled: true,
      auth_redirect_uris: ['https://app.example.com/callback'],
      mail_from: 'noreply@example.com',
    });
    expect((await s.admin.patch('/admin/v1/workspaces/missing-ws', { suspended: true })).status).toBe(404);
    const empty = await s.admin.patch(`/admin/v1/workspaces/${ws.name}`, {});
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toHaveProperty('body');
    const renamed = await s.admin.patch(`/admin/v1/workspaces/${ws.name}`, { name: 'other' });
    expect(renamed.status).toBe(422);
    expect(renamed.body.errors).toHaveProperty('name');
  });

  it('lists workspaces by name', async () => {
    const a = await createWorkspace(s.admin);
    const res = await s.admin.get('/admin/v1/workspaces');
    expect(res.status).toBe(200);
    const names = res.body.data.map((w: { name: string }) => w.name);
    expect(names).toContain(a.name);
    expect([...names].sort()).toEqual(names);
  });
});

describe('creators', () => {
  it('creates, lists and updates creators', async () => {
    const ws = await createWorkspace(s.admin);
    const created = await s.admin.post(`/admin/v1/workspaces/${ws.name}/users`, {
      email: 'ed@example.com',
      permissions: ['view-file', 'create-file'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), email: 'ed@example.com', permissions: ['view-file', 'create-file'] });
    const updated = await s.admin.patch(`/admin/v1/workspaces/${ws.name}/users/${created.body.id}`, { permissions: ['delete-file'] });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created.body, permissions: ['delete-file'] });
    const list = await s.admin.get(`/admin/v1/workspaces/${ws.name}/users`);
    expect(list.body).toEqual({ data: [updated.body] });
  });

  it('rejects bad creators and duplicates', async () => {
    const ws = await createWorkspace(s.admin);
    const bad = await s.admin.post(`/admin/v1/workspaces/${ws.name}/users`, { email: 'not-an-email', permissions: ['fly'] });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['email', 'permissions.0']);
    await createUser(s.admin, ws.name, [], 'dup@example.com');
    const dup = await s.admin.post(`/admin/v1/workspaces/${ws.name}/users`, { email: 'dup@example.com' });
    expect(dup.status).toBe(422);
    expect(dup.body.errors).toEqual({ email: ['The email has already been taken.'] });
  });

  it('404s creators of another workspace, unknown IDs and non-integer IDs', async () => {
    const a = await setupWorkspace(s.admin);
    const b = await createWorkspace(s.admin);
    for (const id of [a.user.id, 999999, 'abc']) {
      const res = await s.admin.patch(`/admin/v1/workspaces/${b.name}/users/${id}`, { permissions: [] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
    expect((await s.admin.post('/admin/v1/workspaces/missing-ws/users', { email: 'x@example.com' })).status).toBe(404);
  });
});

describe('API keys', () => {
  it('returns the secret once and lists keys without it', async () => {
    const ws = await createWorkspace(s.admin);
    const user = await createUser(s.admin, ws.name);
    const res = await s.admin.post(`/admin/v1/workspaces/${ws.name}/api-keys`, {
      name: 'Website',
      user_id: user.id,
      abilities: ['files:read', 'entries:read'],
      origins: ['https://app.example.com'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Website',
      user_id: user.id,
      abilities: ['files:read', 'entries:read'],
      origins: ['https://app.example.com'],
      created_at: expect.stringMatching(TIMESTAMP),
      key: expect.stringMatching(/^wsk_[A-Za-z0-9_-]{43}$/),
    });
    const list = await s.admin.get(`/admin/v1/workspaces/${ws.name}/api-keys`);
    const { key: _secret, ...withoutSecret } = res.body;
    expect(list.body).toEqual({ data: [withoutSecret] });
    expect(list.text).not.toContain(res.body.key);
  });

  it('stores only a hash of the secret', async () => {
    const { key } = await setupWorkspace(s.admin);
    const rows = await s.server.app.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = $1', [key.id]);
    expect(rows.rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.rows[0].key_hash).not.toContain(key.key);
  });

  it('rejects a creator of another workspace, bad abilities and bad origins', async () => {
    const other = await setupWorkspace(s.admin);
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(`/admin/v1/workspaces/${ws.name}/api-keys`, { name: 'k', user_id: other.user.id });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ user_id: ['The selected user_id is invalid.'] });
    const bad = await s.admin.post(`/admin/v1/workspaces/${ws.name}/api-keys`, {
      name: 'k',
      user_id: 1,
      abilities: ['files:everything'],
      origins: ['https://app.example.com/path'],
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['abilities.0', 'origins.0']);
    const missing = await s.admin.post(`/admin/v1/workspaces/${ws.name}/api-keys`, {});
    expect(Object.keys(missing.body.errors).sort()).toEqual(['name', 'user_id']);
  });

  it('revokes a key: 204, then 403 on its next request, 404 on a second delete', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    expect((await client(s.url, key.key).get(`/api/v1/${workspace.name}/api-key`)).status).toBe(200);
    const del = await s.admin.delete(`/admin/v1/workspaces/${workspace.name}/api-keys/${key.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const after = await client(s.url, key.key).get(`/api/v1/${workspace.name}/api-key`);
    expect(after.status).toBe(403);
    expect(after.body).toEqual({ message: 'Forbidden' });
    expect((await s.admin.delete(`/admin/v1/workspaces/${workspace.name}/api-keys/${key.id}`)).status).toBe(404);
  });

  it('does not delete a key through another workspace', async () => {
    const a = await setupWorkspace(s.admin);
    const b = await createWorkspace(s.admin);
    expect((await s.admin.delete(`/admin/v1/workspaces/${b.name}/api-keys/${a.key.id}`)).status).toBe(404);
    expect((await client(s.url, a.key.key).get(`/api/v1/${a.workspace.name}/api-key`)).status).toBe(200);
  });
});

describe('buckets', () => {
  it('creates and lists buckets; rejects duplicates and bad names', async () => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets`, { name: 'blog' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), name: 'blog', created_at: expect.stringMatching(TIMESTAMP) });
    const dup = await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets`, { name: 'general' });
    expect(dup.status).toBe(422);
    expect(dup.body.errors).toEqual({ name: ['The name has already been taken.'] });
    for (const name of ['Blog', '1blog', '', 'b'.repeat(65)]) {
      const bad = await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets`, { name });
      expect(bad.status).toBe(422);
      expect(bad.body.errors).toHaveProperty('name');
    }
    const list = await s.admin.get(`/admin/v1/workspaces/${ws.name}/buckets`);
    expect(list.body.data.map((b: { name: string }) => b.name)).toEqual(['general', 'blog']);
  });
});

describe('content types', () => {
  const path = (ws: string, bucket = 'general') => `/admin/v1/workspaces/${ws}/buckets/${bucket}/content-types`;

  it('creates a content type with defaults filled in, and reads it back', async () => {
    const ws = await createWorkspace(s.admin);
    await s.admin.post(path(ws.name), { name: 'author', fields: [{ name: 'name', type: 'text' }] });
    const res = await s.admin.post(path(ws.name), {
      name: 'post',
      fields: [
        { name: 'summary', type: 'text', multiple: true },
        { name: 'title', type: 'text', required: true, unique: true },
        { name: 'published_on', type: 'date' },
        { name: 'starts_at', type: 'date', format: 'datetime' },
        { name: 'price', type: 'number' },
        { name: 'meta', type: 'json' },
        { name: 'author', type: 'relation', targets: ['author', 'post'], cascade_on_delete: true },
        { name: 'images', type: 'attachment', multiple: true },
      ],
    });
    expect(res.status).toBe(201);
    const field = (o: object) => ({
      format: null,
      multiple: false,
      required: false,
      unique: false,
      targets: [],
      cascade_on_delete: false,
      ...o,
    });
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'post',
      bucket: 'general',
      name_field: 'title',
      fields: [
        field({ name: 'summary', type: 'text', multiple: true }),
        field({ name: 'title', type: 'text', required: true, unique: true }),
        field({ name: 'published_on', type: 'date', format: 'date' }),
        field({ name: 'starts_at', type: 'date', format: 'datetime' }),
        field({ name: 'price', type: 'number' }),
        field({ name: 'meta', type: 'json' }),
        field({ name: 'author', type: 'relation', targets: ['author', 'post'], cascade_on_delete: true }),
        field({ name: 'images', type: 'attachment', multiple: true }),
      ],
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect((await s.admin.get(`${path(ws.name)}/post`)).body).toEqual(res.body);
    const list = await s.admin.get(path(ws.name));
    expect(list.body.data.map((t: { name: string }) => t.name)).toEqual(['author', 'post']);
  });

  it('honours name_field and allows a type without text fields', async () => {
    const ws = await createWorkspace(s.admin);
    const a = await s.admin.post(path(ws.name), {
      name: 'a',
      name_field: 'b',
      fields: [
        { name: 'x', type: 'text' },
        { name: 'b', type: 'text' },
      ],
    });
    expect(a.body.name_field).toBe('b');
    const n = await s.admin.post(path(ws.name), { name: 'n', fields: [{ name: 'count', type: 'number' }] });
    expect(n.status).toBe(201);
    expect(n.body.name_field).toBeNull();
  });

  it.each([
    [
      [
        { name: 'a', type: 'text' },
        { name: 'a', type: 'number' },
      ],
      'fields.1.name',
    ],
    [[{ name: 'a', type: 'text', format: 'date' }], 'fields.0.format'],
    [[{ name: 'a', type: 'date', format: 'week' }], 'fields.0.format'],
    [[{ name: 'a', type: 'relation' }], 'fields.0.targets'],
    [[{ name: 'a', type: 'relation', targets: ['missing'] }], 'fields.0.targets.0'],
    [[{ name: 'a', type: 'text', targets: ['post'] }], 'fields.0.targets'],
    [[{ name: 'a', type: 'number', cascade_on_delete: true }], 'fields.0.cascade_on_delete'],
    [[{ name: 'a', type: 'json', unique: true }], 'fields.0.unique'],
    [[{ name: 'a', type: 'text', multiple: true, unique: true }], 'fields.0.unique'],
    [[{ name: 'A', type: 'text' }], 'fields.0.name'],
    [[{ name: 'a', type: 'color' }], 'fields.0.type'],
    [[{ name: 'a' }], 'fields.0.type'],
    [[{ name: 'a', type: 'text', colour: 'x' }], 'fields.0.colour'],
  ])('rejects fields %j with 422 on %s', async (fields, key) => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(path(ws.name), { name: 'post', fields });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual([key]);
    expect((await s.admin.get(path(ws.name))).body.data).toEqual([]);
  });

  it('rejects a name_field that is not a single text field, and duplicates', async () => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(path(ws.name), { name: 'post', name_field: 'n', fields: [{ name: 'n', type: 'number' }] });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['name_field']);
    await s.admin.post(path(ws.name), { name: 'post', fields: [] });
    const dup = await s.admin.post(path(ws.name), { name: 'post', fields: [] });
    expect(dup.body.errors).toEqual({ name: ['The name has already been taken.'] });
  });

  it('404s unknown workspaces, buckets and types; targets stay within the bucket', async () => {
    const ws = await createWorkspace(s.admin);
    await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets`, { name: 'other' });
    await s.admin.post(path(ws.name, 'other'), { name: 'author', fields: [] });
    const cross = await s.admin.post(path(ws.name), { name: 'post', fields: [{ name: 'a', type: 'relation', targets: ['author'] }] });
    expect(cross.status).toBe(422);
    expect((await s.admin.get(`${path(ws.name)}/nope`)).status).toBe(404);
    expect((await s.admin.get(path(ws.name, 'nope'))).status).toBe(404);
    expect((await s.admin.post(path('missing-ws'), { name: 'x', fields: [] })).status).toBe(404);
  });
});

describe('contracts', () => {
  const path = (ws: string) => `/admin/v1/workspaces/${ws}/contracts`;
  const schema = { type: 'object', required: ['title'], properties: { title: { type: 'string' } } };

  it('creates, reads, lists and replaces a contract', async () => {
    const ws = await createWorkspace(s.admin);
    await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets`, { name: 'blog' });
    const res = await s.admin.post(path(ws.name), { name: 'article', schema, bucket: 'blog', prefix: '/articles/2026/' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'article',
      schema,
      mode: 'enforce',
      bucket: 'blog',
      prefix: 'articles/2026',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect((await s.admin.get(`${path(ws.name)}/article`)).body).toEqual(res.body);
    const put = await s.admin.put(`${path(ws.name)}/article`, { name: 'article', schema: { type: 'object' }, mode: 'report' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id: res.body.id, schema: { type: 'object' }, mode: 'report', bucket: null, prefix: null });
    expect((await s.admin.get(path(ws.name))).body.data).toEqual([put.body]);
  });

  it('renames through PUT and refuses a taken name', async () => {
    const ws = await createWorkspace(s.admin);
    await s.admin.post(path(ws.name), { name: 'a', schema });
    await s.admin.post(path(ws.name), { name: 'b', schema });
    const taken = await s.admin.put(`${path(ws.name)}/a`, { name: 'b', schema });
    expect(taken.status).toBe(422);
    expect(taken.body.errors).toEqual({ name: ['The name has already been taken.'] });
    const renamed = await s.admin.put(`${path(ws.name)}/a`, { name: 'c', schema });
    expect(renamed.body.name).toBe('c');
    expect((await s.admin.get(`${path(ws.name)}/a`)).status).toBe(404);
  });

  it('rejects invalid schemas, unknown buckets, bad modes, and 404s unknown contracts', async () => {
    const ws = await createWorkspace(s.admin);
    const bad = await s.admin.post(path(ws.name), { name: 'x', schema: { type: 'objekt' }, bucket: 'nope', mode: 'strict' });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['mode']);
    const semantic = await s.admin.post(path(ws.name), { name: 'x', schema: { type: 'objekt' }, bucket: 'nope' });
    expect(Object.keys(semantic.body.errors).sort()).toEqual(['bucket', 'schema']);
    const unresolved = await s.admin.post(path(ws.name), { name: 'x', schema: { $ref: '#/$defs/missing' } });
    expect(Object.keys(unresolved.body.errors)).toEqual(['schema']);
    const notObject = await s.admin.post(path(ws.name), { name: 'x', schema: [] });
    expect(Object.keys(notObject.body.errors)).toEqual(['schema']);
    expect((await s.admin.get(path(ws.name))).body.data).toEqual([]);
    expect((await s.admin.put(`${path(ws.name)}/missing`, { name: 'missing', schema })).status).toBe(404);
  });

  it('answers 404, not 500, when another request deleted the contract after this one found it', async () => {
    const ws = await createWorkspace(s.admin);
    const created = (await s.admin.post(path(ws.name), { name: 'vanishing', schema })).body;
    // A trigger that skips the update stands for the other request's delete landing in between.
    const db = s.server.app.db;
    await db.query(`CREATE FUNCTION test_skip_contract() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await db.query(
      `CREATE TRIGGER test_vanishing BEFORE UPDATE ON contracts FOR EACH ROW WHEN (OLD.id = ${Number(created.id)}) EXECUTE FUNCTION test_skip_contract()`,
    );
    try {
      const res = await s.admin.put(`${path(ws.name)}/vanishing`, { name: 'renamed', schema: { type: 'object' } });
      expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
    } finally {
      await db.query(`DROP TRIGGER test_vanishing ON contracts`);
      await db.query(`DROP FUNCTION test_skip_contract()`);
    }
    expect((await s.admin.get(`${path(ws.name)}/vanishing`)).body).toEqual(created);
  });
});

describe('tasks', () => {
  it('runs a registered task and 404s an unknown one', async () => {
    const res = await s.admin.post('/admin/v1/tasks/rate-limits:prune');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ task: 'rate-limits:prune', processed: expect.any(Number) });
    const unknown = await s.admin.post('/admin/v1/tasks/nope:nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Not Found' });
  });

  it('prunes expired rate-limit counters only', async () => {
    // The server's own hourly run of the task could take the expired counter first (processed 0).
    await s.server.app.scheduler.stop();
    const db = s.server.app.db;
    await db.query(`INSERT INTO rate_limits (key, points, expire) VALUES ('t:old', 3, $1), ('t:live', 1, $2)`, [
      Date.now() - 1000,
      Date.now() + 60_000,
    ]);
    const res = await s.admin.post('/admin/v1/tasks/rate-limits:prune');
    expect(res.body.processed).toBeGreaterThanOrEqual(1);
    const left = await db.query<{ key: string }>(`SELECT key FROM rate_limits WHERE key LIKE 't:%'`);
    expect(left.rows.map((r) => r.key)).toEqual(['t:live']);
  });
});
