// Per-IP rate limits behind reverse proxies (security review "Hardening II", finding 6): with
// TRUST_PROXY / TRUST_PROXY_HOPS the counted address is the one the trusted proxies saw (the
// right-most entries of X-Forwarded-For), never the left-most one, which the client writes.
import { createHash } from 'node:crypto';
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createWorkspace } from './support/fixtures';
import { expectLimited } from './support/rate-limits';
import { ConfigError, loadConfig } from '../src/config';

const LIMITS = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_AUTH_LOGIN_PER_IP: '2' };

async function authWorkspace(s: TestServer) {
  const ws = (await createWorkspace(s.admin)).name;
  expect((await s.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true })).status).toBe(200);
  return ws;
}

/** A login as sent by the last proxy, whose X-Forwarded-For ends with what the proxies saw. */
const login = (s: TestServer, ws: string, email: string, forwardedFor: string) =>
  client(s.url).post(`/api/v1/${ws}/auth/login`, { email }, { headers: { 'X-Forwarded-For': forwardedFor } });

/** The per-IP login counters of these addresses in the workspace (rate-limit.ts hashes the address). */
async function ipCounters(s: TestServer, ws: string, addresses: string[]) {
  const keyOf = (ip: string) => `auth-login-ip:ip:${createHash('sha256').update(`${ws}\n${ip}`).digest('hex')}`;
  const { rows } = await s.server.app.db.query<{ key: string; points: number }>(
    'SELECT key, points FROM rate_limits WHERE key = ANY($1::text[])',
    [addresses.map(keyOf)],
  );
  return Object.fromEntries(addresses.map((ip) => [ip, rows.find((r) => r.key === keyOf(ip))?.points ?? 0]));
}

describe('TRUST_PROXY=1 (one proxy)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...LIMITS, TRUST_PROXY: '1' });
  });
  afterAll(() => s.close());

  it('counts the address the proxy saw, whatever the client put in front of it', async () => {
    const ws = await authWorkspace(s);
    // One client (198.51.100.7 to the proxy) writing a different X-Forwarded-For each time.
    expect((await login(s, ws, 'a@example.com', '1.2.3.4, 198.51.100.7')).status).toBe(204);
    expect((await login(s, ws, 'b@example.com', '5.6.7.8, 198.51.100.7')).status).toBe(204);
    expectLimited(await login(s, ws, 'c@example.com', '198.51.100.7'));
    // Another client sending the same forged address has its own count.
    expect((await login(s, ws, 'd@example.com', '1.2.3.4, 198.51.100.8')).status).toBe(204);
    expect(await ipCounters(s, ws, ['198.51.100.7', '198.51.100.8', '1.2.3.4', '5.6.7.8', '127.0.0.1'])).toEqual({
      '198.51.100.7': 3,
      '198.51.100.8': 1,
      '1.2.3.4': 0,
      '5.6.7.8': 0,
      '127.0.0.1': 0,
    });
  });
});

describe('TRUST_PROXY_HOPS=2 (a CDN in front of a load balancer)', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ ...LIMITS, TRUST_PROXY_HOPS: '2' });
  });
  afterAll(() => s.close());

  it('counts the address the outer proxy saw, not the forged one nor the inner proxy', async () => {
    const ws = await authWorkspace(s);
    expect((await login(s, ws, 'a@example.com', '1.2.3.4, 203.0.113.9, 10.0.0.2')).status).toBe(204);
    expect((await login(s, ws, 'b@example.com', '203.0.113.9, 10.0.0.3')).status).toBe(204);
    expectLimited(await login(s, ws, 'c@example.com', '9.9.9.9, 8.8.8.8, 203.0.113.9, 10.0.0.2'));
    expect(await ipCounters(s, ws, ['203.0.113.9', '1.2.3.4', '10.0.0.2', '10.0.0.3', '8.8.8.8', '9.9.9.9'])).toEqual({
      '203.0.113.9': 3,
      '1.2.3.4': 0,
      '10.0.0.2': 0,
      '10.0.0.3': 0,
      '8.8.8.8': 0,
      '9.9.9.9': 0,
    });
  });
});

describe('configuration', () => {
  const load = (env: Record<string, string>) => loadConfig({ ADMIN_TOKEN: 'x', APP_KEY: 'y', ...env });

  it.each([
    [{}, 0],
    [{ TRUST_PROXY: '0' }, 0],
    [{ TRUST_PROXY: '1' }, 1],
    [{ TRUST_PROXY: 'true' }, 1],
    [{ TRUST_PROXY_HOPS: '0' }, 0],
    [{ TRUST_PROXY_HOPS: '2' }, 2],
    [{ TRUST_PROXY: '1', TRUST_PROXY_HOPS: '3' }, 3],
  ])('%p trusts %i proxies', (env, hops) => {
    expect(load(env).trustProxyHops).toBe(hops);
  });

  it.each([
    [{ TRUST_PROXY_HOPS: 'two' }, 'TRUST_PROXY_HOPS must be an integer >= 0, got "two"'],
    [{ TRUST_PROXY_HOPS: '-1' }, 'TRUST_PROXY_HOPS must be an integer >= 0, got "-1"'],
    [{ TRUST_PROXY_HOPS: '1.5' }, 'TRUST_PROXY_HOPS must be an integer >= 0, got "1.5"'],
    [{ TRUST_PROXY_HOPS: '101' }, 'TRUST_PROXY_HOPS must be at most 100, got "101"'],
    [{ TRUST_PROXY: 'yes please' }, 'TRUST_PROXY must be true or false, got "yes please"'],
    [{ TRUST_PROXY: '1', TRUST_PROXY_HOPS: '0' }, 'TRUST_PROXY=1 needs TRUST_PROXY_HOPS of at least 1, got "0"'],
    [{ TRUST_PROXY: '0', TRUST_PROXY_HOPS: '2' }, 'TRUST_PROXY_HOPS=2 needs TRUST_PROXY on (or unset), got TRUST_PROXY="0"'],
  ])('%p is a configuration error', (env, message) => {
    expect(() => load(env)).toThrow(new ConfigError(message));
  });
});
