// The structured query of typed entries over HTTP, single and batched
// (core/operations/entry-queries.ts). A batch uses one unit of the entries quota per member.
import { handlers } from '../http/handlers';
import { operationContext } from '../http/auth';
import { keysAt } from '../lib/json-keys';
import { checkMemberNames, queryEntries, queryEntriesBatch } from '../core/operations/entry-queries';

export const entryQueryHandlers = handlers({
  async queryEntries({ params, body, principal }, app) {
    return { status: 200, json: await queryEntries(operationContext(app, principal), params.bucket, body) };
  },

  async queryEntriesBatch({ params, body, principal, koa }, app) {
    // Names as read, JSON escapes decoded (the parse kept the last of equal ones).
    const names = keysAt(koa.state.rawBody as string, ['queries']) ?? [];
    checkMemberNames(names);
    // One unit per member, reserved before anything runs (the router counted the first).
    const members = Object.keys(body.queries).length;
    if (members > 1) await app.rateLimits.consume('entries', `key:${principal!.keyId}`, members - 1);
    return { status: 200, json: await queryEntriesBatch(operationContext(app, principal), params.bucket, body, names) };
  },
});
