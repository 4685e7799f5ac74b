// The gate of every hosted-authentication route (`x-hosted-auth` in the spec), run by the router
// before the body is read: the route's workspace must exist (404), not be suspended (403
// `Workspace suspended`) and have hosted authentication enabled (404: the routes do not exist
// for it). From here on the request is logged in the workspace's request logs.
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { forbidden, MESSAGES, notFound } from './errors';
import type { AuthWorkspace } from '../core/auth/session';

export interface AuthWorkspaceRow {
  id: number;
  name: string;
  suspended: boolean;
  auth_enabled: boolean;
  auth_redirect_uris: string[] | null;
}

export async function openAuthWorkspace(app: AppContext, ctx: Context): Promise<AuthWorkspace> {
  // Kept per process like API keys: a change to the workspace drops it in every process.
  const name = String((ctx.params as Record<string, string>).workspace);
  const w = await app.lookups.authWorkspaces.get(name, async () => {
    const { rows } = await app.db.query<AuthWorkspaceRow>(
      'SELECT id, name, suspended, auth_enabled, auth_redirect_uris FROM workspaces WHERE name = $1 AND NOT deleting',
      [name],
      true,
    );
    return rows[0];
  });
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
