// The rules of files: storing an upload, finding a workspace's file, deleting one, usage.
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { AppContext } from '../context';
import type { File, Workspace } from '../generated/prisma/client';
import { forbidden, invalid, notFound, MESSAGES } from '../http/errors';
import { publishEvent } from '../events/outbox';
import { transaction } from '../core/transaction';
import { detect } from './detect';
import type { StagedFile } from './staging';
import { afterFilesDeleted, asFile, FILE_COLUMNS, fileEventData, workspaceFiles, type FileRow } from '../core/file-records';
import { rows, sql } from '../core/sql';

export const USAGE_JOB = 'usage.record';



/** Validates a staged upload, moves its bytes into storage and records the file (with `file.created`). */
export async function storeUpload(app: AppContext, workspaceId: number, staged: StagedFile, userId: number | null = null): Promise<File> {
  let mimeType: string;
  try {
    const detection = await detect(staged.tempPath, staged.size, staged.name, staged.declaredType);
    if (detection.problem) throw invalid('file', detection.problem);
    mimeType = detection.mimeType;
    await app.storage.putFile(staged.sha256, staged.tempPath, staged.size);
  } finally {
    await rm(staged.tempPath, { force: true });
  }
  const now = app.clock.now();
  return transaction(app, async (tx) => {
    const [row] = await rows<FileRow>(
      tx,
      sql`INSERT INTO files (workspace_id, user_id, uuid, token, name, mime_type, size, content_hash, created_at, updated_at)
          VALUES (${workspaceId}::int, ${userId}::int, ${randomUUID()}::uuid, ${randomBytes(24).toString('base64url')}, ${staged.name}, ${mimeType}, ${staged.size}::bigint, ${staged.sha256}, ${now}::timestamptz, ${now}::timestamptz)
          RETURNING ${FILE_COLUMNS}`,
    );
    const file = asFile(row);
    if (userId === null) await publishEvent(tx, now, { workspaceId, event: 'file.created', data: fileEventData(file) });
    return file;
  });
}

/**
 * A file of the workspace's Files API (never a user-owned one), or 404. Raw SQL: this lookup is on
 * the hot path of file details and downloads, where the ORM's per-call cost dominated the profile.
 */
export async function requireWorkspaceFile(app: AppContext, workspaceId: number, id: number): Promise<File> {
  const [file] = await workspaceFiles(app.db, workspaceId, [id]);
  if (!file) throw notFound();
  return file;
}

/** The workspace of a route without API key: 404 when missing, 403 when suspended. */
export async function requireOpenWorkspace(app: AppContext, name: string): Promise<Workspace> {
  const workspace = await app.db.prisma.workspace.findUnique({ where: { name } });
  if (!workspace) throw notFound();
  if (workspace.suspended) throw forbidden(MESSAGES.suspended);
  return workspace;
}

/**
 * Deletes the record and publishes `file.deleted`, whose handlers remove the file from attachment
 * fields in the same transaction. Stored bytes stay until `files:prune-storage` finds them unused.
 */
export async function deleteFile(app: AppContext, file: File): Promise<void> {
  const now = app.clock.now();
  await transaction(app, async (tx) => {
    const res = await tx.query('DELETE FROM files WHERE id = $1', [file.id]);
    if (res.rowCount === 0) throw notFound();
    // Attachment fields let go of it in the same transaction; `file.deleted` is published.
    await afterFilesDeleted(tx, now, file.workspaceId, [file]);
  });
}

/** Queues the usage of one upload request: bandwidth now, storage recounted. */
export async function recordUploadUsage(app: AppContext, workspaceId: number, bandwidthBytes: number): Promise<void> {
  await app.jobs.send(USAGE_JOB, { workspaceId, bandwidthBytes });
}

/** The usage job: adds bandwidth and recounts the workspace's stored bytes. */
export async function applyUsage(app: AppContext, job: { workspaceId: number; bandwidthBytes: number }): Promise<void> {
  await app.db.query(
    `INSERT INTO workspace_usage (workspace_id, bandwidth_bytes, storage_bytes)
     VALUES ($1, $2, (SELECT coalesce(sum(size), 0) FROM files WHERE workspace_id = $1))
     ON CONFLICT (workspace_id) DO UPDATE
       SET bandwidth_bytes = workspace_usage.bandwidth_bytes + EXCLUDED.bandwidth_bytes,
           storage_bytes = EXCLUDED.storage_bytes`,
    [job.workspaceId, job.bandwidthBytes],
  );
}

/** The `files:prune-storage` task: removes stored content no file refers to (older than STORAGE_PRUNE_MIN_AGE_SECONDS). */
export async function pruneStorage(app: AppContext): Promise<number> {
  const cutoff = Date.now() - app.config.storagePruneMinAgeSeconds * 1000;
  let removed = 0;
  for await (const object of app.storage.list()) {
    if (object.modifiedAt.getTime() > cutoff) continue;
    const used = await app.db.prisma.file.count({ where: { contentHash: object.hash } });
    if (used === 0) {
      await app.storage.delete(object.hash);
      removed++;
    }
  }
  return removed;
}

/**
 * Loads the ES modules of the upload path (type detection, the streaming JSON parser) ahead of
 * the first upload. About 90 ms once; loaded mid-request, concurrently with other lazy imports,
 * they failed now and then under jest's VM modules.
 */
export const loadUploadModules = () => Promise.all([import('file-type'), import('stream-json/parser.js')]).then(() => undefined);
