// Writes of JSON entries (the Objects API and jobs): create, update, delete to Trash, restore a
// revision, recover from Trash. Each runs in phases inside one transaction (core/transaction.ts):
// lock and check the version, resolve the address and contract, validate every language, write,
// record the revision, publish the event. A refused write changes nothing.
import { newEntryId } from './ids';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { fieldError, fieldErrors, type FieldErrors } from '../../lib/field-errors';
import { recordAudit } from '../../events/audit';
import { approximate } from '../../lib/exact-json';
import { openRunner, transaction } from '../transaction';
import { rows, sql, type Sql } from '../sql';
import { checkLanguages, effectiveContractOf, type ContractChoice, type EffectiveContract, type ValidationIssue } from './contracts';
import { DomainError, invalidAt, throwIfInvalid } from '../errors';
import { recordCreated, recordRevision, snapshotOf, getRevision, type Snapshot } from './revisions';
import {
  insertDocuments,
  insertEntry,
  liveIn,
  openForWrite,
  refTaken,
  publishEntryEvent,
  sortLocales,
  writeDocuments,
  type WriteContext,
} from './write';

export type { WriteContext } from './write';
import { BASE_LOCALE, TRASH_DAYS, findEntries, type EntryRecord, type EntryStatus } from './store';
import { isConfiguredLocale, unconfiguredLocale } from './locales';

/** A ref: names separated by single slashes, no leading or trailing slash, no control characters. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const REF = /^[^/\u0000-\u001f\u007f]+(\/[^/\u0000-\u001f\u007f]+)*$/;

export interface Address {
  /** Exactly one of `ref` and `path` (`path`: a folder; the ref becomes `<path>/<entry ULID>`). */
  ref?: string;
  path?: string | null;
}

function addressErrors(input: Address, errors: FieldErrors): void {
  if (input.ref !== undefined && input.path !== undefined)
    errors.ref = [fieldError('exclusive', 'The ref and path fields must not both be present.')];
  else if (input.ref === undefined && input.path === undefined)
    errors.ref = [fieldError('required', 'The :attribute field is required when path is not present.')];
  else if (input.ref !== undefined && !REF.test(input.ref))
    errors.ref = [
      fieldError('format', 'The :attribute field must be folder names separated by single slashes, without a leading or trailing slash.'),
    ];
  else if (input.path) {
    const folder = input.path.replace(/^\/+|\/+$/g, '');
    if (folder !== '' && !REF.test(folder))
      errors.path = [fieldError('format', 'The :attribute field must be folder names separated by single slashes.')];
  }
}

function refOf(input: Address, entryId: string): string {
  if (input.ref !== undefined) return input.ref;
  const folder = (input.path ?? '').replace(/^\/+|\/+$/g, '');
  return folder === '' ? entryId : `${folder}/${entryId}`;
}

const toChoice = (contract: string | false | null | undefined): ContractChoice =>
  contract === false ? { choice: 'none' } : typeof contract === 'string' ? { choice: 'named', name: contract } : { choice: 'auto' };

/** The bucket to write to (a bucket of the workspace, the General bucket by default), or an error. */
async function resolveBucket(
  db: SqlRunner,
  workspaceId: number,
  bucketId: number | undefined,
  errors: FieldErrors,
): Promise<number | undefined> {
  const [bucket] = await rows<{ id: number }>(
    db,
    bucketId === undefined
      ? sql`SELECT id FROM buckets WHERE workspace_id = ${workspaceId} AND name = 'general'`
      : sql`SELECT id FROM buckets WHERE workspace_id = ${workspaceId} AND id = ${bucketId}`,
  );
  if (!bucket)
    errors.bucket_id = [
      bucketId === undefined
        ? fieldError('exists', 'The workspace has no General bucket.')
        : fieldError('exists', 'The selected :attribute is invalid.'),
    ];
  return bucket?.id;
}

async function contractExists(db: SqlRunner, workspaceId: number, name: string): Promise<boolean> {
  return (await rows(db, sql`SELECT 1 FROM contracts WHERE workspace_id = ${workspaceId} AND name = ${name}`)).length > 0;
}

/** Translations must be keyed by configured locales other than the base one. */
function translationErrors(translations: Record<string, unknown>, locales: string[], errors: FieldErrors): void {
  for (const locale of Object.keys(translations)) {
    if (locale === BASE_LOCALE)
      errors[`translations.${locale}`] = [
        fieldError('base_locale', 'The translations field must not hold :locale: it is the base document (data).', { locale: BASE_LOCALE }),
      ];
    else if (!isConfiguredLocale(locale, locales)) errors[`translations.${locale}`] = [unconfiguredLocale(locale)];
  }
}

