// Workspaces: create (with the General bucket), read, list, change settings.
import { handlers } from '../http/handlers';
import { uniqueOr422 } from '../core/errors';
import { presentDeletion, presentWorkspace } from './presenters';
import { requireWorkspace } from '../http/lookup';
import { GENERAL_BUCKET } from '../core/content/content-types';
import { normalizeLocales } from '../core/content/locales';
import { notFound } from '../http/errors';
import { startWorkspaceDeletion, workspaceDeletion } from '../core/workspace-deletion';

export const workspaceHandlers = handlers({
  async createWorkspace({ body }, app) {
    const now = app.clock.now();
    const workspace = await uniqueOr422('name', () =>
      app.db.prisma.workspace.create({
        data: {
          name: body.name,
          locales: normalizeLocales(body.locales),
          objectsEnabled: body.objects_enabled ?? true,
          createdAt: now,
          updatedAt: now,
          buckets: { create: { name: GENERAL_BUCKET, createdAt: now } },
        },
      }),
    );
    return { status: 201, body: presentWorkspace(workspace) };
  },

  async listWorkspaces(_req, app) {
    const rows = await app.db.prisma.workspace.findMany({ where: { deleting: false }, orderBy: { name: 'asc' } });
    return { status: 200, body: { data: rows.map(presentWorkspace) } };
  },

  async getWorkspace({ params }, app) {
    return { status: 200, body: presentWorkspace(await requireWorkspace(app, params.workspace)) };
  },

  async deleteWorkspace({ params }, app) {
    const deletion = await startWorkspaceDeletion(app, params.workspace);
    return { status: 202, body: presentDeletion(deletion), headers: { Location: `/admin/v1/workspace-deletions/${deletion.id}` } };
  },

  async getWorkspaceDeletion({ params }, app) {
    const deletion = await workspaceDeletion(app, params.id);
    if (!deletion) throw notFound();
    return { status: 200, body: presentDeletion(deletion) };
  },

  async updateWorkspace({ params, body }, app) {
    const current = await requireWorkspace(app, params.workspace);
    const updated = await app.db.prisma.workspace.update({
      where: { id: current.id },
      data: {
        locales: body.locales === undefined ? undefined : normalizeLocales(body.locales),
        objectsEnabled: body.objects_enabled,
        suspended: body.suspended,
        authEnabled: body.auth_enabled,
        authRedirectUris: body.auth_redirect_uris,
        mailFrom: body.mail_from,
        updatedAt: app.clock.now(),
      },
    });
    return { status: 200, body: presentWorkspace(updated) };
  },
});
