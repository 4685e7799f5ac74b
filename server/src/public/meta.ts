// Health, the bundled spec and the rendered reference: no credentials.
import { existsSync, readFileSync } from 'node:fs';
import { handlers } from '../http/handlers';
import { RETRY_AFTER_SECONDS, notFound } from '../http/errors';
import type { AppContext } from '../context';
import { docsHtmlPath } from '../paths';
import { loadDocument } from '../http/spec';

const CHECK_TIMEOUT_MS = 2_000;

/** `ok` when `probe` settles in time, `down` when it throws or hangs. */
async function probe(run: () => Promise<unknown>): Promise<'ok' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS)));
  try {
    await Promise.race([run(), timeout]);
    return 'ok';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

/** Every dependency the server uses, probed side by side. */
async function dependencyChecks(app: AppContext) {
  const redis = app.rateLimits.check();
  const [database, storage, redisState] = await Promise.all([
    probe(() => app.db.query('SELECT 1')),
    probe(() => app.storage.check()),
    redis ? probe(() => redis) : undefined,
  ]);
  return { database, storage, ...(redisState ? { redis: redisState } : {}) };
}

let docsHtml: string | undefined;
const document = loadDocument();

export const metaHandlers = handlers({
  async getHealth(_req, app) {
    const checks = await dependencyChecks(app);
    const down = Object.values(checks).includes('down');
    const body = { status: down ? ('unavailable' as const) : ('ok' as const), database: app.db.kind, checks };
    return down ? { status: 503, body, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) } } : { status: 200, body };
  },

  async getOpenApiDocument() {
    return { status: 200, body: document };
  },

  async getDocs() {
    // Built by `npm run build` (Redocly build-docs, scripts inlined: the page needs no network).
    if (docsHtml === undefined) {
      if (!existsSync(docsHtmlPath)) throw notFound();
      docsHtml = readFileSync(docsHtmlPath, 'utf8');
    }
    return { status: 200, body: docsHtml, headers: { 'Content-Type': 'text/html; charset=utf-8' } };
  },
});
