// The application: its context (config, database, clock, limits, tasks) and the Koa middleware
// list, in the order a request meets it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import cors from '@koa/cors';
import type { Config } from './config';
import type { AppContext } from './context';
import { Clock } from './clock';
import { openDatabase, sessionConnectQuery, sessionSettingsDiffer, type Database } from './db/database';
import { migrate, withSchemaLock } from './db/migrate';
import { MESSAGES, errorResponder, notFound } from './http/errors';
import { requestId } from './http/request-id';
import { RateLimits, pruneRateLimits } from './http/rate-limit';
import { buildRouter } from './http/router';
import { loadDocument, readOperations } from './http/spec';
import { SpecValidator } from './http/validation';
import type { HandlerSet } from './http/handlers';
import { createLogger, type Logger } from './lib/logger';
import { TaskRegistry } from './tasks';
import { workspaceHandlers } from './admin/workspaces';
import { userHandlers } from './admin/users';
import { apiKeyHandlers } from './admin/api-keys';
import { bucketHandlers } from './admin/buckets';
import { contentTypeHandlers } from './admin/content-types';
import { modelHandlers } from './admin/model';
import { archiveHandlers } from './admin/archives';
import { contractHandlers } from './admin/contracts';
import { typeHandlers } from './admin/types';
import { operationHandlers } from './admin/operations';
import { webhookHandlers } from './admin/webhooks';
import { logHandlers } from './admin/logs';
import { metaHandlers } from './public/meta';
import { JobQueue } from './jobs/queue';
import { Scheduler } from './jobs/scheduler';
import { RequestLogBuffer, requestLog } from './http/request-log';
import { LookupCache } from './core/lookup-cache';
import { responseCache } from './http/response-cache';
import { TextKeeper } from './core/content/kept-texts';
import { keepStatement } from './core/content/render';
import type { KeyRow } from './http/auth';
import { ContractValidators } from './core/content/contracts';
import { fileHandlers } from './files/routes';
import { imageHandlers } from './images/routes';
import { applyUsage, pruneStorage } from './files/service';
import { uploadModules } from './files/upload-modules';
import { USAGE_JOB } from './core/file-records';
import { createStorage } from './storage/storage';
import { apiKeyInfoHandlers } from './public/api-key';
import { objectHandlers } from './objects/routes';
import { entryHandlers } from './entries/routes';
import { entryQueryHandlers } from './entries/query-routes';
import { entryBatchHandlers } from './entries/batch-routes';
import { pruneIdempotency } from './core/idempotency';
import { pruneExecutions } from './core/pipeline-engine/executions';
import { publishScheduled } from './core/content/typed-entries';
import { reviewHandlers } from './admin/reviews';
import { pruneTrash } from './core/content/json-entries';
import { fillTypedStorage } from './core/content/typed-storage';
import { cleanUpRemovedFields, FIELD_CLEANUP_JOB } from './core/content/field-cleanup';
import { runWorkspaceDeletion, WORKSPACE_DELETION_JOB } from './core/workspace-deletion';
import { REVALIDATE_JOB, revalidatePending } from './core/content/revalidate';
import { Operations } from './http/operations';
import { pipelineHandlers } from './admin/pipelines';
import { executionHandlers } from './pipelines/routes';
import { PipelineRunner } from './pipelines/runner';
import { PIPELINE_JOB, type ExecutionJob } from './core/pipeline-engine/executions';
import { emailHandlers } from './email/routes';
import { EMAIL_JOB } from './core/email-queue';
import { deliverEmail } from './email/deliver';
import { pruneOutbox, redactExpiredCodes } from './email/retention';
import { appAuthHandlers } from './app-auth/routes';
import { pruneAuth } from './core/auth/session';
import { OTP_TTL_SECONDS } from './core/auth/credentials';

/** Every operation of the spec, each with its handler (checked by the compiler). */
const allHandlers: HandlerSet = {
  ...metaHandlers,
  ...apiKeyInfoHandlers,
  ...workspaceHandlers,
  ...userHandlers,
  ...apiKeyHandlers,
  ...bucketHandlers,
  ...contentTypeHandlers,
  ...modelHandlers,
  ...archiveHandlers,
  ...contractHandlers,
  ...typeHandlers,
  ...operationHandlers,
  ...webhookHandlers,
  ...logHandlers,
  ...fileHandlers,
  ...imageHandlers,
  ...objectHandlers,
  ...entryHandlers,
  ...entryQueryHandlers,
  ...entryBatchHandlers,
  ...reviewHandlers,
  ...pipelineHandlers,
  ...executionHandlers,
  ...emailHandlers,
  ...appAuthHandlers,
};

/**
 * The embedded database has no autovacuum: refresh its planner statistics (a PostgreSQL server
 * keeps its own). Without them a list page may read every row.
 */
async function analyzeEmbedded(app: AppContext): Promise<number> {
  if (app.db.kind !== 'pglite') return 0;
  await app.db.exec('ANALYZE');
  return 1;
}

