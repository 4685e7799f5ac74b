// After a contract changes, the JSON entries it may govern are marked `validation.pending` and
// rechecked by the queued `objects:revalidate` run, which stores fresh diagnostics. Content is
// never rewritten: in either mode a recheck only records issues.
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { parseExact, approximate } from '../../lib/exact-json';
import { transaction } from '../transaction';
import { rows, sql } from '../sql';
import { checkLanguages, effectiveContractJoin } from './contracts';

export const REVALIDATE_JOB = 'objects.revalidate';

/**
 * Marks every live JSON entry whose effective contract may change with contract `name` (Automatic
 * entries, and those that name it). Runs in the caller's transaction; queue REVALIDATE_JOB after.
 */
export async function markForRevalidation(tx: SqlRunner, workspaceId: number, name: string): Promise<void> {
  await tx.query(
    `UPDATE entries SET validation_pending = true
      WHERE workspace_id = $1 AND kind = 'json' AND deleted_at IS NULL
        AND (contract_choice = 'auto' OR (contract_choice = 'named' AND contract_name = $2))`,
    [workspaceId, name],
  );
}

interface Pending {
  id: number;
  documents: string | null;
  contract_id: number | null;
  name: string;
  mode: 'enforce' | 'report';
  schema: object;
  version: string;
}

/** Rechecks pending entries in batches within a time budget; returns how many it checked. */
export async function revalidatePending(core: CoreContext, budgetMs = 20_000, batch = 100): Promise<number> {
  const started = Date.now();
  let checked = 0;
  for (;;) {
    const done = await transaction(core, async (tx) => {
      const pending = await rows<Pending>(
        tx,
        sql`SELECT e.id, (SELECT jsonb_object_agg(ec.locale, ec.data)::text FROM entry_contents ec WHERE ec.entry_pk = e.id) AS documents,
                   ct.id AS contract_id, ct.name, ct.mode, ct.schema, ct.version
              FROM (SELECT * FROM entries WHERE validation_pending AND deleted_at IS NULL ORDER BY id LIMIT ${batch} FOR UPDATE SKIP LOCKED) e
              ${effectiveContractJoin(sql`e`)}`,
      );
      const now = core.clock.sqlNow();
      for (const entry of pending) {
        let issues: unknown[] = [];
        let failed = false;
        if (entry.contract_id !== null) {
          try {
            const { value, exact } = parseExact(entry.documents ?? '{}');
            const documents = new Map(Object.entries(approximate(value as Record<string, object>, exact)));
            issues = checkLanguages(core.contractValidators.get({ ...entry, id: entry.contract_id }), documents).issues;
          } catch (err) {
            failed = true;
            core.log.error('contract recheck failed', { entry: entry.id, error: String(err) });
          }
        }
        await rows(
          tx,
          sql`UPDATE entries SET validation_pending = false, validation_failed = ${failed}, validation_issues = ${JSON.stringify(issues)}::jsonb,
                     validation_checked_at = ${entry.contract_id === null ? sql`NULL` : now}
               WHERE id = ${entry.id}`,
        );
      }
      return pending.length;
    });
    checked += done;
    if (done < batch || Date.now() - started > budgetMs) return checked;
  }
}
