// Deleting a workspace with everything it holds. The request hides it from every route and takes
// its API keys and sessions in one transaction, then queues the job that deletes the rest in
// steps of their own transactions (a large workspace never holds one transaction open for long):
// its files' rows and stored contents no other file shares, its entries in batches, the rows of
// every table that names it, its queued jobs, its cached image variants, and last the workspace
// row, which takes its users, buckets (content types, typed tables, contracts) and pipelines with
// it through foreign keys. Every step can run again: a failed or interrupted job is retried and
// goes on where it stopped. Its progress is a row of its own, which outlives the workspace.
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { CoreContext } from './context';
import type { SqlRunner } from '../db/database';
import { EMAIL_JOB } from './email-queue';
import { DomainError } from './errors';
import { sqlState } from '../lib/sql-state';
import { eraseFiles, USAGE_JOB } from './file-records';
import { PIPELINE_JOB } from './pipeline-engine/executions';
import { rows, sql, type Sql } from './sql';
import { transaction } from './transaction';

export const WORKSPACE_DELETION_JOB = 'workspaces.delete';
/** Rows deleted per statement of the large tables. */
const BATCH = 1000;

export interface WorkspaceDeletion {
  id: number;
  workspace_id: number;
  name: string;
  status: 'running' | 'done' | 'failed';
  removed: Record<string, number>;
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

const COLUMNS = sql`id, workspace_id, name, status, removed, error, created_at, finished_at`;
const COLUMNS_OF_D = sql`d.id, d.workspace_id, d.name, d.status, d.removed, d.error, d.created_at, d.finished_at`;
/** A failed step is tried again by the job queue, with backoff (then `failed` until asked again). */
const RETRIES = { retryLimit: 10, retryDelay: 5, retryBackoff: true };

/** The deletion `id`, or undefined. */
export async function workspaceDeletion(core: CoreContext, id: number): Promise<WorkspaceDeletion | undefined> {
  const [found] = await rows<WorkspaceDeletion>(core.db, sql`SELECT ${COLUMNS} FROM workspace_deletions WHERE id = ${id}::int`);
  return found;
}

/** Hides the workspace and locks it out at once (its keys and sessions go), and queues the rest. */
export async function startWorkspaceDeletion(core: CoreContext, name: string): Promise<WorkspaceDeletion> {
  // The job is sent in the transaction: its queue exists first (jobs/queue.ts prepare).
  await core.jobs.prepare(WORKSPACE_DELETION_JOB);
  return transaction(core, async (tx) => {
    const [workspace] = await rows<{ id: number }>(
      tx,
      sql`UPDATE workspaces SET deleting = true WHERE name = ${name} AND NOT deleting RETURNING id`,
    );
    if (!workspace) {
      // A deletion that failed past its retries is started again by asking again.
      const [failed] = await rows<WorkspaceDeletion>(
        tx,
        sql`UPDATE workspace_deletions d SET status = 'running', error = NULL FROM workspaces w
             WHERE w.name = ${name} AND w.deleting AND d.workspace_id = w.id AND d.status = 'failed' RETURNING ${COLUMNS_OF_D}`,
      );
      if (!failed) throw new DomainError('not_found');
      await core.jobs.send(WORKSPACE_DELETION_JOB, { id: failed.id }, { db: tx, ...RETRIES });
      return failed;
    }
    await rows(tx, sql`DELETE FROM api_keys WHERE workspace_id = ${workspace.id}::int`);
    await rows(tx, sql`DELETE FROM auth_tokens WHERE workspace_id = ${workspace.id}::int`);
    const [deletion] = await rows<WorkspaceDeletion>(
      tx,
      sql`INSERT INTO workspace_deletions (workspace_id, name, created_at) VALUES (${workspace.id}::int, ${name}, ${core.clock.now()}) RETURNING ${COLUMNS}`,
    );
    await core.jobs.send(WORKSPACE_DELETION_JOB, { id: deletion.id }, { db: tx, ...RETRIES });
    return deletion;
  });
}

/** The tables that name a workspace besides those its row's foreign keys cascade to. */
const NAMING: [kind: string, where: (ws: Sql) => Sql][] = [
  [
    'webhook_deliveries',
    (ws) => sql`DELETE FROM webhook_deliveries WHERE webhook_id IN (SELECT id FROM webhooks WHERE workspace_id = ${ws})`,
  ],
  ['webhooks', (ws) => sql`DELETE FROM webhooks WHERE workspace_id = ${ws}`],
  ['outbox_events', (ws) => sql`DELETE FROM outbox_events WHERE workspace_id = ${ws}`],
  ['audit_logs', (ws) => sql`DELETE FROM audit_logs WHERE workspace_id = ${ws}`],
  ['request_logs', (ws) => sql`DELETE FROM request_logs WHERE workspace_id = ${ws}`],
  ['email_messages', (ws) => sql`DELETE FROM email_messages WHERE workspace_id = ${ws}`],
  ['app_users', (ws) => sql`DELETE FROM app_users WHERE workspace_id = ${ws}`],
  ['auth_otps', (ws) => sql`DELETE FROM auth_otps WHERE workspace_id = ${ws}`],
  ['auth_codes', (ws) => sql`DELETE FROM auth_codes WHERE workspace_id = ${ws}`],
  ['auth_tokens', (ws) => sql`DELETE FROM auth_tokens WHERE workspace_id = ${ws}`],
  ['reviews', (ws) => sql`DELETE FROM reviews WHERE workspace_id = ${ws}`],
  ['entry_texts', (ws) => sql`DELETE FROM entry_texts WHERE workspace_id = ${ws}`],
  [
    'idempotency_records',
    (ws) => sql`DELETE FROM idempotency_records WHERE bucket_id IN (SELECT id FROM buckets WHERE workspace_id = ${ws})`,
  ],
  ['workspace_usage', (ws) => sql`DELETE FROM workspace_usage WHERE workspace_id = ${ws}`],
];

/** Runs a statement; the rows it changed. */
async function affected(db: SqlRunner, statement: Sql): Promise<number> {
  const { text, values } = statement.toQuery();
  return (await db.query(text, values)).rowCount;
}

/** The job: runs the deletion `id` to its end (or throws, to be retried from where it stopped). */
export async function runWorkspaceDeletion(core: CoreContext, id: number): Promise<void> {
  const deletion = await workspaceDeletion(core, id);
  if (!deletion || deletion.status === 'done') return;
  const ws = sql`${deletion.workspace_id}::int`;
  if (deletion.status === 'failed')
    await rows(core.db, sql`UPDATE workspace_deletions SET status = 'running', error = NULL WHERE id = ${id}::int`);
  const removed: Record<string, number> = { ...deletion.removed };
  const count = (kind: string, n: number) => (removed[kind] = (removed[kind] ?? 0) + n);
  try {
    const files = await eraseFiles(core, sql`workspace_id = ${ws}`);
    count('files', files.files);
    count('stored_contents', files.storedContents);
    await rm(path.join(core.config.dataDir, 'image-cache', deletion.name), { recursive: true, force: true });
    // Work queued for it that would find nothing.
    const executions = await rows<{ id: number }>(core.db, sql`SELECT id FROM pipeline_executions WHERE workspace_id = ${ws}`);
    const mails = await rows<{ id: number }>(core.db, sql`SELECT id FROM email_messages WHERE workspace_id = ${ws} AND status = 'queued'`);
    count(
      'queued_jobs',
      await core.jobs.dropWaiting(
        PIPELINE_JOB,
        'executionId',
        executions.map((e) => e.id),
      ),
    );
    count(
      'queued_jobs',
      await core.jobs.dropWaiting(
        EMAIL_JOB,
        'id',
        mails.map((m) => m.id),
      ),
    );
    count('queued_jobs', await core.jobs.dropWaiting(USAGE_JOB, 'workspaceId', [deletion.workspace_id]));
    // Entries in batches: documents, revisions, typed rows and kept texts go with each.
    for (;;) {
      const n = await affected(
        core.db,
        sql`DELETE FROM entries WHERE id IN (SELECT id FROM entries WHERE workspace_id = ${ws} LIMIT ${BATCH})`,
      );
      if (!n) break;
      count('entries', n);
    }
    for (const [kind, statement] of NAMING) count(kind, await affected(core.db, statement(ws)));
    await transaction(core, async (tx) => {
      await rows(tx, sql`DELETE FROM workspaces WHERE id = ${ws}`);
      // Again, each a statement that sees what writes committed meanwhile (buffered request logs,
      // a delivery queued in flight): the row's delete waited for those that lock it.
      for (const [kind, statement] of NAMING) count(kind, await affected(tx, statement(ws)));
      await rows(
        tx,
        sql`UPDATE workspace_deletions SET status = 'done', removed = ${JSON.stringify(removed)}::jsonb, error = NULL, finished_at = ${core.clock.now()} WHERE id = ${id}::int`,
      );
    });
  } catch (err) {
    // The error's kind only: its text may hold internals.
    const reason = `step failed (${sqlState(err) ?? (err instanceof Error ? err.name : 'error')}); retried`;
    await rows(
      core.db,
      sql`UPDATE workspace_deletions SET status = 'failed', removed = ${JSON.stringify(removed)}::jsonb, error = ${reason} WHERE id = ${id}::int`,
    );
    core.log.error('workspace deletion step failed', { deletion: id, error: String(err) });
    throw err;
  }
}
