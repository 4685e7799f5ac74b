// Reviews of entries and legacy linked form submissions (management API).
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { EntryError } from '../core/entries/errors';
import { createReview, resolveReview } from '../core/entries/reviews';
import { createSubmission } from '../core/entries/json-entries';
import { requireBucket, requireWorkspace } from '../core/lookup';

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
