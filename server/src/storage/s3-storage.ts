// The `s3` storage driver: any S3-compatible store (AWS, MinIO, R2, ...). Downloads redirect to
// presigned GET URLs, so file bytes never pass through the API server.
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config';
import type { Storage, StoredObject } from './storage';
import { attachmentDisposition } from '../lib/disposition';

export class S3Storage implements Storage {
  readonly supportsTemporaryUrls = true;
  private readonly client: S3Client;

  constructor(private readonly cfg: S3Config) {
    this.client = new S3Client({
      region: cfg.region,
      endpoint: cfg.endpoint,
      forcePathStyle: cfg.forcePathStyle,
      credentials: cfg.accessKeyId ? { accessKeyId: cfg.accessKeyId, secretAccessKey: cfg.secretAccessKey ?? '' } : undefined,
      // Streamed uploads must not be framed with checksum chunks some S3-compatible stores keep.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.cfg.bucket }));
  }

  private key(hash: string): string {
    return `${this.cfg.prefix}${hash}`;
  }

  async putFile(hash: string, tempPath: string, size: number): Promise<void> {
    try {
      if (await this.exists(hash)) return;
      await new Upload({
        client: this.client,
        params: {
          Bucket: this.cfg.bucket,
          Key: this.key(hash),
          Body: createReadStream(tempPath),
          ContentLength: size,
          ContentType: 'application/octet-stream',
        },
        queueSize: 4,
        partSize: 16 * 1024 * 1024,
      }).done();
    } finally {
      await rm(tempPath, { force: true });
    }
  }

  async exists(hash: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(hash) }));
      return true;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) return false;
      throw err;
    }
  }

  async read(hash: string): Promise<Readable> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(hash) }));
    return res.Body as Readable;
  }

  async delete(hash: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.cfg.bucket, Key: this.key(hash) }));
  }

  async *list(): AsyncIterable<StoredObject> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.cfg.bucket, Prefix: this.cfg.prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key) yield { hash: o.Key.slice(this.cfg.prefix.length), modifiedAt: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async temporaryUrl(hash: string, expiresInSeconds: number, downloadName: string): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.cfg.bucket,
      Key: this.key(hash),
      ResponseContentType: 'application/octet-stream',
      ResponseContentDisposition: attachmentDisposition(downloadName),
    });
    return getSignedUrl(this.client, command, { expiresIn: Math.max(1, Math.floor(expiresInSeconds)) });
  }
}
