// A workspace as one streamed archive (format `workspace-api-export`, version 1): a gzip-compressed
// tar that ordinary tools open (`tar xzf`, then `sha256sum -c checksums.sha256`).
//
//   manifest.json                  format, version, schema (the last migration), the workspace's
//                                  name, each table's columns and row count, file count and bytes
//   rows/<nn>-<table>-<part>.ndjson its rows, one JSON object per line, parts of at most
//                                  ROWS_PER_PART keys and about PART_BYTES, in foreign-key order
//   files/<sha256>                 each stored content once, named by its SHA-256
//   checksums.sha256               last: the SHA-256 of every other entry, as sha256sum writes it
//
// Rows are read in pages by their table's key, each page one COPY of its lines into a temporary
// file (then the part): their bytes never become strings, and memory stays flat whatever the
// workspace's size; every read of an export shares one transaction, so the archive is one
// consistent view (see exportWorkspace for each database).
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { literal, rows, sql, raw, withIntegers } from '../sql';
import { LINES } from './lines';
import { sealer, type SecretsHeader } from './secrets';
import { ARCHIVE_TABLES, type ArchiveTable } from './tables';

export const ARCHIVE_FORMAT = 'workspace-api-export';
export const ARCHIVE_VERSION = 1;
/** Keys per part of a table at most (a part is one page: the rows of those keys). */
export const ROWS_PER_PART = 5000;
/** Keys of a table's first page (the next take as many as fit PART_BYTES). */
const FIRST_PAGE_KEYS = 100;
/**
 * A part's bytes, about: the keys of a page after the first are as many as fit at the bytes per
 * key seen (a part is copied to a file before it goes in the tar, whose header gives its size).
 */
const PART_BYTES = 8 * 1024 * 1024;

export interface Manifest {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  /** The last migration of the exporting server: an importing server must know it. */
  schema: string;
  workspace: string;
  exported_at: string;
  tables: { name: string; columns: string[]; rows: number }[];
  files: { count: number; bytes: number };
  /** Present when the archive holds secrets, sealed with a passphrase (secrets.ts). */
  secrets?: SecretsHeader;
}

/** A table's columns that an archive holds: all but generated ones, and secrets unless `withSecrets`. */
export async function archiveColumns(db: SqlRunner, withSecrets = false): Promise<Map<string, { columns: string[]; left: string[] }>> {
  const found = await rows<{ table_name: string; column_name: string; generated: boolean }>(
    db,
    sql`SELECT table_name, column_name, is_generated = 'ALWAYS' AS generated FROM information_schema.columns
         WHERE table_schema = current_schema() AND table_name = ANY(${ARCHIVE_TABLES.map((t) => t.name)}::text[]) ORDER BY table_name, ordinal_position`,
  );
  const out = new Map<string, { columns: string[]; left: string[] }>();
  for (const t of ARCHIVE_TABLES) {
    const mine = found.filter((c) => c.table_name === t.name);
    const left = mine.filter((c) => c.generated || (!withSecrets && t.secrets?.includes(c.column_name))).map((c) => c.column_name);
    out.set(t.name, { columns: mine.filter((c) => !left.includes(c.column_name)).map((c) => c.column_name), left });
  }
  return out;
}

/** The server's schema: its last migration (an archive names it; an import refuses a newer one). */
export async function serverSchema(db: SqlRunner): Promise<string> {
  const [last] = await rows<{ name: string }>(
    db,
    sql`SELECT migration_name AS name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name DESC LIMIT 1`,
  );
  return last?.name ?? '';
}

/** The name a table's part has in the archive. */
export const partName = (index: number, table: string, part: number) =>
  `rows/${String(index + 1).padStart(2, '0')}-${table}-${String(part).padStart(4, '0')}.ndjson`;

