// What the outbox keeps, and for how long. A one-time code is "stored only as a hash"
// (app-services.md), yet its mail holds it in plain text: in the local outbox (no SMTP_URL) the
// mail is the delivery, so it stays readable while the code can be used and loses its body once
// the code has expired (`email:redact-codes`, every minute; SMTP delivery empties it when sent or
// failed). Every message is deleted 30 days after it was queued (`email:prune`, daily).
import type { AppContext } from '../context';

export const OUTBOX_RETENTION_DAYS = 30;

/**
 * Empties the mails whose code has expired (`lifetimeSeconds` after they were queued: hosted
 * authentication's, given where the task is registered); a queued one is emptied by its delivery.
 */
export async function redactExpiredCodes(app: AppContext, lifetimeSeconds: number): Promise<number> {
  const expired = new Date(app.clock.now().getTime() - lifetimeSeconds * 1000);
  const res = await app.db.query(
    `UPDATE email_messages SET text = NULL, html = NULL, redact = false WHERE redact AND created_at <= $1 AND status <> 'queued'`,
    [expired],
  );
  return res.rowCount;
}

/** Deletes the messages queued more than OUTBOX_RETENTION_DAYS ago, whatever their status. */
export async function pruneOutbox(app: AppContext): Promise<number> {
  const res = await app.db.query('DELETE FROM email_messages WHERE created_at < $1', [
    new Date(app.clock.now().getTime() - OUTBOX_RETENTION_DAYS * 86_400_000),
  ]);
  return res.rowCount;
}
