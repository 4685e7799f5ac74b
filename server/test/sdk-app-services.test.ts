// The SDK's app-service helpers against the real server: emails.send and the auth flow.
import { startTestServer, type TestServer } from './support/server';
import { setupWorkspace } from './support/fixtures';
import { contractFetch } from './support/contract';
import { createClient, emails } from '../../sdk/src';

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