/** The next page of a table: its last key and how many keys (at most `keys`) after `after`. */
const nextPage = (t: ArchiveTable, ws: number, after: number, keys: number) =>
  sql`SELECT max(k)::int AS last, count(*)::int AS keys
        FROM (SELECT DISTINCT ${raw(`t.${t.key}`)} AS k FROM ${raw(t.name)} t WHERE ${t.scope(ws)} AND ${raw(`t.${t.key}`)} > ${after}::int ORDER BY 1 LIMIT ${keys}::int) x`;

/**
 * The rows of a page (keys after `after` up to `last`) as lines of JSON text, copied out as bytes:
 * they never become strings here (thousands alive at once made the heap grow by garbage).
 */
function copyPage(t: ArchiveTable, ws: number, left: string[], after: number, last: number): string {
  const key = `t.${t.key}`;
  const dropped = left.length ? ` - ARRAY[${left.map(literal).join(', ')}]::text[]` : '';
  return `COPY (SELECT (to_jsonb(t)${dropped})::text FROM ${t.name} t
                 WHERE ${withIntegers(t.scope(ws))} AND ${key} > ${Math.trunc(after)} AND ${key} <= ${Math.trunc(last)} ORDER BY ${key})
          TO STDOUT WITH ${LINES}`;
}

/** A text's size and bytes, as `write` takes them. */
const sized = (text: string): [number, Readable] => [Buffer.byteLength(text), Readable.from([Buffer.from(text)])];

/** Adds entries to a tar pack, keeping each one's SHA-256 for `checksums.sha256`. */
function archiveWriter(pack: tar.Pack) {
  const sums: string[] = [];
  // Each entry is written as a stream: it waits while the pack's reader (gzip, the client) is
  // behind, so that the rows read ahead of it never pile up in memory.
  const write = async (name: string, size: number, source: Readable) => {
    const hash = createHash('sha256');
    source.on('data', (chunk: Buffer) => hash.update(chunk));
    await pipeline(source, pack.entry({ name, size, mtime: new Date(0) }));
    sums.push(`${hash.digest('hex')}  ${name}`);
  };
  return {
    write,
    /**
     * An entry of what `copy` (a COPY … TO STDOUT) writes, through a temporary file (the tar
     * header gives the entry's size first); `seal` changes its text (a small table's). Answers
     * the bytes copied.
     */
    copied: async (name: string, db: SqlRunner, copy: string, seal?: (text: string) => string) => {
      const file = path.join(os.tmpdir(), `wsapi-part-${randomUUID()}`);
      try {
        await db.copyOut(copy, createWriteStream(file));
        const { size } = await stat(file);
        if (seal) await write(name, ...sized(seal(await readFile(file, 'utf8'))));
        else await write(name, size, createReadStream(file));
        return size;
      } finally {
        await rm(file, { force: true });
      }
    },
    /** The last entry, and the end of the archive. */
    finish: async () => {
      await write('checksums.sha256', ...sized(`${sums.join('\n')}\n`));
      pack.finalize();
    },
  };
}