function registerTasks(tasks: TaskRegistry): TaskRegistry {
  return (
    tasks
      .register({ name: 'rate-limits:prune', cadence: 'hourly', run: (app) => pruneRateLimits(app.db) })
      .register({ name: 'files:prune-storage', cadence: 'daily', run: pruneStorage })
      .register({ name: 'objects:prune-trash', cadence: 'hourly', run: (app) => pruneTrash(app) })
      .register({ name: 'entries:publish-scheduled', cadence: 'minutely', run: (app) => publishScheduled(app) })
      .register({ name: 'entries:typed-storage', cadence: 'minutely', run: (app) => fillTypedStorage(app) })
      // Queued after each removal of fields; the minutely run picks up whatever a crash left pending.
      .register({ name: 'entries:field-cleanup', cadence: 'minutely', run: (app) => cleanUpRemovedFields(app) })
      .register({ name: 'idempotency:prune', cadence: 'hourly', run: pruneIdempotency })
      // Queued after each contract change; the minutely run picks up whatever a crash left pending.
      .register({ name: 'objects:revalidate', cadence: 'minutely', run: (app) => revalidatePending(app) })
      .register({ name: 'auth:prune', cadence: 'hourly', run: pruneAuth })
      .register({ name: 'pipelines:prune', cadence: 'daily', run: pruneExecutions })
      .register({ name: 'email:redact-codes', cadence: 'minutely', run: (app) => redactExpiredCodes(app, OTP_TTL_SECONDS) })
      .register({ name: 'email:prune', cadence: 'daily', run: pruneOutbox })
      .register({ name: 'database:analyze', cadence: 'hourly', run: analyzeEmbedded })
  );
}

export interface RunningServer {
  app: AppContext;
  url: string;
  close(): Promise<void>;
}

export async function createKoa(app: AppContext): Promise<Koa> {
  const router = buildRouter(app, app.operations);

  // Behind N trusted proxies `ctx.ip` is the N-th X-Forwarded-For entry from the right (Koa keeps
  // the right-most maxIpsCount and takes the first): the address the outermost proxy saw, not
  // the left-most one, which the client writes. Per-IP rate limits count it.
  const hops = app.config.trustProxyHops;
  const koa = new Koa({ proxy: hops > 0, proxyIpHeader: 'X-Forwarded-For', maxIpsCount: hops });
  // A client that goes away mid-download is not a server error.
  const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'EPIPE', 'ECONNRESET', 'ECONNABORTED']);
  koa.silent = true;
  koa.on('error', (err: NodeJS.ErrnoException) => {
    if (!CLIENT_GONE.has(err.code ?? '')) app.log.error('response failed', { error: err.stack ?? String(err) });
  });
  koa.use(requestId);
  koa.use(requestLog(app.requestLogs, app.clock));
  koa.use(
    errorResponder((err, id) => app.log.error('unhandled error', { requestId: id, error: err instanceof Error ? err.stack : String(err) })),
  );
  // Browsers may call the public API from any page; which origins a key accepts is the key's own
  // restriction (auth.ts), checked on the actual request. The management API is not for browsers.
  const publicCors = cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'Idempotency-Key', 'X-Request-Id'],
    exposeHeaders: ['Retry-After', 'X-Request-Id', 'Content-Disposition', 'Server-Timing', 'Idempotent-Replayed'],
    maxAge: 600,
  });
  koa.use(async (ctx, next) => {
    if (ctx.path.startsWith('/api/')) await publicCors(ctx, next);
    else await next();
  });
  koa.use(router.routes());
  koa.use(() => {
    throw notFound();
  });
  return koa;
}

function specOperations(): Operations {
  const doc = loadDocument();
  // Operations compile their validators on first use (about 10 ms each, off the start-up path);
  // the test suite sends every operation through them.
  return new Operations(readOperations(doc), new SpecValidator(doc), allHandlers);
}

function lookupCaches(): AppContext['lookups'] {
  const keys = new LookupCache<KeyRow>();
  return {
    keys,
    contentTypes: keys.follower(1_000),
    authWorkspaces: keys.follower(1_000),
    entryTypes: keys.follower(100_000, 10 * 60_000),
  };
}

