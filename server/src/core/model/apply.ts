// A model snapshot planned and applied (`POST .../model/plan`, `.../model/apply`). Both run the
// same work in one transaction with the workspace's row locked against other applies: read the
// model, diff it with the snapshot (diff.ts), count what each step touches, and make the changes
// through the operations the single routes use, so that every rule and refusal is theirs. A plan
// stops there and rolls back, having made only the changes its checks need (buckets and types
// created, types changed: what the existing entries would break is found as an apply finds it);
// it deletes nothing and takes no typed table's lock. An apply goes on to the end, then reads the
// model again: anything but the snapshot means another change committed meanwhile, and nothing
// changes.
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { createSubscription, deleteSubscription, updateSubscription } from '../../events/subscriptions';
import { moveUnder } from '../../lib/field-errors';
import { isUniqueViolation } from '../../lib/sql-state';
import { sqlState } from '../../lib/sql-state';
import { DomainError, invalidAt, throwIfInvalid } from '../errors';
import { alterTypedStorage, changeInTransaction, withStorageLocks } from '../content/content-type-changes';
import { createContentType } from '../content/content-type-create';
import { TOO_MANY_CONTENT_TYPES, MAX_CONTENT_TYPES } from '../content/content-types';
import { deleteContract, saveContract } from '../content/contract-writes';
import { FIELD_CLEANUP_JOB } from '../content/field-cleanup';
import { deleteBucket, deleteContentType } from '../content/model-deletes';
import { REVALIDATE_JOB } from '../content/revalidate';
import { buildSortIndexes } from '../content/typed-storage';
import { definitionErrors } from '../pipeline-engine/definition';
import { deletePipeline, savePipeline } from '../pipeline-engine/definitions-store';
import { rows, sql } from '../sql';
import { transaction } from '../transaction';
import { diffModel, type ModelInput, type Step } from './diff';
import { touchedBy, describeSteps } from './describe';
import { modelVersion, readModel } from './snapshot';

type S = components['schemas'];

/** Thrown to roll a plan's transaction back, with the plan. */
class Planned extends Error {
  constructor(readonly plan: S['ModelPlan']) {
    super('planned');
  }
}

/** Another change of the model came between (a row gone, a name taken): the apply is stale. */
const changedMeanwhile = () =>
  new DomainError('conflict', undefined, {
    message: 'Another change of the model committed while this one ran: nothing changed. Plan again.',
  });

/**
 * Runs one step's operation: its refusals on the snapshot's paths (`path`, under the request's
 * `prefix`), a race as changedMeanwhile.
 */
async function step<T>(prefix: string, path: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof DomainError && err.kind === 'invalid') throw new DomainError('invalid', moveUnder(err.errors, prefix + path));
    if ((err instanceof DomainError && err.kind === 'not_found') || isUniqueViolation(err)) throw changedMeanwhile();
    if (sqlState(err) === TOO_MANY_CONTENT_TYPES) {
      // Types are created before others are deleted (a new type may be a target of a changed one).
      throw invalidAt(
        `${prefix}buckets`,
        'The workspace would hold more than :max content types on the way: delete content types in one apply, create the others in the next.',
        { max: MAX_CONTENT_TYPES },
        'limit',
      );
    }
    throw err;
  }
}

interface Run {
  /** A plan: checks only, rolled back. */
  dryRun: boolean;
  /** The paths' prefix of the snapshot in the request (`model.` for an apply). */
  prefix: string;
  /** The version the plan was made against (an apply). */
  version?: string;
  allowDestructive?: boolean;
}

/** The steps made: the content types to give their sort indexes after the commit, whether contracts changed. */
interface Made {
  changedTypes: number[];
  contracts: boolean;
  /** The typed tables to alter last. */
  alters: number[];
}

