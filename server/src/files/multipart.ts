// `multipart/form-data` uploads: exactly one file, in the part named `file`, streamed through
// busboy into a staging file. At most 250 MiB (the body over it is a 413).
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { HttpError, MESSAGES, invalid } from '../http/errors';
import { StagingSink, TooLarge, safeFileName, type StagedFile } from './staging';

export const MULTIPART_LIMIT = 262_144_000;

const fileError = (message: string) => invalid('file', message);

export async function stageMultipart(req: IncomingMessage, dataDir: string): Promise<StagedFile> {
  let parser: busboy.Busboy;
  try {
    // busboy truncates at its limit; one byte more lets a file of exactly 250 MiB through, and the
    // staging sink refuses anything larger.
    parser = busboy({ headers: req.headers, limits: { files: 2, fileSize: MULTIPART_LIMIT + 1, fields: 50, parts: 60 } });
  } catch {
    throw fileError('The file field must be a file sent as multipart/form-data with a boundary.');
  }
  let sink: StagingSink | undefined;
  let staged: Promise<StagedFile> | undefined;
  let failure: Error | undefined;
  let finished: () => void = () => undefined;
  let part: (NodeJS.ReadableStream & { destroy(err?: Error): void; readableEnded: boolean }) | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    req.unpipe(parser);
    req.resume(); // drain the rest so that the client reads the answer
    if (part && !part.readableEnded) part.destroy(err); // ends the staging of a part that will get no more bytes
    finished();
  };

  await new Promise<void>((resolve) => {
    finished = resolve;
    parser.on('file', (field, stream, info) => {
      if (field !== 'file') {
        stream.resume();
        return fail(fileError('The file must be sent in the part named file.'));
      }
      if (staged) {
        stream.resume();
        return fail(fileError('Exactly one file must be sent in the part named file.'));
      }
      part = stream;
      stream.on('error', () => undefined); // reported through the staging pipeline
      staged = (async () => {
        sink = await StagingSink.open(dataDir, MULTIPART_LIMIT);
        await sink.consume(stream);
        if ((stream as unknown as { truncated?: boolean }).truncated) throw new TooLarge();
        return sink.finish(safeFileName(info.filename ?? ''), info.mimeType);
      })();
      staged.catch((err: Error) => fail(err));
    });
    parser.on('error', (err: Error) => {
      fail(invalid('file', 'The upload could not be read: :reason.', { reason: err.message }));
      resolve();
    });
    parser.on('close', () => resolve());
    req.on('close', () => {
      if (!req.complete) fail(new Error('client aborted'));
    });
    req.pipe(parser);
  });

  const result = await staged?.catch((err: Error) => {
    failure ??= err;
    return undefined;
  });
  if (failure || !result) {
    await sink?.discard();
    if (failure instanceof TooLarge) throw new HttpError(413, { message: MESSAGES.tooLarge }, { Connection: 'close' });
    if (failure instanceof HttpError) throw failure;
    if (failure) throw failure;
    throw fileError('The file field is required.');
  }
  if (result.size === 0) {
    await sink?.discard();
    throw fileError('The file must not be empty.');
  }
  return result;
}
