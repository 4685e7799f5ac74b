// A workspace archive (export.ts) imported, all or nothing: every row goes in one transaction,
// keeping its IDs, so that references, URLs and clients keep working; a refusal or a failure
// anywhere rolls it back and deletes the stored contents it had added. The archive is read as a
// stream (a part's bytes go to the database as they come, a file's to a temporary file), each
// part's lines checked as JSON, every entry's SHA-256 compared with `checksums.sha256` at the end
// (which a truncated archive lacks). Refusals name the part and line.
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { sqlState } from '../../lib/sql-state';
import { quoteIdent } from '../../lib/sql-identifier';
import { DomainError, invalidAt } from '../errors';
import { CONTENT_CHANGED_CHANNEL } from '../lookup-cache';
import { raw, rows, sql } from '../sql';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, archiveColumns, partName, serverSchema, type Manifest } from './export';
import { foreignReference, strayRows } from './references';
import { opener } from './secrets';
import { DELIMITER, LINES, QUOTE } from './lines';
import { ARCHIVE_TABLES } from './tables';

export interface ImportSummary {
  workspace: string;
  rows: Record<string, number>;
  files: { count: number; bytes: number };
}

/** A refusal of the archive: a 422 on `archive`, naming where. */
const refuse = (message: string) => invalidAt('archive', ':message', { message }, 'archive');

const WORKSPACE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The entry's bytes (a part: bounded by the export's part size). */
async function bytesOf(entry: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of entry) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function checkManifest(body: Buffer, serverSchema: string): Manifest {
  let m: Record<string, unknown> | null;
  try {
    m = JSON.parse(body.toString('utf8')) as Record<string, unknown> | null;
  } catch {
    throw refuse('manifest.json is not JSON.');
  }
  const format: string = ARCHIVE_FORMAT;
  if (m?.format !== format) throw refuse(`manifest.json does not describe a ${format} archive.`);
  if (m.version !== ARCHIVE_VERSION)
    throw refuse(`The archive's format version ${JSON.stringify(m.version)} is not one this server reads (${ARCHIVE_VERSION}).`);
  if (typeof m.schema !== 'string' || m.schema > serverSchema) {
    throw refuse(
      `The archive comes from a newer server (schema ${JSON.stringify(m.schema)}; this one is at ${serverSchema}): upgrade this server first.`,
    );
  }
  const tables = m.tables;
  if (
    typeof m.workspace !== 'string' ||
    !Array.isArray(tables) ||
    !tables.every(
      (t: { name?: unknown; columns?: unknown; rows?: unknown }) =>
        typeof t?.name === 'string' &&
        Array.isArray(t.columns) &&
        t.columns.every((c) => typeof c === 'string') &&
        Number.isInteger(t.rows),
    )
  ) {
    throw refuse('manifest.json lacks the workspace, or its tables with their columns and row counts.');
  }
  return m as unknown as Manifest;
}

/** The longest line read (a row far larger than any the server writes is a damaged archive). */
const MAX_LINE = 64 * 1024 * 1024;
const NEWLINE = 0x0a;

const newlinesIn = (chunk: Buffer, end: number) => {
  let n = 0;
  for (let at = chunk.indexOf(NEWLINE); at >= 0 && at < end; at = chunk.indexOf(NEWLINE, at + 1)) n++;
  return n;
};

/**
 * A part's bytes as they come, each seen by `onBytes`, its lines counted into `lines` (a last line
 * without its newline counts too). Bytes stay bytes: a part's rows never become strings here,
 * which would grow the heap by garbage (their JSON is parsed by the database).
 */
async function* counted(
  part: string,
  entry: AsyncIterable<unknown>,
  onBytes: (chunk: Buffer) => void,
  lines: { count: number },
): AsyncGenerator<Buffer> {
  let open = 0; // bytes of the line not ended yet
  for await (const item of entry) {
    const chunk = item as Buffer;
    onBytes(chunk);
    // The two bytes COPY reads as CSV's quote and delimiter (lines.ts): raw, never JSON text.
    const odd = Math.min(...[chunk.indexOf(QUOTE), chunk.indexOf(DELIMITER)].filter((at) => at >= 0));
    if (odd !== Infinity) throw refuse(`${part} line ${lines.count + newlinesIn(chunk, odd) + 1} is not JSON text in UTF-8.`);
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE); at >= 0; at = chunk.indexOf(NEWLINE, from)) {
      lines.count++;
      open = 0;
      from = at + 1;
    }
    open += chunk.length - from;
    if (open > MAX_LINE) throw refuse(`${part} line ${lines.count + 1} is longer than ${MAX_LINE / 1048576} MiB.`);
    yield chunk;
  }
  if (open) lines.count++;
}