export async function createAppContext(config: Config, log: Logger = createLogger()): Promise<AppContext> {
  const db: Database = await openDatabase(config);
  await migrate(db);
  if (config.databasePooler === 'transaction') {
    const differ = await sessionSettingsDiffer(db, config.databaseStatementTimeoutMs);
    // Not refused: the server answers correctly without them, only slower or without a time bound.
    if (differ.length) {
      log.error(
        "behind the pooler the server connections lack these settings: set them on the role (ALTER ROLE … SET) or in the pooler's connect_query",
        {
          settings: differ,
          connect_query: sessionConnectQuery(config.databaseStatementTimeoutMs),
        },
      );
    }
  }
  const jobs = new JobQueue(db, log);
  const app = {
    config,
    db,
    clock: new Clock(db, config.testClock),
    rateLimits: new RateLimits(config, db),
    tasks: registerTasks(new TaskRegistry()),
    log,
    jobs,
    storage: await createStorage(config),
    requestLogs: new RequestLogBuffer(db, log),
    contractValidators: new ContractValidators(),
    lookups: lookupCaches(),
    operations: specOperations(),
  } as AppContext;
  app.pipelines = new PipelineRunner(app);
  // With the test clock every lookup reads the clock's offset too, so nothing is cached.
  if (!config.testClock) app.lookups.keys.listen(db);
  // Every process follows content changes, so that every write waits for every process's drop.
  app.contentChanges = responseCache(db, config.responseCacheBytes);
  if (!config.testClock && config.responseCacheBytes > 0) app.responses = app.contentChanges;
  if (config.keepRenderedEntries) app.keeper = new TextKeeper(db, app.log, keepStatement, config.keptTextBytes);
  app.scheduler = new Scheduler(app);
  jobs.define<{ workspaceId: number; bandwidthBytes: number }>(USAGE_JOB, (job) => applyUsage(app, job));
  jobs.define(REVALIDATE_JOB, () => revalidatePending(app).then(() => undefined));
  jobs.define(FIELD_CLEANUP_JOB, () => cleanUpRemovedFields(app).then(() => undefined));
  jobs.define<{ id: number }>(WORKSPACE_DELETION_JOB, (job) => runWorkspaceDeletion(app, job.id));
  jobs.define<ExecutionJob>(PIPELINE_JOB, (job) => app.pipelines.take(job));
  // Only a process that can send takes delivery jobs (another one on the database may be configured with SMTP).
  if (config.smtpUrl) jobs.define<{ id: number }>(EMAIL_JOB, (job) => deliverEmail(app, job.id));
  return app;
}

/** Starts the server; `close()` stops accepting, lets in-flight requests finish, then closes the database. */
export async function startServer(config: Config, log?: Logger): Promise<RunningServer> {
  const app = await createAppContext(config, log);
  const koa = await createKoa(app);
  let draining = false;
  // Requests whose handler still runs: one whose client went away has no socket that would hold
  // the server's close open, and must not find its database closed half-way.
  let handling = 0;
  let handled: (() => void) | undefined;
  const handle = koa.callback();
  const server = http.createServer((req, res) => {
    // While shutting down, answer in-flight and late requests with `Connection: close` so that
    // keep-alive sockets end with their response instead of holding the shutdown open.
    if (draining) res.setHeader('Connection', 'close');
    handling++;
    void handle(req, res).finally(() => {
      if (--handling === 0) handled?.();
    });
  });
  server.keepAliveTimeout = 5_000;
  // A request not received whole within this is cut (Node's guard against slow senders); an
  // archive's import is the one long upload, so operators raise it for large ones.
  server.requestTimeout = config.requestTimeoutSeconds * 1000;
  // Bytes that are not HTTP (a body sent without Content-Length or chunked framing is read as the
  // next request) get the documented error body, not Node's bare 400.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return socket.destroy();
    const body = JSON.stringify({ message: MESSAGES.malformedRequest });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  }).catch(async (err: unknown) => {
    // The port is taken: nothing started but the database's connections and listeners.
    await app.lookups.keys.stop();
    await app.contentChanges.stop();
    await app.rateLimits.close();
    await app.db.close();
    throw err;
  });
  const { port } = server.address() as AddressInfo;
  // The job queue and the scheduler start one tick after the server answers: on the embedded
  // database their queries run on this thread, and the first requests should not wait for them.
  // `send`/`work` of the queue wait for its start themselves.
  let background: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  let delay: NodeJS.Timeout | undefined;
  // A failed start (the database unreachable for a moment) is retried with backoff until the
  // server closes: a server that answers must not go on without its queue and scheduler.
  const startBackground = (attempt: number) => {
    delay = setTimeout(
      () => {
        background = withSchemaLock(app.db, () => app.jobs.start())
          .then(() => app.scheduler.start())
          // Libraries loaded lazily, warmed now so that the first upload or image does not wait for them.
          .then(() => uploadModules())
          .then(() => import('sharp').then(() => undefined))
          .catch((err) => {
            app.log.error('job queue failed to start; retrying', { attempt, error: err instanceof Error ? err.stack : String(err) });
            if (!closing) startBackground(attempt + 1);
          });
      },
      attempt === 0 ? config.schedulerTickMs : Math.min(30_000, config.schedulerTickMs * 2 ** attempt),
    );
  };
  startBackground(0);
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= (async () => {
        draining = true;
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        // Sockets of requests already in flight become idle when their response ends: close them then.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
        await done;
        // Bounded as the connections are: a handler still running then finds the database closed.
        if (handling) await new Promise<void>((resolve) => ((handled = resolve), setTimeout(resolve, config.shutdownTimeoutMs).unref()));
        clearInterval(sweep);
        clearTimeout(timer);
        clearTimeout(delay);
        await background;
        await app.keeper?.stop();
        await app.requestLogs.flush();
        await app.scheduler.stop();
        await app.pipelines.stop();
        await app.jobs.stop();
        await app.rateLimits.close();
        await app.lookups.keys.stop();
        await app.contentChanges.stop();
        await app.db.close();
      })();
      return closing;
    },
  };
}
