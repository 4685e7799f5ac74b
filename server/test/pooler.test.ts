// Server processes behind a real transaction-mode pooler (Debian's PgBouncer 1.18, which keeps no
// prepared statement across transactions and refuses startup parameters): DATABASE_URL is the
// pooler with fewer server connections than the processes' pools, DATABASE_DIRECT_URL the
// database itself, for LISTEN. Writes, batches with idempotency, structured queries (the
// statements the server otherwise keeps prepared) and cache invalidation across processes work,
// and the database sees no more connections than the pooler's pool and the listeners.
// Skipped without pgbouncer (REQUIRE_POOLER=1, as in CI, makes that a failure).
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { freePort, spawnServer, ADMIN_TOKEN, type SpawnedServer } from './support/server';
import { ConfigError, loadConfig } from '../src/config';
import { openDatabase, sessionSettingsDiffer } from '../src/db/database';
import { PGBOUNCER, pgbouncerFound, startPgbouncer } from './support/pgbouncer';

// Well under the four processes' pools (4 each, plus 2 relaxed and the job queue's), yet enough that
// their background work (scheduler, job polling) does not starve a request past its 5 s wait for a
// connection on a loaded machine (seen with 3 while the other jest worker ran).
const SERVER_CONNECTIONS = 5;
if (!pgbouncerFound && process.env.REQUIRE_POOLER === '1')
  throw new Error(`REQUIRE_POOLER=1 but ${PGBOUNCER} is missing (apt-get install pgbouncer)`);
const describeWithPooler = pgbouncerFound ? describeWithPostgres : describe.skip;

