// Conventions every route shares: error bodies, body limits, content types, request IDs, the
// served spec, and no 500 on client input anywhere in the spec.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, type TestServer } from './support/server';
import { request } from './support/http';
import { setupWorkspace } from './support/fixtures';
import { checkResponse, ContractViolation } from './support/contract';
import { loadDocument, readOperations } from '../src/http/spec';
import { generatedDir } from '../src/paths';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const json = { 'Content-Type': 'application/json' };

describe('errors', () => {
  it.each([
    ['GET', '/nope'],
    ['GET', '/api/v1'],
    ['DELETE', '/admin/v1/workspaces'],
    ['GET', '/admin/v1/workspaces/a/b/c/d'],
  ])('%s %s is 404 {"message": "Not Found"}', async (method, p) => {
    const res = await request(s.url, method, p, { token: 'test-admin-token' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not Found' });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers malformed JSON with 400 {message} and stores nothing', async () => {
    const res = await s.admin.post('/admin/v1/workspaces', undefined, { raw: '{"name": "broken"', headers: json });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Malformed JSON body.' });
    expect((await s.admin.get('/admin/v1/workspaces/broken')).status).toBe(404);
  });

  it.each(['"just a string"', '42', 'null', 'true'])(
    'answers valid JSON that is not an object, %s, with 422 on body, like an array',
    async (raw) => {
      const res = await s.admin.post('/admin/v1/workspaces', undefined, { raw, headers: json });
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual({ body: ['The body field must be an object.'] });
    },
  );

  it('answers a JSON array body with 422 on body', async () => {
    const res = await s.admin.post('/admin/v1/workspaces', undefined, { raw: '[]', headers: json });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ body: ['The body field must be an object.'] });
  });

  it('answers another content type with 415', async () => {
    const res = await s.admin.post('/admin/v1/workspaces', undefined, {
      raw: 'name=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ message: 'Unsupported Media Type: expected application/json.' });
  });

  it('accepts application/json with a charset', async () => {
    const res = await s.admin.post('/admin/v1/workspaces', undefined, {
      raw: JSON.stringify({ name: 'charset-ws' }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it('answers an empty body as an empty object (field errors, not a parse error)', async () => {
    const res = await s.admin.post('/admin/v1/workspaces');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ name: ['The name field is required.'] });
  });

  it('answers an empty chunked body as no body, also where numbers are read exactly', async () => {
    // Written by hand: fetch sends Content-Length: 0 for a stream that ends at once.
    const empty = (path: string, token: string) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const url = new URL(s.url);
        const socket = net.connect(Number(url.port), url.hostname, () =>
          socket.write(
            `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`,
          ),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('error', reject);
        socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) }));
      });
    const ws = await empty('/admin/v1/workspaces', 'test-admin-token');
    expect([ws.status, ws.body.errors]).toEqual([422, { name: ['The name field is required.'] }]);
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['list-entries'] });
    const batch = await empty(`/api/v1/${workspace.name}/general/entries/query/batch`, key.key);
    expect([batch.status, batch.body.errors]).toEqual([422, { queries: ['The queries field is required.'] }]);
  });

  it('answers a body over the route limit with 413, declared or streamed', async () => {
    const big = JSON.stringify({ name: 'big-ws', locales: Array.from({ length: 9000 }, () => 'de-DE') });
    expect(big.length).toBeGreaterThan(65_536);
    const declared = await s.admin.post('/admin/v1/workspaces', undefined, { raw: big, headers: json });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ message: 'The request body is too large.' });
    // Without Content-Length (chunked), the limit is enforced while reading.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${s.url}/admin/v1/workspaces`, {
      method: 'POST',
      headers: { ...json, Authorization: 'Bearer test-admin-token' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ message: 'The request body is too large.' });
    expect((await s.admin.get('/admin/v1/workspaces/big-ws')).status).toBe(404);
  });
});

