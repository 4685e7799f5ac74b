// Builders for the management-side setup most tests need: a workspace, a creator, a key.
import { randomUUID } from 'node:crypto';
import type { client } from './http';

type Admin = ReturnType<typeof client>;

/** The wire format of timestamps. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The body of a new workspace, for exact comparisons. */
export const newWorkspaceBody = (name: string, locales = ['en-US']) => ({
  name,
  locales,
  objects_enabled: true,
  suspended: false,
  auth_enabled: false,
  auth_redirect_uris: [],
  mail_from: null,
  created_at: expect.stringMatching(TIMESTAMP),
});

export const uniqueName = (prefix = 'ws') => `${prefix}-${randomUUID().slice(0, 8)}`;

export async function createWorkspace(admin: Admin, body: Record<string, unknown> = {}) {
  const res = await admin.post('/admin/v1/workspaces', { name: uniqueName(), ...body });
  if (res.status !== 201) throw new Error(`workspace: ${res.status} ${res.text}`);
  return res.body as { name: string; locales: string[] };
}

export async function createUser(
  admin: Admin,
  workspace: string,
  permissions: string[] = [],
  email = `${randomUUID().slice(0, 8)}@example.com`,
) {
  const res = await admin.post(`/admin/v1/workspaces/${workspace}/users`, { email, permissions });
  if (res.status !== 201) throw new Error(`user: ${res.status} ${res.text}`);
  return res.body as { id: number; email: string; permissions: string[] };
}

export async function createKey(admin: Admin, workspace: string, userId: number, abilities: string[] = ['*'], origins?: string[]) {
  const res = await admin.post(`/admin/v1/workspaces/${workspace}/api-keys`, { name: 'test key', user_id: userId, abilities, origins });
  if (res.status !== 201) throw new Error(`key: ${res.status} ${res.text}`);
  return res.body as { id: number; key: string; abilities: string[]; origins: string[] };
}

/** A workspace with one creator and one key. */
export async function setupWorkspace(admin: Admin, opts: { permissions?: string[]; abilities?: string[]; origins?: string[] } = {}) {
  const workspace = await createWorkspace(admin);
  const user = await createUser(admin, workspace.name, opts.permissions ?? []);
  const key = await createKey(admin, workspace.name, user.id, opts.abilities ?? ['*'], opts.origins);
  return { workspace, user, key };
}
