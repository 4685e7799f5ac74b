// Hosted authentication: login by one-time code, verification, exchange, session and logout;
// the workspace switch, the redirect allowlist, expiry on the test clock, single use under
// concurrency, secrets kept as hashes only, and access tokens refused as API keys.
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { createWorkspace, setupWorkspace, TIMESTAMP } from './support/fixtures';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ TEST_CLOCK: '1', AUTH_TOKEN_TTL_SECONDS: '3600' });
});
afterEach(async () => {
  await s.admin.delete('/admin/v1/clock');
});
afterAll(() => s.close());

const REDIRECT = 'https://app.example.com/callback?app=1';
const anon = () => client(s.url);
const advance = (seconds: number) => s.admin.post('/admin/v1/clock', { advance_seconds: seconds });
const now = async () => new Date((await s.admin.get('/admin/v1/clock')).body.now).getTime();

async function authWorkspace(settings: Record<string, unknown> = {}) {
  const ws = await createWorkspace(s.admin);
  const res = await s.admin.patch(`/admin/v1/workspaces/${ws.name}`, {
    auth_enabled: true,
    auth_redirect_uris: [REDIRECT],
    mail_from: 'login@acme.example',
    ...settings,
  });
  expect(res.status).toBe(200);
  return ws.name;
}

const auth = (ws: string, route: string) => `/api/v1/${ws}/auth/${route}`;
const outbox = async (ws: string) =>
  (await s.admin.get(`/admin/v1/workspaces/${ws}/outbox`)).body.data as {
    to: string[];
    from: string;
    subject: string;
    text: string;
    kind: string;
  }[];

/** The code of the newest mail to `email`. */
async function otpOf(ws: string, email: string): Promise<string> {
  const mail = (await outbox(ws)).find((m) => m.to[0] === email.toLowerCase())!;
  return /code for .* is (\d{6})\./.exec(mail.text)![1];
}

async function login(ws: string, email: string) {
  const res = await anon().post(auth(ws, 'login'), { email });
  expect(res.status).toBe(204);
  return otpOf(ws, email);
}

async function signIn(ws: string, email: string) {
  const otp = await login(ws, email);
  const verified = await anon().post(auth(ws, 'verify'), { email, otp });
  expect(verified.status).toBe(200);
  const token = await anon().post(auth(ws, 'token'), { code: verified.body.code });
  expect(token.status).toBe(200);
  return token.body as { access_token: string; expires_at: string; user: { id: number; email: string } };
}

async function authRows(ws: string) {
  const { rows } = await s.server.app.db.query<{ otps: number; codes: number; tokens: number; users: number; mails: number }>(
    `SELECT (SELECT count(*) FROM auth_otps o WHERE o.workspace_id = w.id)::int AS otps,
            (SELECT count(*) FROM auth_codes c WHERE c.workspace_id = w.id)::int AS codes,
            (SELECT count(*) FROM auth_tokens t WHERE t.workspace_id = w.id)::int AS tokens,
            (SELECT count(*) FROM app_users u WHERE u.workspace_id = w.id)::int AS users,
            (SELECT count(*) FROM email_messages m WHERE m.workspace_id = w.id)::int AS mails
       FROM workspaces w WHERE w.name = $1`,
    [ws],
  );
  return rows[0];
}

const WRONG_OTP = { message: 'The otp is invalid or has expired.', errors: { otp: ['The otp is invalid or has expired.'] } };
const WRONG_CODE = { message: 'The code is invalid or has expired.', errors: { code: ['The code is invalid or has expired.'] } };
const FORBIDDEN = { message: 'Forbidden' };

