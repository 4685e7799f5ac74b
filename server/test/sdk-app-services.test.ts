// The SDK's app-service helpers against the real server: emails.send and the auth flow.
import { startTestServer, type TestServer } from './support/server';
import { setupWorkspace } from './support/fixtures';
import { contractFetch } from './support/contract';
import { auth, createClient, emails } from '../../sdk/src';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

describe('emails.send', () => {
  it('queues a message (204) and returns the 422 map of a bad one', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['send-email'], abilities: ['email:send'] });
    const api = createClient({ baseUrl: s.url, apiKey: key.key, fetch: contractFetch });
    const ok = await emails.send(api, workspace.name, { to: 'ada@example.com', subject: 'Hi', text: 'Hello' });
    expect(ok.response.status).toBe(204);
    expect(ok.error).toBeUndefined();
    const bad = await emails.send(api, workspace.name, { to: ['ada@example.com', 'nope'], subject: 'Hi', text: 'Hello' });
    expect(bad.response.status).toBe(422);
    expect(bad.error?.errors).toEqual({ 'to.1': ['The to.1 field must be a valid email address.'] });
    const outbox = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/outbox`);
    expect(outbox.body.data.map((m: { subject: string }) => m.subject)).toEqual(['Hi']);
  });
});

describe('auth', () => {
  it('logs in, verifies, exchanges, reads the session and logs out', async () => {
    const { workspace } = await setupWorkspace(s.admin);
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, {
      auth_enabled: true,
      auth_redirect_uris: ['https://app.example.com/cb'],
    });
    const options = { baseUrl: `${s.url}/`, workspace: workspace.name, fetch: contractFetch };
    const login = await auth.login(options, { email: 'ada@example.com', redirect_uri: 'https://app.example.com/cb' });
    expect(login.response.status).toBe(204);
    const outbox = await s.admin.get(`/admin/v1/workspaces/${workspace.name}/outbox`);
    const otp = /otp=(\d{6})/.exec(outbox.body.data[0].text)![1];

    const wrong = await auth.verify(options, { email: 'ada@example.com', otp: otp === '000000' ? '111111' : '000000' });
    expect(wrong.error?.errors).toEqual({ otp: ['The otp is invalid or has expired.'] });
    const verified = await auth.verify(options, { email: 'ada@example.com', otp });
    expect(verified.data).toEqual({ code: expect.any(String), expires_at: expect.any(String) });
    const token = await auth.exchange(options, verified.data!.code);
    expect(token.data).toMatchObject({ token_type: 'Bearer', user: { email: 'ada@example.com' } });
    const session = await auth.session(options, token.data!.access_token);
    expect(session.data).toEqual({ user: token.data!.user, expires_at: token.data!.expires_at });
    expect((await auth.logout(options, token.data!.access_token)).response.status).toBe(204);
    const after = await auth.session(options, token.data!.access_token);
    expect([after.response.status, after.error]).toEqual([403, { message: 'Forbidden' }]);
    expect(() => auth.login({ ...options, workspace: '' }, { email: 'a@example.com' })).toThrow('workspace is required');
  });
});
