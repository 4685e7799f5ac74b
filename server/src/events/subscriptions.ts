// Webhook subscriptions written by the management API's routes and by a model's apply alike, in
// the caller's transaction, each change with its audit record.
import type { SqlRunner } from '../db/database';
import type { Webhook } from '../generated/prisma/client';
import { ADMIN_ACTOR, recordAudit } from './audit';

export interface SubscriptionInput {
  url: string;
  events: string[];
  secret: string;
}

/** The row as Prisma's Webhook. */
const RETURNING = `RETURNING id, workspace_id AS "workspaceId", url, events, secret, created_at AS "createdAt"`;

export async function createSubscription(tx: SqlRunner, workspaceId: number, input: SubscriptionInput, now: Date): Promise<Webhook> {
  const { rows } = await tx.query<Webhook>(
    `INSERT INTO webhooks (workspace_id, url, events, secret, created_at) VALUES ($1, $2, $3::text[], $4, $5) ${RETURNING}`,
    [workspaceId, input.url, [...new Set(input.events)], input.secret, now],
  );
  await recordAudit(tx, now, { workspaceId, event: 'webhook.created', actor: ADMIN_ACTOR });
  return rows[0];
}

/** Changes a subscription's events, and its secret when given; whether it was there. */
export async function updateSubscription(
  tx: SqlRunner,
  workspaceId: number,
  id: number,
  change: { events: string[]; secret?: string },
  now: Date,
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE webhooks SET events = $3::text[], secret = coalesce($4, secret) WHERE id = $1 AND workspace_id = $2`,
    [id, workspaceId, [...new Set(change.events)], change.secret ?? null],
  );
  if (rowCount) await recordAudit(tx, now, { workspaceId, event: 'webhook.updated', actor: ADMIN_ACTOR });
  return Boolean(rowCount);
}

/** Deletes a subscription with its delivery log; whether it was there. */
export async function deleteSubscription(tx: SqlRunner, workspaceId: number, id: number, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM webhooks WHERE id = $1 AND workspace_id = $2', [id, workspaceId]);
  if (rowCount) await recordAudit(tx, now, { workspaceId, event: 'webhook.deleted', actor: ADMIN_ACTOR });
  return Boolean(rowCount);
}
