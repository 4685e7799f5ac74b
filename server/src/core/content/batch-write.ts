// Atomic batch writes of typed entries: ordered creates, updates and deletes of one bucket in one
// transaction, with conditions (`check`) evaluated right before their operation, symbolic
// references to earlier creates (`ref` / `{"$ref"}`), the content types' write locks held until
// commit, and the idempotency record committed with the changes. Every operation goes through
// the same typed write path as single writes (typed-entries.ts).
import { createHash } from 'node:crypto';
import { newEntryId } from './ids';
import type { SqlRunner } from '../../db/database';
import { addFieldError, fieldDetail, fieldError, fieldErrors, moveUnder, type FieldErrors } from '../../lib/field-errors';
import { LosslessNumber, stringifyExact } from '../../lib/exact-json';
import { candidates } from '../query/candidates';
import { compileFilter, ROOT } from '../query/compile';
import type { FilterNode } from '../query/ast';
import { rows, sql } from '../sql';
import type { ContentTypeDef } from './content-types';
import { sightOn } from './store';
import { DomainError, throwIfInvalid } from '../errors';
import { ULID } from './field-values';
import { parseEntryFilter } from './query/parse';
import { resolvePath } from './query/paths';
import { CreateRefused, createTypedEntries, deleteTypedEntry, updateTypedEntry } from './typed-entries';
import type { WriteContext } from './write';
import { emptyRecord } from '../../lib/records';

export interface BatchOperation {
  action: 'create' | 'update' | 'delete';
  type?: string;
  ref?: string;
  id?: string;
  fields?: Record<string, unknown>;
  status?: 'draft' | 'published';
  publish_at?: string | null;
  locales?: string[];
  tags?: string[];
  expected_version?: number;
  check?: { filter: Record<string, unknown>; exists: boolean };
}

export interface BatchResult {
  index: number;
  action: BatchOperation['action'];
  id: string;
  lock_version?: number;
  ref?: string;
}

const ALLOWED: Record<BatchOperation['action'], string[]> = {
  create: ['action', 'type', 'ref', 'fields', 'status', 'publish_at', 'locales', 'tags', 'check'],
  update: ['action', 'id', 'fields', 'status', 'publish_at', 'locales', 'tags', 'expected_version', 'check'],
  delete: ['action', 'id', 'expected_version', 'check'],
};

/** A failed `check`: the batch rolls back and answers 409 `condition_failed`. */
export class ConditionFailed extends Error {
  constructor(readonly index: number) {
    super(`The check of operation ${index} failed.`);
  }
}

/** How long a batch waits for a content type's write lock (or a row lock) before a 409. */
export const LOCK_WAIT_MS = 5_000;

/** The request's identity: property order ignored, array order kept, an omitted locale is en-US. */
export function requestHash(locale: string | undefined, operations: BatchOperation[]): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object' && !(v instanceof LosslessNumber)) {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v).sort()) out[key] = canonical((v as Record<string, unknown>)[key]);
      return out;
    }
    return v;
  };
  return createHash('sha256')
    .update(stringifyExact(canonical({ locale: locale ?? 'en-US', operations })))
    .digest('hex');
}

/** Shape checks that need no database: properties per action, targets, refs. */
export function checkShapes(operations: BatchOperation[]): FieldErrors {
  const errors = fieldErrors();
  const ids = new Map<string, number>();
  operations.forEach((op, n) => {
    const at = (key: string, detail: string) => addFieldError(errors, `operations.${n}.${key}`, fieldDetail('shape', detail));
    for (const key of Object.keys(op)) if (!ALLOWED[op.action].includes(key)) at(key, `is not allowed in a ${op.action}`);
    if (op.action === 'create' && op.type === undefined) at('type', 'is required');
    if (op.action !== 'create') {
      if (op.id === undefined) at('id', 'is required');
      else {
        const id = op.id.toUpperCase();
        if (ids.has(id)) at('id', `targets the entry of operation ${ids.get(id)} again`);
        else ids.set(id, n);
      }
    }
  });
  return errors;
}

