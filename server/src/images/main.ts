// `npm run image-proxy`: the image proxy as a process of its own, for operators who run it apart
// from the API (point IMAGE_PROXY_URL at it, and its IMAGE_ORIGIN_URL at the API server). It
// serves only the image-variant route, from the same spec, validation and handler as the server.
import http from 'node:http';
import Koa from 'koa';
import { loadConfig } from '../config';
import type { AppContext } from '../context';
import { errorResponder } from '../http/errors';
import { requestId } from '../http/request-id';
import { buildRouter } from '../http/router';
import { Operations } from '../http/operations';
import { loadDocument, readOperations } from '../http/spec';
import { SpecValidator } from '../http/validation';
import type { HandlerSet } from '../http/handlers';
import { createLogger } from '../lib/logger';
import { imageHandlers } from './routes';

const config = loadConfig({ ...process.env, PORT: process.env.PORT ?? '3001' });
const log = createLogger();
// The variant handler needs only the configuration: no database, no queue.
const app = { config, log } as AppContext;
const doc = loadDocument();
const operations = readOperations(doc).filter((op) => op.operationId === 'getImageVariant');
const router = buildRouter(app, new Operations(operations, new SpecValidator(doc), imageHandlers as unknown as HandlerSet));
const koa = new Koa();
koa.use(requestId);
koa.use(
  errorResponder((err, id) => log.error('unhandled error', { requestId: id, error: err instanceof Error ? err.stack : String(err) })),
);
koa.use(router.routes());
const handle = koa.callback();
const server = http
  .createServer((req, res) => void handle(req, res))
  .listen(config.port, config.host, () => {
    console.log(`workspace-api image proxy on port ${config.port}, originals from ${config.imageOriginUrl}`);
  });
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
