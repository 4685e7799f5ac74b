/// <reference types="node" />
// `backup` and `restore`: every workspace of a server as workspace archives (cli/archive.ts) in
// one directory, and all of them created again on another server.
//
//   <dir>/<workspace>.tar.gz   each workspace's archive, as `export` writes it
//   <dir>/backup.json          written last (a directory without it is not a whole backup): the
//                              format, when it was taken, and each archive's name, size and SHA-256
//
// A restore checks every archive against backup.json and that every name is free before it imports
// anything; when an import fails, the workspaces it had restored are deleted again, so a restore
// is all or nothing too.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { exportArchive, importArchive, type ArchiveOptions } from './archive.js';
import { talking } from './connection.js';
import { CliError, tokenRefused } from './fetch-model.js';

export const BACKUP_FORMAT = 'workspace-api-backup';
export const BACKUP_VERSION = 1;

interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  taken_at: string;
  workspaces: { name: string; file: string; bytes: number; sha256: string }[];
}

export type BackupOptions = Omit<ArchiveOptions, 'file' | 'name' | 'workspace'> & {
  /** The backup's directory. */
  dir: string;
  /** restore: only these workspaces (default all). */
  only?: string[];
};

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

interface AdminBody {
  data?: { name: string }[];
  id?: number;
  status?: string;
}

async function admin(o: BackupOptions, method: string, p: string): Promise<{ status: number; body: AdminBody | undefined }> {
  const res = await talking({ ...o, workspace: '' }, () =>
    globalThis.fetch(`${o.url.replace(/\/+$/, '')}${p}`, {
      method,
      headers: { Authorization: `Bearer ${o.token}` },
      signal: AbortSignal.timeout(o.timeoutSeconds * 1000),
    }),
  );
  if (res.status === 403) throw tokenRefused();
  return { status: res.status, body: (await res.json().catch(() => undefined)) as AdminBody | undefined };
}

export async function backup(o: BackupOptions): Promise<string> {
  if (existsSync(path.join(o.dir, 'backup.json'))) throw new CliError(`${o.dir} holds a backup already: give a new directory`);
  const listed = await admin(o, 'GET', '/admin/v1/workspaces');
  if (listed.status !== 200 || !listed.body || !Array.isArray(listed.body.data))
    throw new CliError(`listing the workspaces failed: the server answered ${listed.status}`);
  mkdirSync(o.dir, { recursive: true });
  const manifest: BackupManifest = { format: BACKUP_FORMAT, version: BACKUP_VERSION, taken_at: new Date().toISOString(), workspaces: [] };
  for (const { name } of listed.body.data) {
    const file = `${name}.tar.gz`;
    const full = path.join(o.dir, file);
    o.progress.write(`${name}:\n`);
    o.progress.write(`${await exportArchive({ ...o, workspace: name, file: full })}\n`);
    manifest.workspaces.push({ name, file, bytes: statSync(full).size, sha256: await sha256Of(full) });
  }
  writeFileSync(path.join(o.dir, 'backup.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const bytes = manifest.workspaces.reduce((n, w) => n + w.bytes, 0);
  return `backed up ${manifest.workspaces.length} workspaces to ${o.dir} (${(bytes / 1048576).toFixed(1)} MB)`;
}

function readManifest(dir: string): BackupManifest {
  let m: BackupManifest;
  try {
    m = JSON.parse(readFileSync(path.join(dir, 'backup.json'), 'utf8')) as BackupManifest;
  } catch (err) {
    throw new CliError(
      `${dir} is not a whole backup: its backup.json cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (m?.format !== BACKUP_FORMAT || m.version !== BACKUP_VERSION || !Array.isArray(m.workspaces)) {
    throw new CliError(`${dir}/backup.json is not a ${BACKUP_FORMAT} of version ${BACKUP_VERSION}`);
  }
  return m;
}

export async function restore(o: BackupOptions): Promise<string> {
  const manifest = readManifest(o.dir);
  const unknown = (o.only ?? []).filter((n) => !manifest.workspaces.some((w) => w.name === n));
  if (unknown.length) throw new CliError(`the backup holds no workspace ${unknown.map((n) => `"${n}"`).join(', ')}`);
  const chosen = manifest.workspaces.filter((w) => !o.only?.length || o.only.includes(w.name));
  // Everything is checked before anything is imported.
  for (const w of chosen) {
    const file = path.join(o.dir, path.basename(w.file));
    if (!existsSync(file) || statSync(file).size !== w.bytes || (await sha256Of(file)) !== w.sha256) {
      throw new CliError(`${file} is missing or damaged: its size or SHA-256 is not the one backup.json gives; nothing was restored`);
    }
    const found = await admin(o, 'GET', `/admin/v1/workspaces/${encodeURIComponent(w.name)}`);
    if (found.status !== 404) throw new CliError(`the server has a workspace "${w.name}" already; nothing was restored`);
  }
  const restored: string[] = [];
  for (const w of chosen) {
    try {
      // Named as backup.json names it (the name checked above), whatever the archive's manifest says.
      o.progress.write(`${await importArchive({ ...o, workspace: '', name: w.name, file: path.join(o.dir, path.basename(w.file)) })}\n`);
      restored.push(w.name);
    } catch (err) {
      // The one that failed too, when the server went on and created it (an answer that timed out).
      const undo =
        (await admin(o, 'GET', `/admin/v1/workspaces/${encodeURIComponent(w.name)}`).catch(() => undefined))?.status === 200
          ? [...restored, w.name]
          : restored;
      const left = await deleteAll(o, undo);
      const undone = undo.length
        ? ` (the ${undo.length} restored were deleted again${left.length ? `, but for ${left.map((n) => `"${n}"`).join(', ')}: delete them by hand` : ''})`
        : '';
      throw new CliError(
        `${err instanceof Error ? err.message.replace(/; nothing was imported$/, '') : String(err)}; nothing was restored${undone}`,
      );
    }
  }
  return `restored ${restored.length} workspaces from ${o.dir}`;
}

/** Deletes the workspaces, each deletion followed until it ends; answers those not deleted. */
async function deleteAll(o: BackupOptions, names: string[]): Promise<string[]> {
  const left: string[] = [];
  for (const name of names) {
    const started = await admin(o, 'DELETE', `/admin/v1/workspaces/${encodeURIComponent(name)}`).catch(() => undefined);
    let status = started?.status === 202 ? started.body?.status : 'failed';
    const deadline = Date.now() + o.timeoutSeconds * 1000;
    while (status === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status =
        (await admin(o, 'GET', `/admin/v1/workspace-deletions/${started!.body!.id}`).catch(() => undefined))?.body?.status ?? 'failed';
    }
    if (status !== 'done') left.push(name);
  }
  return left;
}
