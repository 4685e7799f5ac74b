// Hashing and comparison of secrets (API keys, the admin token).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Constant-time equality of two strings of any length (compares their hashes). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** A new API key secret: a recognisable prefix and 256 random bits. */
export const newApiKeySecret = () => `wsk_${randomBytes(32).toString('base64url')}`;

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
