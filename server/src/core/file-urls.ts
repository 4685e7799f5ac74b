// The URLs of a file: permanent (tokenized download, image proxy) and signed (temporary download
// and inline image). A signature is HMAC-SHA256 with APP_KEY over the path, `uuid` and `expires`,
// so changing or adding anything else (an `expires_in`, say) breaks it.
import { createHmac } from 'node:crypto';
import type { Config } from '../config';
import { safeEqual } from '../lib/secrets';
import { formatTimestamp } from '../lib/time';
import { Fresh } from '../lib/fresh-json';
import type { File } from '../generated/prisma/client';
import type { components } from '@workspace-api/sdk/openapi';

export const DEFAULT_EXPIRES_IN = 600;
export const TRANSFORM_PARAMS = ['width', 'height', 'fit', 'format', 'quality'] as const;
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/avif', 'image/gif', 'image/tiff']);

export const isImage = (mimeType: string) => IMAGE_TYPES.has(mimeType);

const filesPath = (workspace: string, id: number) => `/api/v1/${encodeURIComponent(workspace)}/files/${id}`;
export const temporaryPath = (workspace: string, id: number, kind: 'temporary' | 'temporary-image') =>
  `${filesPath(workspace, id)}/${kind}`;

export function sign(appKey: string, path: string, uuid: string, expires: number): string {
  return createHmac('sha256', appKey).update(`GET\n${path}\nuuid=${uuid}&expires=${expires}`).digest('hex');
}

/**
 * Whether a signed query is exactly as issued for the file `uuid` and not expired: `uuid`,
 * `expires`, `signature` once each, plus (on image links) only the transform parameters.
 */
export function isValidSignature(
  appKey: string,
  path: string,
  query: URLSearchParams,
  now: Date,
  uuid: string,
  allowed: readonly string[] = [],
): boolean {
  const keys = [...query.keys()];
  const required = ['uuid', 'expires', 'signature'];
  if (required.some((k) => query.getAll(k).length !== 1)) return false;
  if (keys.some((k) => !required.includes(k) && !allowed.includes(k))) return false;
  if (new Set(keys).size !== keys.length) return false;
  const expires = query.get('expires')!;
  if (query.get('uuid') !== uuid || !/^\d{1,12}$/.test(expires)) return false;
  if (!safeEqual(query.get('signature')!, sign(appKey, path, uuid, Number(expires)))) return false;
  return Number(expires) * 1000 > now.getTime();
}

type FileBody = components['schemas']['File'];

/**
 * A file as an answer shows it, at the time the answer is given: its temporary URLs are fresh
 * even in an answer kept by the response cache (lib/fresh-json.ts). `pick`: only those properties.
 */
export const freshFile = (config: Config, workspace: string, f: File, now: Date, pick?: readonly string[]) =>
  new Fresh(now, (at) => {
    const file = presentFile(config, workspace, f, at) as unknown as Record<string, unknown>;
    return pick ? Object.fromEntries(pick.map((p) => [p, file[p] ?? null])) : file;
  });

export function presentFile(config: Config, workspace: string, f: File, now: Date, expiresIn = DEFAULT_EXPIRES_IN): FileBody {
  const expires = Math.floor(now.getTime() / 1000) + expiresIn;
  const expiresAt = formatTimestamp(new Date(expires * 1000));
  const signed = (kind: 'temporary' | 'temporary-image') => {
    const path = temporaryPath(workspace, f.id, kind);
    return `${config.baseUrl}${path}?uuid=${f.uuid}&expires=${expires}&signature=${sign(config.appKey, path, f.uuid, expires)}`;
  };
  const downloadUrl = `${config.baseUrl}${filesPath(workspace, f.id)}/${f.uuid}/${f.token}`;
  const image = isImage(f.mimeType);
  return {
    id: f.id,
    name: f.name,
    mime_type: f.mimeType,
    size: Number(f.size),
    tags: f.tags,
    download_url: downloadUrl,
    temporary_url: signed('temporary'),
    temporary_url_expires_at: expiresAt,
    image_url: !image
      ? null
      : config.imageProxyUrl
        ? `${config.imageProxyUrl}${filesPath(workspace, f.id)}/${f.uuid}/${f.token}/${encodeURIComponent(f.name)}`
        : downloadUrl,
    temporary_image_url: image ? signed('temporary-image') : null,
    temporary_image_url_expires_at: image ? expiresAt : null,
    alt_text: f.altText,
    created_at: formatTimestamp(f.createdAt),
    updated_at: formatTimestamp(f.updatedAt),
  };
}