/** The abilities and creator permissions each operation needs, for `authorize`. */
export function operationRights(op: BatchOperation): { abilities: string[]; permissions: string[] }[] {
  const rights = [
    op.action === 'create'
      ? { abilities: ['entries:write'], permissions: ['create-entry'] }
      : op.action === 'update'
        ? { abilities: ['entries:write'], permissions: ['update-entry'] }
        : { abilities: ['entries:delete'], permissions: ['delete-entry'] },
  ];
  if (op.check) rights.push({ abilities: ['entries:query'], permissions: ['list-entries'] });
  return rights;
}

const CHECK_FIELD_TYPES = new Set(['text', 'number', 'boolean', 'date']);
/** A check's limit, as serialized (the spec's 64 KiB). */
const CHECK_BYTES = 64 * 1024;

/** A check's filter as SQL, or errors (`operations.<n>.check.filter...`): own scalar fields and `@id` only. */
function checkCondition(
  check: NonNullable<BatchOperation['check']>,
  type: ContentTypeDef,
  types: Map<string, ContentTypeDef>,
  n: number,
  errors: FieldErrors,
) {
  const base = `operations.${n}.check.filter`;
  const local = fieldErrors();
  const walk = (node: Record<string, unknown>, at: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$and' || key === '$or') {
        (value as Record<string, unknown>[]).forEach((child, i) => walk(child, `${at}.${key}.${i}`));
        continue;
      }
      const path = resolvePath(key, type, types);
      if (typeof path === 'string') continue; // reported by the filter parser
      const end = path.end;
      const supported =
        !path.hops.length &&
        ((end.kind === 'meta' && end.name === '@id') ||
          (end.kind === 'field' && CHECK_FIELD_TYPES.has(end.def.type) && !end.def.multiple && !end.json.length));
      if (!supported)
        local[`${at}.${key}`] = [
          fieldError(
            'check',
            'The :attribute field is not supported in a check: only own text, number, boolean and date fields and @id are.',
          ),
        ];
      else if (Object.hasOwn(value as object, 'some'))
        local[`${at}.${key}.some`] = [fieldError('check', 'The :attribute field is not supported in a check.')];
    }
  };
  walk(check.filter, base);
  if (Buffer.byteLength(stringifyExact(check)) > CHECK_BYTES)
    local[`operations.${n}.check`] = [fieldError('size', 'The :attribute field must not be larger than 64 KiB.')];
  const unsupported = Object.keys(local);
  const filter = parseEntryFilter(check.filter, [type], types, local, base);
  // An unsupported target is one error, not one more per operator.
  for (const key of Object.keys(local)) if (unsupported.some((u) => key.startsWith(`${u}.`))) delete local[key];
  Object.assign(errors, local);
  return filter;
}

export interface BatchRequest {
  ctx: WriteContext;
  bucketId: number;
  /** The bucket's content types by name. */
  types: Map<string, ContentTypeDef>;
  locale: string;
  operations: BatchOperation[];
}

/**
 * Runs the operations in `tx` (the caller's transaction, which commits or rolls back all of
 * them), in four phases: each operation's content type (its target's, for updates and deletes),
 * the checks and references of the whole batch validated before anything is written, the
 * content types' write locks, then the writes in order. Errors: DomainError `invalid` keyed
 * `operations.<n>...`, `not_found`, ConditionFailed.
 */
export async function runBatch(tx: SqlRunner, b: BatchRequest): Promise<BatchResult[]> {
  const types = await operationTypes(tx, b);
  const plan = planBatch(b, types);
  await lockTypes(tx, types);
  return writeOperations(tx, b, plan);
}

/** The content type of each operation; an update's or delete's target must be a live typed entry of the bucket. */
async function operationTypes(tx: SqlRunner, b: BatchRequest): Promise<ContentTypeDef[]> {
  const { ctx, operations } = b;
  // Targets are read first: their content types are locked with the others.
  const targetIds = operations.filter((op) => op.id !== undefined).map((op) => op.id!.toUpperCase());
  const targets = new Map<string, { type: number; bucket: number }>();
  if (targetIds.length) {
    const found = await rows<{ entry_id: string; content_type_id: number; bucket_id: number }>(
      tx,
      sql`SELECT e.entry_id, e.content_type_id, e.bucket_id FROM entries e
           WHERE e.entry_id = ANY(${targetIds}::text[]) AND ${sightOn({ workspaceId: ctx.workspace.id, kinds: ['typed'], state: 'live' })}`,
    );
    for (const r of found) targets.set(r.entry_id, { type: r.content_type_id, bucket: r.bucket_id });
  }
  const byId = new Map([...b.types.values()].map((t) => [t.id, t]));
  return operations.map((op) => {
    const target = op.id === undefined ? undefined : targets.get(op.id.toUpperCase());
    const type = op.action === 'create' ? b.types.get(op.type!) : byId.get(target?.type ?? -1);
    if (!type || (op.action !== 'create' && target?.bucket !== b.bucketId)) throw new DomainError('not_found');
    return type;
  });
}

