// The event bus. A change publishes its events into `outbox_events` through its own transaction
// (`publishEvent`), so a rolled-back change publishes nothing; after commit the dispatcher fans each
// event out to the workspace's matching webhook subscriptions (`dispatchOutbox`), and the
// deliveries are sent by webhooks/deliver.ts. A delivery failure never touches the content.
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../generated/prisma/client';
import type { AppContext } from '../context';
import type { SqlRunner } from '../db/database';
import { formatTimestamp } from '../lib/time';

export const EVENT_NAMES = [
  'file.created',
  'file.deleted',
  'entry.created',
  'entry.updated',
  'entry.deleted',
  'entry.restored',
  'content_type.updated',
  'content_type.deleted',
  'ping',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export interface PublishedEvent {
  workspaceId: number;
  event: EventName;
  data: Prisma.InputJsonValue;
  /** Suppresses webhook delivery where the documents allow it (`skipWebhooks`). */
  skipWebhooks?: boolean;
}

/**
 * Writes the event in the caller's unit of work (core/transaction.ts, which wakes the dispatcher
 * once it commits); returns its ID (the `id` subscribers see).
 */
export async function publishEvent(tx: SqlRunner, now: Date, e: PublishedEvent): Promise<string> {
  const [id] = await publishEvents(tx, now, [e]);
  return id;
}

/** `publishEvent` for several events in one statement; their IDs, in order. */
export async function publishEvents(tx: SqlRunner, now: Date, events: PublishedEvent[]): Promise<string[]> {
  if (!events.length) return [];
  const ids = events.map(() => randomUUID());
  await tx.query(
    `INSERT INTO outbox_events (id, workspace_id, event, data, skip_webhooks, created_at)
     SELECT id, w, e, d::jsonb, s, $6::timestamptz FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::boolean[]) AS t(id, w, e, d, s)`,
    [
      ids,
      events.map((e) => e.workspaceId),
      events.map((e) => e.event),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.skipWebhooks ?? false),
      now.toISOString(),
    ],
  );
  return ids;
}

/** The webhook body: `{id, event, workspace, created_at, data}`. */
export function webhookPayload(id: string, event: string, workspace: string, createdAt: Date, data: unknown): string {
  return JSON.stringify({ id, event, workspace, created_at: formatTimestamp(createdAt), data });
}

interface OutboxRow {
  id: string;
  workspace_id: number;
  workspace: string;
  event: string;
  data: unknown;
  skip_webhooks: boolean;
  created_at: Date;
}

/**
 * Fans undispatched events out to matching subscriptions of their own workspace, creating one
 * delivery each. Safe to run in several processes at once (rows are claimed with SKIP LOCKED).
 * Returns how many events it dispatched.
 */
export async function dispatchOutbox(app: AppContext, batch = 100): Promise<number> {
  // A bare transaction: this is the scheduler's own pass, which transaction() would wake again after each commit.
  return app.db.transaction(async (tx) => {
    const { rows } = await tx.query<OutboxRow>(
      `SELECT o.id, o.workspace_id, w.name AS workspace, o.event, o.data, o.skip_webhooks, o.created_at
         FROM outbox_events o JOIN workspaces w ON w.id = o.workspace_id
        WHERE o.dispatched_at IS NULL
        ORDER BY o.created_at, o.id
        LIMIT $1
        FOR UPDATE OF o SKIP LOCKED`,
      [batch],
    );
    if (rows.length === 0) return 0;
    const now = app.clock.now();
    // One statement for every event's deliveries (not one per event).
    const sent = rows.filter((e) => !e.skip_webhooks);
    if (sent.length) {
      await tx.query(
        `INSERT INTO webhook_deliveries (webhook_id, event_id, event, payload, status, attempts, next_attempt_at, created_at, updated_at)
         SELECT h.id, t.id, t.event, t.payload, 'pending', 0, $5, $5, $5
           FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[]) WITH ORDINALITY AS t(workspace_id, id, event, payload, n)
           JOIN webhooks h ON h.workspace_id = t.workspace_id AND (t.event = ANY(h.events) OR '*' = ANY(h.events))
          ORDER BY t.n, h.id
         ON CONFLICT (webhook_id, event_id) DO NOTHING`,
        [
          sent.map((e) => e.workspace_id),
          sent.map((e) => e.id),
          sent.map((e) => e.event),
          sent.map((e) => webhookPayload(e.id, e.event, e.workspace, new Date(e.created_at), e.data)),
          now,
        ],
      );
    }
    await tx.query('UPDATE outbox_events SET dispatched_at = $2 WHERE id = ANY($1::uuid[])', [rows.map((r) => r.id), now]);
    return rows.length;
  });
}
