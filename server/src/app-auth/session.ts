// Sessions: the access token of `Authorization: Bearer`, validated and revoked. Anything that is
// not a live token of this workspace (missing, unknown, expired, revoked, an API key) is the
// same `403 Forbidden`.
import type { AppContext } from '../context';
import { forbidden } from '../http/errors';
import { bearerToken } from '../lib/secrets';
import { matchesHash, parseSplitToken } from './credentials';
import type { AuthWorkspace } from './workspace';

export interface Session {
  tokenId: number;
  user: { id: number; email: string };
  expiresAt: Date;
}

interface TokenRow {
  id: number;
  verifier_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
  user_id: number;
  email: string;
}

export async function findSession(app: AppContext, workspace: AuthWorkspace, authorization: string): Promise<Session> {
  const presented = parseSplitToken('wsat', bearerToken(authorization));
  const row = presented
    ? (
        await app.db.query<TokenRow>(
          `SELECT t.id, t.verifier_hash, t.expires_at, t.revoked_at, u.id AS user_id, u.email
             FROM auth_tokens t JOIN app_users u ON u.id = t.app_user_id
            WHERE t.selector = $1 AND t.workspace_id = $2`,
          [presented.selector, workspace.id],
          true,
        )
      ).rows[0]
    : undefined;
  if (!matchesHash(presented?.verifierHash ?? '', row?.verifier_hash)) throw forbidden();
  const expiresAt = new Date(row!.expires_at);
  if (row!.revoked_at !== null || expiresAt <= app.clock.now()) throw forbidden();
  return { tokenId: row!.id, user: { id: row!.user_id, email: row!.email }, expiresAt };
}

/** Logout: the token is refused from then on (a concurrent logout of the same token gets the 403). */
export async function revokeSession(app: AppContext, session: Session): Promise<void> {
  const res = await app.db.query('UPDATE auth_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [session.tokenId, app.clock.now()]);
  if (res.rowCount === 0) throw forbidden();
}

/** Removes one-time codes, authorization codes and access tokens past use (the `auth:prune` task). */
export async function pruneAuth(app: AppContext): Promise<number> {
  const now = app.clock.now();
  // Revoked tokens are kept until they would have expired: nothing depends on them, but the
  // row costs nothing and tells an operator when a session ended.
  const otps = await app.db.query('DELETE FROM auth_otps WHERE expires_at < $1', [now]);
  const codes = await app.db.query('DELETE FROM auth_codes WHERE expires_at < $1', [now]);
  const tokens = await app.db.query('DELETE FROM auth_tokens WHERE expires_at < $1', [now]);
  return otps.rowCount + codes.rowCount + tokens.rowCount;
}
