// Every response carries X-Request-Id: the caller's when it is a safe token, otherwise a new one.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestId: Middleware = async (ctx, next) => {
  const given = ctx.get('X-Request-Id');
  const id = SAFE.test(given) ? given : randomUUID();
  ctx.state.requestId = id;
  ctx.set('X-Request-Id', id);
  await next();
};
