// The Files API's operations on file records: store an upload (its bytes into storage, its row
// with `file.created`), read a file's details with fresh signed URLs, delete one. Reading the
// request body into a staging file and detecting its type are the HTTP edge's (files/).
import { randomBytes, randomUUID } from 'node:crypto';
import type { CoreContext } from '../context';
import type { File } from '../../generated/prisma/client';
import { publishEvent } from '../../events/outbox';
import { DomainError } from '../errors';
import { afterFilesDeleted, asFile, FILE_COLUMNS, fileEventData, workspaceFiles, type FileRow } from '../file-records';
import { presentFile } from '../file-urls';
import { rows, sql } from '../sql';
import { transaction } from '../transaction';
import type { OperationContext } from './context';

/** An upload read and checked at the edge: its bytes in a staging file, its detected type. */
export interface CheckedUpload {
  tempPath: string;
  size: number;
  sha256: string;
  name: string;
  mimeType: string;
}

/** Moves the bytes into storage and records the file (with `file.created` unless it is a user's). */
export async function storeFile(
  core: CoreContext,
  workspaceId: number,
  upload: CheckedUpload,
  userId: number | null = null,
): Promise<File> {
  await core.storage.putFile(upload.sha256, upload.tempPath, upload.size);
  const now = core.clock.now();
  return transaction(core, async (tx) => {
    const [row] = await rows<FileRow>(
      tx,
      sql`INSERT INTO files (workspace_id, user_id, uuid, token, name, mime_type, size, content_hash, created_at, updated_at)
          VALUES (${workspaceId}::int, ${userId}::int, ${randomUUID()}::uuid, ${randomBytes(24).toString('base64url')}, ${upload.name}, ${upload.mimeType}, ${upload.size}::bigint, ${upload.sha256}, ${now}::timestamptz, ${now}::timestamptz)
          RETURNING ${FILE_COLUMNS}`,
    );
    const file = asFile(row);
    if (userId === null) await publishEvent(tx, now, { workspaceId, event: 'file.created', data: fileEventData(file) });
    return file;
  });
}

/** A file of the workspace's Files API (never a user-owned one), or `not_found`. */
export async function requireWorkspaceFile(core: CoreContext, workspaceId: number, id: number): Promise<File> {
  const [file] = await workspaceFiles(core.db, workspaceId, [id]);
  if (!file) throw new DomainError('not_found');
  return file;
}

export async function uploadFile(cx: OperationContext, upload: CheckedUpload) {
  const file = await storeFile(cx.core, cx.workspace.id, upload);
  return { file, body: presentFile(cx.core.config, cx.workspace.name, file, cx.core.clock.now()) };
}

/** A file's details, its signed URLs valid `expiresIn` seconds. */
export async function getFile(cx: OperationContext, id: number, expiresIn?: number) {
  const file = await requireWorkspaceFile(cx.core, cx.workspace.id, id);
  return presentFile(cx.core.config, cx.workspace.name, file, cx.core.clock.now(), expiresIn);
}

/**
 * Deletes the record and publishes `file.deleted`; attachment fields let go of it in the same
 * unit of work. Stored bytes stay until `files:prune-storage` finds them unused.
 */
export async function deleteFile(cx: OperationContext, id: number): Promise<void> {
  const file = await requireWorkspaceFile(cx.core, cx.workspace.id, id);
  await transaction(cx.core, async (tx) => {
    const res = await tx.query('DELETE FROM files WHERE id = $1', [file.id]);
    if (res.rowCount === 0) throw new DomainError('not_found');
    await afterFilesDeleted(tx, cx.core.clock.now(), file.workspaceId, [file]);
  });
}