describe('the flow', () => {
  it('logs in by a mailed code, verifies it, exchanges the code, validates the session and logs out', async () => {
    const ws = await authWorkspace();
    const before = await now();
    const login = await anon().post(auth(ws, 'login'), { email: 'Ada@Example.com' });
    expect(login.status).toBe(204);
    expect(login.text).toBe('');
    const [mail] = await outbox(ws);
    expect(mail).toMatchObject({
      kind: 'auth-otp',
      from: 'login@acme.example',
      to: ['ada@example.com'],
      subject: `Your sign-in code for ${ws}`,
      status: 'stored',
    });
    expect(mail.text).not.toContain('http');
    const otp = await otpOf(ws, 'ada@example.com');

    const verified = await anon().post(auth(ws, 'verify'), { email: 'ADA@example.com', otp });
    expect(verified.status).toBe(200);
    expect(verified.headers.get('cache-control')).toBe('no-store');
    expect(verified.body).toEqual({ code: expect.stringMatching(/^wsac_/), expires_at: expect.stringMatching(TIMESTAMP) });
    const codeExpiry = new Date(verified.body.expires_at).getTime() - before;
    expect(codeExpiry).toBeGreaterThanOrEqual(60_000);
    expect(codeExpiry).toBeLessThan(65_000);

    const token = await anon().post(auth(ws, 'token'), { code: verified.body.code });
    expect(token.status).toBe(200);
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.body).toEqual({
      access_token: expect.stringMatching(/^wsat_/),
      token_type: 'Bearer',
      expires_at: expect.stringMatching(TIMESTAMP),
      user: { id: expect.any(Number), email: 'ada@example.com' },
    });
    const ttl = new Date(token.body.expires_at).getTime() - before;
    expect(ttl).toBeGreaterThanOrEqual(3600_000);
    expect(ttl).toBeLessThan(3605_000);

    const me = client(s.url, token.body.access_token);
    const session = await me.get(auth(ws, 'session'));
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ user: token.body.user, expires_at: token.body.expires_at });
    const users = await s.admin.get(`/admin/v1/workspaces/${ws}/app-users`);
    expect(users.body).toEqual({
      data: [{ ...token.body.user, created_at: expect.stringMatching(TIMESTAMP) }],
      next_cursor: null,
      next_page_url: null,
    });

    const logout = await me.delete(auth(ws, 'session'));
    expect(logout.status).toBe(204);
    expect(logout.text).toBe('');
    for (const res of [await me.get(auth(ws, 'session')), await me.delete(auth(ws, 'session'))]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
  });

  it('creates the app user on the first verification only, and reuses it later', async () => {
    const ws = await authWorkspace();
    const first = await signIn(ws, 'bob@example.com');
    const second = await signIn(ws, 'BOB@example.com');
    expect(second.user).toEqual(first.user);
    expect(second.access_token).not.toBe(first.access_token);
    expect((await authRows(ws)).users).toBe(1);
    // Both sessions live until each is ended.
    expect((await client(s.url, first.access_token).get(auth(ws, 'session'))).status).toBe(200);
  });

  it('pages app users oldest first', async () => {
    const ws = await authWorkspace();
    for (const e of ['a@example.com', 'b@example.com', 'c@example.com']) await signIn(ws, e);
    const first = await s.admin.get(`/admin/v1/workspaces/${ws}/app-users?per_page=2`);
    expect(first.body.data.map((u: { email: string }) => u.email)).toEqual(['a@example.com', 'b@example.com']);
    expect(first.body.next_page_url).toBe(`${s.url}/admin/v1/workspaces/${ws}/app-users?per_page=2&cursor=${first.body.next_cursor}`);
    const second = await s.admin.get(first.body.next_page_url.slice(s.url.length));
    expect(second.body).toEqual({ data: [expect.objectContaining({ email: 'c@example.com' })], next_cursor: null, next_page_url: null });
    expect((await s.admin.get(`/admin/v1/workspaces/${ws}/app-users?cursor=nope`)).status).toBe(422);
    expect((await s.admin.get(`/admin/v1/workspaces/nope-${ws}/app-users`)).status).toBe(404);
  });
});

describe('the workspace switch', () => {
  const routes = (ws: string) =>
    [
      ['POST', auth(ws, 'login'), { email: 'a@example.com' }],
      ['POST', auth(ws, 'verify'), { email: 'a@example.com', otp: '123456' }],
      ['POST', auth(ws, 'token'), { code: 'x' }],
      ['GET', auth(ws, 'session'), undefined],
      ['DELETE', auth(ws, 'session'), undefined],
      // Even an invalid body: the routes do not exist for the workspace.
      ['POST', auth(ws, 'login'), { nope: true }],
    ] as const;

  it('answers 404 on every route while auth_enabled is false (the default) and for unknown workspaces', async () => {
    const ws = (await createWorkspace(s.admin)).name;
    for (const name of [ws, `missing-${ws}`]) {
      for (const [method, path, body] of routes(name)) {
        const res = await request(s.url, method, path, { body });
        expect([method, path, res.status, res.body]).toEqual([method, path, 404, { message: 'Not Found' }]);
      }
    }
    expect(await authRows(ws)).toEqual({ otps: 0, codes: 0, tokens: 0, users: 0, mails: 0 });
  });

  it('answers 403 Workspace suspended on a suspended workspace, and logs the requests', async () => {
    const ws = await authWorkspace();
    const { access_token } = await signIn(ws, 'a@example.com');
    await s.admin.patch(`/admin/v1/workspaces/${ws}`, { suspended: true });
    for (const [method, path, body] of routes(ws)) {
      const res = await request(s.url, method, path, { body, token: access_token });
      expect([method, path, res.status, res.body]).toEqual([method, path, 403, { message: 'Workspace suspended' }]);
    }
    const logs = (await s.admin.get(`/admin/v1/workspaces/${ws}/request-logs?limit=1`)).body.data;
    expect(logs[0]).toMatchObject({ method: 'POST', path: auth(ws, 'login'), status: 403, api_key_id: null });
  });
});

