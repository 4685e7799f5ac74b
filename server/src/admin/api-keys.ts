// API keys: the secret is returned once and stored as its SHA-256.
import { prismaSql } from '../db/database';
import { handlers } from '../http/handlers';
import { invalid, notFound } from '../http/errors';
import { newApiKeySecret, sha256 } from '../lib/secrets';
import { presentApiKey } from './presenters';
import { ADMIN_ACTOR, recordAudit } from '../events/audit';
import { requireWorkspace } from '../http/lookup';

export const apiKeyHandlers = handlers({
  async createApiKey({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const user = await app.db.prisma.user.findFirst({ where: { id: body.user_id, workspaceId: workspace.id } });
    if (!user) throw invalid('user_id', 'The selected user_id is invalid.');
    const secret = newApiKeySecret();
    const now = app.clock.now();
    const key = await app.db.prisma.$transaction(async (tx) => {
      const created = await tx.apiKey.create({
        data: {
          workspaceId: workspace.id,
          userId: user.id,
          name: body.name,
          abilities: body.abilities ?? [],
          origins: body.origins ?? [],
          keyHash: sha256(secret),
          createdAt: now,
        },
      });
      await recordAudit(prismaSql(tx), now, { workspaceId: workspace.id, event: 'api_key.created', actor: ADMIN_ACTOR });
      return created;
    });
    return { status: 201, body: { ...presentApiKey(key), key: secret } };
  },

  async listApiKeys({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const rows = await app.db.prisma.apiKey.findMany({ where: { workspaceId: workspace.id }, orderBy: { id: 'asc' } });
    return { status: 200, body: { data: rows.map(presentApiKey) } };
  },

  async deleteApiKey({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const now = app.clock.now();
    await app.db.prisma.$transaction(async (tx) => {
      const res = await tx.apiKey.deleteMany({ where: { id: params.id, workspaceId: workspace.id } });
      if (res.count === 0) throw notFound();
      await recordAudit(prismaSql(tx), now, { workspaceId: workspace.id, event: 'api_key.deleted', actor: ADMIN_ACTOR });
    });
    return { status: 204 };
  },
});
