// `GET /admin/v1/workspaces/{workspace}/types.ts`: the TypeScript types of a workspace's content
// model, by the SDK's generator (the one `npx @workspace-api/sdk generate-types` runs). The model
// is read with the management API's own presenters and passed through JSON, so the generator
// sees exactly what the CLI reads over HTTP and both give the same bytes.
import { generateTypes, type ContentModel } from '@workspace-api/sdk/typegen';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { requireWorkspace } from '../http/lookup';
import { presentContentType, presentContract } from './presenters';

/** The workspace's content types (every bucket) and contracts, as the management API lists them. */
async function readContentModel(app: AppContext, workspaceName: string): Promise<ContentModel> {
  const workspace = await requireWorkspace(app, workspaceName);
  const [types, contracts] = await Promise.all([
    app.db.prisma.contentType.findMany({ where: { bucket: { workspaceId: workspace.id } }, include: { fields: true, bucket: true } }),
    app.db.prisma.contract.findMany({ where: { workspaceId: workspace.id }, include: { bucket: true } }),
  ]);
  const model: ContentModel = {
    workspace: workspace.name,
    contentTypes: types.map((t) => presentContentType(t, t.bucket.name)),
    contracts: contracts.map(presentContract),
  };
  return JSON.parse(JSON.stringify(model)) as ContentModel;
}

export const typeHandlers = handlers({
  async getWorkspaceTypes({ params }, app) {
    const text = await generateTypes(await readContentModel(app, params.workspace));
    return { status: 200, body: text, headers: { 'Content-Type': 'text/plain; charset=utf-8' } };
  },
});
