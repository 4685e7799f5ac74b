/// <reference types="node" />
// `export` and `import`: a workspace's archive (GET /admin/v1/workspaces/{workspace}/export, POST
// /admin/v1/workspace-imports) to and from a file, streamed both ways. An export is written to
// `<file>.partial` and renamed once whole, so a file of that name is always a whole archive. The
// progress follows the archive's stages as it arrives (its manifest gives the totals): rows per
// table, files and bytes; on a terminal one line rewritten in place, otherwise a line per stage.
import { createReadStream, createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { talking, type Connection } from './connection.js';
import { CliError, errorLines, tokenRefused } from './fetch-model.js';

export interface ArchiveOptions extends Connection {
  /** export: the file to write; import: the archive to read. */
  file: string;
  /** import: the new workspace's name (default the archive's). */
  name?: string;
  /** Seals (export) or opens (import) the archive's secrets: sent as X-Archive-Passphrase. */
  passphrase?: string;
  /** Where progress goes (standard error), and whether it is a terminal. */
  progress: { write: (text: string) => void; tty: boolean };
}

interface Manifest {
  tables: { name: string; rows: number }[];
  files: { count: number; bytes: number };
}

function newlines(chunk: Buffer): number {
  let n = 0;
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) n++;
  return n;
}

/** The stage of the stored files' contents. */
const CONTENTS = 'file contents';

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

/** Reports the stages of an archive read as it passes (a tar parser beside the file being written). */
function progressOf(o: ArchiveOptions): { sink: Writable; done: () => Promise<void> } {
  const extract = tar.extract();
  let manifest: Manifest | undefined;
  let stage = '';
  let count = 0;
  let files = 0;
  let bytes = 0;
  let last = 0;
  const say = (line: string, final = false) => {
    if (o.progress.tty) {
      if (!final && Date.now() - last < 100) return;
      last = Date.now();
      o.progress.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    } else if (final) o.progress.write(`${line}\n`);
  };
  const finish = () => {
    if (!stage) return;
    const total = stage === CONTENTS ? manifest?.files.count : manifest?.tables.find((t) => t.name === stage)?.rows;
    say(stage === CONTENTS ? `${CONTENTS}: ${files}/${total ?? '?'} (${mb(bytes)})` : `${stage}: ${count}/${total ?? '?'} rows`, true);
  };
  const run = (async () => {
    for await (const entry of extract) {
      const name = entry.header.name;
      const table = /^rows\/\d{2}-([a-z_]+)-\d{4}\.ndjson$/.exec(name)?.[1];
      // Stored contents are a stage of their own (`files` is also a table: their metadata).
      const next = table ?? (name.startsWith('files/') ? CONTENTS : '');
      if (next !== stage) {
        finish();
        stage = next;
        count = 0;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        if (name === 'manifest.json') chunks.push(chunk);
        else if (table) count += newlines(chunk);
        else if (stage === CONTENTS) bytes += chunk.length;
        const total = table ? manifest?.tables.find((t) => t.name === table)?.rows : manifest?.files.count;
        say(
          table
            ? `${table}: ${count}/${total ?? '?'} rows`
            : stage === CONTENTS
              ? `${CONTENTS}: ${files}/${total ?? '?'} (${mb(bytes)})`
              : '',
        );
      }
      if (name === 'manifest.json') manifest = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Manifest;
      if (stage === CONTENTS) files++;
    }
    finish();
  })();
  const gunzip = createGunzip();
  gunzip.pipe(extract);
  return { sink: gunzip, done: () => run };
}

/** fetch, waiting at most the timeout for the answer to begin (the body may take longer). */
async function fetchWithin(o: ArchiveOptions, url: string, init: RequestInit): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('timeout', 'TimeoutError')), o.timeoutSeconds * 1000);
  try {
    return await talking(o, () => globalThis.fetch(url, { ...init, signal: controller.signal }));
  } finally {
    clearTimeout(timer);
  }
}

const passphraseHeader = (o: ArchiveOptions): Record<string, string> =>
  o.passphrase === undefined ? {} : { 'X-Archive-Passphrase': o.passphrase };

/** A 4xx answer's message and field errors, in one line per error. */
async function refusal(res: Response): Promise<string> {
  const body = (await res.json().catch(() => undefined)) as { message?: string } | undefined;
  return `the server answered ${res.status}${body?.message ? ` (${body.message})` : ''}${errorLines(body)}`;
}

export async function exportArchive(o: ArchiveOptions): Promise<string> {
  const url = `${o.url.replace(/\/+$/, '')}/admin/v1/workspaces/${encodeURIComponent(o.workspace)}/export`;
  const res = await fetchWithin(o, url, { headers: { Authorization: `Bearer ${o.token}`, ...passphraseHeader(o) } });
  if (res.status === 422) throw new CliError(`exporting the workspace failed: ${await refusal(res)}`);
  if (res.status === 403) throw tokenRefused();
  if (res.status === 404) throw new CliError(`workspace "${o.workspace}" not found (404 exporting it)`);
  if (res.status !== 200 || !res.body) throw new CliError(`exporting the workspace failed: the server answered ${res.status}`);
  const partial = `${o.file}.partial`;
  const out = createWriteStream(partial);
  const progress = progressOf(o);
  let size = 0;
  try {
    // Each chunk goes to the file and to the progress parser; the file sets the pace.
    await pipeline(
      Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          size += chunk.length;
          progress.sink.write(chunk);
          if (out.write(chunk)) cb();
          else once(out, 'drain').then(() => cb(), cb);
        },
        final(cb) {
          progress.sink.end();
          out.end(cb);
        },
      }),
    );
    await progress.done();
  } catch (err) {
    out.destroy();
    rmSync(partial, { force: true });
    throw new CliError(`the export stopped before its end (${err instanceof Error ? err.message : String(err)}): nothing written`);
  }
  renameSync(partial, o.file);
  return `wrote ${o.file}: workspace "${o.workspace}" (${mb(size)})`;
}

export async function importArchive(o: ArchiveOptions): Promise<string> {
  let size: number;
  try {
    size = statSync(o.file).size;
  } catch (err) {
    throw new CliError(`cannot read ${o.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const query = o.name ? `?name=${encodeURIComponent(o.name)}` : '';
  let sent = 0;
  const source = createReadStream(o.file);
  source.on('data', (chunk) => {
    sent += chunk.length;
    if (o.progress.tty) o.progress.write(`\r\x1b[2Ksent ${mb(sent)} of ${mb(size)}`);
  });
  const res = await fetchWithin(o, `${o.url.replace(/\/+$/, '')}/admin/v1/workspace-imports${query}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${o.token}`,
      'Content-Type': 'application/gzip',
      'Content-Length': String(size),
      ...passphraseHeader(o),
    },
    body: Readable.toWeb(source) as ReadableStream,
    duplex: 'half',
  } as RequestInit);
  if (o.progress.tty) o.progress.write('\n');
  if (res.status === 403) throw tokenRefused();
  if (res.status !== 201) throw new CliError(`importing ${o.file} failed: ${await refusal(res)}; nothing was imported`);
  const body = (await res.json().catch(() => undefined)) as
    { workspace?: { name: string }; rows?: Record<string, number>; files?: { count: number; bytes: number } } | undefined;
  if (!body?.workspace) throw new CliError(`importing ${o.file} failed: the server's answer is not an import's`);
  const rows = Object.entries(body.rows ?? {})
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  return `imported workspace "${body.workspace.name}": ${rows}; ${body.files?.count ?? 0} files (${mb(body.files?.bytes ?? 0)})`;
}
