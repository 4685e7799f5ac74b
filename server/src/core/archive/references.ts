// An imported workspace must refer only to itself: every foreign key between the archive's tables
// (an entry's bucket, a field's content type, a revision's entry, ...) must point at a row of the
// same workspace. IDs come from the archive, so a hand-edited one could otherwise attach its rows
// to another workspace's bucket or type on this server. The foreign keys are read from the
// catalog, so a table or key added later is checked without a change here.
import type { SqlRunner } from '../../db/database';
import { quoteIdent } from '../../lib/sql-identifier';
import { raw, rows, sql } from '../sql';
import { ARCHIVE_TABLES } from './tables';

interface ForeignKey {
  from_table: string;
  from_column: string;
  to_table: string;
  to_column: string;
}

/** References the schema holds without a foreign key (checked as if it had one). */
const UNDECLARED: readonly ForeignKey[] = [
  { from_table: 'entries', from_column: 'content_type_id', to_table: 'content_types', to_column: 'id' },
  { from_table: 'files', from_column: 'user_id', to_table: 'users', to_column: 'id' },
  { from_table: 'entry_revisions', from_column: 'restored_from', to_table: 'entry_revisions', to_column: 'id' },
];

/**
 * Rows the import wrote that are not the workspace's. A table's rows belong to a workspace through
 * a reference (a content type through its bucket, a revision through its entry; a document takes
 * its entry's workspace): a row whose reference names another workspace's row falls outside the
 * scope that the foreign-key check below reads, so the counts are compared first.
 */
export async function strayRows(db: SqlRunner, ws: number, imported: Record<string, number>): Promise<string | undefined> {
  for (const t of ARCHIVE_TABLES) {
    const [{ n }] = await rows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${raw(quoteIdent(t.name))} t WHERE ${t.scope(ws)}`);
    const wanted = imported[t.name] ?? 0;
    if (n !== wanted)
      return `${t.name}: ${wanted} rows imported, ${n} of them the workspace's: the others refer to rows of another workspace of this server.`;
  }
  const [mixed] = await rows<{ entry_id: string }>(
    db,
    sql`SELECT e.entry_id FROM entries e JOIN content_types c ON c.id = e.content_type_id WHERE e.workspace_id = ${ws}::int AND c.bucket_id <> e.bucket_id LIMIT 1`,
  );
  if (mixed) return `entries: the entry ${mixed.entry_id} has a content type of another bucket.`;
  // What entry_contents_visibility copies from an entry, which an import brings as exported.
  const [unlike] = await rows<{ entry_id: string }>(
    db,
    sql`SELECT e.entry_id FROM entry_contents c JOIN entries e ON e.id = c.entry_pk
         WHERE c.workspace_id = ${ws}::int
           AND (c.workspace_id, c.bucket_id, c.content_type_id, c.entry_id, c.kind, c.live) IS DISTINCT FROM (e.workspace_id, e.bucket_id, e.content_type_id, e.entry_id, e.kind, e.deleted_at IS NULL)
         LIMIT 1`,
  );
  if (unlike)
    return `entry_contents: the contents of the entry ${unlike.entry_id} do not name its bucket, content type, ID, kind or deletion as the entry does.`;
  return undefined;
}

/** The first reference of workspace `ws`'s rows to a row outside it, as a sentence, or undefined. */
export async function foreignReference(db: SqlRunner, ws: number): Promise<string | undefined> {
  const names = ARCHIVE_TABLES.map((t) => t.name);
  const keys = await rows<ForeignKey>(
    db,
    sql`SELECT f.relname AS from_table, fa.attname AS from_column, t.relname AS to_table, ta.attname AS to_column
          FROM pg_constraint c
          JOIN pg_class f ON f.oid = c.conrelid JOIN pg_attribute fa ON fa.attrelid = c.conrelid AND fa.attnum = c.conkey[1]
          JOIN pg_class t ON t.oid = c.confrelid JOIN pg_attribute ta ON ta.attrelid = c.confrelid AND ta.attnum = c.confkey[1]
         WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND f.relnamespace = current_schema()::regnamespace
           AND f.relname = ANY(${names}::text[]) AND t.relname = ANY(${names}::text[])
           AND NOT (t.relname = 'workspaces' AND fa.attname = 'workspace_id')
         ORDER BY 1, 2`,
  );
  for (const k of [...keys, ...UNDECLARED]) {
    const from = ARCHIVE_TABLES.find((t) => t.name === k.from_table)!;
    const to = ARCHIVE_TABLES.find((t) => t.name === k.to_table)!;
    const column = raw(`t.${quoteIdent(k.from_column)}`);
    const [stray] = await rows<{ value: string }>(
      db,
      sql`SELECT ${column}::text AS value FROM ${raw(quoteIdent(k.from_table))} t
           WHERE ${from.scope(ws)} AND ${column} IS NOT NULL
             AND ${column} NOT IN (SELECT ${raw(`t.${quoteIdent(k.to_column)}`)} FROM ${raw(quoteIdent(k.to_table))} t WHERE ${to.scope(ws)})
           LIMIT 1`,
    );
    if (stray) return `${k.from_table}.${k.from_column} ${stray.value} refers to a row of ${k.to_table} that the archive does not hold.`;
  }
  return undefined;
}
