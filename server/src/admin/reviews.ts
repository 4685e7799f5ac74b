// Reviews of entries, legacy linked form submissions, and the conversion of typed entries to
// JSON-backed ones (management API).
import { handlers } from '../http/handlers';
import { createReview, resolveReview } from '../core/content/reviews';
import { createSubmission } from '../core/content/json-entries';
import { requireBucket, requireWorkspace } from '../http/lookup';
import { convertTypedEntry } from '../core/content/typed-entries';
import { findEntries } from '../core/content/store';
import { presentObject } from '../core/content/object-envelope';
import { sql } from '../core/sql';

export const reviewHandlers = handlers({
  async convertEntry({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const id = await convertTypedEntry(app, workspace.id, params.entry_id.toUpperCase());
    const [entry] = await findEntries(app.db, { workspaceId: workspace.id, kinds: ['json'], state: 'live' }, sql`e.id = ${id}`, {
      content: { kind: 'all' },
    });
    return { status: 200, exactJson: entry.exact, body: presentObject(entry, { locale: '*', view: 'full' }) };
  },

  async createReview({ params, body }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 201, body: await createReview(app, workspace.id, body.entry_id) };
  },

  async resolveReview({ params }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    return { status: 200, body: await resolveReview(app, workspace.id, params.id) };
  },

  async createSubmission({ params, body }, app) {
    const { workspace, bucket } = await requireBucket(app, params.workspace, params.bucket);
    return { status: 201, body: await createSubmission(app, workspace.id, bucket.id, body.ref, body.data) };
  },
});