describe('one-time codes', () => {
  it('answers the same 204 for known and unknown addresses, with the same work', async () => {
    // The same statements run for both (a code row created or replaced, a mail queued), so there
    // is no timing difference to measure; timings are not asserted here (a shared test machine).
    const ws = await authWorkspace();
    await signIn(ws, 'known@example.com');
    const before = await authRows(ws);
    const login = async (email: string) => {
      const res = await anon().post(auth(ws, 'login'), { email });
      expect([res.status, res.text, res.headers.get('content-length')]).toEqual([204, '', null]);
    };
    for (let i = 0; i < 15; i++) {
      await login('known@example.com');
      await login(`unknown-${i}@example.com`);
    }
    const after = await authRows(ws);
    // One code row per address (replaced for the known one), one mail per login, no new user.
    expect(after).toEqual({ ...before, otps: before.otps + 15, mails: before.mails + 30 });
  });

  it('refuses a wrong, expired, used or replaced code with one message, and one of another workspace', async () => {
    const ws = await authWorkspace();
    const other = await authWorkspace();
    const otp = await login(ws, 'a@example.com');
    const wrong = otp === '000000' ? '000001' : '000000';
    const verify = (body: object, w = ws) => anon().post(auth(w, 'verify'), body);
    expect((await verify({ email: 'a@example.com', otp: wrong })).body).toEqual(WRONG_OTP);
    expect((await verify({ email: 'nobody@example.com', otp })).body).toEqual(WRONG_OTP);
    expect((await verify({ email: 'a@example.com', otp }, other)).body).toEqual(WRONG_OTP);
    expect((await verify({ email: 'a@example.com', otp })).status).toBe(200);
    const used = await verify({ email: 'a@example.com', otp });
    expect([used.status, used.body]).toEqual([422, WRONG_OTP]);

    // Replaced: a new login for the address ends the previous code.
    const old = await login(ws, 'b@example.com');
    const fresh = await login(ws, 'b@example.com');
    if (old !== fresh) expect((await verify({ email: 'b@example.com', otp: old })).body).toEqual(WRONG_OTP);
    expect((await verify({ email: 'b@example.com', otp: fresh })).status).toBe(200);

    // Expired after 10 minutes on the server clock.
    const late = await login(ws, 'c@example.com');
    await advance(601);
    const expired = await verify({ email: 'c@example.com', otp: late });
    expect([expired.status, expired.body]).toEqual([422, WRONG_OTP]);
  });

  it('keeps a code valid until its 10 minutes are over', async () => {
    const ws = await authWorkspace();
    const otp = await login(ws, 'a@example.com');
    await advance(590);
    expect((await anon().post(auth(ws, 'verify'), { email: 'a@example.com', otp })).status).toBe(200);
  });

  it('ends a code after 5 wrong attempts', async () => {
    const ws = await authWorkspace();
    const otp = await login(ws, 'a@example.com');
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) expect((await anon().post(auth(ws, 'verify'), { email: 'a@example.com', otp: wrong })).status).toBe(422);
    const res = await anon().post(auth(ws, 'verify'), { email: 'a@example.com', otp });
    expect([res.status, res.body]).toEqual([422, WRONG_OTP]);
    expect((await authRows(ws)).users).toBe(0);
  });

  it('lets exactly one of 20 parallel verifications of one code succeed', async () => {
    const ws = await authWorkspace();
    const otp = await login(ws, 'race@example.com');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => anon().post(auth(ws, 'verify'), { email: 'race@example.com', otp })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect([r.status, r.body]).toEqual([422, WRONG_OTP]);
    expect(await authRows(ws)).toMatchObject({ users: 1, codes: 1 });
  });

  it('keeps codes and tokens only as hashes', async () => {
    const ws = await authWorkspace();
    const otp = await login(ws, 'a@example.com');
    const verified = await anon().post(auth(ws, 'verify'), { email: 'a@example.com', otp });
    const code: string = verified.body.code;
    const token = (await anon().post(auth(ws, 'token'), { code })).body.access_token as string;
    const { rows } = await s.server.app.db.query<{ dump: string }>(
      `SELECT (SELECT string_agg(o::text, '|') FROM auth_otps o) || (SELECT string_agg(c::text, '|') FROM auth_codes c) || (SELECT string_agg(t::text, '|') FROM auth_tokens t) AS dump`,
    );
    expect(rows[0].dump).not.toContain(otp);
    expect(rows[0].dump).not.toContain(code.split('.')[1]);
    expect(rows[0].dump).not.toContain(token.split('.')[1]);
  });
});

