// The secrets of hosted authentication and how they are kept. Nothing here is stored as given:
// - a one-time code (six digits) as HMAC-SHA256 keyed with APP_KEY over a salt of its own and
//   the digits: a plain hash of a million possible values would fall to an offline search;
// - authorization codes and access tokens as `<prefix>_<selector>.<verifier>`: the selector
//   (128 random bits) finds the row, the verifier (256 random bits) is kept as its SHA-256 and
//   compared in constant time, so a lookup's timing says nothing about the secret.
import { createHmac, randomBytes, randomInt } from 'node:crypto';
import type { CoreContext } from '../context';
import { safeEqual, sha256 } from '../../lib/secrets';

export const OTP_TTL_SECONDS = 600;
export const CODE_TTL_SECONDS = 60;
/** Wrong attempts that end a one-time code. */
export const MAX_OTP_ATTEMPTS = 5;

export const newOtp = () => String(randomInt(0, 1_000_000)).padStart(6, '0');
export const newSalt = () => randomBytes(16).toString('base64url');

export const otpHash = (appKey: string, salt: string, otp: string) =>
  createHmac('sha256', appKey).update(`otp\n${salt}\n${otp}`).digest('hex');

/** Constant-time comparison of a presented secret's hash with a stored one (absent: compared with a dummy, then refused). */
export function matchesHash(presented: string, stored: string | undefined): boolean {
  const same = safeEqual(presented, stored ?? '0'.repeat(64));
  return same && stored !== undefined;
}

export type SplitPrefix = 'wsac' | 'wsat';

export interface SplitToken {
  token: string;
  selector: string;
  verifierHash: string;
}

export function newSplitToken(prefix: SplitPrefix): SplitToken {
  const selector = randomBytes(16).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  return { token: `${prefix}_${selector}.${verifier}`, selector, verifierHash: sha256(verifier) };
}

/** The selector and the verifier's hash of a presented token, or undefined when it is not one of `prefix`. */
const SPLIT_TOKEN: Record<SplitPrefix, RegExp> = {
  wsac: /^wsac_([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/,
  wsat: /^wsat_([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/,
};

export function parseSplitToken(prefix: SplitPrefix, token: string | undefined): { selector: string; verifierHash: string } | undefined {
  const m = SPLIT_TOKEN[prefix].exec(token ?? '');
  return m ? { selector: m[1], verifierHash: sha256(m[2]) } : undefined;
}

const SPLIT_TABLES: Record<SplitPrefix, string> = { wsac: 'auth_codes', wsat: 'auth_tokens' };

/**
 * The row of a presented authorization code (`wsac`) or access token (`wsat`) of the workspace,
 * with its app user, when the verifier matches; undefined otherwise (malformed, unknown, another
 * workspace's, wrong verifier). `columns`: more columns of the row (`x.<name>`). Whether the row
 * is still usable (used, expired, revoked) is the caller's rule.
 */
export async function findPresented<T extends object>(
  core: CoreContext,
  prefix: SplitPrefix,
  token: string | undefined,
  workspaceId: number,
  columns: string,
): Promise<(T & { app_user_id: number; email: string }) | undefined> {
  const presented = parseSplitToken(prefix, token);
  type Row = T & { app_user_id: number; email: string; verifier_hash: string };
  const row = presented
    ? (
        await core.db.query<Row>(
          `SELECT x.app_user_id, u.email, x.verifier_hash, ${columns}
             FROM ${SPLIT_TABLES[prefix]} x JOIN app_users u ON u.id = x.app_user_id
            WHERE x.selector = $1 AND x.workspace_id = $2`,
          [presented.selector, workspaceId],
          true,
        )
      ).rows[0]
    : undefined;
  return matchesHash(presented?.verifierHash ?? '', row?.verifier_hash) ? row : undefined;
}
