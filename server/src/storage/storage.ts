// Where file bytes live, addressed by their SHA-256 so that identical uploads share one copy.
// `local` keeps them under DATA_DIR and streams downloads; a driver with temporary URLs (`s3`)
// lets downloads redirect to storage.
import { createReadStream } from 'node:fs';
import { constants } from 'node:fs';
import { access, mkdir, rename, rm, stat, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config';

export interface StoredObject {
  hash: string;
  modifiedAt: Date;
}

export interface Storage {
  readonly supportsTemporaryUrls: boolean;
  /** Moves a finished temporary file into storage under `hash` (kept once when already there). */
  putFile(hash: string, tempPath: string, size: number): Promise<void>;
  exists(hash: string): Promise<boolean>;
  read(hash: string): Promise<Readable>;
  delete(hash: string): Promise<void>;
  list(): AsyncIterable<StoredObject>;
  /** A storage URL valid for `expiresInSeconds`, for drivers with temporary URLs. */
  temporaryUrl?(hash: string, expiresInSeconds: number, downloadName: string): Promise<string>;
  /** Throws when the storage cannot be reached or written (`GET /health`). */
  check(): Promise<void>;
}

const contentPath = (root: string, hash: string) => path.join(root, hash.slice(0, 2), hash.slice(2, 4), hash);

export class LocalStorage implements Storage {
  readonly supportsTemporaryUrls = false;

  constructor(private readonly root: string) {}

  async putFile(hash: string, tempPath: string): Promise<void> {
    const target = contentPath(this.root, hash);
    if (await this.exists(hash)) {
      await rm(tempPath, { force: true });
      return;
    }
    await mkdir(path.dirname(target), { recursive: true });
    await rename(tempPath, target);
  }

  async exists(hash: string): Promise<boolean> {
    return stat(contentPath(this.root, hash)).then(
      (s) => s.isFile(),
      () => false,
    );
  }

  async read(hash: string): Promise<Readable> {
    const file = contentPath(this.root, hash);
    await stat(file);
    return createReadStream(file, { highWaterMark: 1 << 20 });
  }

  async delete(hash: string): Promise<void> {
    await rm(contentPath(this.root, hash), { force: true });
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await access(this.root, constants.R_OK | constants.W_OK);
  }

  async *list(): AsyncIterable<StoredObject> {
    const level = async (dir: string) => readdir(dir).catch(() => [] as string[]);
    for (const a of await level(this.root)) {
      for (const b of await level(path.join(this.root, a))) {
        for (const hash of await level(path.join(this.root, a, b))) {
          const s = await stat(path.join(this.root, a, b, hash)).catch(() => undefined);
          if (s?.isFile()) yield { hash, modifiedAt: s.mtime };
        }
      }
    }
  }
}

/** The driver of `STORAGE_DRIVER`. */
export async function createStorage(config: Config): Promise<Storage> {
  if (config.storageDriver === 's3') {
    // The AWS SDK loads only for the s3 driver.
    const { S3Storage } = await import('./s3-storage.js');
    return new S3Storage(config.s3!);
  }
  return new LocalStorage(path.join(config.dataDir, 'files', 'content'));
}
