// API keys: the secret is returned once and stored as its SHA-256.
import type { ApiKey } from '../generated/prisma/client';
import { transaction } from '../core/transaction';
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
    if (!user) throw invalid('user_id', 'The selected :attribute is invalid.');
    const secret = newApiKeySecret();
    const now = app.clock.now();
    const key = await transaction(app, async (tx) => {
      // The row as Prisma's ApiKey (presentApiKey reads it).
      const { rows } = await tx.query<ApiKey>(
        `INSERT INTO api_keys (workspace_id, user_id, name, abilities, origins, key_hash, created_at)
         VALUES ($1, $2, $3, $4::text[], $5::text[], $6, $7)
         RETURNING id, workspace_id AS "workspaceId", user_id AS "userId", name, abilities, origins, key_hash AS "keyHash",
                   created_at AS "createdAt", last_used_at AS "lastUsedAt"`,
        [workspace.id, user.id, body.name, body.abilities ?? [], body.origins ?? [], sha256(secret), now],
      );
      await recordAudit(tx, now, { workspaceId: workspace.id, event: 'api_key.created', actor: ADMIN_ACTOR });
      return rows[0];
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
    await transaction(app, async (tx) => {
      const res = await tx.query('DELETE FROM api_keys WHERE id = $1 AND workspace_id = $2', [params.id, workspace.id]);
      if (res.rowCount === 0) throw notFound();
      await recordAudit(tx, now, { workspaceId: workspace.id, event: 'api_key.deleted', actor: ADMIN_ACTOR });
    });
    return { status: 204 };
  },
});