it('refuses NUL characters in strings with 422 on their path, and in path segments with 404', async () => {
  const { workspace, user } = await setupWorkspace(s.admin);
  const res = await s.admin.post(`/admin/v1/workspaces/${workspace.name}/api-keys`, { name: 'a\u0000b', user_id: user.id });
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual({ name: ['The name field must not contain NUL characters.'] });
  expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/api-keys`)).body.data).toHaveLength(1);
  expect((await s.admin.get('/admin/v1/workspaces/a%00b')).status).toBe(404);
});

describe('request IDs', () => {
  it('generates one and echoes a safe one', async () => {
    const generated = await request(s.url, 'GET', '/health');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await request(s.url, 'GET', '/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const unsafe = await request(s.url, 'GET', '/nope', { headers: { 'X-Request-Id': 'a b<script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('CORS', () => {
  it('answers a preflight on the public API and exposes the documented headers', async () => {
    const res = await fetch(`${s.url}/api/v1/acme/api-key`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.com',
        'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('Authorization');
    expect(res.headers.get('access-control-allow-methods')).toContain('PATCH');
  });

  it('marks public responses, errors included, and leaves the management API alone', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { origins: ['https://app.example.com'] });
    const ok = await request(s.url, 'GET', `/api/v1/${workspace.name}/api-key`, {
      token: key.key,
      headers: { Origin: 'https://app.example.com' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    expect(ok.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const refused = await request(s.url, 'GET', `/api/v1/${workspace.name}/api-key`, {
      token: key.key,
      headers: { Origin: 'https://evil.example.com' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const admin = await request(s.url, 'GET', '/admin/v1/workspaces', {
      token: 'test-admin-token',
      headers: { Origin: 'https://app.example.com' },
    });
    expect(admin.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('meta routes', () => {
  it('serves the bundled spec at /openapi.json', async () => {
    const res = await request(s.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(JSON.parse(readFileSync(path.join(generatedDir, 'openapi.json'), 'utf8')));
    expect(res.body.openapi).toBe('3.1.0');
  });

  it('reports health and the database kind', async () => {
    const res = await request(s.url, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', database: s.db.url ? 'postgres' : 'pglite', checks: { database: 'ok', storage: 'ok' } });
  });
});

describe('the contract check itself', () => {
  it('rejects an undocumented status, a wrong body and an unmatched route', () => {
    const url = `${s.url}/admin/v1/workspaces`;
    expect(() => checkResponse('POST', url, 418, 'application/json', { message: 'x' })).toThrow(ContractViolation);
    expect(() => checkResponse('POST', url, 201, 'application/json', { name: 'x' })).toThrow(ContractViolation);
    expect(() => checkResponse('GET', `${s.url}/nowhere`, 200, 'application/json', {})).toThrow(ContractViolation);
    expect(() => checkResponse('POST', url, 422, 'application/json', { message: 'x', errors: { a: ['b'] } })).not.toThrow();
  });
});

describe('no 500 on client input, on every operation of the spec', () => {
  const operations = readOperations(loadDocument()).filter((op) => !['getDocs'].includes(op.operationId));
  const bodies: [string, string][] = [
    ['malformed', '{"a": '],
    ['array', '[1, 2]'],
    ['string', '"x"'],
    [
      'wrong types',
      JSON.stringify({
        name: 5,
        email: [],
        permissions: 'all',
        fields: {},
        schema: 'x',
        locales: [1],
        user_id: 'one',
        advance_seconds: -1,
      }),
    ],
    ['deep nulls', JSON.stringify({ name: null, fields: [null], schema: null, abilities: [null] })],
    ['unicode junk', JSON.stringify({ name: '\u0000\ud83d', email: 'a@\u0000' })],
  ];

  it.each(operations.map((op) => [op.operationId, op] as const))('%s', async (_id, op) => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const fill: Record<string, string> = {
      workspace: workspace.name,
      id: '1',
      bucket: 'general',
      type: 'nope',
      name: 'nope',
      task: 'nope',
    };
    const paths = [op.path.replace(/\{(\w+)\}/g, (_m, p: string) => fill[p] ?? 'x'), op.path.replace(/\{(\w+)\}/g, () => '%00..%2F')];
    const token = op.security === 'apiKey' ? key.key : 'test-admin-token';
    for (const p of paths) {
      for (const [, raw] of op.jsonBodyPointer ? bodies : [['none', undefined] as [string, undefined]]) {
        const res = await request(s.url, op.method.toUpperCase(), `${p}?expires_in=abc&limit=-1`, { token, raw, headers: raw ? json : {} });
        expect(res.status).toBeLessThan(500);
      }
    }
  });
});
