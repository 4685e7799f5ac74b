// File rows as other features use them: the event data of a file, files as holes in text built
// by PostgreSQL (rendered entries, query projections) and filling those holes, and deleting files
// of a workspace inside another feature's transaction (an entry's cascade), with what every file
// deletion also does (attachment fields let go of it, `file.deleted` is published).
import type { SqlRunner } from '../db/database';
import type { File } from '../generated/prisma/client';
import { publishEvent } from '../events/outbox';
import { charEscape, raw, rows, sql, type Sql } from './sql';
import type { CoreContext } from './context';
import type { Config } from '../config';
import { HOLE_CLOSE, HOLE_OPEN, holesIn, type Fresh, type HoledJson } from '../lib/fresh-json';
import { freshFile } from './file-urls';

/**
 * Files of the workspace's Files API (never user-owned ones) by id, as Prisma's `File`. Raw SQL and
 * prepared: file details and downloads run it on every request, where the ORM's per-call cost
 * dominated the profile; rendered entries read their attachments with it.
 */
export async function workspaceFiles(db: SqlRunner, workspaceId: number, ids: number[]): Promise<File[]> {
  const found = await rows<FileRow>(
    db,
    sql`SELECT ${FILE_COLUMNS} FROM files WHERE id = ANY(${ids}::int[]) AND workspace_id = ${workspaceId} AND user_id IS NULL`,
    true,
  );
  return found.map(asFile);
}

/** A `files` row's columns named as Prisma's `File` (for a SELECT or a RETURNING). */
/** The job that adds a download's bytes to its workspace's usage (files/service.ts sends it). */
export const USAGE_JOB = 'usage.record';

export const FILE_COLUMNS = raw(`id, workspace_id AS "workspaceId", user_id AS "userId", uuid, token, name, mime_type AS "mimeType", size,
  content_hash AS "contentHash", tags, alt_text AS "altText", created_at AS "createdAt", updated_at AS "updatedAt"`);

export type FileRow = Omit<File, 'size'> & { size: number | string };

/** A row read with FILE_COLUMNS as Prisma's `File` (its size a bigint). */
export const asFile = (f: FileRow): File => ({ ...f, size: BigInt(f.size) });

/** A stored attachment item `v` (jsonb) as a file id (NULL: it cannot name one). */
const fileIdOf = (v: string) =>
  `CASE WHEN jsonb_typeof(${v}) = 'number' AND (${v})::numeric BETWEEN 1 AND 2147483647 AND (${v})::numeric = trunc((${v})::numeric) THEN (${v})::numeric::int END`;

/** The workspace's files an attachment item `v` (jsonb) may name, joined as `fi` (for text built in SQL). */
export const fileJoin = (workspaceId: number, v: string) =>
  `files fi ON fi.id = ${fileIdOf(v)} AND fi.workspace_id = ${Math.trunc(workspaceId)} AND fi.user_id IS NULL`;

/** A hole's mark as a SQL literal, and as a regular expression's escape (inside a standard SQL string). */
const markLiteral = (mark: string) => `E'${charEscape(mark.charCodeAt(0))}'`;
const markPattern = (mark: string) => charEscape(mark.charCodeAt(0));

/**
 * The file `fi` as a hole in text built by PostgreSQL: `\x01<its row as JSON>\x02` (no JSON text
 * of a value can hold a control character: PostgreSQL escapes them), for `fileHolesIn` to fill
 * with its object, whose temporary URLs carry the time of the answer (lib/fresh-json.ts). The row
 * is shorter than the object it becomes (which shows its values and adds URLs), so text with
 * holes never outgrows its answer. `pick`: a number the hole carries (which properties it shows).
 */
export const fileHole = (pick?: number) =>
  `${markLiteral(HOLE_OPEN)} || json_build_object(${pick === undefined ? '' : `'p', ${Math.trunc(pick)}, `}'id', fi.id, 'workspaceId', fi.workspace_id, 'userId', fi.user_id, 'uuid', fi.uuid,
    'token', fi.token, 'name', fi.name, 'mimeType', fi.mime_type, 'size', fi.size, 'contentHash', fi.content_hash, 'tags', fi.tags, 'altText', fi.alt_text,
    'createdAt', fi.created_at, 'updatedAt', fi.updated_at)::text || ${markLiteral(HOLE_CLOSE)}`;

/**
 * The IDs of the files whose holes the text `text` (SQL) holds, as a set-returning FROM item
 * `alias(id)`: each hole's row read as JSON, whatever the spacing PostgreSQL gave it.
 */
export const fileHoleIds = (text: string, alias: string) =>
  `LATERAL (SELECT (m[1]::json ->> 'id') AS id FROM regexp_matches(${text}, '${markPattern(HOLE_OPEN)}([^${markPattern(HOLE_CLOSE)}]*)${markPattern(HOLE_CLOSE)}', 'g') m) ${alias}`;

type HoleRow = Omit<FileRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string; p?: number };

/**
 * Texts with `fileHole`s, joined by commas, as JSON text with `Fresh` file objects (one per
 * distinct hole, however often it is shown), and how many distinct files they show. `picks`: by a hole's pick, the
 * properties it shows (undefined: the file's id); without them, the whole object.
 */
