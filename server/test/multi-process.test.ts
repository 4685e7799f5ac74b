// Several processes of the built server (`node dist/server/src/main.js`, as `npm start` runs it)
// on one database: shared rate limits, a shared test clock, migrations under a lock, graceful
// shutdown, and the embedded default from an empty DATA_DIR.
import http from 'node:http';
import pg from 'pg';
import { isDeepStrictEqual } from 'node:util';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from './support/database';
import { spawnServer, freePort, ADMIN_TOKEN, type SpawnedServer } from './support/server';
import { spawn } from 'node:child_process';
import sharp from 'sharp';
import { projectRoot } from '../src/paths';
import { client } from './support/http';
import { setupWorkspace, uniqueName } from './support/fixtures';
import { describeWithPostgres, testMode } from './support/env';
import { startReceiver, eventually } from './support/receiver';
import { startOrigin } from './support/origin';
import { openDatabase, type Database, type Listener } from '../src/db/database';
import { migrate } from '../src/db/migrate';
import { JobQueue } from '../src/jobs/queue';
import { TASK_JOB } from '../src/jobs/scheduler';
import { createLogger } from '../src/lib/logger';

if (testMode === 'pglite') console.log('multi-process tests skipped: they need a PostgreSQL server (embedded mode is one process)');

const redisUp = () =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(6379, '127.0.0.1');
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

