// Lookups shared by the routes of several resources: a missing workspace or bucket is a 404.
import type { AppContext } from '../context';
import { notFound } from './errors';

export async function requireWorkspace(app: AppContext, name: string) {
  const workspace = await app.db.prisma.workspace.findUnique({ where: { name } });
  // One being deleted is gone already (core/workspace-deletion.ts).
  if (!workspace || workspace.deleting) throw notFound();
  return workspace;
}

export async function requireBucket(app: AppContext, workspaceName: string, bucketName: string) {
  const workspace = await requireWorkspace(app, workspaceName);
  const bucket = await app.db.prisma.bucket.findUnique({ where: { workspaceId_name: { workspaceId: workspace.id, name: bucketName } } });
  if (!bucket) throw notFound();
  return { workspace, bucket };
}
