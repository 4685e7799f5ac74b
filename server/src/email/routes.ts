// Transactional email: `POST /api/v1/{workspace}/emails` (queued, 204) and the operators' outbox.
import { handlers } from '../http/handlers';
import { requireWorkspace } from '../http/lookup';
import { formatTimestamp } from '../lib/time';
import { sendEmail } from '../core/operations/emails';
import { operationContext } from '../http/auth';
import type { components } from '@workspace-api/sdk/openapi';

/** The columns hold only the spec's values (written by this module). */
type OutboxMessage = components['schemas']['OutboxMessage'];

export const emailHandlers = handlers({
  async sendEmail({ body, principal }, app) {
    await sendEmail(operationContext(app, principal), body);
    return { status: 204 };
  },

  async listOutbox({ params, query }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.emailMessage.findMany({
      where: { workspaceId: workspace.id },
      orderBy: { id: 'desc' },
      take: query.limit ?? 50,
    });
    return {
      status: 200,
      body: {
        data: rows.map((m) => ({
          id: m.id,
          kind: m.kind as OutboxMessage['kind'],
          from: m.from,
          to: m.to,
          reply_to: m.replyTo,
          subject: m.subject,
          text: m.text,
          html: m.html,
          status: m.status as OutboxMessage['status'],
          attempts: m.attempts,
          last_error: m.lastError,
          created_at: formatTimestamp(m.createdAt),
          sent_at: m.sentAt && formatTimestamp(m.sentAt),
        })),
      },
    };
  },
});
