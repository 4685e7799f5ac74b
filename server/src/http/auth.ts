// Authentication and authorization of both APIs.
// Management: the ADMIN_TOKEN bearer. Public: an API key in `Authorization: Bearer` only, checked
// in the documented order (see openapi.yaml, "Order of checks"). Permissions are read from the
// creator on every request, so a change applies to the next request of each of their keys.
import type { Context } from 'koa';
import type { Database } from '../db/database';
import { bearerToken, safeEqual, sha256 } from '../lib/secrets';
import { forbidden, notFound, MESSAGES } from './errors';

export interface ApiKeyPrincipal {
  keyId: number;
  keyName: string;
  abilities: string[];
  origins: string[];
  user: { id: number; email: string; permissions: string[] };
  workspace: { id: number; name: string; locales: string[]; objectsEnabled: boolean };
}

export function authenticateAdmin(ctx: Context, adminToken: string): void {
  const token = bearerToken(ctx.get('Authorization'));
  if (!token || !safeEqual(token, adminToken)) throw forbidden();
}

/** Resolves the calling key for the `{workspace}` of the route. Throws the documented 403/404. */
export async function authenticateApiKey(ctx: Context, db: Database, workspaceName: string): Promise<ApiKeyPrincipal> {
  const token = bearerToken(ctx.get('Authorization'));
  if (!token) throw forbidden();
  const key = await db.prisma.apiKey.findUnique({
    where: { keyHash: sha256(token) },
    include: { user: true },
  });
  if (!key) throw forbidden();
  const workspace = await db.prisma.workspace.findUnique({ where: { name: workspaceName } });
  if (!workspace) throw notFound();
  if (key.workspaceId !== workspace.id) throw forbidden();
  // From here on the request belongs to the workspace (request logs).
  ctx.state.workspaceId = workspace.id;
  ctx.state.apiKeyId = key.id;
  if (workspace.suspended) throw forbidden(MESSAGES.suspended);
  if (key.origins.length > 0 && !key.origins.includes(ctx.get('Origin'))) throw forbidden();
  return {
    keyId: key.id,
    keyName: key.name,
    abilities: key.abilities,
    origins: key.origins,
    user: { id: key.user.id, email: key.user.email, permissions: key.user.permissions },
    workspace: { id: workspace.id, name: workspace.name, locales: workspace.locales, objectsEnabled: workspace.objectsEnabled },
  };
}

/** Both the key's abilities (or `*`) and its creator's permissions must cover the operation. */
export function authorize(principal: ApiKeyPrincipal, abilities: string[], permissions: string[]): void {
  const hasAbility = (a: string) => principal.abilities.includes('*') || principal.abilities.includes(a);
  if (!abilities.every(hasAbility) || !permissions.every((p) => principal.user.permissions.includes(p))) {
    throw forbidden(MESSAGES.notPermitted);
  }
}
