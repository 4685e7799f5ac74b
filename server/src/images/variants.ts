// Image variants with sharp: resize, fit and format conversion, cached on disk by the original's
// identity and the requested (negotiated) transform, so a repeated request does no image work.
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type sharpType from 'sharp';

export type Fit = 'contain' | 'cover' | 'scale-down' | 'crop' | 'pad';
export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';

export interface Transform {
  width?: number;
  height?: number;
  fit?: Fit;
  format?: OutputFormat | 'auto';
  quality?: number;
}

export const MIME: Record<OutputFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

/** `auto`: AVIF, then WebP when the client accepts them, otherwise the original's format (JPEG for others). */
export function negotiate(format: Transform['format'], accept: string, originalMime: string): OutputFormat {
  if (format && format !== 'auto') return format;
  if (/image\/avif/.test(accept)) return 'avif';
  if (/image\/webp/.test(accept)) return 'webp';
  return originalMime === 'image/png' ? 'png' : 'jpeg';
}

const SHARP_FIT: Record<Fit, { fit: keyof sharpType.FitEnum; withoutEnlargement: boolean }> = {
  contain: { fit: 'inside', withoutEnlargement: false },
  'scale-down': { fit: 'inside', withoutEnlargement: true },
  cover: { fit: 'cover', withoutEnlargement: false },
  crop: { fit: 'cover', withoutEnlargement: true },
  pad: { fit: 'contain', withoutEnlargement: false },
};

export class VariantCache {
  constructor(private readonly dir: string) {}

  private file(key: string, format: OutputFormat) {
    const hash = createHash('sha256').update(key).digest('hex');
    return path.join(this.dir, hash.slice(0, 2), `${hash}.${format}`);
  }

  /** The cached variant as a stream, or undefined. */
  async get(key: string, format: OutputFormat): Promise<{ stream: Readable; size: number } | undefined> {
    const file = this.file(key, format);
    const s = await stat(file).catch(() => undefined);
    return s ? { stream: createReadStream(file), size: s.size } : undefined;
  }

  async put(key: string, format: OutputFormat, data: Buffer): Promise<void> {
    const file = this.file(key, format);
    await mkdir(path.dirname(file), { recursive: true });
    const temp = `${file}.${randomUUID()}.tmp`;
    await writeFile(temp, data);
    await rename(temp, file);
  }
}

/** Renders the variant of an original image. Throws when the original is not a decodable image. */
export async function render(original: Buffer, t: Transform, format: OutputFormat): Promise<Buffer> {
  // libvips loads with the first image, not at start-up.
  const { default: sharp } = await import('sharp');
  let image = sharp(original, { failOn: 'error' }).rotate();
  if (t.width || t.height) {
    const { fit, withoutEnlargement } = SHARP_FIT[t.fit ?? 'contain'];
    image = image.resize({ width: t.width, height: t.height, fit, withoutEnlargement, background: { r: 255, g: 255, b: 255, alpha: 0 } });
  }
  const quality = t.quality;
  switch (format) {
    case 'jpeg':
      return image.jpeg({ quality: quality ?? 80, mozjpeg: false }).toBuffer();
    case 'png':
      return image.png({ quality: quality ?? 100 }).toBuffer();
    case 'webp':
      return image.webp({ quality: quality ?? 80, effort: 2 }).toBuffer();
    case 'avif':
      return image.avif({ quality: quality ?? 50, effort: 2 }).toBuffer();
  }
}
