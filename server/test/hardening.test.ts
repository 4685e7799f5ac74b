// Classes of input that once reached a 500: bodies nested without bound, user-chosen strings that
// name members of Object.prototype, integers past their column, strings past their maxLength.
// Each answer is the documented 4xx, and nothing is written.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { setupWorkspace, uniqueName } from './support/fixtures';
import fc from 'fast-check';
import { deeperThan, textDeeperThan } from '../src/http/validation';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const json = { 'Content-Type': 'application/json' };
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const DEPTH_ERROR = {
  message: 'The body must not be nested more than 32 levels deep.',
  errors: { body: ['The body must not be nested more than 32 levels deep.'] },
};

describe('JSON nesting', () => {
  it.each([
    ['users', (raw: string) => `{"email":"deep@example.com","permissions":[],"x":${raw}}`],
    ['api-keys', (raw: string) => `{"name":"k","user_id":1,"x":${raw}}`],
    ['contracts', (raw: string) => `{"name":"deep","schema":${raw}}`],
    ['buckets', (raw: string) => raw],
  ])('refuses bodies nested 10,000 to 100,000 deep on POST .../%s with 422, writing nothing', async (resource, wrap) => {
    const { workspace } = await setupWorkspace(s.admin);
    const path = `/admin/v1/workspaces/${workspace.name}/${resource}`;
    const before = (await s.admin.get(path)).body;
    // Within the route's body limit (64 KiB, or 1 MiB for contracts) a deep body is a 422; past it, a 413.
    for (const raw of [nestedObjects(10_000), nestedArrays(30_000), nestedObjects(100_000)]) {
      const body = wrap(raw);
      const res = await s.admin.post(path, undefined, { raw: body, headers: json });
      if (body.length > (resource === 'contracts' ? 1 << 20 : 1 << 16)) {
        expect(res.status).toBe(413);
        expect(res.body).toEqual({ message: 'The request body is too large.' });
      } else {
        expect(res.status).toBe(422);
        expect(res.body).toEqual(DEPTH_ERROR);
      }
    }
    expect((await s.admin.get(path)).body).toEqual(before);
  });

  it('counts only structure: brackets, braces and escaped quotes inside strings are text', async () => {
    const { workspace } = await setupWorkspace(s.admin);
    const path = `/admin/v1/workspaces/${workspace.name}/contracts`;
    // 31 levels of `not` plus strings full of what would be 100 more levels outside a string.
    const tricky = '[[[{{{\\"[[[{{{'.repeat(20);
    const schema = Array.from({ length: 30 }).reduce<object>((inner) => ({ not: inner, description: tricky }), { description: tricky });
    const res = await s.admin.post(path, { name: 'deep-strings', schema });
    expect(res.status).toBe(201);
  });

  it('checks the text of a body as it checks a body built in memory (textDeeperThan, deeperThan)', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', 'a', ':', ',') }),
        fc.integer(),
        fc.constant(null),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ unit: fc.constantFrom('[', '{', '"', '\\', 'k') }), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 0, max: 8 }), (v, limit) => textDeeperThan(JSON.stringify(v), limit) === deeperThan(v, limit)),
      { numRuns: 2_000, seed: 40 },
    );
  });

  it('accepts 32 levels and refuses 33', async () => {
    const { workspace } = await setupWorkspace(s.admin);
    // The body is level 1 and `schema` level 2; each `not` adds one.
    const schema = (levels: number) => Array.from({ length: levels }).reduce<object>((inner) => ({ not: inner }), {});
    const path = `/admin/v1/workspaces/${workspace.name}/contracts`;
    expect((await s.admin.post(path, { name: 'deep-ok', schema: schema(30) })).status).toBe(201);
    const res = await s.admin.post(path, { name: 'deep-no', schema: schema(31) });
    expect(res.status).toBe(422);
    expect(res.body).toEqual(DEPTH_ERROR);
    expect((await s.admin.get(`${path}/deep-no`)).status).toBe(404);
  });
});

