// Verification (one-time code -> authorization code) and exchange (authorization code -> access
// token). Each secret is compared in constant time, then claimed by one conditional UPDATE
// (`... WHERE used_at IS NULL ... RETURNING`), so of concurrent uses exactly one wins. Every
// refusal of a code has one message: it does not say whether it was wrong, expired or used.
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import { invalidAt } from '../errors';
import { formatTimestamp } from '../../lib/time';
import { transaction } from '../transaction';
import { CODE_TTL_SECONDS, MAX_OTP_ATTEMPTS, findPresented, matchesHash, newSplitToken, otpHash } from './credentials';
import type { AuthWorkspace } from './session';

type S = components['schemas'];

const wrongOtp = () => invalidAt('otp', 'The :attribute is invalid or has expired.');
const wrongCode = () => invalidAt('code', 'The :attribute is invalid or has expired.');

/** A salt for addresses without a code, so that they cost the same HMAC as the others. */
const NO_SALT = 'none';

interface OtpRow {
  id: number;
  salt: string;
  otp_hash: string;
}

export async function verifyOtp(core: CoreContext, workspace: AuthWorkspace, body: S['AuthVerify']): Promise<S['AuthCode']> {
  const email = body.email.toLowerCase();
  const now = core.clock.now();
  const row = (
    await core.db.query<OtpRow>(
      'SELECT id, salt, otp_hash FROM auth_otps WHERE workspace_id = $1 AND email = $2',
      [workspace.id, email],
      true,
    )
  ).rows[0];
  const presented = otpHash(core.config.appKey, row?.salt ?? NO_SALT, body.otp);
  if (!matchesHash(presented, row?.otp_hash)) {
    // A wrong guess counts against this very code (not one that replaced it meanwhile).
    if (row)
      await core.db.query('UPDATE auth_otps SET attempts = attempts + 1 WHERE id = $1 AND otp_hash = $2 AND used_at IS NULL', [
        row.id,
        row.otp_hash,
      ]);
    throw wrongOtp();
  }
  const expiresAt = new Date(now.getTime() + CODE_TTL_SECONDS * 1000);
  const code = newSplitToken('wsac');
  await transaction(core, async (tx) => {
    const claimed = await tx.query(
      `UPDATE auth_otps SET used_at = $3
        WHERE id = $1 AND otp_hash = $2 AND used_at IS NULL AND expires_at > $3 AND attempts < $4
        RETURNING id`,
      [row.id, row.otp_hash, now, MAX_OTP_ATTEMPTS],
    );
    if (claimed.rowCount === 0) throw wrongOtp();
    // The first verification of an address creates its app user.
    const user = await tx.query<{ id: number }>(
      `INSERT INTO app_users (workspace_id, email, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, email) DO UPDATE SET email = EXCLUDED.email
       RETURNING id`,
      [workspace.id, email, now],
    );
    await tx.query(
      `INSERT INTO auth_codes (workspace_id, app_user_id, selector, verifier_hash, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [workspace.id, user.rows[0].id, code.selector, code.verifierHash, expiresAt, now],
    );
  });
  return { code: code.token, expires_at: formatTimestamp(expiresAt) };
}

export async function exchangeCode(core: CoreContext, workspace: AuthWorkspace, body: S['AuthExchange']): Promise<S['AuthToken']> {
  const now = core.clock.now();
  const row = await findPresented<{ id: number }>(core, 'wsac', body.code, workspace.id, 'x.id');
  if (!row) throw wrongCode();
  const expiresAt = new Date(now.getTime() + core.config.authTokenTtlSeconds * 1000);
  const token = newSplitToken('wsat');
  await transaction(core, async (tx) => {
    const claimed = await tx.query(
      'UPDATE auth_codes SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > $2 RETURNING id',
      [row.id, now],
    );
    if (claimed.rowCount === 0) throw wrongCode();
    await tx.query(
      `INSERT INTO auth_tokens (workspace_id, app_user_id, selector, verifier_hash, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
      [workspace.id, row.app_user_id, token.selector, token.verifierHash, expiresAt, now],
    );
  });
  return {
    access_token: token.token,
    token_type: 'Bearer',
    expires_at: formatTimestamp(expiresAt),
    user: { id: row.app_user_id, email: row.email },
  };
}
