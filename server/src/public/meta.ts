// Health, the bundled spec and the rendered reference: no credentials.
import { existsSync, readFileSync } from 'node:fs';
import { handlers } from '../http/handlers';
import { RETRY_AFTER_SECONDS, notFound } from '../http/errors';
import type { AppContext } from '../context';
import { docsHtmlPath, guideHtmlPath } from '../paths';
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

const document = loadDocument();

/** A page `npm run build` wrote, read once; 404 when the build has not written it. */
function builtPage(file: string) {
  let html: string | undefined;
  return () => {
    if (html === undefined) {
      if (!existsSync(file)) throw notFound();
      html = readFileSync(file, 'utf8');
    }
    return { status: 200 as const, body: html, headers: { 'Content-Type': 'text/html; charset=utf-8' } };
  };
}
// Redocly build-docs with its scripts inlined, and the repository's Markdown (scripts/docs-guide.mjs): neither needs a network.
const docsPage = builtPage(docsHtmlPath);
const guidePage = builtPage(guideHtmlPath);

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
    return docsPage();
  },

  async getGuide() {
    return guidePage();
  },
});
