// The gate of every hosted-authentication route (`x-hosted-auth` in the spec), run by the router
// before the body is read: the route's workspace must exist (404), not be suspended (403
// `Workspace suspended`) and have hosted authentication enabled (404: the routes do not exist
// for it). From here on the request is logged in the workspace's request logs.
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { forbidden, MESSAGES, notFound } from '../http/errors';

export interface AuthWorkspace {
  id: number;
  name: string;
  redirectUris: string[];
}

export async function openAuthWorkspace(app: AppContext, ctx: Context): Promise<AuthWorkspace> {
  const { rows } = await app.db.query<{ id: number; name: string; suspended: boolean; auth_enabled: boolean; auth_redirect_uris: string[] }>(
    'SELECT id, name, suspended, auth_enabled, auth_redirect_uris FROM workspaces WHERE name = $1',
    [ctx.params.workspace],
    true,
  );
  const w = rows[0];
  if (!w) throw notFound();
  ctx.state.workspaceId = w.id;
  if (w.suspended) throw forbidden(MESSAGES.suspended);
  if (!w.auth_enabled) throw notFound();
  const workspace = { id: w.id, name: w.name, redirectUris: w.auth_redirect_uris ?? [] };
  ctx.state.authWorkspace = workspace;
  return workspace;
}

/** The workspace the gate opened, for the route's handler. */
export const authWorkspaceOf = (ctx: Context) => ctx.state.authWorkspace as AuthWorkspace;