interface Validation {
  contract: EffectiveContract | undefined;
  issues: ValidationIssue[];
}

/** Validates every language against the contract that will govern the entry; throws in `enforce` mode. */
async function validate(
  ctx: WriteContext,
  tx: SqlRunner,
  bucketId: number,
  ref: string,
  choice: ContractChoice,
  documents: Map<string, unknown>,
  exact: boolean,
): Promise<Validation> {
  const [contract] = await rows<EffectiveContract>(tx, effectiveContractOf(ctx.workspace.id, bucketId, ref, choice));
  if (!contract) return { contract: undefined, issues: [] };
  const plain = new Map([...documents].map(([locale, data]) => [locale, approximate(data as object, exact)]));
  const { errors, issues } = checkLanguages(ctx.core.contractValidators.get(contract), plain);
  if (contract.mode === 'enforce' && Object.keys(errors).length) throw new DomainError('invalid', errors);
  return { contract, issues };
}

/** The columns of the validation state after a check. */
const validationColumns = (v: Validation, now: Sql) =>
  sql`validation_issues = ${JSON.stringify(v.issues)}::jsonb, validation_checked_at = ${v.contract ? now : sql`NULL`}, validation_pending = false, validation_failed = false`;

export interface CreateInput extends Address {
  data: object;
  bucketId?: number;
  status?: EntryStatus;
  contract?: string | false | null;
  /** `data` holds numbers a double cannot represent. */
  exact: boolean;
}

/** Creates a JSON entry; returns its id. */
export async function createJsonEntry(ctx: WriteContext, input: CreateInput): Promise<number> {
  const { core, workspace } = ctx;
  const errors = fieldErrors();
  addressErrors(input, errors);
  // In the caller's unit of work when there is one (a pipeline step's): the embedded database's one
  // connection is that unit's until it ends.
  const db = openRunner(core);
  const bucketId = await resolveBucket(db, workspace.id, input.bucketId, errors);
  if (typeof input.contract === 'string' && !(await contractExists(db, workspace.id, input.contract)))
    errors.contract = [fieldError('exists', 'The selected :attribute is invalid.')];
  throwIfInvalid(errors);
  const entryId = newEntryId();
  const ref = refOf(input, entryId);
  const choice = toChoice(input.contract);
  const documents = new Map<string, unknown>([[BASE_LOCALE, input.data]]);
  return transaction(core, async (tx) => {
    const now = core.clock.sqlNow();
    const v = await validate(ctx, tx, bucketId!, ref, choice, documents, input.exact);
    const id = await insertEntry(tx, {
      entryId,
      workspaceId: workspace.id,
      bucketId: bucketId!,
      kind: 'json',
      ref,
      status: input.status ?? 'draft',
      choice,
      validationIssues: v.issues,
      checkedAt: v.contract ? now : undefined,
      now,
    });
    await insertDocuments(tx, [{ entryPk: id, documents }]);
    const [entry] = await findEntries(tx, liveIn(ctx, 'json'), sql`e.id = ${id}`, { content: { kind: 'all' } });
    await recordCreated(tx, [{ entryPk: id, after: snapshotOf(entry) }], { author: ctx.author, now });
    await publishEntryEvent(ctx, tx, 'entry.created', entry, 'object');
    return id;
  });
}

/**
 * Stores a legacy linked form submission: it holds its ref in the bucket (no object may take
 * it) but is not an object: Objects reads, listings and queries never show it, and its delete
 * through the Objects API is refused.
 */
export async function createSubmission(
  core: CoreContext,
  workspaceId: number,
  bucketId: number,
  ref: string,
  data: object,
): Promise<{ id: number; entry_id: string; ref: string }> {
  const errors = fieldErrors();
  addressErrors({ ref }, errors);
  throwIfInvalid(errors);
  const entryId = newEntryId();
  return transaction(core, async (tx) => {
    const now = core.clock.sqlNow();
    const id = await insertEntry(tx, {
      entryId,
      workspaceId,
      bucketId,
      kind: 'submission',
      ref,
      status: 'published',
      choice: { choice: 'none' },
      now,
    });
    await insertDocuments(tx, [{ entryPk: id, documents: new Map([[BASE_LOCALE, data]]) }]);
    return { id, entry_id: entryId, ref };
  });
}