export function fileHolesIn(
  texts: readonly string[],
  config: Config,
  workspace: string,
  now: Date,
  picks?: (string[] | undefined)[],
): { json: HoledJson; files: number } {
  const filled = new Map<string, Fresh | string>();
  const ids = new Set<number>();
  const json = holesIn(texts, ',', (hole) => {
    let value = filled.get(hole);
    if (value === undefined) {
      const { p, ...row } = JSON.parse(hole) as HoleRow;
      ids.add(row.id);
      const file: File = { ...row, size: BigInt(row.size), createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
      const pick = picks ? picks[p!] : undefined;
      value = !picks || pick ? freshFile(config, workspace, file, now, pick) : String(row.id);
      filled.set(hole, value);
    }
    return value;
  });
  return { json, files: ids.size };
}

export const fileEventData = (f: { id: number; name: string; mimeType: string; size: bigint | number }) => ({
  file: { id: f.id, name: f.name, mime_type: f.mimeType, size: Number(f.size) },
});

/** What deleting files does besides removing their rows, in the same transaction. */
export async function afterFilesDeleted(
  tx: SqlRunner,
  now: Date,
  workspaceId: number,
  files: Parameters<typeof fileEventData>[0][],
): Promise<void> {
  await detachFiles(
    tx,
    workspaceId,
    files.map((f) => f.id),
  );
  for (const file of files) await publishEvent(tx, now, { workspaceId, event: 'file.deleted', data: fileEventData(file) });
}

/** Deletes files of the workspace (API files, not user-owned ones) by id. */
export async function deleteWorkspaceFiles(tx: SqlRunner, now: Date, workspaceId: number, ids: number[]): Promise<void> {
  if (!ids.length) return;
  const gone = await rows<{ id: number; name: string; mimeType: string; size: number }>(
    tx,
    sql`DELETE FROM files WHERE id = ANY(${ids}::int[]) AND workspace_id = ${workspaceId} AND user_id IS NULL RETURNING id, name, mime_type AS "mimeType", size`,
  );
  await afterFilesDeleted(tx, now, workspaceId, gone);
}

/**
 * Removes deleted files' IDs from the attachment fields of every typed entry of the workspace, in
 * every locale (a single value becomes null, a multiple one loses only those IDs), in one
 * statement of the transaction that deletes the files.
 */
export async function detachFiles(tx: SqlRunner, workspaceId: number, fileIds: number[]): Promise<void> {
  if (!fileIds.length) return;
  const gone = sql`${JSON.stringify(fileIds)}::jsonb`;
  const isGone = (v: string) => sql`jsonb_build_array(${raw(v)}) <@ ${gone}`;
  await rows(
    tx,
    sql`UPDATE entry_contents c
           SET data = (SELECT jsonb_object_agg(k, CASE
                          WHEN f.type = 'attachment' AND f.multiple AND jsonb_typeof(v) = 'array'
                            THEN coalesce((SELECT jsonb_agg(x) FROM jsonb_array_elements(v) x WHERE NOT ${isGone('x')}), '[]'::jsonb)
                          WHEN f.type = 'attachment' AND NOT f.multiple AND ${isGone('v')} THEN 'null'::jsonb
                          ELSE v END)
                         FROM jsonb_each(c.data) AS d(k, v)
                         LEFT JOIN field_definitions f ON f.content_type_id = e.content_type_id AND f.key = d.k)
          FROM entries e
         WHERE e.id = c.entry_pk AND e.workspace_id = ${workspaceId} AND e.kind = 'typed'
           AND EXISTS (SELECT 1 FROM field_definitions f, jsonb_each(c.data) d(k, v)
                        WHERE f.content_type_id = e.content_type_id AND f.type = 'attachment' AND f.key = d.k
                          AND (${isGone('v')} OR (jsonb_typeof(v) = 'array' AND EXISTS (SELECT 1 FROM jsonb_array_elements(v) x WHERE ${isGone('x')}))))`,
  );
}

/**
 * Erases the files `where` names (a condition on `files`) for good, with their stored contents
 * that no other file shares (an ordinary delete leaves those to the daily `files:prune-storage`):
 * rows in batches of their own statements, each batch's contents right after it. Publishes
 * nothing: for what goes with its owner (a workspace, a creator). Safe to run again.
 */
export async function eraseFiles(core: CoreContext, where: Sql): Promise<{ files: number; storedContents: number }> {
  let files = 0;
  let storedContents = 0;
  for (;;) {
    const gone = await rows<{ content_hash: string }>(
      core.db,
      sql`DELETE FROM files WHERE id IN (SELECT id FROM files WHERE ${where} LIMIT 1000) RETURNING content_hash`,
    );
    if (!gone.length) return { files, storedContents };
    files += gone.length;
    storedContents += await deleteUnsharedContents(
      core,
      gone.map((g) => g.content_hash),
    );
  }
}

/** Deletes the stored contents of `hashes` that no file refers to (any more); returns how many. */
export async function deleteUnsharedContents(core: CoreContext, hashes: string[]): Promise<number> {
  const unique = [...new Set(hashes)];
  const shared = new Set(
    (
      await rows<{ content_hash: string }>(
        core.db,
        sql`SELECT DISTINCT content_hash FROM files WHERE content_hash = ANY(${unique}::text[])`,
      )
    ).map((r) => r.content_hash),
  );
  const gone = unique.filter((h) => !shared.has(h));
  for (const hash of gone) await core.storage.delete(hash);
  return gone.length;
}
