// Content buckets.
import { handlers } from '../http/handlers';
import { uniqueOr422 } from '../core/errors';
import { presentBucket } from './presenters';
import { requireBucket, requireWorkspace } from '../http/lookup';
import { deleteBucket } from '../core/content/model-deletes';
import { withStorageLocks } from '../core/content/content-type-changes';

export const bucketHandlers = handlers({
  async createBucket({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const bucket = await uniqueOr422('name', () =>
      app.db.prisma.bucket.create({ data: { workspaceId: workspace.id, name: body.name, createdAt: app.clock.now() } }),
    );
    return { status: 201, body: presentBucket(bucket) };
  },

  async getBucket({ params }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    return { status: 200, body: presentBucket(bucket) };
  },

  async deleteBucket({ params, query }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    await withStorageLocks(() => deleteBucket(app, workspace.id, params.bucket, query.purge === 'true'));
    return { status: 204 };
  },

  async listBuckets({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.bucket.findMany({ where: { workspaceId: workspace.id }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map(presentBucket) } };
  },
});