export interface UpdateInput extends Address {
  lockVersion: number;
  data: object;
  bucketId?: number;
  status?: EntryStatus;
  contract?: string | false | null;
  translations?: Record<string, object>;
  exact: boolean;
}

/** Replaces a JSON entry's document (and, when given, its translations, address, status, contract). */
export async function updateJsonEntry(ctx: WriteContext, id: number, input: UpdateInput): Promise<number> {
  const { core, workspace } = ctx;
  return transaction(core, async (tx) => {
    const current = await openForWrite(ctx, tx, { where: sql`e.id = ${id}`, kinds: ['json'], version: { expected: input.lockVersion } });
    const errors = fieldErrors();
    addressErrors(input, errors);
    let bucketId = current.bucket_id;
    if (input.bucketId !== undefined && input.bucketId !== current.bucket_id) {
      if (current.migrated) errors.bucket_id = [fieldError('migrated', 'A migrated entry cannot move to another bucket.')];
      else bucketId = (await resolveBucket(tx, workspace.id, input.bucketId, errors)) ?? bucketId;
    }
    if (typeof input.contract === 'string' && !(await contractExists(tx, workspace.id, input.contract)))
      errors.contract = [fieldError('exists', 'The selected :attribute is invalid.')];
    if (input.translations) translationErrors(input.translations, workspace.locales, errors);
    throwIfInvalid(errors);

    const ref = refOf(input, current.entry_id);
    const choice = input.contract === undefined ? currentChoice(current) : toChoice(input.contract);
    const documents = new Map<string, unknown>([[BASE_LOCALE, input.data]]);
    const translations = input.translations ?? Object.fromEntries([...current.documents].filter(([l]) => l !== BASE_LOCALE));
    for (const [locale, data] of Object.entries(translations)) documents.set(locale, data);
    const now = core.clock.sqlNow();
    const v = await validate(ctx, tx, bucketId, ref, choice, documents, input.exact || current.exact);
    const before = snapshotOf(current);
    const [updated] = await rows<{ id: number }>(
      tx,
      sql`UPDATE entries SET bucket_id = ${bucketId}, ref = ${ref}, live_ref = ${ref}, status = ${input.status ?? current.status},
                 lock_version = lock_version + 1, locales = ${sortLocales(documents.keys())}::text[],
                 contract_choice = ${choice.choice}, contract_name = ${choice.choice === 'named' ? choice.name : null},
                 ${validationColumns(v, now)}, updated_at = ${now}
           WHERE id = ${id}
             AND NOT EXISTS (SELECT 1 FROM entries o WHERE o.bucket_id = ${bucketId} AND o.live_ref = ${ref} AND o.id <> ${id})
          RETURNING id`,
    );
    if (!updated) throw refTaken(input.ref !== undefined ? 'ref' : 'path');
    await writeDocuments(tx, id, documents);
    const [entry] = await findEntries(tx, liveIn(ctx, 'json'), sql`e.id = ${id}`, { content: { kind: 'all' } });
    await recordRevision(tx, id, snapshotOf(entry), { event: 'updated', author: ctx.author, now, before, skipUnchanged: true });
    await publishEntryEvent(ctx, tx, 'entry.updated', entry, 'object');
    return id;
  });
}

const currentChoice = (e: EntryRecord): ContractChoice =>
  e.contract_choice === 'named' ? { choice: 'named', name: e.contract_name! } : { choice: e.contract_choice };

/** Moves a JSON entry to Trash (kept TRASH_DAYS); legacy submissions are read-only. */
export async function deleteJsonEntry(ctx: WriteContext, id: number, lockVersion: number): Promise<void> {
  await transaction(ctx.core, async (tx) => {
    const current = await openForWrite(ctx, tx, {
      where: sql`e.id = ${id}`,
      kinds: ['json', 'submission'],
      version: { expected: lockVersion },
    });
    const now = ctx.core.clock.sqlNow();
    await rows(
      tx,
      sql`UPDATE entries SET deleted_at = ${now}, live_ref = NULL, lock_version = lock_version + 1, updated_at = ${now} WHERE id = ${id}`,
    );
    await publishEntryEvent(ctx, tx, 'entry.deleted', current, 'object');
    await recordAudit(tx, ctx.core.clock.now(), {
      workspaceId: ctx.workspace.id,
      event: 'entry.deleted',
      actor: ctx.author.actor ?? 'system',
      entryId: current.entry_id,
      objectId: id,
    });
  });
}

export interface RestoreResult {
  id: number;
  entry_id: string;
  ref: string;
  lock_version: number;
  status: EntryStatus;
}

