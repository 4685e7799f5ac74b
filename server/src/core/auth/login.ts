// Login: a new one-time code for the address, mailed through the transactional email path.
// Every address takes the same path (a code row is created or replaced and a mail queued, in one
// transaction), so neither the answer nor its timing tells whether an app user exists.
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import { invalidAt } from '../errors';
import { queueEmail, type EmailMessage } from '../email-queue';
import { transaction } from '../transaction';
import { newOtp, newSalt, otpHash, OTP_TTL_SECONDS } from './credentials';
import type { AuthWorkspace } from './session';

type LoginBody = components['schemas']['AuthLogin'];

/** The sign-in link of the mail: the allowed redirect URI with `email` and `otp` added to its query. */
function signInLink(redirectUri: string, email: string, otp: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('email', email);
  url.searchParams.set('otp', otp);
  return url.toString();
}

function otpMail(workspace: AuthWorkspace, email: string, otp: string, link: string | undefined): EmailMessage {
  const lines = [
    `Your sign-in code for ${workspace.name} is ${otp}.`,
    '',
    `It expires in ${OTP_TTL_SECONDS / 60} minutes and works once.`,
    ...(link ? ['', `Or sign in with this link: ${link}`] : []),
    '',
    'If you did not ask to sign in, you can ignore this message.',
  ];
  return { to: email, subject: `Your sign-in code for ${workspace.name}`, text: lines.join('\n') };
}

export async function login(core: CoreContext, workspace: AuthWorkspace, body: LoginBody): Promise<void> {
  // Exact match against the allowlist: only URIs the operator named ever appear in a mail.
  if (body.redirect_uri !== undefined && !workspace.redirectUris.includes(body.redirect_uri)) {
    throw invalidAt('redirect_uri', 'The :attribute is not an allowed redirect URI of the workspace.');
  }
  const email = body.email.toLowerCase();
  const otp = newOtp();
  const salt = newSalt();
  const now = core.clock.now();
  const link = body.redirect_uri === undefined ? undefined : signInLink(body.redirect_uri, email, otp);
  await transaction(core, async (tx) => {
    // One pending code per address: a new login replaces the previous one (and its attempts).
    await tx.query(
      `INSERT INTO auth_otps (workspace_id, email, salt, otp_hash, attempts, expires_at, used_at, created_at)
       VALUES ($1, $2, $3, $4, 0, $5, NULL, $6)
       ON CONFLICT (workspace_id, email) DO UPDATE
         SET salt = EXCLUDED.salt, otp_hash = EXCLUDED.otp_hash, attempts = 0, expires_at = EXCLUDED.expires_at, used_at = NULL, created_at = EXCLUDED.created_at`,
      [workspace.id, email, salt, otpHash(core.config.appKey, salt, otp), new Date(now.getTime() + OTP_TTL_SECONDS * 1000), now],
    );
    await queueEmail(core, { workspaceId: workspace.id, message: otpMail(workspace, email, otp, link), kind: 'auth-otp', tx });
  });
}