describe('redirect URIs', () => {
  it('mails a sign-in link to an allowed redirect URI', async () => {
    const ws = await authWorkspace();
    expect((await anon().post(auth(ws, 'login'), { email: 'a@example.com', redirect_uri: REDIRECT })).status).toBe(204);
    const otp = await otpOf(ws, 'a@example.com');
    const [mail] = await outbox(ws);
    expect(mail.text).toContain(`Or sign in with this link: https://app.example.com/callback?app=1&email=a%40example.com&otp=${otp}`);
  });

  it.each([
    'https://evil.example.com/callback',
    'https://app.example.com/callback',
    'https://app.example.com/callback?app=1&x=2',
    'HTTPS://app.example.com/callback?app=1',
    'javascript:alert(1)',
  ])('refuses %s with 422 on redirect_uri, creating and sending nothing', async (uri) => {
    const ws = await authWorkspace();
    const res = await anon().post(auth(ws, 'login'), { email: 'a@example.com', redirect_uri: uri });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      message: 'The redirect_uri is not an allowed redirect URI of the workspace.',
      errors: { redirect_uri: ['The redirect_uri is not an allowed redirect URI of the workspace.'] },
    });
    expect(await authRows(ws)).toEqual({ otps: 0, codes: 0, tokens: 0, users: 0, mails: 0 });
  });

  it('takes only absolute http(s) URLs and a valid sender in the workspace settings', async () => {
    const ws = (await createWorkspace(s.admin)).name;
    for (const [body, key] of [
      [{ auth_redirect_uris: ['/callback'] }, 'auth_redirect_uris.0'],
      [{ auth_redirect_uris: ['ftp://x.example.com/'] }, 'auth_redirect_uris.0'],
      [{ mail_from: 'not an address' }, 'mail_from'],
      [{ auth_enabled: 'yes' }, 'auth_enabled'],
    ] as const) {
      const res = await s.admin.patch(`/admin/v1/workspaces/${ws}`, body);
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors)).toEqual([key]);
    }
  });
});

describe('authorization codes', () => {
  async function codeFor(ws: string, email = 'a@example.com') {
    const otp = await login(ws, email);
    return (await anon().post(auth(ws, 'verify'), { email, otp })).body.code as string;
  }

  it('refuses a used, expired, malformed or foreign code with one message', async () => {
    const ws = await authWorkspace();
    const other = await authWorkspace();
    const code = await codeFor(ws);
    const exchange = (c: string, w = ws) => anon().post(auth(w, 'token'), { code: c });
    expect((await exchange(code, other)).body).toEqual(WRONG_CODE);
    expect((await exchange(code)).status).toBe(200);
    expect((await exchange(code)).body).toEqual(WRONG_CODE);
    const tampered = code.slice(0, -2) + (code.endsWith('AA') ? 'BB' : 'AA');
    const fresh = await codeFor(ws, 'b@example.com');
    expect((await exchange(fresh.slice(0, -2) + (fresh.endsWith('AA') ? 'BB' : 'AA'))).body).toEqual(WRONG_CODE);
    for (const bad of ['x', tampered, `wsat_${fresh.slice(5)}`, fresh.toUpperCase()])
      expect((await exchange(bad)).body).toEqual(WRONG_CODE);
    // The refusals did not use it up.
    expect((await exchange(fresh)).status).toBe(200);
    const late = await codeFor(ws, 'c@example.com');
    await advance(61);
    const expired = await exchange(late);
    expect([expired.status, expired.body]).toEqual([422, WRONG_CODE]);
    expect((await authRows(ws)).tokens).toBe(2);
  });

  it('lets one of parallel exchanges of a code succeed', async () => {
    const ws = await authWorkspace();
    const code = await codeFor(ws);
    const results = await Promise.all(Array.from({ length: 10 }, () => anon().post(auth(ws, 'token'), { code })));
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(422)]);
  });
});

