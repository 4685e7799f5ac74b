// Sends due webhook deliveries. A delivery is claimed with a lease (real time, longer than the
// request timeout), so a process that dies mid-delivery leaves it to another process once the
// lease ends. A failure (no answer within the timeout, or a non-2xx status) is retried with
// exponential backoff on the server clock: 10 s, 20 s, 40 s, ..., at most 8 attempts. Every
// attempt sends the same body, so the subscriber sees the same event `id`.
import type { AppContext } from '../context';
import { signPayload } from './signature';

export const MAX_ATTEMPTS = 8;
export const FIRST_RETRY_SECONDS = 10;

interface Claimed {
  id: number;
  event: string;
  event_id: string;
  payload: string;
  attempts: number;
  url: string;
  secret: string;
}

/** Seconds until the next attempt after `attempts` failed ones. */
export const backoffSeconds = (attempts: number) => FIRST_RETRY_SECONDS * 2 ** (attempts - 1);

async function send(d: Claimed, timeoutMs: number): Promise<{ status?: number; error?: string }> {
  try {
    const res = await fetch(d.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'workspace-api-webhooks/1',
        'X-Webhook-Signature': signPayload(d.secret, d.payload),
        'X-Webhook-Event': d.event,
        'X-Webhook-Id': d.event_id,
      },
      body: d.payload,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    return res.status >= 200 && res.status < 300 ? { status: res.status } : { status: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    const e = err as Error;
    return { error: e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : e.message };
  }
}

/** Claims and sends the due deliveries; returns how many attempts it made. */
export async function deliverDue(app: AppContext, batch = 20): Promise<number> {
  const timeoutMs = app.config.webhookTimeoutMs;
  const { rows } = await app.db.query<Claimed>(
    `UPDATE webhook_deliveries d
        SET attempts = d.attempts + 1, locked_until = $2, updated_at = $3
       FROM webhooks w
      WHERE w.id = d.webhook_id
        AND d.id IN (SELECT id FROM webhook_deliveries
                      WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until < $4)
                      ORDER BY next_attempt_at, id
                      LIMIT $5
                      FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.event, d.event_id, d.payload, d.attempts, w.url, w.secret`,
    [app.clock.now(), new Date(Date.now() + timeoutMs + 5_000), app.clock.now(), new Date(), batch],
  );
  await Promise.all(
    rows.map(async (d) => {
      const result = await send(d, timeoutMs);
      const now = app.clock.now();
      if (!result.error) {
        await app.db.query(
          `UPDATE webhook_deliveries SET status = 'delivered', response_status = $2, last_error = NULL, locked_until = NULL, updated_at = $3 WHERE id = $1`,
          [d.id, result.status, now],
        );
      } else {
        const final = d.attempts >= MAX_ATTEMPTS;
        await app.db.query(
          `UPDATE webhook_deliveries
              SET status = $2, response_status = $3, last_error = $4, locked_until = NULL, updated_at = $5,
                  next_attempt_at = $6
            WHERE id = $1`,
          [
            d.id,
            final ? 'failed' : 'pending',
            result.status ?? null,
            result.error,
            now,
            new Date(now.getTime() + backoffSeconds(d.attempts) * 1000),
          ],
        );
      }
    }),
  );
  return rows.length;
}
