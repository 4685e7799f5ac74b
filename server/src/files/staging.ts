// Upload bodies are streamed to a temporary file while they are hashed and counted; nothing holds
// a whole file in memory. A rejected upload removes its temporary file.
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StagedFile {
  tempPath: string;
  size: number;
  sha256: string;
  name: string;
  declaredType?: string;
}

/** Thrown by a sink when more than `limit` bytes arrive. */
export class TooLarge extends Error {}

export class StagingSink {
  readonly tempPath: string;
  private readonly out: WriteStream;
  private readonly hash = createHash('sha256');
  size = 0;

  private constructor(
    dir: string,
    private readonly limit: number,
  ) {
    this.tempPath = path.join(dir, randomUUID());
    this.out = createWriteStream(this.tempPath, { highWaterMark: 1 << 20 });
    // Errors surface through write/finish; an error after `discard` must not crash the process.
    this.out.on('error', (err) => (this.error ??= err));
  }

  private error?: Error;

  static async open(dataDir: string, limit: number): Promise<StagingSink> {
    const dir = path.join(dataDir, 'tmp', 'uploads');
    await mkdir(dir, { recursive: true });
    return new StagingSink(dir, limit);
  }

  /** Writes a chunk; resolves when the file can take more (backpressure). */
  async write(chunk: Buffer): Promise<void> {
    this.size += chunk.length;
    if (this.size > this.limit) throw new TooLarge();
    if (this.error) throw this.error;
    this.hash.update(chunk);
    if (!this.out.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        this.out.once('drain', resolve);
        this.out.once('error', reject);
      });
    }
  }

  /** Streams a whole readable into the file (the fast path for multipart parts). */
  async consume(source: NodeJS.ReadableStream): Promise<void> {
    const counter = new Transform({
      transform: (chunk: Buffer, _enc, done) => {
        this.size += chunk.length;
        if (this.size > this.limit) return done(new TooLarge());
        this.hash.update(chunk);
        done(null, chunk);
      },
    });
    await pipeline(source, counter, this.out, { end: false });
  }

  async finish(name: string, declaredType?: string): Promise<StagedFile> {
    await new Promise<void>((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { tempPath: this.tempPath, size: this.size, sha256: this.hash.digest('hex'), name, declaredType };
  }

  async discard(): Promise<void> {
    // The file is opened asynchronously: remove it only once the stream has closed, or an open
    // still under way would create it again after the removal.
    if (!this.out.closed) {
      await new Promise<void>((resolve) => {
        this.out.once('close', () => resolve());
        this.out.destroy();
      });
    }
    await rm(this.tempPath, { force: true });
  }
}

/** A display name from a client file name: no directories, no control characters, at most 255 characters. */
export function safeFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  const clean = base
    // eslint-disable-next-line no-control-regex -- control characters are what it drops
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .replace(/^\.+$/, '');
  // Cut at 255 characters, never inside a surrogate pair.
  return [...(clean || 'file')].slice(0, 255).join('');
}
