// Hosted authentication routes (no API key). The router's gate (`x-hosted-auth`) has already
// opened the workspace (http/auth-workspace.ts); rate limits are the router's too.
import { handlers } from '../http/handlers';
import { requireWorkspace } from '../http/lookup';
import { pageUrl } from '../http/pagination';
import { decodeCursor, encodeCursor } from '../core/cursors';
import { formatTimestamp } from '../lib/time';
import { authWorkspaceOf } from '../http/auth-workspace';
import { login } from '../core/auth/login';
import { exchangeCode, verifyOtp } from '../core/auth/verify';
import { findSession, revokeSession } from '../core/auth/session';

/** Credentials are never cached. */
const NO_STORE = { 'Cache-Control': 'no-store' };

export const appAuthHandlers = handlers({
  async authLogin({ body, koa }, app) {
    await login(app, authWorkspaceOf(koa), body);
    return { status: 204 };
  },

  async authVerify({ body, koa }, app) {
    return { status: 200, body: await verifyOtp(app, authWorkspaceOf(koa), body), headers: NO_STORE };
  },

  async authToken({ body, koa }, app) {
    return { status: 200, body: await exchangeCode(app, authWorkspaceOf(koa), body), headers: NO_STORE };
  },

  async getAuthSession({ koa }, app) {
    const session = await findSession(app, authWorkspaceOf(koa), koa.get('Authorization'));
    return { status: 200, body: { user: session.user, expires_at: formatTimestamp(session.expiresAt) }, headers: NO_STORE };
  },

  async deleteAuthSession({ koa }, app) {
    await revokeSession(app, await findSession(app, authWorkspaceOf(koa), koa.get('Authorization')));
    return { status: 204 };
  },

  async listAppUsers({ params, query, koa }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const after = query.cursor === undefined ? 0 : decodeCursor<[number]>(query.cursor, ['integer'])[0];
    const perPage = query.per_page ?? 50;
    const rows = await app.db.prisma.appUser.findMany({
      where: { workspaceId: workspace.id, id: { gt: after } },
      orderBy: { id: 'asc' },
      take: perPage + 1,
    });
    const page = rows.slice(0, perPage);
    const next = rows.length > perPage ? encodeCursor([page[page.length - 1].id]) : null;
    return {
      status: 200,
      body: {
        data: page.map((u) => ({ id: u.id, email: u.email, created_at: formatTimestamp(u.createdAt) })),
        next_cursor: next,
        next_page_url: pageUrl(app.config.baseUrl, koa, next),
      },
    };
  },
});
