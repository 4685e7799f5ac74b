// Content buckets.
import { handlers } from '../http/handlers';
import { uniqueOr422 } from '../lib/db-errors';
import { presentBucket } from './presenters';
import { requireWorkspace } from '../http/lookup';

export const bucketHandlers = handlers({
  async createBucket({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const bucket = await uniqueOr422('name', () =>
      app.db.prisma.bucket.create({ data: { workspaceId: workspace.id, name: body.name, createdAt: app.clock.now() } }),
    );
    return { status: 201, body: presentBucket(bucket) };
  },

  async listBuckets({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.bucket.findMany({ where: { workspaceId: workspace.id }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map(presentBucket) } };
  },
});
