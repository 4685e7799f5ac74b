// The Objects API over HTTP: each handler calls one operation (core/operations/objects.ts) with
// the request's caller and maps its result to the answer (status, page URLs). Refusals are the
// core's DomainErrors, answered at the edge (http/errors.ts).
import { handlers } from '../http/handlers';
import { operationContext } from '../http/auth';
import { pageBase, pageLinks, pageUrl } from '../http/pagination';
import * as objects from '../core/operations/objects';

export const objectHandlers = handlers({
  async listObjects({ query, principal, koa }, app) {
    const page = await objects.listObjects(operationContext(app, principal), query);
    const base = app.config.baseUrl;
    return {
      status: 200,
      exactJson: page.exact,
      body: {
        data: page.data,
        path: pageBase(base, koa),
        per_page: page.perPage,
        next_cursor: page.next,
        prev_cursor: page.prev,
        ...pageLinks(base, koa, page),
      },
    };
  },

  async getObject({ params, query, principal }, app) {
    const found = await objects.getObject(operationContext(app, principal), params.objectRef, query);
    return { status: 200, body: found.body, exactJson: found.exact };
  },

  async queryObjects({ body, principal }, app) {
    const result = await objects.queryObjects(operationContext(app, principal), body);
    return { status: 200, body: result.body, exactJson: result.exact };
  },

  async createObject({ body, principal, koa }, app) {
    const created = await objects.createObject(operationContext(app, principal), body, koa.state.exactNumbers === true);
    return { status: 201, body: created.body, exactJson: created.exact };
  },

  async updateObject({ params, body, principal, koa }, app) {
    const updated = await objects.updateObject(operationContext(app, principal), params.objectRef, body, koa.state.exactNumbers === true);
    return { status: 200, body: updated.body, exactJson: updated.exact };
  },

  async deleteObject({ params, body, principal }, app) {
    await objects.deleteObject(operationContext(app, principal), params.objectRef, body);
    return { status: 204 };
  },

  async listObjectTrash({ query, principal, koa }, app) {
    const page = await objects.listObjectTrash(operationContext(app, principal), query);
    return { status: 200, body: { data: page.data, next_cursor: page.next, next_page_url: pageUrl(app.config.baseUrl, koa, page.next) } };
  },

  async listObjectRevisions({ params, query, principal, koa }, app) {
    const page = await objects.listObjectRevisions(operationContext(app, principal), params.objectRef, query);
    return { status: 200, body: { data: page.data, next_cursor: page.next, next_page_url: pageUrl(app.config.baseUrl, koa, page.next) } };
  },

  async getObjectRevision({ params, principal }, app) {
    const found = await objects.getObjectRevision(operationContext(app, principal), params.objectRef, params.revisionId);
    return { status: 200, body: found.body, exactJson: found.exact };
  },

  async compareObjectRevisions({ params, query, principal }, app) {
    const result = await objects.compareObjectRevisions(operationContext(app, principal), params.objectRef, query);
    return { status: 200, body: result.body, exactJson: result.exact };
  },

  async restoreObject({ params, body, principal }, app) {
    return { status: 200, body: await objects.restoreObject(operationContext(app, principal), params.objectRef, body) };
  },
});