/** Why the lines (numbered from 1) are not one JSON object each (the first that is not), or undefined. */
function badLine(part: string, lines: Iterable<string | null>): string | undefined {
  let n = 0;
  for (const line of lines) {
    n++;
    let row: unknown;
    try {
      row = JSON.parse(line ?? '');
    } catch {
      return `${part} line ${n} is not JSON.`;
    }
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return `${part} line ${n} is not a JSON object.`;
  }
  return undefined;
}

/** The part's lines with their sealed secrets opened (`open` answers undefined for a value it cannot open): a small table's. */
async function* openedLines(
  part: string,
  source: AsyncIterable<Buffer>,
  sealed: string[],
  open: (value: unknown) => string | undefined,
): AsyncGenerator<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk);
  const lines = Buffer.concat(chunks).toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const bad = badLine(part, lines);
  if (bad) throw refuse(bad);
  for (const [i, line] of lines.entries()) {
    const row = JSON.parse(line) as Record<string, unknown>;
    for (const c of sealed) {
      if (row[c] === null || row[c] === undefined) continue;
      const value = open(row[c]);
      if (value === undefined) throw refuse(`${part} line ${i + 1}: its ${c} is not a secret sealed with the archive's passphrase.`);
      row[c] = value;
    }
    yield Buffer.from(`${JSON.stringify(row)}\n`);
  }
}

/** The lines of one part, one text each (lines.ts). */
const COPY_LINES = `COPY archive_lines (line) FROM STDIN WITH ${LINES}`;

/**
 * Inserts one part's rows (JSON text, one object per line) into `table`: its bytes are copied
 * into the transaction's `archive_lines` as they come, then inserted in one statement, the
 * database parsing each line. Only a refused part is read back, to name its line.
 */
async function insertPart(
  tx: SqlRunner,
  part: string,
  table: string,
  columns: string[],
  secrets: string[],
  source: AsyncIterable<Buffer>,
  lines: { count: number },
  ws: { id: number; name: string },
): Promise<number> {
  // The workspace's own id and name are this server's; secrets not in the archive are new ones.
  const value = (c: string) =>
    (c === 'workspace_id' && table !== 'workspaces') || (c === 'id' && table === 'workspaces')
      ? sql`${ws.id}::int`
      : table === 'workspaces' && c === 'name'
        ? sql`${ws.name}::text`
        : table === 'workspaces' && c === 'deleting'
          ? sql`false`
          : raw(`r.${quoteIdent(c)}`);
  const targets = [...columns, ...secrets];
  const values = [...columns.map(value), ...secrets.map(() => sql`replace(gen_random_uuid()::text, '-', '')`)];
  const list = values.reduce((acc, v, i) => (i === 0 ? v : sql`${acc}, ${v}`));
  await tx.query('TRUNCATE archive_lines RESTART IDENTITY');
  let copied: number;
  try {
    copied = await tx.copyIn(COPY_LINES, source);
  } catch (err) {
    // Text COPY cannot read as lines (bytes that are not UTF-8, a raw control character): its context names the line.
    if (!/^22/.test(sqlState(err) ?? '')) throw err;
    const where = (err as { where?: unknown }).where;
    const line = typeof where === 'string' ? /\bline (\d+)/.exec(where)?.[1] : undefined;
    throw refuse(`${part}${line ? ` line ${line}` : ''} is not JSON text in UTF-8.`);
  }
  await tx.query('SAVEPOINT archive_part');
  let inserted: number;
  try {
    [{ n: inserted }] = await rows<{ n: number }>(
      tx,
      sql`WITH i AS (INSERT INTO ${raw(quoteIdent(table))} (${raw(targets.map(quoteIdent).join(', '))})
                      SELECT ${list} FROM archive_lines l, LATERAL (SELECT l.line::jsonb AS j) x, jsonb_populate_record(NULL::${raw(quoteIdent(table))}, x.j) r
                      WHERE jsonb_typeof(x.j) = 'object' RETURNING 1)
          SELECT count(*)::int AS n FROM i`,
    );
  } catch (err) {
    if (sqlState(err) === '23505') {
      throw new DomainError('conflict', undefined, {
        message: `${part}: its rows hold IDs (or unique values) that rows of this server hold already. An import keeps every ID: import into a server that does not hold them.`,
      });
    }
    if (!/^2[23]/.test(sqlState(err) ?? '')) throw err;
    await tx.query('ROLLBACK TO SAVEPOINT archive_part');
    throw refuse((await stagedBadLine(tx, part)) ?? `${part}: its rows do not fit the table ${table} (${(err as Error).message}).`);
  }
  await tx.query('RELEASE SAVEPOINT archive_part');
  // A line not an object is skipped above; a line holding two objects ("{…},{…}") is not JSON.
  if (inserted !== lines.count || copied !== lines.count)
    throw refuse((await stagedBadLine(tx, part)) ?? `${part}: its ${lines.count} lines are not one JSON object each.`);
  return inserted;
}

