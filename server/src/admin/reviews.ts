// Reviews of entries, legacy linked form submissions, and the conversion of typed entries to
// JSON-backed ones (management API).
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { EntryError } from '../core/entries/errors';
import { createReview, resolveReview } from '../core/entries/reviews';
import { createSubmission } from '../core/entries/json-entries';
import { requireBucket, requireWorkspace } from '../http/lookup';
import { convertTypedEntry } from '../core/entries/typed-entries';
import { findEntries } from '../core/entries/store';
import { presentObject } from '../core/entries/object-envelope';
import { sql } from '../core/sql';

/** The core's refusals on management routes: 404 or 422. */
async function managed<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof EntryError) throw err.kind === 'not_found' ? notFound() : validationFailed(err.errors);
    throw err;
  }
}

export const reviewHandlers = handlers({
  async convertEntry({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const id = await managed(() => convertTypedEntry(app, workspace.id, params.entry_id.toUpperCase()));
    const [entry] = await findEntries(app.db, sql`e.id = ${id}`, { content: { kind: 'all' } });
    return { status: 200, exactJson: entry.exact, body: presentObject(entry, { locale: '*', view: 'full' }) };
  },

  async createReview({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 201, body: await managed(() => createReview(app, workspace.id, body.entry_id)) };
  },

  async resolveReview({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 200, body: await managed(() => resolveReview(app, workspace.id, params.id)) };
  },

  async createSubmission({ params, body }, app) {
    const { workspace, bucket } = await requireBucket(app, params.workspace, params.bucket);
    return { status: 201, body: await managed(() => createSubmission(app, workspace.id, bucket.id, body.ref, body.data)) };
  },
});