describe('access tokens', () => {
  it('expire after AUTH_TOKEN_TTL_SECONDS on the server clock', async () => {
    const ws = await authWorkspace();
    const { access_token } = await signIn(ws, 'a@example.com');
    const me = client(s.url, access_token);
    await advance(3590);
    expect((await me.get(auth(ws, 'session'))).status).toBe(200);
    await advance(11);
    const res = await me.get(auth(ws, 'session'));
    expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
  });

  it('are refused as API keys on every other route, and API keys are refused on the session', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['send-email', 'view-file'] });
    const ws = workspace.name;
    await s.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true });
    const { access_token } = await signIn(ws, 'a@example.com');
    const asKey = client(s.url, access_token);
    for (const res of [
      await asKey.get(`/api/v1/${ws}/api-key`),
      await asKey.post(`/api/v1/${ws}/emails`, { to: 'x@example.com', subject: 'x', text: 'y' }),
      await asKey.get(`/api/v1/${ws}/objects`),
      await request(s.url, 'GET', '/admin/v1/workspaces', { token: access_token }),
    ]) {
      expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
    }
    for (const res of [
      await client(s.url, key.key).get(auth(ws, 'session')),
      await client(s.url, key.key).delete(auth(ws, 'session')),
      await anon().get(auth(ws, 'session')),
      await request(s.url, 'GET', auth(ws, 'session'), { headers: { Authorization: `Basic ${access_token}` } }),
      await request(s.url, 'GET', `${auth(ws, 'session')}?token=${access_token}`),
    ]) {
      expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
    }
  });

  it('belong to their workspace', async () => {
    const a = await authWorkspace();
    const b = await authWorkspace();
    const { access_token } = await signIn(a, 'a@example.com');
    const res = await client(s.url, access_token).get(auth(b, 'session'));
    expect([res.status, res.body]).toEqual([403, FORBIDDEN]);
  });
});

describe('auth:prune', () => {
  it('removes codes and tokens once expired, and nothing live', async () => {
    const ws = await authWorkspace();
    await signIn(ws, 'a@example.com');
    await login(ws, 'b@example.com');
    const run = async () => (await s.admin.post('/admin/v1/tasks/auth:prune')).body;
    await run();
    expect(await authRows(ws)).toMatchObject({ otps: 2, codes: 1, tokens: 1 });
    await advance(3601);
    expect((await run()).processed).toBeGreaterThanOrEqual(4);
    expect(await authRows(ws)).toMatchObject({ otps: 0, codes: 0, tokens: 0, users: 1 });
  });
});

describe('bad input', () => {
  it.each([
    ['login', { email: 'not an address' }, 'email'],
    ['login', { email: 'a@example.com\r\nBcc: x@example.com' }, 'email'],
    ['login', {}, 'email'],
    ['login', { email: 'a@example.com', extra: 1 }, 'extra'],
    ['login', { email: 'a@example.com', redirect_uri: `https://app.example.com/${'x'.repeat(2030)}` }, 'redirect_uri'],
    ['verify', { email: 'a@example.com', otp: '12345' }, 'otp'],
    ['verify', { email: 'a@example.com', otp: 123456 }, 'otp'],
    ['verify', { email: 'a@example.com' }, 'otp'],
    ['token', { code: '' }, 'code'],
    ['token', { code: `wsac_${'x'.repeat(252)}` }, 'code'],
    ['token', {}, 'code'],
  ])('%s %p is a 422 on %s and writes nothing', async (route, body, key) => {
    const ws = await authWorkspace();
    const res = await anon().post(auth(ws, route), body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual([key]);
    expect(await authRows(ws)).toEqual({ otps: 0, codes: 0, tokens: 0, users: 0, mails: 0 });
  });

  it('refuses malformed, oversized and non-JSON bodies', async () => {
    const ws = await authWorkspace();
    for (const route of ['login', 'verify', 'token']) {
      expect(
        (await anon().post(auth(ws, route), undefined, { raw: '{"email":', headers: { 'Content-Type': 'application/json' } })).status,
      ).toBe(400);
      expect((await anon().post(auth(ws, route), undefined, { raw: 'email=a', headers: { 'Content-Type': 'text/plain' } })).status).toBe(
        415,
      );
      expect((await anon().post(auth(ws, route), { email: 'a@example.com', pad: 'x'.repeat(9000) })).status).toBe(413);
    }
    expect(await authRows(ws)).toEqual({ otps: 0, codes: 0, tokens: 0, users: 0, mails: 0 });
  });
});