/** The first of the staged lines that is not a JSON object, named (read back only for a refused part). */
async function stagedBadLine(tx: SqlRunner, part: string): Promise<string | undefined> {
  const staged = await rows<{ line: string | null }>(tx, sql`SELECT line FROM archive_lines ORDER BY n`);
  return badLine(
    part,
    staged.map((s) => s.line),
  );
}

/** Streams a file entry into storage (when not stored already), checking its content against its name. */
async function storeFile(core: CoreContext, entry: AsyncIterable<unknown>, hash: string, size: number, written: string[]): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(hash)) throw refuse(`files/${hash} is not named by a SHA-256.`);
  const temp = path.join(os.tmpdir(), `wsapi-import-${randomUUID()}`);
  const hasher = createHash('sha256');
  try {
    const out = createWriteStream(temp);
    try {
      for await (const chunk of entry) {
        hasher.update(chunk as Buffer);
        if (!out.write(chunk)) await once(out, 'drain');
      }
    } finally {
      out.end();
      await once(out, 'close');
    }
    if (hasher.digest('hex') !== hash) throw refuse(`files/${hash} is damaged: its content's SHA-256 differs from its name.`);
    if (await core.storage.exists(hash)) return;
    await core.storage.putFile(hash, temp, size);
    written.push(hash);
  } finally {
    await rm(temp, { force: true });
  }
}

/** Imports the archive read from `source` as a new workspace (named `name`, or as in the archive). */
export async function importWorkspace(core: CoreContext, source: Readable, name?: string, passphrase?: string): Promise<ImportSummary> {
  const written: string[] = [];
  try {
    return await core.db.transaction((tx) => importInTransaction(core, tx, source, name, passphrase, written));
  } catch (err) {
    // Stored contents this import added, unless a file of another workspace uses them meanwhile.
    for (const hash of written) {
      const [used] = await rows(core.db, sql`SELECT 1 FROM files WHERE content_hash = ${hash} LIMIT 1`);
      if (!used) await core.storage.delete(hash).catch(() => undefined);
    }
    source.destroy();
    if (err instanceof DomainError) throw err;
    // A damaged gzip or tar stream (zlib's errors come from Node's own realm: not `instanceof Error` everywhere).
    const message = typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : '';
    if (sqlState(err) === undefined && /gzip|header|incorrect|unexpected end|invalid tar|zlib/i.test(message))
      throw refuse(`The archive is damaged: ${message}.`);
    throw err;
  }
}

