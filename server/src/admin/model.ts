// The content model as code: its snapshot, a snapshot's plan, a plan's apply (core/model/).
import { handlers } from '../http/handlers';
import { requireWorkspace } from '../http/lookup';
import { applyModel, planModel } from '../core/model/apply';
import { presentModel, readModel } from '../core/model/snapshot';

export const modelHandlers = handlers({
  async getModel({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 200, body: presentModel(workspace.name, await readModel(app.db, workspace.id)) };
  },

  async planModel({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 200, body: await planModel(app, workspace.id, body) };
  },

  async applyModel({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 200, body: await applyModel(app, workspace.id, body) };
  },
});