async function execute(core: CoreContext, tx: SqlRunner, workspaceId: number, steps: Step[], run: Run): Promise<Made> {
  const now = core.clock.now();
  const made: Omit<Made, 'alters'> = { changedTypes: [], contracts: false };
  const alters: number[] = [];
  let buckets = new Map<string, number>();
  const bucketsNow = async () => {
    buckets = new Map(
      (await rows<{ id: number; name: string }>(tx, sql`SELECT id, name FROM buckets WHERE workspace_id = ${workspaceId}::int`)).map(
        (b) => [b.name, b.id],
      ),
    );
  };
  const bucketOf = (name: string) => {
    const id = buckets.get(name);
    if (id === undefined) throw changedMeanwhile();
    return { id, workspaceId, name };
  };
  await bucketsNow();
  for (const s of steps) {
    const at = 'path' in s ? s.path : '';
    const p = run.prefix;
    switch (s.kind) {
      case 'locales':
        if (!run.dryRun)
          await rows(tx, sql`UPDATE workspaces SET locales = ${s.locales}::text[], updated_at = ${now} WHERE id = ${workspaceId}::int`);
        break;
      case 'bucket.create':
        await step(p, at, () =>
          rows(tx, sql`INSERT INTO buckets (workspace_id, name, created_at) VALUES (${workspaceId}::int, ${s.bucket}, ${now})`),
        );
        await bucketsNow();
        break;
      case 'type.create':
        await step(p, `${at}.`, () =>
          createContentType(
            core,
            bucketOf(s.bucket).id,
            {
              name: s.type.name,
              ...(s.type.name_field ? { name_field: s.type.name_field } : {}),
              fields: s.type.fields.map(({ key: _key, ...f }) => f),
            },
            { types: s.names, keys: s.type.fields.map((f) => f.key) },
          ),
        );
        break;
      case 'type.change': {
        const changed = await step(p, `${at}.`, () => changeInTransaction(core, tx, bucketOf(s.bucket), s.type, s.change, s.keys));
        made.changedTypes.push(changed.id);
        if (changed.alter) alters.push(changed.id);
        break;
      }
      case 'type.delete':
        if (!run.dryRun) await step(p, at, () => deleteContentType(core, bucketOf(s.bucket), s.type, true, deletedTypes(steps, s.bucket)));
        break;
      case 'bucket.delete':
        if (!run.dryRun) await step(p, at, () => deleteBucket(core, workspaceId, s.bucket, true));
        break;
      case 'contract.delete':
        made.contracts = true;
        if (!run.dryRun) await deleteContract(tx, workspaceId, s.name);
        break;
      case 'contract.save': {
        made.contracts = true;
        if (run.dryRun) break;
        const replacing =
          s.replacing === undefined
            ? undefined
            : (
                await rows<{ id: number; name: string }>(
                  tx,
                  sql`SELECT id, name FROM contracts WHERE workspace_id = ${workspaceId}::int AND name = ${s.replacing}`,
                )
              )[0];
        if ((s.replacing !== undefined && !replacing) || !(await step(p, at, () => saveContract(tx, workspaceId, s.input, now, replacing))))
          throw changedMeanwhile();
        break;
      }
      case 'webhook.delete':
        if (!run.dryRun && !(await deleteSubscription(tx, workspaceId, s.id, now))) throw changedMeanwhile();
        break;
      case 'webhook.update':
        if (!run.dryRun && !(await updateSubscription(tx, workspaceId, s.id, s, now))) throw changedMeanwhile();
        break;
      case 'webhook.create':
        if (!run.dryRun) await createSubscription(tx, workspaceId, s, now);
        break;
      case 'pipeline.delete':
        if (!run.dryRun && !(await deletePipeline(tx, workspaceId, s.id))) throw changedMeanwhile();
        break;
      case 'pipeline.save':
        if (!run.dryRun && !(await step(p, at, () => savePipeline(tx, workspaceId, s.input, now, s.replacing)))) throw changedMeanwhile();
        break;
    }
  }
  return { ...made, alters };
}

/** The content types of `bucket` the steps delete (their relations may accept one another). */
const deletedTypes = (steps: Step[], bucket: string) =>
  steps.flatMap((s) => (s.kind === 'type.delete' && s.bucket === bucket ? [s.type] : []));

async function runModel(
  core: CoreContext,
  workspaceId: number,
  wanted: ModelInput,
  run: Run,
): Promise<{ version: string; changes: S['ModelChange'][]; made: Made }> {
  // A removed field's cleanup is queued in the transaction: its queue exists first.
  await core.jobs.prepare(FIELD_CLEANUP_JOB);
  const checkPipeline = (steps: S['PipelineInput']['steps']) => definitionErrors(core.config, core.operations, steps);
  return withStorageLocks(() =>
    transaction(core, async (tx) => {
      const current = await readModel(tx, workspaceId, true);
      const version = modelVersion(current);
      if (run.version !== undefined && run.version !== version) {
        throw new DomainError('conflict', undefined, {
          message: `The model changed since the plan (version ${run.version}, now ${version}): plan again.`,
        });
      }
      const { steps, errors } = diffModel(current, wanted, checkPipeline);
      throwIfInvalid(moveUnder(errors, run.prefix));
      const changes = describeSteps(steps, await touchedBy(tx, workspaceId, steps));
      const destructive = changes.filter((c) => c.destructive);
      if (!run.dryRun && destructive.length && !run.allowDestructive) {
        const listed = destructive
          .slice(0, 5)
          .map((c) => `${c.action} ${c.kind} ${c.target}`)
          .join('; ');
        throw invalidAt(
          'allow_destructive',
          'The plan holds :count destructive changes (:listed): pass allow_destructive: true to apply them.',
          {
            count: destructive.length,
            listed: listed + (destructive.length > 5 ? '; …' : ''),
          },
        );
      }
      const made = await execute(core, tx, workspaceId, steps, run);
      if (run.dryRun) throw new Planned({ version, destructive: destructive.length > 0, changes });
      const after = await readModel(tx, workspaceId);
      if (diffModel(after, wanted).steps.length) throw changedMeanwhile();
      // Last, as a single change does: the typed tables' locks, held from here to the commit.
      for (const id of made.alters) await alterTypedStorage(tx, id);
      return { version: modelVersion(after), changes, made };
    }),
  );
}

/** What applying `wanted` would change (nothing is changed). */
export async function planModel(core: CoreContext, workspaceId: number, wanted: ModelInput): Promise<S['ModelPlan']> {
  try {
    await runModel(core, workspaceId, wanted, { dryRun: true, prefix: '' });
  } catch (err) {
    if (err instanceof Planned) return err.plan;
    throw err;
  }
  throw new Error('a plan ran to its end');
}

/** Applies `request.model` if the workspace's model is still at `request.version`. */
export async function applyModel(core: CoreContext, workspaceId: number, request: S['ModelApply']): Promise<S['ModelApplied']> {
  const { version, changes, made } = await runModel(core, workspaceId, request.model, {
    dryRun: false,
    prefix: 'model.',
    version: request.version,
    allowDestructive: request.allow_destructive ?? false,
  });
  // Committed: sort indexes that fields now want are built concurrently (a failure costs sorts
  // their speed, never an answer), and the objects of changed contracts are rechecked.
  for (const id of made.changedTypes)
    await buildSortIndexes(core, id).catch((err) => core.log.error('sort index build failed', { contentTypeId: id, error: String(err) }));
  if (made.contracts) await core.jobs.send(REVALIDATE_JOB, {});
  return { version, changes };
}