describe('prototype-named strings', () => {
  it.each(PROTOTYPE_NAMES)('refuses an unknown property named %s with 422 on it, writing nothing', async (name) => {
    const { workspace } = await setupWorkspace(s.admin);
    const path = `/admin/v1/workspaces/${workspace.name}/buckets`;
    const res = await s.admin.post(path, undefined, { raw: `{"name":"b1",${JSON.stringify(name)}:{"x":1}}`, headers: json });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ message: `The ${name} field is not allowed.`, errors: { [name]: [`The ${name} field is not allowed.`] } });
    expect(Object.keys(res.body.errors)).toEqual([name]);
    expect((await s.admin.get(path)).body.data.map((b: { name: string }) => b.name)).toEqual(['general']);
  });

  it.each(PROTOTYPE_NAMES)('ignores an unknown query parameter named %s, NUL and all', async (name) => {
    const { workspace } = await setupWorkspace(s.admin);
    const res = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?${encodeURIComponent(name)}=%00`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [] });
  });

  it('refuses a NUL in a parameter the operation reads: 422 where documented, 403 on a signed link', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['list-entries'] });
    const listed = await client(s.url, key.key).get(`/api/v1/${workspace.name}/objects?ref=a%00b`);
    expect(listed.status).toBe(422);
    expect(listed.body.errors).toEqual({ ref: ['The ref field must not contain NUL characters.'] });
    const signed = await client(s.url).get(`/api/v1/${workspace.name}/files/1/temporary?uuid=%00&expires=1&signature=x`);
    expect(signed.status).toBe(403);
    expect(signed.body).toEqual({ message: 'Forbidden' });
  });

  it('keeps resources named like prototype members apart from everything else', async () => {
    const names = ['constructor', 'prototype', 'tostring', 'hasownproperty'];
    for (const name of names) {
      const ws = `${name}-${uniqueName('p')}`;
      expect((await s.admin.post('/admin/v1/workspaces', { name: ws })).status).toBe(201);
      expect((await s.admin.post(`/admin/v1/workspaces/${ws}/buckets`, { name })).status).toBe(201);
      expect((await s.admin.post(`/admin/v1/workspaces/${ws}/contracts`, { name, schema: { type: 'object' } })).status).toBe(201);
      expect((await s.admin.get(`/admin/v1/workspaces/${ws}/contracts/${name}`)).body.name).toBe(name);
      expect((await s.admin.get(`/admin/v1/workspaces/${ws}/buckets`)).body.data.map((b: { name: string }) => b.name).sort()).toEqual(
        [name, 'general'].sort(),
      );
    }
    expect((await s.admin.get('/admin/v1/workspaces/constructor')).status).toBe(404);
  });

  it('refuses a NUL inside a property name with 422', async () => {
    const { workspace } = await setupWorkspace(s.admin);
    const res = await s.admin.post(`/admin/v1/workspaces/${workspace.name}/contracts`, undefined, {
      raw: '{"name":"n","schema":{"a\\u0000b":1}}',
      headers: json,
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ 'schema.a\u0000b': ['The schema.a\u0000b field must not contain NUL characters.'] });
  });
});

describe('integers and lengths bounded as the spec says', () => {
  const OUT_OF_RANGE = ['9223372036854775808', '2147483648', '0', '-1', '1e3', '99999999999999999999999'];

  it.each(OUT_OF_RANGE)('answers 404 for path id %s, like any unknown id', async (id) => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['view-file', 'delete-file'] });
    const ws = workspace.name;
    const admin = [
      s.admin.patch(`/admin/v1/workspaces/${ws}/users/${id}`, { permissions: [] }),
      s.admin.delete(`/admin/v1/workspaces/${ws}/api-keys/${id}`),
      s.admin.post(`/admin/v1/workspaces/${ws}/webhooks/${id}/ping`),
      s.admin.delete(`/admin/v1/workspaces/${ws}/webhooks/${id}`),
      s.admin.get(`/admin/v1/workspaces/${ws}/webhooks/${id}/deliveries`),
    ];
    const api = client(s.url, key.key);
    const pub = [api.get(`/api/v1/${ws}/files/${id}`), api.delete(`/api/v1/${ws}/files/${id}`)];
    for (const res of await Promise.all([...admin, ...pub])) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
  });

  it('accepts the largest id as an unknown id', async () => {
    const { workspace } = await setupWorkspace(s.admin);
    expect((await s.admin.patch(`/admin/v1/workspaces/${workspace.name}/users/2147483647`, { permissions: [] })).status).toBe(404);
  });

  it('answers 422 on an integer body field or query parameter out of range', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['view-file'] });
    const keys = `/admin/v1/workspaces/${workspace.name}/api-keys`;
    const before = (await s.admin.get(keys)).body;
    const big = await s.admin.post(keys, undefined, { raw: '{"name":"k","user_id":9223372036854775808}', headers: json });
    expect(big.status).toBe(422);
    expect(big.body.errors).toEqual({ user_id: ['The user_id field must not be greater than 2147483647.'] });
    expect((await s.admin.get(keys)).body).toEqual(before);
    const api = client(s.url, key.key);
    for (const value of ['9223372036854775808', '601', '29', '1e400']) {
      const res = await api.get(`/api/v1/${workspace.name}/files/1?expires_in=${value}`);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual(['expires_in']);
    }
    expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?limit=101`)).body.errors).toHaveProperty('limit');
  });

  it('enforces the maxLength of file.type and file.name on user-owned uploads', async () => {
    const { workspace, user } = await setupWorkspace(s.admin);
    const path = `/admin/v1/workspaces/${workspace.name}/users/${user.id}/files`;
    const content = Buffer.from('hello').toString('base64');
    const longType = await s.admin.post(path, { file: { name: 'a.txt', type: 'x'.repeat(256), content } });
    expect(longType.status).toBe(422);
    expect(longType.body.errors).toEqual({ 'file.type': ['The file.type field must not be greater than 255 characters.'] });
    // Characters, not UTF-16 units: 255 emoji are 255 characters.
    const longName = await s.admin.post(path, { file: { name: '😀'.repeat(252) + '.txt', content } });
    expect(longName.status).toBe(422);
    expect(longName.body.errors).toEqual({ 'file.name': ['The file.name field must not be greater than 255 characters.'] });
    expect((await s.admin.post(path, { file: { name: '😀'.repeat(251) + '.txt', type: 'x'.repeat(255), content } })).status).toBe(201);
  });
});

