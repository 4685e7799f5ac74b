// Sessions: the access token of `Authorization: Bearer`, validated and revoked. Anything that is
// not a live token of this workspace (missing, unknown, expired, revoked, an API key) is the
// same `403 Forbidden`. The per-token rate limit counts tokens that exist, under their id: a
// counter per bearer sent would keep a row for every random token (and hold the token's hash).
import type { CoreContext } from '../context';
import { DomainError } from '../errors';
import { bearerToken } from '../../lib/secrets';
import { findPresented } from './credentials';

/** The workspace of a hosted-authentication request, opened by its route's gate (http/auth-workspace.ts): who the operations act for. */
export interface AuthWorkspace {
  id: number;
  name: string;
  redirectUris: string[];
}

export interface Session {
  tokenId: number;
  user: { id: number; email: string };
  expiresAt: Date;
}

export async function findSession(core: CoreContext, workspace: AuthWorkspace, authorization: string): Promise<Session> {
  const row = await findPresented<{ id: number; expires_at: Date; revoked_at: Date | null }>(
    core,
    'wsat',
    bearerToken(authorization),
    workspace.id,
    'x.id, x.expires_at, x.revoked_at',
  );
  if (!row) throw new DomainError('forbidden');
  await core.rateLimits.consume('auth-session-token', `token:${row.id}`);
  if (row.revoked_at !== null || new Date(row.expires_at) <= core.clock.now()) throw new DomainError('forbidden');
  return { tokenId: row.id, user: { id: row.app_user_id, email: row.email }, expiresAt: new Date(row.expires_at) };
}

/** Logout: the token is refused from then on (a concurrent logout of the same token gets the 403). */
export async function revokeSession(core: CoreContext, session: Session): Promise<void> {
  const res = await core.db.query('UPDATE auth_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
    session.tokenId,
    core.clock.now(),
  ]);
  if (res.rowCount === 0) throw new DomainError('forbidden');
}

/** Removes one-time codes, authorization codes and access tokens past use (the `auth:prune` task). */
export async function pruneAuth(core: CoreContext): Promise<number> {
  const now = core.clock.now();
  // Revoked tokens are kept until they would have expired: nothing depends on them, but the
  // row costs nothing and tells an operator when a session ended.
  const otps = await core.db.query('DELETE FROM auth_otps WHERE expires_at < $1', [now]);
  const codes = await core.db.query('DELETE FROM auth_codes WHERE expires_at < $1', [now]);
  const tokens = await core.db.query('DELETE FROM auth_tokens WHERE expires_at < $1', [now]);
  return otps.rowCount + codes.rowCount + tokens.rowCount;
}
