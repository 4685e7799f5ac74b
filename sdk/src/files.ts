// File helpers: uploads from Node.js or browsers, and fresh temporary URLs.
import type { components } from './generated/openapi.js';
import type { PublicClient } from './index.js';

export type FileObject = components['schemas']['File'];

/** What can be uploaded: a Blob or File, bytes, or a stream (web or Node.js) or async iterable of bytes. */
export type UploadInput = Blob | ArrayBuffer | ArrayBufferView | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface UploadOptions {
  /** File name; defaults to the File's own name, else `file`. */
  name?: string;
  /** Declared MIME type (the server detects the real one from the content). */
  type?: string;
}

const encoder = new TextEncoder();
const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');

/** A multipart body streamed from `source`, so large files are never held in memory. */
function multipartStream(source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, name: string, type: string, boundary: string) {
  const head = encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${quote(name)}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  const iterable: AsyncIterable<Uint8Array> =
    Symbol.asyncIterator in source
      ? source
      : {
          async *[Symbol.asyncIterator]() {
            const reader = source.getReader();
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              yield value;
            }
          },
        };
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(head);
      for await (const chunk of iterable) controller.enqueue(chunk);
      controller.enqueue(tail);
      controller.close();
    },
  });
}

/**
 * Uploads a file to `POST /api/v1/{workspace}/files` as `multipart/form-data` and returns the
 * file object, or the API's error. Blobs and bytes go through `FormData`; streams are sent as a
 * streamed multipart body (Node.js 18+; browsers need a Blob).
 */
export async function uploadFile(client: PublicClient, workspace: string, input: UploadInput, options: UploadOptions = {}) {
  const name = options.name ?? (typeof File !== 'undefined' && input instanceof File ? input.name : 'file');
  const type = options.type ?? (input instanceof Blob && input.type ? input.type : 'application/octet-stream');
  const path = { params: { path: { workspace } } } as const;
  if (input instanceof Blob || input instanceof ArrayBuffer || ArrayBuffer.isView(input)) {
    const blob = input instanceof Blob ? input : new Blob([input as BlobPart], { type });
    const form = new FormData();
    form.append('file', blob, name);
    return client.POST('/api/v1/{workspace}/files', { ...path, body: form as never, bodySerializer: (b: unknown) => b as FormData });
  }
  const boundary = `----workspace-api-${Math.random().toString(36).slice(2)}`;
  return client.POST('/api/v1/{workspace}/files', {
    ...path,
    body: multipartStream(input, name, type, boundary) as never,
    bodySerializer: (b: unknown) => b as ReadableStream,
    headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    // Required by fetch for a streamed request body.
    duplex: 'half',
  } as never);
}

/**
 * The file with temporary URLs valid at least `minSeconds` more: the same object when they are,
 * otherwise a fresh one from `GET /api/v1/{workspace}/files/{file}` (with `expiresIn` seconds).
 */
export async function refreshTemporaryUrls(
  client: PublicClient,
  workspace: string,
  file: FileObject,
  options: { minSeconds?: number; expiresIn?: number; now?: Date } = {},
): Promise<FileObject> {
  const { minSeconds = 60, expiresIn = 600, now = new Date() } = options;
  const expiresAt = file.temporary_url_expires_at ? Date.parse(file.temporary_url_expires_at) : 0;
  if (expiresAt - now.getTime() >= minSeconds * 1000) return file;
  const { data, error } = await client.GET('/api/v1/{workspace}/files/{file}', {
    params: { path: { workspace, file: file.id }, query: { expires_in: expiresIn } },
  });
  if (error || !data) throw Object.assign(new Error(error?.message ?? 'could not refresh the file'), { body: error });
  return data;
}