describeWithPooler('behind a transaction-mode pooler', () => {
  let db: TestDatabase;
  let bouncer: { stop(): Promise<void> } | undefined;
  const servers: SpawnedServer[] = [];
  let pooledUrl: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    bouncer = await startPgbouncer(port, { poolSize: SERVER_CONNECTIONS });
    const pooled = new URL(db.url!);
    pooled.port = String(port);
    pooledUrl = pooled.toString();
    const env = { DATABASE_URL: pooledUrl, DATABASE_DIRECT_URL: db.url!, DATABASE_POOLER: 'transaction', DATABASE_POOL_SIZE: '4' };
    // One first (migrations), then three more: together their pools (16) exceed the pooler's.
    servers.push(await spawnServer(db, env));
    servers.push(...(await Promise.all([1, 2, 3].map(() => spawnServer(db, env)))));
  }, 90_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await bouncer?.stop();
    await db?.drop();
  });

  const call = async (
    server: SpawnedServer,
    method: string,
    p: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${server.url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  it('tells the settings the server connections lack behind the pooler (none on a direct pool, which sets them)', async () => {
    const opened = [
      await openDatabase({
        databaseUrl: pooledUrl,
        databasePooler: 'transaction',
        databaseDirectUrl: db.url!,
        dataDir: db.dataDir,
        databasePoolSize: 1,
      }),
      await openDatabase({ databaseUrl: db.url!, dataDir: db.dataDir, databasePoolSize: 1, databaseStatementTimeoutMs: 30_000 }),
    ];
    try {
      expect(await sessionSettingsDiffer(opened[0], 30_000)).toEqual([
        'max_parallel_workers_per_gather=0',
        'random_page_cost=1.1',
        'jit=off',
        'statement_timeout=30000',
      ]);
      expect(await sessionSettingsDiffer(opened[1], 30_000)).toEqual([]);
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });

  it('writes, batches, queries and invalidates caches across processes, on no more server connections than the pooler has', async () => {
    const [a, b] = servers;
    const admin = (m: string, p: string, body?: unknown) => call(a, m, `/admin/v1${p}`, ADMIN_TOKEN, body);
    expect((await admin('POST', '/workspaces', { name: 'pooled' })).status).toBe(201);
    const user = await admin('POST', '/workspaces/pooled/users', {
      email: 'p@example.com',
      permissions: ['list-entries', 'view-entry', 'create-entry', 'update-entry'],
    });
    const key = (
      await admin('POST', '/workspaces/pooled/api-keys', {
        name: 'k',
        user_id: user.body.id,
        abilities: ['entries:read', 'entries:query', 'entries:write'],
      })
    ).body.key as string;
    expect(
      (
        await admin('POST', '/workspaces/pooled/buckets/general/content-types', {
          name: 'item',
          fields: [
            { name: 'n', type: 'number' },
            { name: 'label', type: 'text' },
          ],
        })
      ).status,
    ).toBe(201);

    // A batch, then its retry on the other process: the same answer, written once.
    const operations = Array.from({ length: 30 }, (_, i) => ({
      action: 'create',
      type: 'item',
      fields: { n: i, label: `l${i}` },
      status: 'published',
    }));
    const idem = { 'Idempotency-Key': 'pooled-batch-1' };
    const first = await call(a, 'POST', '/api/v1/pooled/general/entries/batch', key, { operations }, idem);
    expect(first.status).toBe(200);
    const again = await call(b, 'POST', '/api/v1/pooled/general/entries/batch', key, { operations }, idem);
    expect(again.body).toEqual(first.body);

    // The same structured query on both, many times over (prepared on a direct connection).
    const query = { type: 'item', filter: { n: { gte: 10 } }, sort: [{ field: 'n', direction: 'desc' }], fields: ['n'], limit: 3 };
    for (let i = 0; i < 20; i++) {
      for (const server of servers) {
        const res = await call(server, 'POST', '/api/v1/pooled/general/entries/query', key, query);
        expect(res.body.data).toEqual([{ n: 29 }, { n: 28 }, { n: 27 }]);
      }
    }
    // A change through one process is seen by the other's next read (its cached answer dropped through LISTEN).
    const [top] = first.body.data.slice(-1);
    expect((await call(a, 'PATCH', `/api/v1/pooled/entries/${top.id}`, key, { fields: { n: 100 } })).status).toBe(200);
    expect((await call(b, 'POST', '/api/v1/pooled/general/entries/query', key, query)).body.data).toEqual([
      { n: 100 },
      { n: 28 },
      { n: 27 },
    ]);

    const direct = new pg.Client({ connectionString: db.url });
    await direct.connect();
    try {
      const { rows } = await direct.query<{ app: string; n: number }>(
        `SELECT coalesce(application_name, '') AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1`,
      );
      const listeners = rows.filter((r) => r.app.startsWith('workspace-api listener')).reduce((sum, r) => sum + r.n, 0);
      const others = rows.filter((r) => !r.app.startsWith('workspace-api listener')).reduce((sum, r) => sum + r.n, 0);
      expect(listeners).toBeGreaterThan(0);
      expect(others).toBeLessThanOrEqual(SERVER_CONNECTIONS);
    } finally {
      await direct.end();
    }
  });
});

describe('DATABASE_POOLER and DATABASE_DIRECT_URL', () => {
  const load = (env: Record<string, string>) => loadConfig({ ADMIN_TOKEN: 'x', APP_KEY: 'y', ...env });
  const url = 'postgresql://app@pooler:6432/app';
  const direct = 'postgresql://app@db:5432/app';

  it('defaults to no pooler, and takes the direct URL beside the pooler', () => {
    expect(load({ DATABASE_URL: url })).toMatchObject({ databasePooler: 'none', databaseDirectUrl: undefined });
    expect(load({ DATABASE_URL: url, DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: direct })).toMatchObject({
      databasePooler: 'transaction',
      databaseUrl: url,
      databaseDirectUrl: direct,
    });
  });

  it.each([
    [{ DATABASE_URL: url, DATABASE_POOLER: 'session' }, 'DATABASE_POOLER must be one of none, transaction, got "session"'],
    [
      { DATABASE_URL: url, DATABASE_POOLER: 'transaction' },
      'DATABASE_POOLER=transaction needs DATABASE_URL (the pooler) and DATABASE_DIRECT_URL (a direct connection, for LISTEN)',
    ],
    [
      { DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: direct },
      'DATABASE_POOLER=transaction needs DATABASE_URL (the pooler) and DATABASE_DIRECT_URL (a direct connection, for LISTEN)',
    ],
  ])('%p is a configuration error', (env, message) => {
    expect(() => load(env)).toThrow(new ConfigError(message));
  });
});
