// What a staged upload really is: its type detected from content (file-type), and the installer
// rule: `.exe`, `.dmg` and `.apk` must be what their extension says, whatever type was declared.
import { uploadModules } from './upload-modules';
import { open } from 'node:fs/promises';
import { lookup } from 'mime-types';

export interface Detection {
  mimeType: string;
  /** Why the file is refused, or undefined. */
  problem?: string;
}

const ZLIB_HEADER = (b: Buffer) =>
  b.length >= 2 && b[0] === 0x78 && [0x01, 0x5e, 0x9c, 0xda].includes(b[1]) && ((b[0] << 8) | b[1]) % 31 === 0;

async function readRange(file: string, start: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, start);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The UDIF `koly` signature at the start of the final 512-byte trailer. */
async function hasKolyTrailer(file: string, size: number): Promise<boolean> {
  if (size < 512) return false;
  return (await readRange(file, size - 512, 4)).toString('latin1') === 'koly';
}

export async function detect(file: string, size: number, name: string, declaredType: string | undefined): Promise<Detection> {
  const { fileTypeFromFile } = (await uploadModules()).fileType;
  const found = await fileTypeFromFile(file);
  const head = await readRange(file, 0, 4);
  const detected = found?.mime ?? (ZLIB_HEADER(head) ? 'application/zlib' : undefined);
  const extension = name.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  const declared = declaredType && /^[\w.+-]+\/[\w.+-]+$/.test(declaredType) ? declaredType.toLowerCase() : undefined;
  const mimeType = detected ?? declared ?? (lookup(name) || 'application/octet-stream');
  switch (extension) {
    case 'exe':
      return found?.ext === 'exe' ? { mimeType } : { mimeType, problem: 'The file is not a Windows executable.' };
    case 'apk':
      return found?.ext === 'apk' ? { mimeType } : { mimeType, problem: 'The file is not an Android package.' };
    case 'dmg': {
      const binary = found?.ext === 'dmg' || detected === 'application/zlib' || detected === undefined;
      return binary && (await hasKolyTrailer(file, size))
        ? { mimeType: 'application/x-apple-diskimage' }
        : { mimeType, problem: 'The file is not an Apple disk image.' };
    }
    default:
      return { mimeType };
  }
}
