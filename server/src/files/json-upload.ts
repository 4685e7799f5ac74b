// JSON uploads `{"file": {"name", "type", "content"}}` with base64 content, parsed as a stream
// (stream-json): the content is decoded chunk by chunk into a staging file, so a 150 MiB file is
// never held in memory. More than 150 MiB decoded is a 422 on `file`.
import { uploadModules } from './upload-modules';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { HttpError, MESSAGES, invalid, validationFailed } from '../http/errors';
import { fieldError, fieldErrors } from '../lib/field-errors';
import { loadDocument, resolvePointer } from '../http/spec';
import { textProblem } from '../http/validation';
import { StagingSink, TooLarge, safeFileName, type StagedFile } from './staging';

export const BASE64_LIMIT = 157_286_400; // 150 MiB decoded

/** `maxLength` of `file.name` and `file.type`, read from the spec (this body is not validated by Ajv). */
function maxLengthOf(field: 'name' | 'type'): number {
  return resolvePointer(loadDocument(), `/components/schemas/FileUploadJson/properties/file/properties/${field}`).maxLength as number;
}
const MAX_LENGTH = { name: maxLengthOf('name'), type: maxLengthOf('type') };
/** Characters, as JSON Schema counts them (code points, not UTF-16 units). */
const characters = (s: string) => [...s].length;
const tooLong = (field: 'name' | 'type') =>
  invalid(`file.${field}`, 'The :attribute field must not be greater than :limit characters.', { limit: MAX_LENGTH[field] });

type Token = { name: string; value?: unknown };

/** Decodes base64 that arrives in pieces of any length; rejects anything that is not base64. */
class Base64Decoder {
  private rest = '';
  private ended = false;

  decode(chunk: string): Buffer {
    if (this.ended && chunk.length) throw new Error('data after padding');
    const text = this.rest + chunk;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error('not base64');
    const usable = text.includes('=') ? text.length : text.length - (text.length % 4);
    if (text.includes('=')) {
      if (text.length % 4 !== 0) throw new Error('bad padding');
      this.ended = true;
    }
    this.rest = text.slice(usable);
    return Buffer.from(text.slice(0, usable), 'base64');
  }

  end(): void {
    if (this.rest.length) throw new Error('truncated base64');
  }
}

export async function stageJsonUpload(req: IncomingMessage, dataDir: string): Promise<StagedFile> {
  const sink = await StagingSink.open(dataDir, BASE64_LIMIT);
  const decoder = new Base64Decoder();
  const path: (string | undefined)[] = [];
  let key: string | undefined;
  let current: 'name' | 'type' | 'content' | undefined;
  let name: string | undefined;
  let type: string | undefined;
  let sawContent = false;
  let rootIsObject = false;

  const where = () => [...path, key].filter((k) => k !== undefined).join('.');
  const onToken = async (t: Token) => {
    switch (t.name) {
      case 'startObject':
        if (path.length === 0) rootIsObject = true;
        else if (!(path.length === 1 && key === 'file')) throw invalid(where() || 'file', 'The :attribute field must be a string.');
        path.push(key);
        key = undefined;
        return;
      case 'endObject':
        path.pop();
        key = undefined;
        return;
      case 'startArray':
        throw invalid(where() || 'file', 'The :attribute field must not be an array.');
      case 'keyValue': {
        key = String(t.value);
        const allowed = path.length === 1 ? ['file'] : ['name', 'type', 'content'];
        if (!allowed.includes(key)) throw invalid(where(), 'The :attribute field is not allowed.');
        return;
      }
      case 'startString':
        if (path.length !== 2) throw invalid(where() || 'file', 'The file field must be an object.');
        current = key as typeof current;
        if (current === 'name') name = '';
        if (current === 'type') type = '';
        if (current === 'content') sawContent = true;
        return;
      case 'stringChunk': {
        const s = String(t.value);
        if (current === 'content') {
          await sink.write(decoder.decode(s));
        } else if (current === 'name' || current === 'type') {
          const next = (current === 'name' ? name! : type!) + s;
          // Two UTF-16 units per character at most: past that it is too long whatever it holds.
          if (next.length > 2 * MAX_LENGTH[current]) throw tooLong(current);
          if (current === 'name') name = next;
          else type = next;
        }
        return;
      }
      case 'endString':
        if (current === 'content') decoder.end();
        if (current === 'name' || current === 'type') {
          const value = (current === 'name' ? name : type)!;
          if (characters(value) > MAX_LENGTH[current]) throw tooLong(current);
          const problem = textProblem(value);
          if (problem) throw invalid(`file.${current}`, 'The :attribute field :detail.', { detail: problem });
        }
        current = undefined;
        return;
      case 'numberValue':
      case 'nullValue':
      case 'trueValue':
      case 'falseValue':
        throw invalid(
          where() || 'file',
          path.length <= 1 ? 'The :attribute field must be an object.' : 'The :attribute field must be a string.',
        );
      default:
        return;
    }
  };

  // stream-json is an ES module.
  const { default: parserModule } = (await uploadModules()).jsonParser;
  const parser = parserModule.asStream({
    packKeys: true,
    streamKeys: false,
    packStrings: false,
    streamStrings: true,
    packNumbers: true,
    streamNumbers: false,
  });
  try {
    await pipeline(
      req,
      parser,
      new Writable({
        objectMode: true,
        write(token: Token, _enc, done) {
          onToken(token).then(() => done(), done);
        },
      }),
    );
  } catch (err) {
    await sink.discard();
    req.resume();
    if (err instanceof HttpError) throw err;
    if (err instanceof TooLarge) throw invalid('file', 'The :attribute may not be greater than 153600 kilobytes.');
    const message = (err as Error).message ?? '';
    if (/base64|padding/.test(message)) throw invalid('file', 'The :attribute content must be valid base64.');
    throw new HttpError(400, { message: MESSAGES.malformedJson });
  }
  const errors = fieldErrors();
  if (!rootIsObject) errors.file = [fieldError('required', 'The :attribute field is required.')];
  else if (name === undefined && !sawContent) errors.file = [fieldError('required', 'The :attribute field is required.')];
  else {
    if (!name) errors['file.name'] = [fieldError('required', 'The :attribute field is required.')];
    if (!sawContent) errors['file.content'] = [fieldError('required', 'The :attribute field is required.')];
    else if (sink.size === 0) errors.file = [fieldError('empty', 'The :attribute must not be empty.')];
  }
  if (Object.keys(errors).length) {
    await sink.discard();
    throw validationFailed(errors);
  }
  return sink.finish(safeFileName(name!), type);
}
