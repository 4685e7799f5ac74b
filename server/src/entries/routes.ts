// The typed Entries API over HTTP: each handler calls one operation (core/operations/entries.ts)
// with the request's caller and maps its result to the answer.
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { operationContext, type ApiKeyPrincipal } from '../http/auth';
import { pageLinks } from '../http/pagination';
import * as entries from '../core/operations/entries';

async function list(app: AppContext, principal: ApiKeyPrincipal | undefined, koa: Context, query: Parameters<typeof entries.listEntries>[1], v2: boolean) {
  const shown = await entries.listEntries(operationContext(app, principal), query, v2);
  const body = shown.paged ? { data: shown.entries, ...pageLinks(app.config.baseUrl, koa, shown) } : shown.entries;
  return { status: 200 as const, exactJson: shown.exact, body: body as never };
}

export const entryHandlers = handlers({
  listEntries: ({ query, principal, koa }, app) => list(app, principal, koa, query, false),
  listEntriesV2: ({ query, principal, koa }, app) => list(app, principal, koa, query, true),

  async getEntry({ params, query, principal }, app) {
    const found = await entries.getEntry(operationContext(app, principal), params.entry, query);
    return { status: 200, exactJson: found.exact, body: found.body };
  },

  async createEntry({ query, body, principal }, app) {
    const created = await entries.createEntry(operationContext(app, principal), query, body);
    return { status: 201, exactJson: created.exact, body: created.body };
  },

  async updateEntry({ params, query, body, principal }, app) {
    const updated = await entries.updateEntry(operationContext(app, principal), params.entry, query, body);
    return { status: 200, exactJson: updated.exact, body: updated.body };
  },

  async deleteEntry({ params, query, principal }, app) {
    await entries.deleteEntry(operationContext(app, principal), params.entry, query);
    return { status: 204 };
  },
});