/** What the writes need, found for the whole batch before any of them: checks, new IDs, fields with references resolved. */
interface BatchPlan {
  types: ContentTypeDef[];
  checks: (FilterNode | undefined)[];
  newIds: (string | undefined)[];
  fields: (Record<string, unknown> | undefined)[];
}

function planBatch(b: BatchRequest, types: ContentTypeDef[]): BatchPlan {
  const { operations } = b;
  const errors = fieldErrors();
  const checks = operations.map((op, n) => (op.check ? checkCondition(op.check, types[n], b.types, n, errors) : undefined));
  const newIds = operations.map((op) => (op.action === 'create' ? newEntryId() : undefined));
  const refIndex = new Map<string, number>();
  operations.forEach((op, n) => {
    if (op.ref === undefined) return;
    if (refIndex.has(op.ref))
      addFieldError(
        errors,
        `operations.${n}.ref`,
        fieldError('repeated', 'The :attribute field repeats the reference name of an earlier create.'),
      );
    else refIndex.set(op.ref, n);
  });
  const fields = operations.map((op, n) => (op.fields ? resolveReferences(op.fields, types[n], n, refIndex, newIds, errors) : undefined));
  throwIfInvalid(errors);
  return { types, checks, newIds, fields };
}

/** The content types' write locks, taken in one order (no deadlock between batches), held until commit. */
async function lockTypes(tx: SqlRunner, types: ContentTypeDef[]): Promise<void> {
  await rows(tx, sql`SELECT set_config('lock_timeout', ${`${LOCK_WAIT_MS}ms`}, true)`);
  const lockIds = [...new Set(types.map((t) => t.id))].sort((x, y) => x - y);
  await rows(tx, sql`SELECT pg_advisory_xact_lock(id::bigint) FROM unnest(${lockIds}::int[]) AS id ORDER BY id`);
}

/** Whether an entry of `type` matches the check's filter, read where a query reads (its typed columns), with the batch's own writes so far. */
async function checkHolds(tx: SqlRunner, b: BatchRequest, type: ContentTypeDef, filter: FilterNode): Promise<boolean> {
  const from = candidates(
    { workspaceId: b.ctx.workspace.id, kinds: ['typed'], contentTypeId: type.id, typed: type.typedReady },
    b.locale,
    filter,
  );
  const [found] = await rows<{ found: boolean }>(
    tx,
    sql`SELECT EXISTS (SELECT 1 FROM ${from.from} WHERE ${from.where} AND ${compileFilter(filter, { ...ROOT, row: from.row })}) AS found`,
  );
  return found.found;
}

/**
 * The writes, in order. Runs of creates without checks are written together (a few statements
 * per run, not per create); each still behaves as if written after the operations before it.
 */
async function writeOperations(tx: SqlRunner, b: BatchRequest, plan: BatchPlan): Promise<BatchResult[]> {
  const { ctx, locale, operations } = b;
  const results: BatchResult[] = [];
  let run: number[] = [];
  const flush = async () => {
    if (!run.length) return;
    const indexes = run;
    run = [];
    const creates = indexes.map((n) => ({
      type: plan.types[n],
      entryId: plan.newIds[n]!,
      input: writeInput(operations[n], plan.fields[n]),
    }));
    let entries;
    try {
      entries = await createTypedEntries(ctx, locale, creates);
    } catch (err) {
      throw err instanceof CreateRefused ? atOperation(err.error, indexes[err.index]) : err;
    }
    entries.forEach((entry, i) => {
      const op = operations[indexes[i]];
      results.push({
        index: indexes[i],
        action: 'create',
        id: entry.entry_id,
        lock_version: entry.lock_version,
        ...(op.ref !== undefined ? { ref: op.ref } : {}),
      });
    });
  };
  for (const [n, op] of operations.entries()) {
    if (op.action === 'create' && !op.check) {
      run.push(n);
      continue;
    }
    await flush();
    const check = plan.checks[n];
    if (check && op.check && (await checkHolds(tx, b, plan.types[n], check)) !== op.check.exists) throw new ConditionFailed(n);
    if (op.action === 'create') {
      // After its check: a run of its own.
      run.push(n);
      await flush();
      continue;
    }
    try {
      results.push(await updateOrDelete(b, n, plan.fields[n]));
    } catch (err) {
      throw atOperation(err, n);
    }
  }
  await flush();
  return results;
}

