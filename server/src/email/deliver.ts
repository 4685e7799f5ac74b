// Sends one queued message through SMTP_URL with nodemailer (the EMAIL_JOB handler). The row
// counts attempts: a temporary failure (no connection, a 4xx answer) is thrown so that the job
// queue retries it with backoff, until MAX_EMAIL_ATTEMPTS; a permanent refusal (5xx) or the last
// attempt marks the message `failed`. Mails with a one-time code lose their bodies once done.
import nodemailer from 'nodemailer';
import type { AppContext } from '../context';
import { MAX_EMAIL_ATTEMPTS } from '../core/email-queue';

interface Claimed {
  id: number;
  from: string;
  to: string[];
  reply_to: string | null;
  subject: string;
  text: string | null;
  html: string | null;
  attempts: number;
}

/** An SMTP answer of the 5xx class: the server will not take this message, however often asked. */
const permanent = (err: unknown) => Number((err as { responseCode?: number }).responseCode) >= 500;

export async function deliverEmail(app: AppContext, id: number): Promise<void> {
  await app.clock.refresh();
  // Claimed by counting the attempt; a message already sent or failed (a duplicate job) is left alone.
  const { rows } = await app.db.query<Claimed>(
    `UPDATE email_messages SET attempts = attempts + 1, updated_at = $2 WHERE id = $1 AND status = 'queued'
     RETURNING id, "from", "to", reply_to, subject, text, html, attempts`,
    [id, app.clock.now()],
  );
  const m = rows[0];
  if (!m) return;
  // Bounded well within the job's expiry (queue.ts): a hung server fails the attempt instead of
  // outliving the job, which would then run again beside it.
  const transport = nodemailer.createTransport({
    url: app.config.smtpUrl!,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  try {
    await transport.sendMail({
      from: m.from,
      to: m.to,
      replyTo: m.reply_to ?? undefined,
      subject: m.subject,
      text: m.text ?? undefined,
      html: m.html ?? undefined,
      // Addresses were validated; nodemailer must not read files or URLs named in a message.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    const final = permanent(err) || m.attempts >= MAX_EMAIL_ATTEMPTS;
    await finish(app, m.id, final ? 'failed' : 'queued', error);
    if (!final) throw err;
    return;
  } finally {
    transport.close();
  }
  await finish(app, m.id, 'sent', null);
}

async function finish(app: AppContext, id: number, status: 'sent' | 'failed' | 'queued', error: string | null): Promise<void> {
  const done = status !== 'queued';
  await app.db.query(
    `UPDATE email_messages
        SET status = $2, last_error = $3, updated_at = $4,
            sent_at = CASE WHEN $2 = 'sent' THEN $4 ELSE sent_at END,
            text = CASE WHEN redact AND $5 THEN NULL ELSE text END,
            html = CASE WHEN redact AND $5 THEN NULL ELSE html END,
            redact = redact AND NOT $5
      WHERE id = $1`,
    [id, status, error, app.clock.now(), done],
  );
}
