// Audit records: who did what to which entry or setting. Written through the caller's client so
// that a record commits with its change.
import type { Prisma } from '../generated/prisma/client';

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

export async function recordAudit(client: Pick<Prisma.TransactionClient, 'auditLog'>, now: Date, r: AuditRecord): Promise<void> {
  await client.auditLog.create({
    data: { workspaceId: r.workspaceId, event: r.event, actor: r.actor, entryId: r.entryId ?? null, objectId: r.objectId ?? null, createdAt: now },
  });
}
