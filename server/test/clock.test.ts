// The test clock of the management API.
import { startTestServer, type TestServer } from './support/server';
import { createWorkspace } from './support/fixtures';
import { loadConfig } from '../src/config';

const seconds = (iso: string) => new Date(iso).getTime() / 1000;

describe('with TEST_CLOCK=1', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ TEST_CLOCK: '1' });
  });
  afterAll(() => s.close());
  afterEach(() => s.admin.delete('/admin/v1/clock'));

  it('starts at real time', async () => {
    const res = await s.admin.get('/admin/v1/clock');
    expect(res.status).toBe(200);
    expect(Math.abs(seconds(res.body.now) - Date.now() / 1000)).toBeLessThan(5);
    expect(res.body.now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
  });

  it('advances, sets and resets the clock; timestamps follow it', async () => {
    const advanced = await s.admin.post('/admin/v1/clock', { advance_seconds: 86_400 });
    expect(advanced.status).toBe(200);
    expect(seconds(advanced.body.now) - Date.now() / 1000).toBeGreaterThan(86_390);
    const again = await s.admin.post('/admin/v1/clock', { advance_seconds: 3600 });
    expect(seconds(again.body.now) - seconds(advanced.body.now)).toBeGreaterThanOrEqual(3600);
    expect(seconds(again.body.now) - seconds(advanced.body.now)).toBeLessThan(3610);
    const ws = await createWorkspace(s.admin);
    const created = await s.admin.get(`/admin/v1/workspaces/${ws.name}`);
    expect(Math.abs(seconds(created.body.created_at) - seconds(again.body.now))).toBeLessThan(5);

    const set = await s.admin.post('/admin/v1/clock', { now: '2030-01-02T03:04:05Z' });
    expect(set.body.now).toMatch(/^2030-01-02T03:04:0[5-9]\.\d{6}Z$/);
    const past = await s.admin.post('/admin/v1/clock', { now: '2001-01-01T00:00:00+02:00' });
    expect(past.body.now).toMatch(/^2000-12-31T22:00:0\d\.\d{6}Z$/);

    const reset = await s.admin.delete('/admin/v1/clock');
    expect(reset.status).toBe(200);
    expect(Math.abs(seconds(reset.body.now) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('keeps the offset in the database', async () => {
    await s.admin.post('/admin/v1/clock', { advance_seconds: 600 });
    const row = await s.server.app.db.query<{ offset_ms: number }>('SELECT offset_ms FROM clock_state WHERE id = 1');
    expect(row.rows[0].offset_ms).toBeGreaterThanOrEqual(600_000);
    expect(row.rows[0].offset_ms).toBeLessThan(601_000);
  });

  it.each([
    [{}, 'body'],
    [{ advance_seconds: 1, now: '2030-01-01T00:00:00Z' }, 'body'],
    [{ advance_seconds: -5 }, 'advance_seconds'],
    [{ advance_seconds: 1.5 }, 'advance_seconds'],
    [{ advance_seconds: '60' }, 'advance_seconds'],
    [{ now: 'tomorrow' }, 'now'],
    [{ now: '2030-13-45T00:00:00Z' }, 'now'],
    // Where stored timestamps could not follow.
    [{ now: '9999-12-31T23:59:00Z' }, 'now'],
    [{ now: '0000-06-01T00:00:00Z' }, 'now'],
    [{ later: 1 }, 'later'],
  ])('rejects %j with 422 on %s and leaves the clock alone', async (body, key) => {
    const res = await s.admin.post('/admin/v1/clock', body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toContain(key);
    const now = await s.admin.get('/admin/v1/clock');
    expect(Math.abs(seconds(now.body.now) - Date.now() / 1000)).toBeLessThan(5);
  });

  it('refuses to advance past the year 9998 with 422 on advance_seconds, leaving the clock where it was', async () => {
    expect((await s.admin.post('/admin/v1/clock', { now: '9998-06-01T00:00:00Z' })).status).toBe(200);
    const res = await s.admin.post('/admin/v1/clock', { advance_seconds: 3153600000 });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(['advance_seconds']);
    // Still where it was set (the clock runs on from there).
    expect(seconds((await s.admin.get('/admin/v1/clock')).body.now) - seconds('9998-06-01T00:00:00Z')).toBeLessThan(5);
    await s.admin.delete('/admin/v1/clock');
  });
});

describe('without TEST_CLOCK', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('answers 404 on every clock route and keeps real time', async () => {
    for (const res of [
      await s.admin.get('/admin/v1/clock'),
      await s.admin.post('/admin/v1/clock', { advance_seconds: 3600 }),
      await s.admin.delete('/admin/v1/clock'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    }
    const ws = await createWorkspace(s.admin);
    const created = await s.admin.get(`/admin/v1/workspaces/${ws.name}`);
    expect(Math.abs(seconds(created.body.created_at) - Date.now() / 1000)).toBeLessThan(5);
  });
});

describe('configuration', () => {
  it('refuses TEST_CLOCK=1 in production', async () => {
    expect(() => loadConfig({ TEST_CLOCK: '1', APP_ENV: 'production', ADMIN_TOKEN: 'x', APP_KEY: 'y' })).toThrow(/TEST_CLOCK/);
  });
});
