// Health, the bundled spec and the rendered reference: no credentials.
import { existsSync, readFileSync } from 'node:fs';
import { handlers } from '../http/handlers';
import { notFound } from '../http/errors';
import { docsHtmlPath } from '../paths';
import { loadDocument } from '../http/spec';

let docsHtml: string | undefined;
const document = loadDocument();

export const metaHandlers = handlers({
  async getHealth(_req, app) {
    await app.db.query('SELECT 1');
    return { status: 200, body: { status: 'ok' as const, database: app.db.kind } };
  },

  async getOpenApiDocument() {
    return { status: 200, body: document as Record<string, unknown> };
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
