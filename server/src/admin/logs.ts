// Request logs and audit records of a workspace, newest first.
import { handlers } from '../http/handlers';
import { formatTimestamp } from '../lib/time';
import { requireWorkspace } from '../http/lookup';

export const logHandlers = handlers({
  async listRequestLogs({ params, query }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    // Every request this process has finished is in the table before it is read.
    await app.requestLogs.flush();
    const rows = await app.db.prisma.requestLog.findMany({
      where: { workspaceId: workspace.id },
      orderBy: { id: 'desc' },
      take: query.limit ?? 50,
    });
    return {
      status: 200,
      body: {
        data: rows.map((r) => ({
          method: r.method,
          path: r.path,
          status: r.status,
          upload_size: Number(r.uploadSize),
          response_size: Number(r.responseSize),
          api_key_id: r.apiKeyId,
          created_at: formatTimestamp(r.createdAt),
        })),
      },
    };
  },

  async listAuditRecords({ params, query }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.auditLog.findMany({
      where: { workspaceId: workspace.id },
      orderBy: { id: 'desc' },
      take: query.limit ?? 50,
    });
    return {
      status: 200,
      body: {
        data: rows.map((r) => ({
          event: r.event,
          entry_id: r.entryId,
          object_id: r.objectId,
          actor: r.actor,
          created_at: formatTimestamp(r.createdAt),
        })),
      },
    };
  },
});
