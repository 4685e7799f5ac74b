// Audit records: who did what to which entry or setting. Written through the caller's client so
// that a record commits with its change.
import type { SqlRunner } from '../db/database';

export interface AuditRecord {
  workspaceId: number;
  event: string;
  actor: string;
  entryId?: string | null;
  objectId?: number | null;
}

/** The actor of a management call and of an API key. */
export const ADMIN_ACTOR = 'admin';
export const apiKeyActor = (keyId: number) => `api_key:${keyId}`;

/** Writes the record in the caller's unit of work (core/transaction.ts). */
export async function recordAudit(tx: SqlRunner, now: Date, r: AuditRecord): Promise<void> {
  await tx.query(
    `INSERT INTO audit_logs (workspace_id, event, actor, entry_id, object_id, created_at) VALUES ($1::int, $2::text, $3::text, $4::text, $5::int, $6::timestamptz)`,
    [r.workspaceId, r.event, r.actor, r.entryId ?? null, r.objectId ?? null, now.toISOString()],
  );
}
