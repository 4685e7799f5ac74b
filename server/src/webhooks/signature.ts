import { createHmac } from 'node:crypto';

/** `X-Webhook-Signature`: `sha256=` and the hex HMAC-SHA256 of the raw body with the subscription's secret. */
export const signPayload = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
