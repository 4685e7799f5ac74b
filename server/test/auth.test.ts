// API-key authentication of the public API (common document, "Authentication").
import { startTestServer, ADMIN_TOKEN, type TestServer } from './support/server';
import { client, request } from './support/http';
import { createKey, createUser, setupWorkspace } from './support/fixtures';
import { authorize, type ApiKeyPrincipal } from '../src/http/auth';
import { HttpError } from '../src/http/errors';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const keyRoute = (ws: string) => `/api/v1/${ws}/api-key`;
const FORBIDDEN = { message: 'Forbidden' };

describe('the Authorization header', () => {
  it('accepts a key of the workspace and reports it with its creator', async () => {
    const { workspace, user, key } = await setupWorkspace(s.admin, { permissions: ['view-file'], abilities: ['files:read'] });
    const res = await client(s.url, key.key).get(keyRoute(workspace.name));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: key.id,
      name: 'test key',
      workspace: workspace.name,
      abilities: ['files:read'],
      origins: [],
      user: { id: user.id, email: user.email, permissions: ['view-file'] },
    });
  });

  it.each([
    ['no header', {}],
    ['an unknown key', { Authorization: 'Bearer wsk_unknown' }],
    ['a malformed header', { Authorization: 'Basic abc' }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
    ['the admin token', { Authorization: `Bearer ${ADMIN_TOKEN}` }],
  ])('refuses %s with 403 Forbidden', async (_label, headers) => {
    const { workspace } = await setupWorkspace(s.admin);
    const res = await request(s.url, 'GET', keyRoute(workspace.name), { headers });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it('ignores a token query parameter', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const res = await request(s.url, 'GET', `${keyRoute(workspace.name)}?token=${key.key}`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it('accepts the scheme name in any case', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const res = await request(s.url, 'GET', keyRoute(workspace.name), { headers: { Authorization: `bearer ${key.key}` } });
    expect(res.status).toBe(200);
  });
});

describe('workspace rules', () => {
  it('restricts a key to its own workspace', async () => {
    const a = await setupWorkspace(s.admin);
    const b = await setupWorkspace(s.admin);
    const res = await client(s.url, a.key.key).get(keyRoute(b.workspace.name));
    expect(res.status).toBe(403);
    expect(res.body).toEqual(FORBIDDEN);
  });

  it('answers 404 for a workspace that does not exist (after the key is known)', async () => {
    const a = await setupWorkspace(s.admin);
    const res = await client(s.url, a.key.key).get(keyRoute('no-such-workspace'));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not Found' });
    const unknownKey = await client(s.url, 'wsk_nope').get(keyRoute('no-such-workspace'));
    expect(unknownKey.status).toBe(403);
  });

  it('refuses every request of a suspended workspace with Workspace suspended, and resumes', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: true });
    const res = await client(s.url, key.key).get(keyRoute(workspace.name));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Workspace suspended' });
    // An invalid key stays "Forbidden": suspension is not revealed to strangers.
    expect((await client(s.url, 'wsk_nope').get(keyRoute(workspace.name))).body).toEqual(FORBIDDEN);
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}`, { suspended: false });
    expect((await client(s.url, key.key).get(keyRoute(workspace.name))).status).toBe(200);
  });
});

describe('origin restrictions', () => {
  it('accepts a listed origin and refuses a missing or other one with 403 Forbidden', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { origins: ['https://app.example.com', 'http://localhost:5173'] });
    const call = (origin?: string) =>
      request(s.url, 'GET', keyRoute(workspace.name), { token: key.key, headers: origin ? { Origin: origin } : {} });
    expect((await call('https://app.example.com')).status).toBe(200);
    expect((await call('http://localhost:5173')).status).toBe(200);
    for (const origin of [undefined, 'https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com']) {
      const res = await call(origin);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
  });

  it('does not restrict a key without origins', async () => {
    const { workspace, key } = await setupWorkspace(s.admin);
    const res = await request(s.url, 'GET', keyRoute(workspace.name), { token: key.key, headers: { Origin: 'https://anywhere.example' } });
    expect(res.status).toBe(200);
  });
});

describe('creator permissions', () => {
  it('applies a permission change on the next request of every key of the creator', async () => {
    const { workspace, user, key } = await setupWorkspace(s.admin, { permissions: ['view-file'] });
    const second = await createKey(s.admin, workspace.name, user.id, ['files:read']);
    await s.admin.patch(`/admin/v1/workspaces/${workspace.name}/users/${user.id}`, { permissions: ['delete-file'] });
    for (const k of [key.key, second.key]) {
      const res = await client(s.url, k).get(keyRoute(workspace.name));
      expect(res.body.user.permissions).toEqual(['delete-file']);
    }
  });

  it('keeps creators of one workspace apart from another', async () => {
    const a = await setupWorkspace(s.admin);
    const other = await createUser(s.admin, a.workspace.name, ['view-file']);
    const res = await client(s.url, a.key.key).get(keyRoute(a.workspace.name));
    expect(res.body.user.id).toBe(a.user.id);
    expect(res.body.user.id).not.toBe(other.id);
  });
});

describe('authorize: ability AND creator permission', () => {
  const principal = (abilities: string[], permissions: string[]): ApiKeyPrincipal => ({
    keyId: 1,
    keyName: 'k',
    abilities,
    origins: [],
    user: { id: 1, email: 'a@example.com', permissions },
    workspace: { id: 1, name: 'w', locales: ['en-US'], objectsEnabled: true },
  });
  const denied = (abilities: string[], permissions: string[], needAbilities: string[], needPermissions: string[]) => {
    try {
      authorize(principal(abilities, permissions), needAbilities, needPermissions);
      return undefined;
    } catch (err) {
      return err as HttpError;
    }
  };

  it('passes with both', () => {
    expect(denied(['files:read'], ['view-file'], ['files:read'], ['view-file'])).toBeUndefined();
    expect(denied(['*'], ['view-file'], ['files:read'], ['view-file'])).toBeUndefined();
    expect(
      denied(
        ['entries:history', 'entries:write'],
        ['list-entries', 'view-entry'],
        ['entries:history', 'entries:write'],
        ['list-entries', 'view-entry'],
      ),
    ).toBeUndefined();
  });

  it.each([
    ['the ability is missing', ['files:write'], ['view-file'], ['files:read'], ['view-file']],
    ['the permission is missing', ['files:read'], ['create-file'], ['files:read'], ['view-file']],
    ['a wildcard key whose creator lacks the permission', ['*'], [], ['files:read'], ['view-file']],
    ['one of two abilities is missing', ['entries:history'], ['list-entries'], ['entries:history', 'entries:write'], ['list-entries']],
  ])('refuses when %s', (_l, abilities, permissions, needA, needP) => {
    const err = denied(abilities, permissions, needA, needP);
    expect(err).toBeInstanceOf(HttpError);
    expect(err!.status).toBe(403);
    expect(err!.body).toEqual({ message: 'This API key is not permitted to perform this action' });
  });
});