const writeInput = (op: BatchOperation, fields: Record<string, unknown> | undefined) => ({
  fields,
  status: op.status,
  publishAt: op.publish_at,
  locales: op.locales,
  tags: op.tags,
});

async function updateOrDelete(b: BatchRequest, n: number, fields: Record<string, unknown> | undefined): Promise<BatchResult> {
  const op = b.operations[n];
  const id = op.id!.toUpperCase();
  if (op.action === 'update') {
    const entry = await updateTypedEntry(
      b.ctx,
      id,
      b.locale,
      { ...writeInput(op, fields), expectedVersion: op.expected_version, versionField: 'expected_version' },
      b.bucketId,
    );
    return { index: n, action: 'update', id: entry.entry_id, lock_version: entry.lock_version };
  }
  const entry = await deleteTypedEntry(b.ctx, id, { bucketId: b.bucketId, refuseCascade: true, expectedVersion: op.expected_version });
  return { index: n, action: 'delete', id: entry.entry_id };
}

/** An operation's refusal, keyed under `operations.<n>.`. */
function atOperation(err: unknown, n: number): unknown {
  if (!(err instanceof DomainError)) return err;
  const out = fieldErrors();
  if (err.kind === 'review_pending')
    out[`operations.${n}.id`] = [fieldError('review', 'The :attribute field names an entry with a pending review.')];
  else if (err.kind === 'invalid' || err.kind === 'stale_version') moveUnder(err.errors, `operations.${n}.`, out);
  else return err;
  return new DomainError('invalid', out);
}

/**
 * The fields of operation `n` with `{"$ref": name}` in relation fields replaced by the ID of the
 * earlier create named so. JSON fields keep their data; attachments take no entry references.
 */
function resolveReferences(
  fields: Record<string, unknown>,
  type: ContentTypeDef,
  n: number,
  refIndex: Map<string, number>,
  newIds: (string | undefined)[],
  errors: FieldErrors,
): Record<string, unknown> {
  const out = emptyRecord();
  const isRefObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof LosslessNumber) && Object.hasOwn(v, '$ref');
  for (const [name, value] of Object.entries(fields)) {
    const def = type.byName.get(name);
    if (!def || (def.type !== 'relation' && def.type !== 'attachment')) {
      out[name] = value;
      continue;
    }
    const one = (v: unknown, at: string): unknown => {
      if (!isRefObject(v)) return v;
      const key = `${at}.$ref`;
      const fail = (detail: string) => (addFieldError(errors, key, fieldDetail('reference', detail)), v);
      if (def.type === 'attachment') return fail('is not allowed: attachments take file IDs, not entry references');
      if (Object.keys(v).length !== 1 || typeof v.$ref !== 'string') return fail('must be the only property, holding a reference name');
      const target = refIndex.get(v.$ref);
      if (target === undefined) return fail(`names no create of this batch (${v.$ref})`);
      if (target === n) return fail('must not refer to its own operation');
      if (target > n) return fail('must refer to an earlier create (no forward references)');
      return newIds[target];
    };
    const base = `operations.${n}.fields.${name}`;
    if (def.multiple && Array.isArray(value)) {
      const list = value.map((v, i) => one(v, `${base}.${i}`));
      const seen = new Set<unknown>();
      list.forEach((v, i) => {
        if (typeof v === 'string' && ULID.test(v) && seen.has(v.toUpperCase()))
          addFieldError(errors, `${base}.${i}`, fieldError('repeated', 'The :attribute field repeats an entry of this field.'));
        if (typeof v === 'string') seen.add(v.toUpperCase());
      });
      out[name] = list;
    } else out[name] = one(value, base);
  }
  return out;
}
