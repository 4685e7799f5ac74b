// Secrets in an archive (webhooks' signing secrets), when the operator gives a passphrase: each
// is sealed with AES-256-GCM under a key derived from the passphrase with scrypt, and the
// manifest carries the derivation's parameters and salt (`secrets`) and a sealed check value, so
// that an import tells a wrong passphrase from a damaged secret before it writes anything.
// Without a passphrase an archive holds no secrets, and an import gives each a new random value.
import { createCipheriv, createDecipheriv, randomBytes, scrypt, type ScryptOptions } from 'node:crypto';
import { invalidAt } from '../errors';

export interface SecretsHeader {
  cipher: 'aes-256-gcm';
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  /** base64 */
  salt: string;
  /** CHECK, sealed. */
  check: string;
}

const CHECK = 'workspace-api-export';
const KDF = { N: 1 << 15, r: 8, p: 1 };
/** Sealed values: `enc:v1:` and the base64 of the IV (12 bytes), the tag (16) and the ciphertext. */
const PREFIX = 'enc:v1:';

/** The request's passphrase (the `X-Archive-Passphrase` header), checked; undefined when none. */
export function passphraseOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  // A header's value: printable ASCII (what every HTTP client sends as it is).
  if (!PASSPHRASE.test(header)) {
    throw invalidAt(
      'passphrase',
      'The passphrase (X-Archive-Passphrase) must be 12 to 1024 printable ASCII characters.',
      undefined,
      'format',
    );
  }
  return header;
}

/** A passphrase: 12 to 1024 printable ASCII characters (the CLI checks the same). */
export const PASSPHRASE = /^[\x20-\x7e]{12,1024}$/;

const derive = (passphrase: string, salt: Buffer, o: { N: number; r: number; p: number }) =>
  new Promise<Buffer>((resolve, reject) => {
    // OpenSSL's own need (128·r·(N+p+2) bytes), with room to spare.
    const options: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 2 * 128 * o.r * (o.N + o.p + 2) };
    scrypt(passphrase, salt, 32, options, (err, key) => (err ? reject(err) : resolve(key)));
  });

function seal(key: Buffer, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** The sealed value opened, or undefined when it is not one sealed with `key`. */
function open(key: Buffer, sealed: unknown): string | undefined {
  if (typeof sealed !== 'string' || !sealed.startsWith(PREFIX)) return undefined;
  const bytes = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  if (bytes.length < 28) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** For an export: the manifest's header, and a sealer of values. */
export async function sealer(passphrase: string): Promise<{ header: SecretsHeader; seal: (value: string) => string }> {
  const salt = randomBytes(16);
  const key = await derive(passphrase, salt, KDF);
  return {
    header: { cipher: 'aes-256-gcm', kdf: 'scrypt', ...KDF, salt: salt.toString('base64'), check: seal(key, CHECK) },
    seal: (value) => seal(key, value),
  };
}

/**
 * For an import: an opener of the archive's sealed values. Refused (`422` on `passphrase`) when
 * none is given or it is not the archive's; `refuse` names a header the server cannot read.
 */
export async function opener(
  header: unknown,
  passphrase: string | undefined,
  refuse: (message: string) => Error,
): Promise<(sealed: unknown) => string | undefined> {
  const h = header as Partial<SecretsHeader> | null;
  // Only derivations near the one this server writes: an archive must not make an import spend
  // gigabytes or minutes on its key.
  const N = h?.N;
  const known = [1 << 14, 1 << 15, 1 << 16, 1 << 17].includes(N as number) && h?.r === 8 && [1, 2, 3, 4].includes(h.p as number);
  if (h?.cipher !== 'aes-256-gcm' || h.kdf !== 'scrypt' || typeof h.salt !== 'string' || !known) {
    throw refuse('manifest.json gives secrets sealed in a way this server does not read.');
  }
  if (passphrase === undefined) {
    throw invalidAt(
      'passphrase',
      "The archive's secrets are sealed with a passphrase: give it (X-Archive-Passphrase, or the CLI's --passphrase-file).",
      undefined,
      'required',
    );
  }
  let key: Buffer;
  try {
    key = await derive(passphrase, Buffer.from(h.salt, 'base64'), { N: h.N!, r: h.r!, p: h.p! });
  } catch {
    throw refuse('manifest.json gives secrets sealed in a way this server does not read.');
  }
  if (open(key, h.check) !== CHECK)
    throw invalidAt('passphrase', 'The passphrase is not the one the archive was exported with.', undefined, 'passphrase');
  return (sealed) => open(key, sealed);
}
