// A request refused before its body was read is answered with `Connection: close`, and the
// client still sending its body reads that answer: the server reads and drops the rest (within
// the route's limit, for a bounded time) before it closes. Closed at once, Node's fetch (and so
// the SDK's uploadFile) failed with EPIPE on bodies of 200 KB and more. The server runs as its
// own process here, as users run it: in the test's process the timing hid the fault.
import net from 'node:net';
import { createTestDatabase, type TestDatabase } from './support/database';
import { spawnServer, ADMIN_TOKEN, type SpawnedServer } from './support/server';
import { client } from './support/http';
import { contractFetch } from './support/contract';
import { setupWorkspace } from './support/fixtures';
import { createClient, uploadFile } from '../../sdk/src';

let db: TestDatabase;
let server: SpawnedServer;
let ws: string;
let key: string;
beforeAll(async () => {
  db = await createTestDatabase();
  server = await spawnServer(db);
  const setup = await setupWorkspace(client(server.url, ADMIN_TOKEN), { permissions: ['create-file', 'view-file'] });
  ws = setup.workspace.name;
  key = setup.key.key;
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

const SIZES = [100, 20_000, 200_000, 2_000_000];
const fileForm = (size: number, type = 'application/octet-stream') => {
  const form = new FormData();
  form.append('file', new Blob([Buffer.alloc(size, 97)], { type }), 'a.bin');
  return form;
};

describe.each(SIZES)('a body of %d bytes refused before it is read', (size) => {
  const cases: [string, () => [string, RequestInit], number, unknown][] = [
    ['an upload without a key', () => [`/api/v1/${ws}/files`, { method: 'POST', body: fileForm(size) }], 403, { message: 'Forbidden' }],
    [
      'an upload with an unknown key',
      () => [`/api/v1/${ws}/files`, { method: 'POST', body: fileForm(size), headers: { Authorization: 'Bearer wsk_unknown' } }],
      403,
      { message: 'Forbidden' },
    ],
    [
      'an upload to an unknown workspace',
      () => [`/api/v1/no-such-ws/files`, { method: 'POST', body: fileForm(size), headers: { Authorization: `Bearer ${key}` } }],
      404,
      { message: 'Not Found' },
    ],
    [
      'an upload of another content type',
      () => [
        `/api/v1/${ws}/files`,
        { method: 'POST', body: Buffer.alloc(size, 97), headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'text/plain' } },
      ],
      415,
      { message: 'Unsupported Media Type: expected multipart/form-data or application/json.' },
    ],
    [
      'a JSON body over a 64 KiB route limit',
      () => [
        `/admin/v1/workspaces/${ws}/buckets`,
        {
          method: 'POST',
          body: JSON.stringify({ name: 'a'.repeat(size) }),
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
        },
      ],
      413,
      { message: 'The request body is too large.' },
    ],
  ];

  it.each(cases)('%s: Node fetch reads the answer', async (_what, make, status, body) => {
    const [path, init] = make();
    // Bodies of 100 B and 20 KB fit the bucket route: not refused, nor before their body.
    if (status === 413 && size <= 65_536) return;
    const res = await contractFetch(`${server.url}${path}`, init);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual(body);
    if (size >= 200_000) expect(res.headers.get('connection')).toBe('close');
  });
});

it.each(SIZES)('the SDK uploadFile of %d bytes gets the 403 of a wrong key and the 404 of an unknown workspace', async (size) => {
  const wrong = createClient({ baseUrl: server.url, apiKey: 'wsk_unknown', fetch: contractFetch });
  const refused = await uploadFile(wrong, ws, Buffer.alloc(size, 97), { name: 'a.bin' });
  expect(refused.response.status).toBe(403);
  expect(refused.error).toEqual({ message: 'Forbidden' });
  const right = createClient({ baseUrl: server.url, apiKey: key, fetch: contractFetch });
  const missing = await uploadFile(right, 'no-such-ws', Buffer.alloc(size, 97), { name: 'a.bin' });
  expect(missing.response.status).toBe(404);
  expect(missing.error).toEqual({ message: 'Not Found' });
  // The same key and size upload fine: nothing of the refusals stayed on the connections.
  const ok = await uploadFile(right, ws, Buffer.alloc(size, 97), { name: 'a.bin' });
  expect(ok.response.status).toBe(201);
  expect(ok.data).toMatchObject({ size });
});

/**
 * Writes `head`, then body chunks of `chunkBytes` every `everyMs` (0: as fast as the socket
 * takes them) without ever ending its side, reading whatever comes back; resolves when the
 * server drops the connection (a write then fails), with what was written by then.
 */
function rawExchange(head: string, chunkBytes: number, everyMs: number): Promise<{ answer: string; written: number; ms: number }> {
  const { port } = new URL(server.url);
  const t0 = Date.now();
  return new Promise((resolve) => {
    let answer = '';
    let written = 0;
    let timer: NodeJS.Timeout | undefined;
    // Half-open: the client goes on sending after the server's FIN, as an uploader does.
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true }, () => {
      socket.write(head);
      const chunk = Buffer.alloc(chunkBytes, 97);
      const pump = () => {
        if (socket.destroyed) return;
        written += chunk.length;
        const more = socket.write(chunk);
        if (everyMs) timer = setTimeout(pump, everyMs);
        else if (more) setImmediate(pump);
        else socket.once('drain', pump);
      };
      pump();
    });
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, written, ms: Date.now() - t0 });
    });
  });
}

it('answers a JSON upload declared over its limit with 422, then drops a client still sending after 5 s', async () => {
  // 300,000,000 bytes declared (over the 150 MiB file limit): the 422 comes before the body is read.
  const head = `POST /api/v1/${ws}/files HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n`;
  const { answer, ms } = await rawExchange(head, 1024, 50);
  expect(answer).toMatch(/^HTTP\/1\.1 422 /);
  expect(answer).toMatch(/\r\nConnection: close\r\n/i);
  expect(JSON.parse(answer.split('\r\n\r\n')[1])).toEqual({
    message: 'The file may not be greater than 153600 kilobytes.',
    errors: { file: ['The file may not be greater than 153600 kilobytes.'] },
  });
  // Read for its linger time (5 s), then dropped.
  expect(ms).toBeGreaterThanOrEqual(4_500);
  expect(ms).toBeLessThan(15_000);
});

it('drops a refused client at once when it sends more than the route would ever have read', async () => {
  // The bucket route takes 64 KiB: after its 413, about that much more is read, then the socket is dropped.
  const head = `POST /admin/v1/workspaces/${ws}/buckets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n`;
  const { answer, written, ms } = await rawExchange(head, 64 * 1024, 0);
  expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  // Dropped long before the declared 100 MB, and before the 5 s linger time: by the byte bound
  // (checked every few milliseconds, so a fast client gets some megabytes further on loopback).
  expect(written).toBeLessThan(100_000_000);
  expect(ms).toBeLessThan(4_000);
});
