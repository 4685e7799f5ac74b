// Creators and their permissions.
import { deleteCreator } from '../core/creator-deletion';
import { handlers } from '../http/handlers';
import { notFound } from '../http/errors';
import { uniqueOr422 } from '../core/errors';
import { presentUser } from './presenters';
import { requireWorkspace } from '../http/lookup';

export const userHandlers = handlers({
  async createUser({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const now = app.clock.now();
    const user = await uniqueOr422('email', () =>
      app.db.prisma.user.create({
        data: { workspaceId: workspace.id, email: body.email, permissions: body.permissions ?? [], createdAt: now, updatedAt: now },
      }),
    );
    return { status: 201, body: presentUser(user) };
  },

  async listUsers({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.user.findMany({ where: { workspaceId: workspace.id }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map(presentUser) } };
  },

  async deleteUser({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    await deleteCreator(app, workspace.id, params.id);
    return { status: 204 };
  },

  async updateUser({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const res = await app.db.prisma.user.updateManyAndReturn({
      where: { id: params.id, workspaceId: workspace.id },
      data: { permissions: body.permissions, updatedAt: app.clock.now() },
    });
    if (res.length === 0) throw notFound();
    return { status: 200, body: presentUser(res[0]) };
  },
});