/** Writes the manifest and the workspace's rows, as read through `db`; answers the stored contents to add. */
async function writeRows(
  core: CoreContext,
  db: SqlRunner,
  workspace: { id: number; name: string },
  out: ReturnType<typeof archiveWriter>,
  passphrase: string | undefined,
) {
  const secrets = passphrase === undefined ? undefined : await sealer(passphrase);
  const columns = await archiveColumns(db, secrets !== undefined);
  const counts = new Map<string, number>();
  for (const t of ARCHIVE_TABLES)
    counts.set(
      t.name,
      (await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${raw(t.name)} t WHERE ${t.scope(workspace.id)}`))[0].n,
    );
  const hashes = await rows<{ content_hash: string; size: string }>(
    db,
    sql`SELECT content_hash, max(size)::text AS size FROM files WHERE workspace_id = ${workspace.id}::int GROUP BY content_hash ORDER BY content_hash`,
  );
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    schema: await serverSchema(db),
    workspace: workspace.name,
    exported_at: core.clock.now().toISOString(),
    tables: ARCHIVE_TABLES.map((t) => ({ name: t.name, columns: columns.get(t.name)!.columns, rows: counts.get(t.name)! })),
    files: { count: hashes.length, bytes: hashes.reduce((n, h) => n + Number(h.size), 0) },
    ...(secrets ? { secrets: secrets.header } : {}),
  };
  await out.write('manifest.json', ...sized(`${JSON.stringify(manifest, null, 2)}\n`));
  for (const [index, t] of ARCHIVE_TABLES.entries()) {
    let after = -1;
    let keys = FIRST_PAGE_KEYS;
    for (let part = 1; ; part++) {
      const [next] = await rows<{ last: number | null; keys: number }>(db, nextPage(t, workspace.id, after, keys));
      if (next.last === null) break;
      const seal = secrets && t.secrets ? (text: string) => sealRows(text, t.secrets!, secrets.seal) : undefined;
      const bytes = await out.copied(
        partName(index, t.name, part),
        db,
        copyPage(t, workspace.id, columns.get(t.name)!.left, after, next.last),
        seal,
      );
      after = next.last;
      keys = Math.max(1, Math.min(ROWS_PER_PART, Math.floor(PART_BYTES / Math.max(1, bytes / next.keys))));
    }
  }
  return hashes;
}

/** Rows (JSON text, a line each) with their secret columns' values sealed. */
function sealRows(text: string, columns: readonly string[], seal: (value: string) => string): string {
  // Split on newlines only: `.` and `^`/`$` would also stop at U+2028, which JSON text may hold.
  return text
    .split('\n')
    .map((row) => {
      if (!row) return row;
      const value = JSON.parse(row) as Record<string, unknown>;
      for (const c of columns) if (typeof value[c] === 'string') value[c] = seal(value[c]);
      return JSON.stringify(value);
    })
    .join('\n');
}

/** Writes each stored content once, named by its SHA-256. */
async function writeFiles(
  core: CoreContext,
  hashes: { content_hash: string; size: string }[],
  out: ReturnType<typeof archiveWriter>,
): Promise<void> {
  for (const { content_hash: hash, size } of hashes) await out.write(`files/${hash}`, Number(size), await core.storage.read(hash));
}

/**
 * The workspace's archive as a gzip stream. Reading it runs the export; a failure mid-way
 * destroys the stream (the client sees a truncated archive, which an import refuses).
 *
 * The rows are one consistent view on both databases. On PostgreSQL the export reads them in one
 * REPEATABLE READ transaction while the server goes on serving. The embedded database has one
 * connection: its rows are read in one transaction too, which holds it (other requests wait, as
 * they wait for any transaction there), into a file on disk, so that a slow client cannot
 * lengthen the wait; the file is sent once whole.
 */
export function exportWorkspace(core: CoreContext, workspace: { id: number; name: string }, passphrase?: string): Readable {
  const pack = tar.pack();
  const out = new PassThrough();
  const writer = archiveWriter(pack);
  const fail = (err: unknown) => {
    core.log.error('workspace export failed', { workspace: workspace.name, error: String(err) });
    pack.destroy(err as Error);
    out.destroy(err as Error);
  };
  if (core.db.kind === 'postgres') {
    core.db
      .transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        await writeFiles(core, await writeRows(core, tx, workspace, writer, passphrase), writer);
        await writer.finish();
      })
      .catch(fail);
    pipeline(pack, createGzip(), out).catch(() => undefined);
    return out;
  }
  const spool = path.join(os.tmpdir(), `wsapi-export-${randomUUID()}.tar.gz`);
  const spooled = pipeline(pack, createGzip(), createWriteStream(spool));
  spooled.catch(() => undefined);
  (async () => {
    try {
      const hashes = await core.db.transaction((tx) => writeRows(core, tx, workspace, writer, passphrase));
      await writeFiles(core, hashes, writer);
      await writer.finish();
      await spooled;
      await pipeline(createReadStream(spool), out);
    } finally {
      await rm(spool, { force: true });
    }
  })().catch(fail);
  return out;
}
