// The typed Entries API over HTTP: each handler calls one operation (core/operations/entries.ts)
// with the request's caller and maps its result to the answer.
import type { Context } from 'koa';
import type { AppContext } from '../context';
import { handlers } from '../http/handlers';
import { operationContext, type ApiKeyPrincipal } from '../http/auth';
import { pageLinks } from '../http/pagination';
import { wrapJson } from '../lib/fresh-json';
import * as entries from '../core/operations/entries';

async function list(
  app: AppContext,
  principal: ApiKeyPrincipal | undefined,
  koa: Context,
  query: Parameters<typeof entries.listEntries>[1],
  v2: boolean,
) {
  const shown = await entries.listEntries(operationContext(app, principal), query, v2);
  const json = shown.paged
    ? wrapJson('{"data":[', shown.items, `],${JSON.stringify(pageLinks(app.config.baseUrl, koa, shown)).slice(1)}`)
    : wrapJson('[', shown.items, ']');
  return { status: 200 as const, json };
}

export const entryHandlers = handlers({
  listEntries: ({ query, principal, koa }, app) => list(app, principal, koa, query, false),
  listEntriesV2: ({ query, principal, koa }, app) => list(app, principal, koa, query, true),

  async getEntry({ params, query, principal }, app) {
    return { status: 200, json: await entries.getEntry(operationContext(app, principal), params.entry, query) };
  },

  async createEntry({ query, body, principal }, app) {
    return { status: 201, json: await entries.createEntry(operationContext(app, principal), query, body) };
  },

  async updateEntry({ params, query, body, principal }, app) {
    return { status: 200, json: await entries.updateEntry(operationContext(app, principal), params.entry, query, body) };
  },

  async deleteEntry({ params, query, principal }, app) {
    await entries.deleteEntry(operationContext(app, principal), params.entry, query);
    return { status: 204 };
  },
});
