// What the Files routes do around the file operations (core/operations/files.ts): checking an
// upload's type, the workspace of a route without API key, usage, pruning unused stored bytes.
import { USAGE_JOB } from '../core/file-records';
import { rm } from 'node:fs/promises';
import type { AppContext } from '../context';
import type { Workspace } from '../generated/prisma/client';
import { forbidden, invalid, MESSAGES } from '../http/errors';
import type { CheckedUpload } from '../core/operations/files';
import { detect } from './detect';
import { requireWorkspace } from '../http/lookup';
import type { StagedFile } from './staging';

/**
 * Runs `store` with the staged upload and its detected type (`422` on `file` when its content
 * is not what its name says); the staging file is removed afterwards, stored or not.
 */
export async function withCheckedUpload<T>(staged: StagedFile, store: (upload: CheckedUpload) => Promise<T>): Promise<T> {
  try {
    const detection = await detect(staged.tempPath, staged.size, staged.name, staged.declaredType);
    if (detection.problem) throw invalid('file', detection.problem);
    return await store({
      tempPath: staged.tempPath,
      size: staged.size,
      sha256: staged.sha256,
      name: staged.name,
      mimeType: detection.mimeType,
    });
  } finally {
    await rm(staged.tempPath, { force: true });
  }
}

/** The workspace of a route without API key: 404 when missing, 403 when suspended. */
export async function requireOpenWorkspace(app: AppContext, name: string): Promise<Workspace> {
  const workspace = await requireWorkspace(app, name);
  if (workspace.suspended) throw forbidden(MESSAGES.suspended);
  return workspace;
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
