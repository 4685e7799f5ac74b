// What a workspace archive holds: the rows of these tables that belong to the workspace, in an
// order that satisfies their foreign keys on import. Everything else a workspace has is either
// derived (typed storage, kept texts: rebuilt by the triggers as the rows go in) or not the
// workspace's content (API keys, which an operator issues again; logs, deliveries, queued work,
// sessions and one-time codes, idempotency records).
import { sql, type Sql } from '../sql';

export interface ArchiveTable {
  name: string;
  /** The rows of workspace `ws` (a condition on the table, aliased `t`). */
  scope: (ws: number) => Sql;
  /** The integer column the export pages by (rows sharing a value go in one page). */
  key: string;
  /** Columns never exported (secrets): an import gives them a fresh value. */
  secrets?: readonly string[];
}

const ofWorkspace = (ws: number) => sql`t.workspace_id = ${ws}::int`;
const ofTypes = (ws: number) =>
  sql`t.content_type_id IN (SELECT c.id FROM content_types c JOIN buckets b ON b.id = c.bucket_id WHERE b.workspace_id = ${ws}::int)`;

export const ARCHIVE_TABLES: readonly ArchiveTable[] = [
  { name: 'workspaces', scope: (ws) => sql`t.id = ${ws}::int`, key: 'id' },
  { name: 'users', scope: ofWorkspace, key: 'id' },
  { name: 'buckets', scope: ofWorkspace, key: 'id' },
  { name: 'content_types', scope: (ws) => sql`t.bucket_id IN (SELECT b.id FROM buckets b WHERE b.workspace_id = ${ws}::int)`, key: 'id' },
  { name: 'field_definitions', scope: ofTypes, key: 'id' },
  { name: 'field_removals', scope: ofTypes, key: 'id' },
  { name: 'contracts', scope: ofWorkspace, key: 'id' },
  { name: 'files', scope: ofWorkspace, key: 'id' },
  { name: 'entries', scope: ofWorkspace, key: 'id' },
  { name: 'entry_contents', scope: ofWorkspace, key: 'entry_pk' },
  { name: 'entry_revisions', scope: (ws) => sql`t.entry_pk IN (SELECT e.id FROM entries e WHERE e.workspace_id = ${ws}::int)`, key: 'id' },
  { name: 'reviews', scope: ofWorkspace, key: 'id' },
  { name: 'webhooks', scope: ofWorkspace, key: 'id', secrets: ['secret'] },
  { name: 'pipelines', scope: ofWorkspace, key: 'id' },
  { name: 'app_users', scope: ofWorkspace, key: 'id' },
  { name: 'workspace_usage', scope: ofWorkspace, key: 'workspace_id' },
];
