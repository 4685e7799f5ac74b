// Request logs of the public API: one row per request that names an existing workspace, with the
// bytes received and sent. A route that knows better sets `ctx.state.uploadSize` (decoded upload
// bytes) or `ctx.state.responseSize` (streamed downloads).
import type { Middleware } from 'koa';
import type { AppContext } from '../context';

export function requestLog(app: AppContext): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const workspaceId = ctx.state.workspaceId as number | undefined;
      if (workspaceId !== undefined) {
        const uploadSize = (ctx.state.uploadSize as number | undefined) ?? (Number(ctx.get('Content-Length')) || 0);
        const responseSize = (ctx.state.responseSize as number | undefined) ?? ctx.response.length ?? 0;
        await app.db.prisma.requestLog
          .create({
            data: {
              workspaceId,
              method: ctx.method,
              path: ctx.path,
              status: ctx.status,
              uploadSize,
              responseSize,
              apiKeyId: (ctx.state.apiKeyId as number | undefined) ?? null,
              createdAt: app.clock.now(),
            },
          })
          .catch((err) => app.log.error('request log failed', { error: String(err) }));
      }
    }
  };
}
