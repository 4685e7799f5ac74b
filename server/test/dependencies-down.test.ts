// A dependency down is not a server error: with PostgreSQL cut off under a running server, every
// request that needs it answers 503 with Retry-After, /health names what is down, nothing is
// half-written, and the server answers normally once the database is back.
import net from 'node:net';
import { createTestDatabase, type TestDatabase } from './support/database';
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace, uniqueName } from './support/fixtures';
import { describeWithPostgres, testMode } from './support/env';
import { eventually } from './support/receiver';

if (testMode === 'pglite') console.log('database-outage test skipped: the embedded database runs in process and cannot be cut off');

/** A TCP proxy to PostgreSQL that the test can cut (connections dropped, new ones refused) and restore. */
async function cuttableProxy(target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  const listen = (port = 0) =>
    new Promise<number>((resolve) => server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
  const port = await listen();
  return {
    port,
    async cut() {
      const closed = new Promise((resolve) => server.close(resolve));
      sockets.forEach((s) => s.destroy());
      await closed;
    },
    restore: () => listen(port),
    close: () => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined))),
  };
}

describeWithPostgres('PostgreSQL unreachable under a running server', () => {
  let db: TestDatabase;
  let proxy: Awaited<ReturnType<typeof cuttableProxy>>;
  let s: TestServer;
  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await cuttableProxy(new URL(db.url!));
    const viaProxy = new URL(db.url!);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    s = await startTestServer({ DATABASE_URL: viaProxy.toString() }, { ...db, url: viaProxy.toString() });
  });
  afterAll(async () => {
    await proxy.restore().catch(() => undefined);
    await s.close();
    await proxy.close();
    await db.drop();
  });

  it('answers 503 with Retry-After while it is down, writes nothing, and recovers when it is back', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const api = client(s.url, key.key);
    expect((await request(s.url, 'GET', '/health')).body).toEqual({
      status: 'ok',
      database: 'postgres',
      checks: { database: 'ok', storage: 'ok' },
    });

    await proxy.cut();
    const health = await request(s.url, 'GET', '/health');
    expect(health.status).toBe(503);
    expect(health.headers.get('retry-after')).toBe('5');
    expect(health.body).toEqual({ status: 'unavailable', database: 'postgres', checks: { database: 'down', storage: 'ok' } });

    const created = uniqueName('during-outage');
    const answers = [
      await api.get(`/api/v1/${workspace.name}/api-key`),
      await api.get(`/api/v1/${workspace.name}/files/1`),
      await s.admin.post('/admin/v1/workspaces', { name: created }),
      await s.admin.get(`/admin/v1/workspaces/${workspace.name}`),
    ];
    for (const res of answers) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ message: 'Service Unavailable.' });
      expect(res.headers.get('retry-after')).toBe('5');
    }
    // The server process and its open documents keep answering.
    expect((await request(s.url, 'GET', '/openapi.json')).status).toBe(200);

    await proxy.restore();
    await eventually(async () => (await request(s.url, 'GET', '/health')).status === 200);
    expect((await api.get(`/api/v1/${workspace.name}/api-key`)).status).toBe(200);
    expect((await s.admin.get(`/admin/v1/workspaces/${created}`)).status).toBe(404);
    expect((await s.admin.post('/admin/v1/workspaces', { name: created })).status).toBe(201);
  });
});
