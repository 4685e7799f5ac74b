// Events, webhooks, the delivery log, audit records and request logs.
import { createHmac } from 'node:crypto';
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createWorkspace, setupWorkspace, TIMESTAMP } from './support/fixtures';
import { startReceiver, eventually, type Receiver } from './support/receiver';
import { publishEvent } from '../src/events/outbox';
import { transaction } from '../src/core/transaction';
import { parseWebhookEvent, verifyWebhookSignature } from '../../sdk/src';

let s: TestServer;
const receivers: Receiver[] = [];
const receiver = async (...args: Parameters<typeof startReceiver>) => {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
};

beforeAll(async () => {
  s = await startTestServer({ TEST_CLOCK: '1', SCHEDULER_TICK_MS: '100', WEBHOOK_TIMEOUT_MS: '1000' });
});
afterEach(async () => {
  await s.admin.delete('/admin/v1/clock');
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => s.close());

const hooks = (ws: string) => `/admin/v1/workspaces/${ws}/webhooks`;
const SECRET = 'a-long-enough-secret';

async function subscribe(ws: string, url: string, events: string[] = ['*']) {
  const res = await s.admin.post(hooks(ws), { url, events, secret: SECRET });
  expect(res.status).toBe(201);
  return res.body as { id: number };
}

const deliveries = async (ws: string, id: number) => (await s.admin.get(`${hooks(ws)}/${id}/deliveries`)).body.data;
const advance = (seconds: number) => s.admin.post('/admin/v1/clock', { advance_seconds: seconds });

describe('subscriptions', () => {
  it('creates, lists and deletes subscriptions without exposing the secret', async () => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(hooks(ws.name), {
      url: 'https://hooks.example.com/x',
      events: ['file.created', 'entry.deleted'],
      secret: SECRET,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      url: 'https://hooks.example.com/x',
      events: ['file.created', 'entry.deleted'],
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const list = await s.admin.get(hooks(ws.name));
    expect(list.body).toEqual({ data: [res.body] });
    expect(list.text).not.toContain(SECRET);
    expect((await s.admin.delete(`${hooks(ws.name)}/${res.body.id}`)).status).toBe(204);
    expect((await s.admin.get(hooks(ws.name))).body.data).toEqual([]);
    expect((await s.admin.delete(`${hooks(ws.name)}/${res.body.id}`)).status).toBe(404);
  });

  it.each([
    [{ url: 'ftp://x.example.com', events: ['*'], secret: SECRET }, 'url'],
    [{ url: 'not a url', events: ['*'], secret: SECRET }, 'url'],
    [{ url: 'https://x.example.com', events: [], secret: SECRET }, 'events'],
    [{ url: 'https://x.example.com', events: ['file.renamed'], secret: SECRET }, 'events.0'],
    [{ url: 'https://x.example.com', events: ['*'], secret: 'short' }, 'secret'],
    [{ url: 'https://x.example.com', events: ['*'] }, 'secret'],
  ])('rejects %j with 422 on %s', async (body, key) => {
    const ws = await createWorkspace(s.admin);
    const res = await s.admin.post(hooks(ws.name), body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(key);
    expect((await s.admin.get(hooks(ws.name))).body.data).toEqual([]);
  });

  it('keeps subscriptions to their workspace', async () => {
    const a = await createWorkspace(s.admin);
    const b = await createWorkspace(s.admin);
    const hook = await subscribe(a.name, 'https://hooks.example.com/a');
    expect((await s.admin.post(`${hooks(b.name)}/${hook.id}/ping`)).status).toBe(404);
    expect((await s.admin.get(`${hooks(b.name)}/${hook.id}/deliveries`)).status).toBe(404);
    expect((await s.admin.delete(`${hooks(b.name)}/${hook.id}`)).status).toBe(404);
  });

  it('answers 404, not 500, when another request deleted the subscription after this one found it', async () => {
    const ws = await createWorkspace(s.admin);
    const hook = await subscribe(ws.name, 'https://hooks.example.com/vanishing');
    // A trigger that skips the delete stands for the other request's delete landing in between.
    const db = s.server.app.db;
    await db.query(`CREATE FUNCTION test_skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$`);
    await db.query(
      `CREATE TRIGGER test_vanishing BEFORE DELETE ON webhooks FOR EACH ROW WHEN (OLD.id = ${Number(hook.id)}) EXECUTE FUNCTION test_skip_row()`,
    );
    try {
      const res = await s.admin.delete(`${hooks(ws.name)}/${hook.id}`);
      expect([res.status, res.body]).toEqual([404, { message: 'Not Found' }]);
      // Nothing else of the request stayed: no audit record of a deletion.
      const audits = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM audit_logs WHERE event = 'webhook.deleted' AND workspace_id = (SELECT id FROM workspaces WHERE name = $1)`,
        [ws.name],
      );
      expect(audits.rows[0].n).toBe(0);
    } finally {
      await db.query(`DROP TRIGGER test_vanishing ON webhooks`);
      await db.query(`DROP FUNCTION test_skip_row()`);
    }
  });
});

describe('delivery', () => {
  it('pings a subscription whatever its filter, signed, and logs the delivery', async () => {
    const ws = await createWorkspace(s.admin);
    const r = await receiver();
    const hook = await subscribe(ws.name, r.url, ['file.deleted']);
    const ping = await s.admin.post(`${hooks(ws.name)}/${hook.id}/ping`);
    expect(ping.status).toBe(202);
    expect(ping.body).toEqual({ event_id: expect.stringMatching(/^[0-9a-f-]{36}$/), delivery_id: expect.any(Number) });
    const [got] = await r.waitFor(1);
    expect(got.body).toEqual({
      id: ping.body.event_id,
      event: 'ping',
      workspace: ws.name,
      created_at: expect.stringMatching(TIMESTAMP),
      data: { webhook_id: hook.id },
    });
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-webhook-event']).toBe('ping');
    expect(got.headers['x-webhook-id']).toBe(ping.body.event_id);
    expect(got.headers['x-webhook-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(got.raw).digest('hex')}`);
    // The SDK's helper accepts the real delivery and refuses a tampered one or a wrong secret.
    const signature = got.headers['x-webhook-signature'] as string;
    expect(await parseWebhookEvent(got.raw, signature, SECRET)).toEqual(got.body);
    expect(await verifyWebhookSignature(new TextEncoder().encode(got.raw), signature, SECRET)).toBe(true);
    expect(await verifyWebhookSignature(got.raw.replace('ping', 'pong'), signature, SECRET)).toBe(false);
    expect(await verifyWebhookSignature(got.raw, signature, 'another-secret')).toBe(false);
    expect(await verifyWebhookSignature(got.raw, undefined, SECRET)).toBe(false);
    await expect(parseWebhookEvent(got.raw, 'sha256=00', SECRET)).rejects.toThrow('invalid webhook signature');
    const log = await eventually(async () => {
      const d = await deliveries(ws.name, hook.id);
      return d[0]?.status === 'delivered' && d;
    });
    expect(log).toEqual([
      {
        id: ping.body.delivery_id,
        event_id: ping.body.event_id,
        event: 'ping',
        status: 'delivered',
        attempts: 1,
        response_status: 200,
        last_error: null,
        next_attempt_at: null,
        created_at: expect.stringMatching(TIMESTAMP),
        updated_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
  });

  it('retries a failing receiver with backoff on the server clock: 500, 500, 500, 200 is four attempts, delivered', async () => {
    const ws = await createWorkspace(s.admin);
    const r = await receiver((i) => (i < 3 ? 500 : 200));
    const hook = await subscribe(ws.name, r.url);
    await s.admin.post(`${hooks(ws.name)}/${hook.id}/ping`);
    await r.waitFor(1);
    const first = await eventually(async () => {
      const d = (await deliveries(ws.name, hook.id))[0];
      return d.attempts === 1 && d.next_attempt_at && d;
    });
    expect(first).toMatchObject({ status: 'pending', attempts: 1, response_status: 500, last_error: 'HTTP 500' });
    const clock = (await s.admin.get('/admin/v1/clock')).body.now;
    const delay = (new Date(first.next_attempt_at).getTime() - new Date(clock).getTime()) / 1000;
    expect(delay).toBeGreaterThan(8);
    expect(delay).toBeLessThanOrEqual(10);

    // Not due yet: nothing more arrives in real time.
    await new Promise((res) => setTimeout(res, 600));
    expect(r.requests).toHaveLength(1);

    for (const [seconds, expected] of [
      [10, 2],
      [20, 3],
      [40, 4],
    ] as const) {
      await advance(seconds);
      await r.waitFor(expected);
      if (expected < 4)
        await eventually(
          async () =>
            (await deliveries(ws.name, hook.id))[0].next_attempt_at !== null &&
            (await deliveries(ws.name, hook.id))[0].attempts === expected,
        );
    }
    const final = await eventually(async () => {
      const d = (await deliveries(ws.name, hook.id))[0];
      return d.status === 'delivered' && d;
    });
    expect(final).toMatchObject({ status: 'delivered', attempts: 4, response_status: 200, last_error: null, next_attempt_at: null });
    expect(new Set(r.requests.map((q) => q.raw)).size).toBe(1);
    expect(new Set(r.requests.map((q) => q.body.id)).size).toBe(1);
  });

  it('gives up after 8 attempts', async () => {
    const ws = await createWorkspace(s.admin);
    const r = await receiver(() => 503);
    const hook = await subscribe(ws.name, r.url);
    await s.admin.post(`${hooks(ws.name)}/${hook.id}/ping`);
    for (let attempt = 1; attempt <= 8; attempt++) {
      await r.waitFor(attempt);
      await eventually(
        async () =>
          (await deliveries(ws.name, hook.id))[0].attempts === attempt && (await deliveries(ws.name, hook.id))[0].last_error !== null,
      );
      await advance(10 * 2 ** (attempt - 1));
    }
    const final = await eventually(async () => {
      const d = (await deliveries(ws.name, hook.id))[0];
      return d.status === 'failed' && d;
    });
    expect(final).toMatchObject({ status: 'failed', attempts: 8, response_status: 503, next_attempt_at: null });
    await advance(100_000);
    await new Promise((res) => setTimeout(res, 500));
    expect(r.requests).toHaveLength(8);
  });

  it('counts no answer within the timeout as a failed attempt', async () => {
    const ws = await createWorkspace(s.admin);
    const r = await receiver(() => 'hang');
    const hook = await subscribe(ws.name, r.url);
    await s.admin.post(`${hooks(ws.name)}/${hook.id}/ping`);
    const d = await eventually(async () => {
      const row = (await deliveries(ws.name, hook.id))[0];
      return row.last_error && row;
    });
    expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null, last_error: 'no answer within 1000 ms' });
  });
});

describe('the event bus', () => {
  it('dispatches after commit to matching subscriptions of the same workspace only', async () => {
    const ws = await setupWorkspace(s.admin);
    const other = await createWorkspace(s.admin);
    const [matching, wildcard, filtered, foreign] = await Promise.all([receiver(), receiver(), receiver(), receiver()]);
    await subscribe(ws.workspace.name, matching.url, ['entry.deleted']);
    await subscribe(ws.workspace.name, wildcard.url, ['*']);
    await subscribe(ws.workspace.name, filtered.url, ['file.created']);
    await subscribe(other.name, foreign.url, ['*']);
    const app = s.server.app;
    const workspaceId = (await app.db.prisma.workspace.findUniqueOrThrow({ where: { name: ws.workspace.name } })).id;

    const eventId = await transaction(app, (tx) =>
      publishEvent(tx, app.clock.now(), { workspaceId, event: 'entry.deleted', data: { kind: 'object', id: 7 } }),
    );
    const [got] = await matching.waitFor(1);
    expect(got.body).toEqual({
      id: eventId,
      event: 'entry.deleted',
      workspace: ws.workspace.name,
      created_at: expect.stringMatching(TIMESTAMP),
      data: { kind: 'object', id: 7 },
    });
    expect((await wildcard.waitFor(1))[0].body.id).toBe(eventId);
    await new Promise((res) => setTimeout(res, 500));
    expect(filtered.requests).toHaveLength(0);
    expect(foreign.requests).toHaveLength(0);
  });

  it('dispatches nothing for a rolled-back change, and honours skipWebhooks', async () => {
    const ws = await createWorkspace(s.admin);
    const r = await receiver();
    await subscribe(ws.name, r.url);
    const app = s.server.app;
    const workspaceId = (await app.db.prisma.workspace.findUniqueOrThrow({ where: { name: ws.name } })).id;
    await expect(
      transaction(app, async (tx) => {
        await publishEvent(tx, app.clock.now(), { workspaceId, event: 'entry.created', data: {} });
        throw new Error('validation failed');
      }),
    ).rejects.toThrow('validation failed');
    await transaction(app, (tx) =>
      publishEvent(tx, app.clock.now(), { workspaceId, event: 'entry.updated', data: {}, skipWebhooks: true }),
    );
    await app.scheduler.idle();
    await new Promise((res) => setTimeout(res, 500));
    expect(r.requests).toHaveLength(0);
    const outbox = await app.db.query<{ event: string; dispatched: boolean }>(
      'SELECT event, dispatched_at IS NOT NULL AS dispatched FROM outbox_events WHERE workspace_id = $1',
      [workspaceId],
    );
    expect(outbox.rows).toEqual([{ event: 'entry.updated', dispatched: true }]);
  });

  it('never lets a delivery failure touch the committed change', async () => {
    const ws = await createWorkspace(s.admin);
    await subscribe(ws.name, 'http://127.0.0.1:9/unreachable');
    const app = s.server.app;
    const workspaceId = (await app.db.prisma.workspace.findUniqueOrThrow({ where: { name: ws.name } })).id;
    const bucket = await transaction(app, async (tx) => {
      const [b] = (
        await tx.query<{ id: number }>(`INSERT INTO buckets (workspace_id, name, created_at) VALUES ($1, 'kept', $2) RETURNING id`, [
          workspaceId,
          app.clock.now(),
        ])
      ).rows;
      await publishEvent(tx, app.clock.now(), { workspaceId, event: 'entry.created', data: { bucket: b.id } });
      return b;
    });
    const hook = (await s.admin.get(hooks(ws.name))).body.data[0];
    await eventually(async () => (await deliveries(ws.name, hook.id))[0]?.attempts === 1);
    expect(await app.db.prisma.bucket.findUnique({ where: { id: bucket.id } })).not.toBeNull();
  });
});

describe('audit records', () => {
  it('records key and subscription changes by the operator, newest first', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const hook = await subscribe(workspace.name, 'https://hooks.example.com/x');
    await s.admin.delete(`${hooks(workspace.name)}/${hook.id}`);
    await s.admin.delete(`/admin/v1/workspaces/${workspace.name}/api-keys/${key.id}`);
    const res = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/audit`);
    expect(res.status).toBe(200);
    const record = (event: string) => ({
      event,
      entry_id: null,
      object_id: null,
      actor: 'admin',
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.data).toEqual([
      record('api_key.deleted'),
      record('webhook.deleted'),
      record('webhook.created'),
      record('api_key.created'),
    ]);
    expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/audit?limit=2`)).body.data).toHaveLength(2);
    expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/audit?limit=0`)).status).toBe(422);
    expect((await s.admin.get('/admin/v1/workspaces/missing-ws/audit')).status).toBe(404);
  });
});

describe('request logs', () => {
  it('logs public requests of a workspace with their sizes, refused ones included, newest first', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const api = client(s.url, key.key);
    const ok = await api.get(`/api/v1/${workspace.name}/api-key`);
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: true });
    await api.get(`/api/v1/${workspace.name}/api-key?x=1`);
    await client(s.url, 'wsk_unknown').get(`/api/v1/${workspace.name}/api-key`);
    const res = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      {
        method: 'GET',
        path: `/api/v1/${workspace.name}/api-key`,
        status: 403,
        upload_size: 0,
        response_size: 33,
        api_key_id: key.id,
        created_at: expect.stringMatching(TIMESTAMP),
      },
      {
        method: 'GET',
        path: `/api/v1/${workspace.name}/api-key`,
        status: 200,
        upload_size: 0,
        response_size: Buffer.byteLength(ok.text),
        api_key_id: key.id,
        created_at: expect.stringMatching(TIMESTAMP),
      },
    ]);
    expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?limit=1`)).body.data).toHaveLength(1);
    expect((await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?limit=101`)).body.errors).toHaveProperty('limit');
  });

  it('shows every finished request at once, though rows are written in batches off the response path', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['view-file'] });
    const api = client(s.url, key.key);
    const statuses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => api.get(`/api/v1/${workspace.name}/files/${i + 1}`).then((r) => r.status)),
    );
    expect(statuses).toEqual(Array(40).fill(404));
    const res = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/request-logs?limit=100`);
    expect(res.body.data).toHaveLength(40);
    const paths = res.body.data.map((r: { path: string }) => r.path).sort();
    expect(paths).toEqual(Array.from({ length: 40 }, (_, i) => `/api/v1/${workspace.name}/files/${i + 1}`).sort());
  });
});
