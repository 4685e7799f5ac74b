// Queueing transactional email: one row in `email_messages` (the outbox operators read) and,
// when SMTP_URL is set, one durable job that sends it (email/deliver.ts), both in the caller's
// transaction, so a rolled-back change sends nothing. `POST /emails`, hosted authentication's
// one-time codes and pipeline steps (validated as the route, `Operations.check`) all come through `queueEmail`.
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from './context';
import type { SqlRunner } from '../db/database';
import { transaction } from './transaction';

/** The validated body of `POST /api/v1/{workspace}/emails`. */
export type EmailMessage = components['schemas']['EmailSend'];
/** `email`: sent through the API (or a pipeline); `auth-otp`: a login code, redacted once delivered or expired (retention.ts). */
export type EmailKind = 'email' | 'auth-otp';

export const EMAIL_JOB = 'email.deliver';
/** SMTP attempts of one message before it is `failed`. */
export const MAX_EMAIL_ATTEMPTS = 5;

export interface QueueEmailInput {
  workspaceId: number;
  message: EmailMessage;
  kind?: EmailKind;
  /** The caller's open transaction: the message is queued only if it commits. */
  tx?: SqlRunner;
}

/** Queues a validated message from the workspace's sender. Resolves once it is in the outbox. */
export async function queueEmail(core: CoreContext, input: QueueEmailInput): Promise<void> {
  if (input.tx) return insertMessage(core, input.tx, input);
  return transaction(core, (tx) => insertMessage(core, tx, input));
}

async function insertMessage(core: CoreContext, tx: SqlRunner, { workspaceId, message, kind = 'email' }: QueueEmailInput): Promise<void> {
  const smtp = core.config.smtpUrl !== undefined;
  const now = core.clock.now();
  const { rows } = await tx.query<{ id: number }>(
    `INSERT INTO email_messages (workspace_id, kind, "from", "to", reply_to, subject, text, html, redact, status, created_at, updated_at)
     SELECT w.id, $2, COALESCE(w.mail_from, $3), $4::text[], $5, $6, $7, $8, $9, $10, $11, $11 FROM workspaces w WHERE w.id = $1
     RETURNING id`,
    [
      workspaceId,
      kind,
      core.config.mailFrom,
      typeof message.to === 'string' ? [message.to] : message.to,
      message.reply_to ?? null,
      message.subject,
      message.text ?? null,
      message.html ?? null,
      kind === 'auth-otp',
      smtp ? 'queued' : 'stored',
      now,
    ],
  );
  if (rows.length === 0) throw new Error(`queueEmail: no workspace ${workspaceId}`);
  if (smtp) {
    await core.jobs.send(
      EMAIL_JOB,
      { id: rows[0].id },
      // The job queue's retries are the SMTP retries; the row counts attempts and ends them.
      { db: tx, retryLimit: MAX_EMAIL_ATTEMPTS, retryDelay: core.config.emailRetryDelaySeconds, retryBackoff: true, expireInSeconds: 120 },
    );
  }
}
