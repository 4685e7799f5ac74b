// The rate limits of transactional email (per API key) and hosted authentication (per email,
// per one-time code, per IP address, per access token), each a 429 with Retry-After.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createWorkspace, setupWorkspace } from './support/fixtures';
import { expectLimited } from './support/rate-limits';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    RATE_LIMIT_ENABLED: 'true',
    RATE_LIMIT_EMAILS_PER_MINUTE: '2',
    RATE_LIMIT_AUTH_LOGIN_PER_EMAIL: '2',
    RATE_LIMIT_AUTH_LOGIN_PER_IP: '4',
    RATE_LIMIT_AUTH_VERIFY_PER_OTP: '2',
    RATE_LIMIT_AUTH_VERIFY_PER_IP: '4',
    RATE_LIMIT_AUTH_TOKEN_PER_IP: '2',
    RATE_LIMIT_AUTH_SESSION_PER_TOKEN: '2',
  });
});
afterAll(() => s.close());

const anon = () => client(s.url);
const auth = (ws: string, route: string) => `/api/v1/${ws}/auth/${route}`;

async function authWorkspace() {
  const ws = (await createWorkspace(s.admin)).name;
  await s.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true });
  return ws;
}

const outbox = async (ws: string) => (await s.admin.get(`/admin/v1/workspaces/${ws}/outbox`)).body.data as { to: string[]; text: string }[];
const otpOf = async (ws: string, email: string) => /is (\d{6})\./.exec((await outbox(ws)).find((m) => m.to[0] === email)!.text)![1];

it('limits email per API key and queues nothing past the limit', async () => {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['send-email'] });
  const api = client(s.url, key.key);
  const send = () => api.post(`/api/v1/${workspace.name}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' });
  expect((await send()).status).toBe(204);
  expect((await send()).status).toBe(204);
  expectLimited(await send());
  expect(await outbox(workspace.name)).toHaveLength(2);
  // Another key has its own count.
  const other = await setupWorkspace(s.admin, { permissions: ['send-email'] });
  expect(
    (await client(s.url, other.key.key).post(`/api/v1/${other.workspace.name}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' }))
      .status,
  ).toBe(204);
});

it('limits login per email address (any case) and per IP address, sending nothing past them', async () => {
  const ws = await authWorkspace();
  const login = (email: string) => anon().post(auth(ws, 'login'), { email });
  expect((await login('a@example.com')).status).toBe(204);
  expect((await login('A@example.com')).status).toBe(204);
  expectLimited(await login('a@EXAMPLE.com'));
  // The fourth request of this IP address, for another address.
  expect((await login('b@example.com')).status).toBe(204);
  expectLimited(await login('c@example.com'));
  expect(await outbox(ws)).toHaveLength(3);
  // Counted per workspace.
  const other = await authWorkspace();
  expect((await anon().post(auth(other, 'login'), { email: 'a@example.com' })).status).toBe(204);
});

it('limits verification per one-time code and per IP address', async () => {
  const ws = await authWorkspace();
  await anon().post(auth(ws, 'login'), { email: 'a@example.com' });
  const otp = await otpOf(ws, 'a@example.com');
  const wrong = otp === '000000' ? '000001' : '000000';
  const verify = (email: string, code: string) => anon().post(auth(ws, 'verify'), { email, otp: code });
  expect((await verify('a@example.com', wrong)).status).toBe(422);
  expect((await verify('a@example.com', wrong)).status).toBe(422);
  // Even the right code: this code has had its tries for the minute.
  expectLimited(await verify('a@example.com', otp));
  expect((await verify('b@example.com', wrong)).status).toBe(422);
  expectLimited(await verify('c@example.com', wrong));
});

it('limits code exchange per IP address', async () => {
  const ws = await authWorkspace();
  const exchange = () => anon().post(auth(ws, 'token'), { code: 'wsac_nope' });
  expect((await exchange()).status).toBe(422);
  expect((await exchange()).status).toBe(422);
  expectLimited(await exchange());
});

it('limits session validation and logout per access token', async () => {
  const ws = await authWorkspace();
  const tokens: string[] = [];
  for (const email of ['a@example.com', 'b@example.com']) {
    await anon().post(auth(ws, 'login'), { email });
    const verified = await anon().post(auth(ws, 'verify'), { email, otp: await otpOf(ws, email) });
    tokens.push((await anon().post(auth(ws, 'token'), { code: verified.body.code })).body.access_token);
  }
  const me = client(s.url, tokens[0]);
  expect((await me.get(auth(ws, 'session'))).status).toBe(200);
  expect((await me.get(auth(ws, 'session'))).status).toBe(200);
  expectLimited(await me.get(auth(ws, 'session')));
  expectLimited(await me.delete(auth(ws, 'session')));
  expect((await client(s.url, tokens[1]).get(auth(ws, 'session'))).status).toBe(200);
});