/**
 * Restores a revision of a live entry (a new revision with `restored_from`, status and schedule
 * kept), or recovers an entry from Trash (the Trash row's lock_version; the deleted content or a
 * revision of it; back as a draft without schedule, same ids).
 */
export async function restoreJsonEntry(
  ctx: WriteContext,
  id: number,
  lockVersion: number,
  revisionId: number | undefined,
): Promise<RestoreResult> {
  const { core, workspace } = ctx;
  return transaction(core, async (tx) => {
    const now = core.clock.sqlNow();
    const current = await openForWrite(ctx, tx, {
      where: sql`e.id = ${id}`,
      kinds: ['json'],
      version: { expected: lockVersion },
      inTrashAt: now,
    });
    const recovering = current.deleted_at !== null;
    if (!recovering && revisionId === undefined)
      throw invalidAt('revision_id', 'The :attribute field is required unless the object is in Trash.');

    let target: Snapshot = snapshotOf(current);
    let exact = current.exact;
    if (revisionId !== undefined) {
      const revision = await getRevision(tx, id, revisionId);
      if (!revision) throw invalidAt('revision_id', 'The selected :attribute is not a revision of this object.');
      target = revision.snapshot;
      exact = exact || revision.exact;
    }
    const errors = fieldErrors();
    const buckets = await rows(tx, sql`SELECT 1 FROM buckets WHERE id = ${target.bucket_id} AND workspace_id = ${workspace.id}`);
    if (!buckets.length) errors.revision_id = [fieldError('exists', 'The bucket of the revision no longer exists.')];
    if (typeof target.contract === 'string' && !(await contractExists(tx, workspace.id, target.contract)))
      errors.revision_id = [fieldError('exists', 'The contract of the revision no longer exists.')];
    throwIfInvalid(errors);

    const documents = new Map<string, unknown>();
    if (target.data !== null) documents.set(BASE_LOCALE, target.data);
    for (const [locale, data] of Object.entries(target.translations)) documents.set(locale, data);
    const choice = toChoice(target.contract);
    const v = await validate(ctx, tx, target.bucket_id, target.ref, choice, documents, exact);
    const status = recovering ? 'draft' : current.status;
    const [row] = await rows<RestoreResult>(
      tx,
      sql`UPDATE entries SET bucket_id = ${target.bucket_id}, ref = ${target.ref}, live_ref = ${target.ref}, status = ${status},
                 ${recovering ? sql`publish_at = NULL, deleted_at = NULL,` : sql``}
                 lock_version = lock_version + 1, locales = ${sortLocales(documents.keys())}::text[],
                 contract_choice = ${choice.choice}, contract_name = ${choice.choice === 'named' ? choice.name : null},
                 ${validationColumns(v, now)}, updated_at = ${now}
           WHERE id = ${id}
             AND NOT EXISTS (SELECT 1 FROM entries o WHERE o.bucket_id = ${target.bucket_id} AND o.live_ref = ${target.ref} AND o.id <> ${id})
          RETURNING id, entry_id, ref, lock_version, status`,
    );
    if (!row) throw invalidAt('ref', 'The :attribute of the object is taken by another entry.');
    await writeDocuments(tx, id, documents);
    const [entry] = await findEntries(tx, liveIn(ctx, 'json'), sql`e.id = ${id}`, { content: { kind: 'all' } });
    await recordRevision(tx, id, snapshotOf(entry), {
      event: recovering ? 'recovered' : 'restored',
      author: ctx.author,
      now,
      before: snapshotOf(current),
      restoredFrom: revisionId ?? null,
    });
    await publishEntryEvent(ctx, tx, 'entry.restored', entry, 'object');
    return row;
  });
}

/** The `objects:prune-trash` task: purges entries past their Trash retention, in batches. */
export async function pruneTrash(core: CoreContext, budgetMs = 20_000, batch = 100): Promise<number> {
  const started = Date.now();
  let purged = 0;
  for (;;) {
    const now = core.clock.sqlNow();
    const gone = await transaction(core, (tx) =>
      rows(
        tx,
        sql`DELETE FROM entries WHERE id IN (
              SELECT id FROM entries WHERE deleted_at IS NOT NULL AND deleted_at <= ${now} - make_interval(days => ${TRASH_DAYS}::int)
               ORDER BY deleted_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
            RETURNING id`,
      ),
    );
    purged += gone.length;
    if (gone.length < batch || Date.now() - started > budgetMs) return purged;
  }
}