describe('text PostgreSQL cannot store', () => {
  it('refuses unpaired surrogates in bodies, keys and uploads with 422, and in paths with 404', async () => {
    const { workspace, user } = await setupWorkspace(s.admin);
    const ws = workspace.name;
    const body = await s.admin.post(`/admin/v1/workspaces/${ws}/api-keys`, undefined, {
      raw: `{"name":"a\\ud800b","user_id":${user.id}}`,
      headers: json,
    });
    expect(body.status).toBe(422);
    expect(body.body.errors).toEqual({ name: ['The name field must be valid Unicode text (no unpaired surrogates).'] });
    const key = await s.admin.post(`/admin/v1/workspaces/${ws}/contracts`, undefined, {
      raw: '{"name":"n","schema":{"\\udc00":1}}',
      headers: json,
    });
    expect(key.status).toBe(422);
    expect(key.body.errors).toEqual({ 'schema.\udc00': ['The schema.\udc00 field must be valid Unicode text (no unpaired surrogates).'] });
    const upload = await s.admin.post(`/admin/v1/workspaces/${ws}/users/${user.id}/files`, undefined, {
      raw: `{"file":{"name":"a\\ud800.txt","content":"aGk="}}`,
      headers: json,
    });
    expect(upload.status).toBe(422);
    expect(upload.body.errors).toEqual({ 'file.name': ['The file.name field must be valid Unicode text (no unpaired surrogates).'] });
    expect((await s.admin.get(`/admin/v1/workspaces/${ws}/api-keys`)).body.data).toHaveLength(1);
    for (const path of [
      `/admin/v1/workspaces/${ws}/contracts/%ED%A0%80`,
      `/admin/v1/workspaces/%00/users`,
      `/admin/v1/workspaces/${ws}/contracts/%FF`,
    ]) {
      const res = await s.admin.get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
  });
});

describe('bytes that are not HTTP', () => {
  it('answers them with a JSON 400 and closes the connection', async () => {
    const net = await import('node:net');
    const { port } = new URL(s.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('    {"lock_version":0} \r\n\r\n'));
      let text = '';
      socket.on('data', (d) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('Connection: close');
    expect(answer.split('\r\n\r\n')[1]).toBe('{"message":"Malformed HTTP request."}');
  });
});
