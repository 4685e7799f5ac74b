// Webhook subscriptions, their delivery log, and ping.
import { randomUUID } from 'node:crypto';
import { handlers } from '../http/handlers';
import { notFound } from '../http/errors';
import { formatTimestamp } from '../lib/time';
import { webhookPayload } from '../events/outbox';
import { createSubscription, deleteSubscription } from '../events/subscriptions';
import type { AppContext } from '../context';
import type { Webhook, WebhookDelivery } from '../generated/prisma/client';
import type { components } from '@workspace-api/sdk/openapi';
import { requireWorkspace } from '../http/lookup';
import { transaction } from '../core/transaction';

type S = components['schemas'];

const presentWebhook = (w: Webhook): S['Webhook'] => ({
  id: w.id,
  url: w.url,
  events: w.events,
  created_at: formatTimestamp(w.createdAt),
});

const presentDelivery = (d: WebhookDelivery): S['WebhookDelivery'] => ({
  id: d.id,
  event_id: d.eventId,
  event: d.event as S['WebhookDelivery']['event'],
  status: d.status as S['WebhookDelivery']['status'],
  attempts: d.attempts,
  response_status: d.responseStatus,
  last_error: d.lastError,
  next_attempt_at: d.status === 'pending' ? formatTimestamp(d.nextAttemptAt) : null,
  created_at: formatTimestamp(d.createdAt),
  updated_at: formatTimestamp(d.updatedAt),
});

async function requireWebhook(app: AppContext, workspaceName: string, id: number) {
  const workspace = await requireWorkspace(app, workspaceName);
  const webhook = await app.db.prisma.webhook.findFirst({ where: { id, workspaceId: workspace.id } });
  if (!webhook) throw notFound();
  return { workspace, webhook };
}

export const webhookHandlers = handlers({
  async createWebhook({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const now = app.clock.now();
    const webhook = await transaction(app, (tx) => createSubscription(tx, workspace.id, body, now));
    return { status: 201, body: presentWebhook(webhook) };
  },

  async listWebhooks({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.webhook.findMany({ where: { workspaceId: workspace.id }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map(presentWebhook) } };
  },

  async deleteWebhook({ params }, app) {
    const { workspace, webhook } = await requireWebhook(app, params.workspace, params.id);
    const now = app.clock.now();
    await transaction(app, async (tx) => {
      // Deleted by another request meanwhile: as if this one came after it.
      if (!(await deleteSubscription(tx, workspace.id, webhook.id, now))) throw notFound();
    });
    return { status: 204 };
  },

  async listWebhookDeliveries({ params, query }, app) {
    const { webhook } = await requireWebhook(app, params.workspace, params.id);
    const rows = await app.db.prisma.webhookDelivery.findMany({
      where: { webhookId: webhook.id },
      orderBy: { id: 'desc' },
      take: query.limit ?? 50,
    });
    return { status: 200, body: { data: rows.map(presentDelivery) } };
  },

  async pingWebhook({ params }, app) {
    const { workspace, webhook } = await requireWebhook(app, params.workspace, params.id);
    // A ping goes to this subscription alone, whatever its filter: a delivery, not an outbox event.
    const now = app.clock.now();
    const eventId = randomUUID();
    const delivery = await app.db.prisma.webhookDelivery.create({
      data: {
        webhookId: webhook.id,
        eventId,
        event: 'ping',
        payload: webhookPayload(eventId, 'ping', workspace.name, now, { webhook_id: webhook.id }),
        status: 'pending',
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      },
    });
    app.scheduler.kick();
    return { status: 202, body: { event_id: eventId, delivery_id: delivery.id } };
  },
});
