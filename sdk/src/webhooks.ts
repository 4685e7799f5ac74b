// Verifying webhook deliveries. Uses Web Crypto, so it runs in Node.js 18+, browsers, Deno and
// edge runtimes alike.
import type { components } from './generated/openapi.js';

/** The body of every delivery. */
export type WebhookEvent = components['schemas']['WebhookEvent'];

const encoder = new TextEncoder();

async function hmacHex(secret: string, body: Uint8Array): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, body as BufferSource));
  return Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Compares without stopping at the first difference, so timing does not reveal the signature. */
function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

/**
 * True when `signature` (the `X-Webhook-Signature` header, `sha256=<hex>`) is the HMAC-SHA256 of
 * the raw body with the subscription's secret. Pass the body exactly as received, before parsing.
 */
export async function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  signature: string | null | undefined,
  secret: string,
): Promise<boolean> {
  if (!signature || !/^sha256=[0-9a-f]{64}$/.test(signature)) return false;
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  return constantTimeEqual(signature, `sha256=${await hmacHex(secret, body)}`);
}

/** Verifies a delivery and returns its event; throws when the signature does not match. */
export async function parseWebhookEvent(
  rawBody: string | Uint8Array,
  signature: string | null | undefined,
  secret: string,
): Promise<WebhookEvent> {
  if (!(await verifyWebhookSignature(rawBody, signature, secret))) throw new Error('invalid webhook signature');
  return JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody)) as WebhookEvent;
}