describeWithPostgres('several server processes on one database', () => {
  let db: TestDatabase;
  const servers: SpawnedServer[] = [];
  const spawnTracked = async (env: Record<string, string> = {}, database = db) => {
    const s = await spawnServer(database, env);
    servers.push(s);
    return s;
  };
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  afterAll(() => db.drop());

  async function expectSharedLimit(env: Record<string, string>) {
    const limits = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_KEY_INFO_PER_MINUTE: '4', ...env };
    const [a, b] = await Promise.all([spawnTracked(limits), spawnTracked(limits)]);
    const { workspace, key } = await setupWorkspace(client(a.url, ADMIN_TOKEN));
    const other = await setupWorkspace(client(b.url, ADMIN_TOKEN));
    const route = `/api/v1/${workspace.name}/api-key`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await client(i % 2 ? b.url : a.url, key.key).get(route);
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.body).toEqual({ message: 'Too Many Attempts.' });
        const retry = Number(res.headers.get('retry-after'));
        expect(retry).toBeGreaterThanOrEqual(1);
        expect(retry).toBeLessThanOrEqual(60);
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    // Counted per API key: another key is not affected.
    expect((await client(a.url, other.key.key).get(`/api/v1/${other.workspace.name}/api-key`)).status).toBe(200);
    return key.id;
  }

  it('shares a rate limit across processes through PostgreSQL', async () => {
    await expectSharedLimit({});
    const pg = await import('pg');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query(`SELECT points FROM rate_limits WHERE key LIKE 'key-info:%' ORDER BY points DESC LIMIT 1`);
    await c.end();
    expect(rows[0].points).toBeGreaterThanOrEqual(6);
  });

  it('shares a rate limit across processes through Redis when REDIS_URL is set, keeping nothing in PostgreSQL', async () => {
    if (!(await redisUp())) {
      if (process.env.CI) throw new Error('Redis is expected at 127.0.0.1:6379 in CI');
      console.log('Redis rate-limit test skipped: nothing answers at 127.0.0.1:6379');
      return;
    }
    const pg = await import('pg');
    // A prefix of this run's own: key IDs of a fresh database repeat those of earlier runs.
    const keyId = await expectSharedLimit({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: `wsapi-test-${Date.now()}-${process.pid}` });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query('SELECT count(*)::int AS n FROM rate_limits WHERE key = $1', [`key-info:key:${keyId}`]);
    await c.end();
    expect(rows[0].n).toBe(0);
  });

  it('moves the test clock of every process together', async () => {
    const [a, b] = await Promise.all([spawnTracked({ TEST_CLOCK: '1' }), spawnTracked({ TEST_CLOCK: '1' })]);
    const moved = await client(a.url, ADMIN_TOKEN).post('/admin/v1/clock', { advance_seconds: 7 * 86_400 });
    const seen = await client(b.url, ADMIN_TOKEN).get('/admin/v1/clock');
    expect(Math.abs(new Date(seen.body.now).getTime() - new Date(moved.body.now).getTime())).toBeLessThan(5_000);
    await client(b.url, ADMIN_TOKEN).delete('/admin/v1/clock');
    const back = await client(a.url, ADMIN_TOKEN).get('/admin/v1/clock');
    expect(Math.abs(new Date(back.body.now).getTime() - Date.now())).toBeLessThan(5_000);
  });

  it('applies a permission change, a suspension and a key deletion made in one process on the very next request of another', async () => {
    const [a, b] = await Promise.all([spawnTracked(), spawnTracked()]);
    const adminA = client(a.url, ADMIN_TOKEN);
    const { workspace, user, key } = await setupWorkspace(adminA, { permissions: ['view-file'] });
    const onB = client(b.url, key.key);
    const keyInfo = `/api/v1/${workspace.name}/api-key`;
    expect((await onB.get(keyInfo)).body.user.permissions).toEqual(['view-file']);

    await adminA.patch(`/admin/v1/workspaces/${workspace.name}/users/${user.id}`, { permissions: ['create-file'] });
    expect((await onB.get(keyInfo)).body.user.permissions).toEqual(['create-file']);
    const details = await onB.get(`/api/v1/${workspace.name}/files/1`);
    expect(details.status).toBe(403);
    expect(details.body).toEqual({ message: 'This API key is not permitted to perform this action' });

    await adminA.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: true });
    expect(await onB.get(keyInfo)).toMatchObject({ status: 403, body: { message: 'Workspace suspended' } });
    await adminA.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: false });
    expect((await onB.get(keyInfo)).status).toBe(200);

    await adminA.delete(`/admin/v1/workspaces/${workspace.name}/api-keys/${key.id}`);
    expect(await onB.get(keyInfo)).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
  });

  it('sees a content type created in one process on the very next request of another (cached content types are dropped)', async () => {
    const [a, b] = await Promise.all([spawnTracked(), spawnTracked()]);
    const adminA = client(a.url, ADMIN_TOKEN);
    const { workspace, key } = await setupWorkspace(adminA, { permissions: ['list-entries', 'create-entry'] });
    const onB = client(b.url, key.key);
    const type = (name: string) =>
      adminA.post(`/admin/v1/workspaces/${workspace.name}/buckets/general/content-types`, {
        name,
        fields: [{ name: 'title', type: 'text' }],
      });
    const list = (name: string) => onB.get(`/api/v1/${workspace.name}/entries?contentBucket=general&contentType=${name}`);
    expect((await type('first')).status).toBe(201);
    expect((await list('first')).status).toBe(200);
    expect((await list('second')).status).toBe(404);
    expect((await type('second')).status).toBe(201);
    expect((await list('second')).status).toBe(200);
    const created = await onB.post(`/api/v1/${workspace.name}/entries?contentBucket=general&contentType=second`, {
      fields: { title: 't' },
    });
    expect(created.status).toBe(201);
  });

  it('shows a content type changed, or a workspace deleted, in one process on the very next request of another (kept answers too)', async () => {
    const [a, b] = await Promise.all([spawnTracked(), spawnTracked()]);
    const adminA = client(a.url, ADMIN_TOKEN);
    const { workspace, key } = await setupWorkspace(adminA, {
      permissions: ['list-entries', 'view-entry', 'create-entry', 'update-entry'],
    });
    const typePath = `/admin/v1/workspaces/${workspace.name}/buckets/general/content-types/note`;
    expect(
      (
        await adminA.post(`/admin/v1/workspaces/${workspace.name}/buckets/general/content-types`, {
          name: 'note',
          fields: [
            { name: 'title', type: 'text' },
            { name: 'body', type: 'text' },
          ],
        })
      ).status,
    ).toBe(201);
    const onB = client(b.url, key.key);
    const list = `/api/v1/${workspace.name}/entries?contentBucket=general&contentType=note`;
    const created = await onB.post(list, { fields: { title: 't', body: 'b' }, status: 'published' });
    const read = `/api/v1/${workspace.name}/entries/${created.body.id}`;
    const query = `/api/v1/${workspace.name}/general/entries/query`;
    // B keeps the model, the answers and the texts; each change through A answers once B dropped them.
    for (const [change, fields] of [
      [{ rename_fields: { body: 'text' } }, { title: 't', text: 'b' }],
      [{ remove_fields: ['title'] }, { text: 'b' }],
      [
        {
          fields: [
            { name: 'text', type: 'text' },
            { name: 'extra', type: 'number' },
          ],
        },
        { text: 'b', extra: null },
      ],
    ] as const) {
      expect((await onB.get(read)).status).toBe(200);
      expect((await onB.get(list)).status).toBe(200);
      expect((await adminA.patch(typePath, change)).status).toBe(200);
      expect((await onB.get(read)).body.fields).toEqual(fields);
      expect((await onB.get(list)).body[0].fields).toEqual(fields);
      expect((await onB.post(query, { type: 'note', fields: Object.keys(fields) })).body.data).toEqual([fields]);
    }
    // The same through a model's apply (a rename in the snapshot).
    const modelPath = `/admin/v1/workspaces/${workspace.name}/model`;
    const model = (await adminA.get(modelPath)).body;
    model.buckets.find((b: { name: string }) => b.name === 'general').content_types[0].fields[1].name = 'count';
    const planned = await adminA.post(`${modelPath}/plan`, model);
    expect((await onB.get(read)).body.fields).toEqual({ text: 'b', extra: null });
    expect((await adminA.post(`${modelPath}/apply`, { version: planned.body.version, model })).status).toBe(200);
    expect((await onB.get(read)).body.fields).toEqual({ text: 'b', count: null });
    expect((await onB.get(list)).body[0].fields).toEqual({ text: 'b', count: null });
    expect((await adminA.delete(`/admin/v1/workspaces/${workspace.name}`)).status).toBe(202);
    expect((await onB.get(read)).status).toBe(403);
    expect((await client(b.url, ADMIN_TOKEN).get(`/admin/v1/workspaces/${workspace.name}`)).status).toBe(404);
  });

  it('applies hosted-authentication settings changed in one process on the very next request of another (cached workspaces are dropped)', async () => {
    const [a, b] = await Promise.all([spawnTracked(), spawnTracked()]);
    const adminA = client(a.url, ADMIN_TOKEN);
    const { workspace } = await setupWorkspace(adminA, { permissions: ['view-file'] });
    const onB = client(b.url);
    // Without a token: 403 Forbidden where hosted authentication is on, 404 where it is off.
    const authorize = () => onB.get(`/api/v1/${workspace.name}/auth/session`);
    const settings = (body: Record<string, unknown>) => adminA.patch(`/admin/v1/workspaces/${workspace.name}`, body);
    expect((await authorize()).status).toBe(404);
    expect((await settings({ auth_enabled: true, auth_redirect_uris: ['https://app.example/cb'] })).status).toBe(200);
    expect(await authorize()).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
    expect(await authorize()).toMatchObject({ status: 403, body: { message: 'Forbidden' } });
    expect((await settings({ suspended: true })).status).toBe(200);
    expect(await authorize()).toMatchObject({ status: 403, body: { message: 'Workspace suspended' } });
    expect((await settings({ suspended: false, auth_enabled: false })).status).toBe(200);
    expect((await authorize()).status).toBe(404);
  });

  it('confirms a change only once every listening connection of the database has handled it', async () => {
    const [x, y] = await Promise.all([0, 1].map(() => openDatabase({ databaseUrl: db.url, dataDir: db.dataDir, databasePoolSize: 1 })));
    // A third listener, played by hand: it answers a ping only when the test says so.
    const slow = new pg.Client({ connectionString: db.url, application_name: 'workspace-api listener confirm_test' });
    try {
      let heardByY = 0;
      const listenOn = (d: Database, onNotify: () => void) =>
        new Promise<Listener>((resolve) => {
          const listener = d.listen('confirm_test', onNotify, (on) => on && resolve(listener));
        });
      const lx = await listenOn(x, () => undefined);
      const ly = await listenOn(y, () => heardByY++);
      await slow.connect();
      const pings: string[] = [];
      slow.on('notification', (n) => n.channel === 'confirm_test' && pings.push(n.payload!));
      await slow.query('LISTEN confirm_test');

      let confirmed = false;
      const confirming = lx.confirm(20_000).then(() => (confirmed = true));
      await eventually(async () => pings.length > 0);
      expect(pings[0]).toMatch(/^ping:/);
      await new Promise((r) => setTimeout(r, 200));
      // x and y answered long ago; the third has not. A ping is no change: y dropped nothing.
      expect(confirmed).toBe(false);
      expect(heardByY).toBe(0);
      await slow.query('SELECT pg_notify($1, $2)', ['confirm_test_ack', pings[0]!.slice('ping:'.length)]);
      const started = Date.now();
      await confirming;
      expect(Date.now() - started).toBeLessThan(10_000);
      await Promise.all([lx.stop(), ly.stop()]);
    } finally {
      await slow.end();
      await Promise.all([x.close(), y.close()]);
    }
  });

  it('answers a write through a process that keeps no answers only once every other process dropped theirs', async () => {
    const b = await spawnTracked({ RESPONSE_CACHE_MB: '0' });
    const admin = client(b.url, ADMIN_TOKEN);
    const { workspace, key } = await setupWorkspace(admin, { permissions: ['list-entries', 'view-entry', 'create-entry'] });
    expect(
      (
        await admin.post(`/admin/v1/workspaces/${workspace.name}/buckets/general/content-types`, {
          name: 'note',
          fields: [{ name: 'title', type: 'text' }],
        })
      ).status,
    ).toBe(201);
    // A caching process, played by hand: it answers a ping only when the test says so.
    const slow = new pg.Client({ connectionString: db.url, application_name: 'workspace-api listener content_changed' });
    await slow.connect();
    try {
      const heard: string[] = [];
      slow.on('notification', (n) => n.channel === 'content_changed' && heard.push(n.payload!));
      await slow.query('LISTEN content_changed');
      let answered = false;
      const writing = client(b.url, key.key)
        .post(`/api/v1/${workspace.name}/entries?contentBucket=general&contentType=note`, { fields: { title: 'x' }, status: 'published' })
        .then((res) => ((answered = true), res));
      await eventually(async () => heard.some((p) => p.startsWith('ping:')));
      // The change named its workspace before the ping.
      const { rows } = await slow.query<{ id: number }>('SELECT id FROM workspaces WHERE name = $1', [workspace.name]);
      expect(heard[0]).toBe(String(rows[0].id));
      await new Promise((r) => setTimeout(r, 300));
      expect(answered).toBe(false);
      await slow.query('SELECT pg_notify($1, $2)', [
        'content_changed_ack',
        heard.find((p) => p.startsWith('ping:'))!.slice('ping:'.length),
      ]);
      expect((await writing).status).toBe(201);
    } finally {
      await slow.end();
    }
  });

  it('answers a read kept by one process with what another wrote, once that write has answered', async () => {
    const [a, b] = await Promise.all([spawnTracked(), spawnTracked()]);
    const admin = client(a.url, ADMIN_TOKEN);
    const { workspace, key } = await setupWorkspace(admin, { permissions: ['list-entries', 'view-entry', 'create-entry', 'update-entry'] });
    const type = await admin.post(`/admin/v1/workspaces/${workspace.name}/buckets/general/content-types`, {
      name: 'note',
      fields: [{ name: 'title', type: 'text' }],
    });
    expect(type.status).toBe(201);
    const [onA, onB] = [client(a.url, key.key), client(b.url, key.key)];
    const list = `/api/v1/${workspace.name}/entries?contentBucket=general&contentType=note`;
    const created = await onB.post(list, { fields: { title: 'v1' }, status: 'published' });
    expect(created.status).toBe(201);
    const read = `/api/v1/${workspace.name}/entries/${created.body.id}`;
    const query = `/api/v1/${workspace.name}/general/entries/query`;
    const count = { type: 'note', aggregate: { count: true } };
    // A keeps each answer; every write on B answers only once A has dropped them.
    for (let i = 2; i <= 6; i++) {
      expect((await onA.get(read)).body.fields.title).toBe(`v${i - 1}`);
      expect((await onA.get(list)).body.map((e: { fields: { title: string } }) => e.fields.title)).toContain(`v${i - 1}`);
      expect((await onA.post(query, count)).body.data[0].count).toBe(i - 1);
      expect((await onB.patch(read, { fields: { title: `v${i}` } })).status).toBe(200);
      expect((await onB.post(list, { fields: { title: `extra ${i}` }, status: 'published' })).status).toBe(201);
      expect((await onA.get(read)).body.fields.title).toBe(`v${i}`);
      expect((await onA.post(query, count)).body.data[0].count).toBe(i);
    }
  });

  it('drops cached key lookups on changes made in the database directly, and reads the database on every request while its listener is lost', async () => {
    const a = await spawnTracked();
    const { workspace, user, key } = await setupWorkspace(client(a.url, ADMIN_TOKEN), { permissions: ['view-file'] });
    const onA = client(a.url, key.key);
    const keyInfo = `/api/v1/${workspace.name}/api-key`;
    const permissions = async () => (await onA.get(keyInfo)).body.user.permissions;
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      const setPermissions = (p: string[]) => sql.query('UPDATE users SET permissions = $1 WHERE id = $2', [p, user.id]);
      const listeners = async () =>
        (
          await sql.query(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'workspace-api listener auth_changed'`,
          )
        ).rows.map((r) => r.pid);
      expect(await permissions()).toEqual(['view-file']);
      expect(await permissions()).toEqual(['view-file']);
      // Not through the API: the trigger's notification drops the cached lookup (it travels on
      // its own connection, so it may arrive just after this request: API changes wait for it).
      await setPermissions(['create-file']);
      await eventually(async () => isDeepStrictEqual(await permissions(), ['create-file']), 2_000);

      // The listening connection is cut: until it is back, every request reads the database.
      const [pid] = await listeners();
      expect(pid).toEqual(expect.any(Number));
      await sql.query('SELECT pg_terminate_backend($1)', [pid]);
      await new Promise((r) => setTimeout(r, 200));
      await setPermissions(['delete-file']);
      expect(await permissions()).toEqual(['delete-file']);
      await setPermissions(['view-file']);
      expect(await permissions()).toEqual(['view-file']);
      await eventually(async () => (await listeners()).some((p) => p !== pid));
      await permissions();
      await setPermissions(['create-file', 'view-file']);
      await eventually(async () => isDeepStrictEqual(await permissions(), ['create-file', 'view-file']), 2_000);
    } finally {
      await sql.end();
    }
  });

  it('writes the buffered request logs of a process when it stops', async () => {
    const a = await spawnTracked();
    const { workspace, key } = await setupWorkspace(client(a.url, ADMIN_TOKEN));
    for (let i = 0; i < 5; i++) expect((await client(a.url, key.key).get(`/api/v1/${workspace.name}/api-key`)).status).toBe(200);
    // Stopped right away: the rows may still be in the buffer; shutdown writes them.
    expect(await a.stop()).toBe(0);
    const pg = await import('pg');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query(
      `SELECT method, path, status FROM request_logs WHERE workspace_id = (SELECT id FROM workspaces WHERE name = $1) ORDER BY id`,
      [workspace.name],
    );
    await c.end();
    expect(rows).toEqual(Array(5).fill({ method: 'GET', path: `/api/v1/${workspace.name}/api-key`, status: 200 }));
  });

  it('migrates a fresh database once when processes start together', async () => {
    const fresh = await createTestDatabase();
    try {
      const started = await Promise.all([spawnTracked({}, fresh), spawnTracked({}, fresh), spawnTracked({}, fresh)]);
      expect(started).toHaveLength(3);
      const pg = await import('pg');
      const c = new pg.Client({ connectionString: fresh.url });
      await c.connect();
      const { rows } = await c.query('SELECT migration_name FROM _prisma_migrations');
      await c.end();
      const names = rows.map((r) => r.migration_name);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await Promise.all(servers.splice(0).map((s) => s.stop()));
      await fresh.drop();
    }
  });

  it('runs a scheduled task once per period across two processes', async () => {
    const tick = { TEST_CLOCK: '1', SCHEDULER_TICK_MS: '100' };
    const [a, b] = await Promise.all([spawnTracked(tick), spawnTracked(tick)]);
    const pg = await import('pg');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const runs = async () =>
      (
        await c.query(
          `SELECT period, attempts, runner, finished_at IS NOT NULL AS finished FROM task_runs WHERE task = 'rate-limits:prune' ORDER BY period`,
        )
      ).rows;
    try {
      const start = (await client(a.url, ADMIN_TOKEN).get('/admin/v1/clock')).body.now as string;
      const periods = [0, 1, 2, 3].map((h) => new Date(new Date(start).getTime() + h * 3_600_000).toISOString().slice(0, 13));
      // The current hour runs when the schedulers start.
      await eventually(async () => (await runs()).some((r) => r.period === periods[0] && r.finished));
      for (let hour = 1; hour <= 3; hour++) {
        await client(hour % 2 ? a.url : b.url, ADMIN_TOKEN).post('/admin/v1/clock', { advance_seconds: 3600 });
        await eventually(async () => (await runs()).some((r) => r.period === periods[hour] && r.finished));
      }
      // Both processes had three more seconds to try again.
      await new Promise((r) => setTimeout(r, 1_500));
      const rows = (await runs()).filter((r) => periods.includes(r.period));
      expect(rows.map((r) => [r.period, r.attempts, r.finished])).toEqual(periods.map((p) => [p, 1, true]));
      expect(rows.every((r) => typeof r.runner === 'string' && r.runner.includes(':'))).toBe(true);
    } finally {
      await c.query(`TRUNCATE task_runs`);
      await c.end();
      await client(b.url, ADMIN_TOKEN).delete('/admin/v1/clock');
    }
  });

  it('runs a job queued by a process that then died, in another process', async () => {
    // This test process plays the server that queued the run of a period and crashed.
    const dead = await openDatabase({ databaseUrl: db.url, dataDir: db.dataDir });
    await migrate(dead);
    const queue = new JobQueue(dead, createLogger('silent'));
    await queue.start();
    await dead.query(`INSERT INTO task_runs (task, period, claimed_at) VALUES ('rate-limits:prune', 'crashed-period', now())`);
    await queue.send(TASK_JOB, { task: 'rate-limits:prune', period: 'crashed-period' });
    await queue.stop();
    await dead.close();

    const b = await spawnTracked({ SCHEDULER_TICK_MS: '100' });
    const pg = await import('pg');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const row = await eventually(async () => {
        const { rows } = await c.query(`SELECT attempts, runner, finished_at FROM task_runs WHERE period = 'crashed-period'`);
        return rows[0]?.finished_at && rows[0];
      });
      expect(row.attempts).toBe(1);
      expect(row.runner).toMatch(new RegExp(`:${b.process.pid}$`));
    } finally {
      await c.end();
    }
  });

  it('retries, from another process, a delivery whose process was killed in flight; the event id is kept', async () => {
    // The first request never gets an answer: its process is killed while waiting.
    const receiver = await startReceiver((i) => (i === 0 ? 'hang' : 200));
    const env = { WEBHOOK_TIMEOUT_MS: '1000', SCHEDULER_TICK_MS: '100' };
    try {
      const a = await spawnTracked(env);
      const admin = client(a.url, ADMIN_TOKEN);
      const ws = await setupWorkspace(admin);
      const hook = await admin.post(`/admin/v1/workspaces/${ws.workspace.name}/webhooks`, {
        url: receiver.url,
        events: ['*'],
        secret: 'a-long-enough-secret',
      });
      const ping = await admin.post(`/admin/v1/workspaces/${ws.workspace.name}/webhooks/${hook.body.id}/ping`);
      await receiver.waitFor(1);
      a.process.kill('SIGKILL');
      await a.exited;
      const b = await spawnTracked(env);
      const [first, second] = await receiver.waitFor(2, 20_000);
      expect(first.body.id).toBe(ping.body.event_id);
      expect(second.body.id).toBe(ping.body.event_id);
      expect(second.raw).toBe(first.raw);
      const log = await eventually(async () => {
        const d = (await client(b.url, ADMIN_TOKEN).get(`/admin/v1/workspaces/${ws.workspace.name}/webhooks/${hook.body.id}/deliveries`))
          .body.data[0];
        return d.status === 'delivered' && d;
      });
      expect(log).toMatchObject({ event_id: ping.body.event_id, status: 'delivered', attempts: 2, response_status: 200 });
    } finally {
      await receiver.close();
    }
  });

  it('runs the image proxy as a process of its own', async () => {
    const proxyPort = await freePort();
    const api = await spawnTracked({ IMAGE_PROXY_URL: `http://127.0.0.1:${proxyPort}/_image` });
    const proxy = spawn(process.execPath, [path.join(projectRoot, 'dist/server/src/images/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(proxyPort),
        HOST: '127.0.0.1',
        IMAGE_ORIGIN_URL: api.url,
        DATA_DIR: `${db.dataDir}/proxy`,
        LOG_LEVEL: 'silent',
        ADMIN_TOKEN: 'x',
        APP_KEY: 'y',
      },
      stdio: 'ignore',
    });
    try {
      const ctx = await setupWorkspace(client(api.url, ADMIN_TOKEN), { permissions: ['create-file', 'view-file'] });
      const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#336699' } })
        .png()
        .toBuffer();
      const up = await client(api.url, ctx.key.key).post(`/api/v1/${ctx.workspace.name}/files`, {
        file: { name: 'a.png', content: png.toString('base64') },
      });
      expect(up.body.image_url).toMatch(new RegExp(`^http://127.0.0.1:${proxyPort}/_image/api/v1/`));
      const res = await eventually(async () => {
        const r = await fetch(`${up.body.temporary_image_url}&width=30&format=webp`).catch(() => undefined);
        return r?.status === 200 && r;
      });
      expect(res.headers.get('content-type')).toBe('image/webp');
      expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(30);
      const direct = await fetch(`${up.body.image_url}?width=60&format=png`);
      expect((await sharp(Buffer.from(await direct.arrayBuffer())).metadata()).width).toBe(60);
    } finally {
      proxy.kill('SIGTERM');
    }
  });

  it('finishes an in-flight request on SIGTERM, refuses new connections, and exits 0', async () => {
    const s = await spawnTracked();
    const name = uniqueName('drain');
    const body = JSON.stringify({ name });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${s.url}/admin/v1/workspaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      setTimeout(() => {
        s.process.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 500);
      }, 300);
    });
    const res = await response;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body).name).toBe(name);
    expect(await s.exited).toBe(0);
    await expect(fetch(`${s.url}/health`)).rejects.toThrow();
    const check = await spawnTracked();
    expect((await client(check.url, ADMIN_TOKEN).get(`/admin/v1/workspaces/${name}`)).status).toBe(200);
  });

  it.each([
    ['killed (SIGKILL): its lease runs out', 'SIGKILL'],
    ['stopped (SIGTERM): it gives the execution back at once', 'SIGTERM'],
  ] as const)(
    'finishes a pipeline execution in another process after the one running it was %s, writing its batch once',
    async (_how, signal) => {
      // The step after the batch waits for an answer that never comes while the first process lives.
      const origin = await startOrigin((_req, index) => (index === 0 ? 'hang' : { status: 200, body: { answered: index } }));
      try {
        const env = { PIPELINE_HTTP_ALLOWLIST: origin.origin, PIPELINE_LEASE_SECONDS: '2', SCHEDULER_TICK_MS: '200' };
        const a = await spawnTracked(env);
        const adminA = client(a.url, ADMIN_TOKEN);
        const { workspace, key } = await setupWorkspace(adminA, { permissions: ['create-entry', 'list-entries', 'execute-pipeline'] });
        const ws = workspace.name;
        expect(
          (
            await adminA.post(`/admin/v1/workspaces/${ws}/buckets/general/content-types`, {
              name: 'article',
              fields: [{ name: 'title', type: 'text' }],
            })
          ).status,
        ).toBe(201);
        const steps = [
          {
            id: 'create',
            type: 'entries.batch',
            with: { bucket: 'general', operations: [{ action: 'create', type: 'article', fields: { title: '{{input.title}}' } }] },
          },
          {
            id: 'notify',
            type: 'http.request',
            with: { method: 'POST', url: `${origin.origin}/notify`, body: { id: '{{steps.create.data.0.id}}' } },
          },
          { id: 'count', type: 'entries.query', with: { bucket: 'general', type: 'article', aggregate: { count: true } } },
        ];
        expect((await adminA.post(`/admin/v1/workspaces/${ws}/pipelines`, { name: 'publish', steps })).status).toBe(201);
        const queued = await client(a.url, key.key).post(`/api/v1/${ws}/pipelines/publish/executions`, { input: { title: 'Once' } });
        expect(queued.status).toBe(202);
        await eventually(async () => origin.requests.length === 1);

        const stopped = Date.now();
        a.process.kill(signal);
        const code = await a.exited;
        // SIGTERM cuts the waiting request short instead of waiting for its 10 s timeout.
        if (signal === 'SIGTERM') expect([code, Date.now() - stopped < 8_000]).toEqual([0, true]);
        const b = await spawnTracked(env);
        const status = `/api/v1/${ws}/pipelines/executions/${queued.body.id}`;
        const done = await eventually(async () => {
          const res = await client(b.url, key.key).get(status);
          return res.body.status === 'succeeded' || res.body.status === 'failed' ? res.body : undefined;
        }, 30_000);
        expect(done.status).toBe('succeeded');
        expect(done.steps.map((step: { status: string }) => step.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
        // The interrupted step ran again; the batch before it did not.
        expect(origin.requests.map((r) => r.body)).toEqual([{ id: expect.any(String) }, { id: origin.requests[0].body.id }]);
        expect(done.output).toEqual({ data: [{ count: 1 }], pagination: { offset: 0, limit: 1, hasMore: false } });
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM entries e JOIN workspaces w ON w.id = e.workspace_id WHERE w.name = $1`,
          [ws],
        );
        const attempts = await c.query(`SELECT attempts FROM pipeline_executions WHERE id = $1`, [queued.body.id]);
        await c.end();
        expect(rows[0].n).toBe(1);
        expect(attempts.rows[0].attempts).toBe(2);
      } finally {
        await origin.close();
      }
    },
  );

  it('starts the embedded default from an empty DATA_DIR, prints its admin token, and keeps data across restarts', async () => {
    const embedded = { DATABASE_URL: '', DATABASE_DIRECT_URL: '', DATABASE_POOLER: 'none', ADMIN_TOKEN: '', APP_KEY: '' };
    const first = await spawnTracked(embedded);
    const health = await client(first.url).get('/health');
    expect(health.body).toEqual({ status: 'ok', database: 'pglite', checks: { database: 'ok', storage: 'ok' } });
    const token = readFileSync(path.join(db.dataDir, 'admin_token.secret'), 'utf8').trim();
    expect(first.output()).toContain(`management API token (ADMIN_TOKEN, kept in ${db.dataDir}): ${token}`);
    const { workspace, key } = await setupWorkspace(client(first.url, token));
    expect((await client(first.url, key.key).get(`/api/v1/${workspace.name}/api-key`)).status).toBe(200);
    expect(await first.stop()).toBe(0);
    servers.splice(servers.indexOf(first), 1);

    const second = await spawnTracked(embedded);
    expect((await client(second.url, key.key).get(`/api/v1/${workspace.name}/api-key`)).status).toBe(200);
    expect((await client(second.url, token).get(`/admin/v1/workspaces/${workspace.name}`)).status).toBe(200);
  });
});