async function importInTransaction(
  core: CoreContext,
  tx: SqlRunner,
  source: Readable,
  name: string | undefined,
  passphrase: string | undefined,
  written: string[],
): Promise<ImportSummary> {
  // The rows go in as exported; typed storage is filled at the end (the archive_import_mode migration).
  // An import's statements (a type's typed storage and sort indexes, built at once) may take
  // longer than the statement timeout meant for requests.
  await rows(tx, sql`SELECT set_config('wsapi.importing', 'on', true), set_config('statement_timeout', '0', true)`);
  // Each part's lines, as copied (insertPart).
  await tx.query('CREATE TEMPORARY TABLE archive_lines (n int GENERATED ALWAYS AS IDENTITY, line text) ON COMMIT DROP');
  const started = Date.now();
  const schema = await serverSchema(tx);
  const columns = await archiveColumns(tx, true);
  let open: ((sealed: unknown) => string | undefined) | undefined;
  const extract = tar.extract();
  source.on('error', (err) => extract.destroy(err));
  const stream = source.pipe(createGunzip());
  stream.on('error', (err) => extract.destroy(err));
  stream.pipe(extract);
  // The compressed stream must end whole, even after the archive's last entry.
  const whole = finished(stream);
  whole.catch(() => undefined);

  let manifest: Manifest | undefined;
  let ws: { id: number; name: string } | undefined;
  const sums = new Map<string, string>();
  let checked = false;
  const counts: Record<string, number> = {};
  const files = { count: 0, bytes: 0 };
  let typedStorageBuilt = false;
  const expected = new Map<string, number>(); // a table's next part number

  for await (const entry of extract) {
    const entryName = entry.header.name;
    if (checked) throw refuse(`${entryName} follows checksums.sha256, which ends an archive.`);
    if (!manifest) {
      if (entryName !== 'manifest.json')
        throw refuse(`The archive starts with ${entryName}, not manifest.json: it is not a ${ARCHIVE_FORMAT} archive.`);
      const body = await bytesOf(entry);
      sums.set(entryName, createHash('sha256').update(body).digest('hex'));
      manifest = checkManifest(body, schema);
      const wanted = name ?? manifest.workspace;
      if (!WORKSPACE_NAME.test(wanted)) throw invalidAt('name', 'The :attribute field format is invalid.');
      const [taken] = await rows(tx, sql`SELECT 1 FROM workspaces WHERE name = ${wanted}`);
      if (taken) throw invalidAt('name', 'The :attribute has already been taken.', undefined, 'taken');
      for (const t of manifest.tables) {
        const known = columns.get(t.name);
        if (!known) throw refuse(`manifest.json names a table this server does not have: ${t.name}.`);
        const unknown = t.columns.filter((c) => !known.columns.includes(c));
        if (unknown.length) throw refuse(`manifest.json gives ${t.name} columns this server does not have: ${unknown.join(', ')}.`);
        const secret = t.columns.find((c) => ARCHIVE_TABLES.find((x) => x.name === t.name)?.secrets?.includes(c));
        if (secret && manifest.secrets === undefined)
          throw refuse(`manifest.json lists ${t.name}.${secret}, a secret, but no passphrase's sealing (secrets).`);
      }
      if (manifest.secrets !== undefined) open = await opener(manifest.secrets, passphrase, refuse);
      const [{ id }] = await rows<{ id: number }>(tx, sql`SELECT nextval(pg_get_serial_sequence('workspaces', 'id'))::int AS id`);
      ws = { id, name: wanted };
      continue;
    }
    if (entryName === 'checksums.sha256') {
      const listed = new Map(
        (await bytesOf(entry))
          .toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => [line.slice(66), line.slice(0, 64)] as const),
      );
      for (const [part, sum] of sums) {
        if (!listed.has(part)) throw refuse(`checksums.sha256 does not list ${part}.`);
        if (listed.get(part) !== sum) throw refuse(`${part} is damaged: its SHA-256 is not the one checksums.sha256 gives.`);
      }
      for (const part of listed.keys())
        if (!sums.has(part)) throw refuse(`${part}, listed in checksums.sha256, is missing from the archive.`);
      checked = true;
      continue;
    }
    const file = /^files\/(.+)$/.exec(entryName);
    if (file) {
      await storeFile(core, entry, file[1], entry.header.size ?? 0, written);
      // storeFile checked the content's SHA-256 against the name.
      sums.set(entryName, file[1]);
      files.count++;
      files.bytes += entry.header.size ?? 0;
      continue;
    }
    const part = /^rows\/(\d{2})-([a-z_]+)-(\d{4})\.ndjson$/.exec(entryName);
    if (!part) throw refuse(`${entryName} is not a part of a ${ARCHIVE_FORMAT} archive.`);
    const index = Number(part[1]) - 1;
    const table = part[2];
    const t = ARCHIVE_TABLES[index];
    if (t?.name !== table || entryName !== partName(index, table, expected.get(table) ?? 1))
      throw refuse(`${entryName} is out of place: parts follow the archive's table order.`);
    expected.set(table, (expected.get(table) ?? 1) + 1);
    // Typed storage is built for the content types before their entries go in, as at creation.
    if (!typedStorageBuilt && ARCHIVE_TABLES.findIndex((x) => x.name === 'entries') <= index) {
      await rows(tx, sql`SET CONSTRAINTS typed_storage_created IMMEDIATE`);
      typedStorageBuilt = true;
    }
    const listed = manifest.tables.find((x) => x.name === table);
    if (!listed) throw refuse(`${entryName} holds rows of ${table}, which manifest.json does not list.`);
    const secrets = (t.secrets ?? []).filter((c) => !listed.columns.includes(c));
    const sealed = (t.secrets ?? []).filter((c) => listed.columns.includes(c));
    const hasher = createHash('sha256');
    const lines = { count: 0 };
    const bytes = counted(entryName, entry, (chunk) => hasher.update(chunk), lines);
    const source = sealed.length ? openedLines(entryName, bytes, sealed, open!) : bytes;
    counts[table] = (counts[table] ?? 0) + (await insertPart(tx, entryName, table, listed.columns, secrets, source, lines, ws!));
    sums.set(entryName, hasher.digest('hex'));
  }
  await whole;
  if (!manifest || !ws) throw refuse('The archive is empty.');
  if (!checked) throw refuse('The archive ends before checksums.sha256: it is truncated.');
  for (const t of manifest.tables) {
    if ((counts[t.name] ?? 0) !== t.rows)
      throw refuse(`The archive holds ${counts[t.name] ?? 0} rows of ${t.name}; manifest.json says ${t.rows}.`);
  }
  if (!counts.workspaces) throw refuse('The archive holds no workspace row.');
  const timing = { rows_ms: Date.now() - started, references_ms: 0, typed_storage_ms: 0 };
  let mark = Date.now();
  const stray = (await foreignReference(tx, ws.id)) ?? (await strayRows(tx, ws.id, counts));
  if (stray) throw refuse(stray);
  timing.references_ms = Date.now() - mark;
  mark = Date.now();
  // Typed storage and the notification, which the triggers leave to the end of an import.
  const types = await rows<{ id: number }>(
    tx,
    sql`SELECT c.id FROM content_types c JOIN buckets b ON b.id = c.bucket_id WHERE b.workspace_id = ${ws.id}::int ORDER BY c.id`,
  );
  for (const { id } of types) await rows(tx, sql`SELECT typed_storage_refill(${id}::int)`);
  timing.typed_storage_ms = Date.now() - mark;
  const mb = (n: number) => Math.round(n / 1e6);
  const memory = process.memoryUsage();
  core.log.info('workspace import', {
    workspace: ws.name,
    ...timing,
    rss_mb: mb(memory.rss),
    heap_used_mb: mb(memory.heapUsed),
    heap_total_mb: mb(memory.heapTotal),
    external_mb: mb(memory.external),
  });
  await rows(tx, sql`SELECT pg_notify(${CONTENT_CHANGED_CHANNEL}, ${String(ws.id)})`);
  // New rows of this server must not take the IDs the archive brought.
  for (const t of ARCHIVE_TABLES) {
    if (t.name === 'workspaces' || t.key !== 'id') continue;
    await rows(
      tx,
      sql`SELECT setval(pg_get_serial_sequence(${t.name}, 'id'), GREATEST((SELECT coalesce(max(id), 0) FROM ${raw(quoteIdent(t.name))}), nextval(pg_get_serial_sequence(${t.name}, 'id'))))`,
    );
  }
  return { workspace: ws.name, rows: counts, files };
}
