// A content type's change (PATCH .../content-types/{type}): fields added, renamed and removed, their
// rules and `name_field` changed, in one transaction that refuses, changing nothing, what the
// existing entries would break. A rename changes the definition alone (documents keep a value at
// its field's key, field-keys.ts); a removal drops the field's typed column at once and leaves its
// values to the `entries:field-cleanup` task (field-cleanup.ts); a sort index a field now wants is
// built after the commit, concurrently. The database's triggers drop the kept texts and tell every
// process to drop its cached model (field_definitions changes).
import type { components } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import type { SqlRunner } from '../../db/database';
import { publishEvent } from '../../events/outbox';
import { addFieldError, fieldError, fieldErrors, moveUnder, type FieldErrors } from '../../lib/field-errors';
import { LOCK_NOT_AVAILABLE, sqlState } from '../../lib/sql-state';
import { DomainError, throwIfInvalid } from '../errors';
import { rows, sql, type Sql } from '../sql';
import { transaction } from '../transaction';
import type { FieldRow } from './content-types';
import { FIELD_CLEANUP_JOB } from './field-cleanup';
import { checkFieldDefinitions, definitionOfRow, type FieldInput } from './field-rules';
import { buildSortIndexes } from './typed-storage';
import { indexedField } from '../query/typed';

export type ContentTypeChange = components['schemas']['ContentTypeChange'];

/** A field of the new list: its definition as it is to be, and what it is now (absent: added). */
interface Planned {
  input: FieldInput;
  stored?: FieldRow;
}

/** The typed table's lock is waited for this long at most (readers queue behind a waiting ALTER). */
const LOCK_WAIT = '100ms';
const LOCK_ATTEMPTS = 30;
/** Entry IDs an error names of the entries a change would break. */
const FIRST_IDS = 5;

/** The new field list from the change, or the errors of its `fields`, `rename_fields` and `remove_fields`. */
function plan(current: FieldRow[], change: ContentTypeChange, errors: FieldErrors): { list: Planned[]; removed: FieldRow[] } {
  const add = (path: string, template: string, params?: Record<string, string>) =>
    addFieldError(errors, path, fieldError('change', template, params));
  const byName = new Map(current.map((f) => [f.name, f]));
  const removed = new Map<string, FieldRow>();
  (change.remove_fields ?? []).forEach((name, i) => {
    const f = byName.get(name);
    if (!f) add(`remove_fields.${i}`, 'The field :name is not a field of this content type.', { name });
    else removed.set(name, f);
  });
  const renames = new Map<string, string>();
  for (const [from, to] of Object.entries(change.rename_fields ?? {})) {
    if (!byName.has(from)) add(`rename_fields.${from}`, 'The field :name is not a field of this content type.', { name: from });
    else if (removed.has(from)) add(`rename_fields.${from}`, 'The field :name cannot be both renamed and removed.', { name: from });
    else renames.set(from, to);
  }
  // The fields that stay, by their new names; a rename onto another staying field's name is refused.
  const kept = new Map<string, FieldRow>();
  const newName = (f: FieldRow) => renames.get(f.name) ?? f.name;
  const staying = current.filter((f) => !removed.has(f.name));
  for (const f of staying) {
    const to = newName(f);
    if (staying.some((g) => g !== f && newName(g) === to)) {
      if (renames.has(f.name)) add(`rename_fields.${f.name}`, 'The field name :name is used more than once.', { name: to });
    } else kept.set(to, f);
  }
  if (!change.fields)
    return { list: [...kept].map(([name, stored]) => ({ input: definitionOfRow(stored, name), stored })), removed: [...removed.values()] };
  const listed = new Set<string>();
  const list = change.fields.map((input, i): Planned => {
    const stored = listed.has(input.name) ? undefined : kept.get(input.name);
    if (!stored) return { input };
    listed.add(input.name);
    // Typed storage keeps a field's values as its kind: the kind never changes.
    if (input.type !== stored.type) add(`fields.${i}.type`, "A field's type does not change: remove the field and add another.");
    else if ((input.multiple ?? false) !== stored.multiple)
      add(`fields.${i}.multiple`, "A field's multiple does not change: remove the field and add another.");
    else if (input.type === 'date' && (input.format ?? 'date') !== stored.format)
      add(`fields.${i}.format`, "A field's format does not change: remove the field and add another.");
    return { input, stored };
  });
  for (const name of kept.keys()) {
    if (!listed.has(name))
      add('fields', 'The field :name is not listed: list every field the type keeps, or name it in remove_fields.', { name });
  }
  return { list, removed: [...removed.values()] };
}

/** `count` entries and the first IDs of `query` (a query of `entry_id`s). */
async function offenders(tx: SqlRunner, query: Sql): Promise<{ count: number; first: string[] }> {
  const [found] = await rows<{ count: number; first: string[] | null }>(
    tx,
    sql`SELECT count(*)::int AS count, (array_agg(o.entry_id ORDER BY o.entry_id))[1:${FIRST_IDS}::int] AS first FROM (${query}) o`,
  );
  return { count: found.count, first: found.first ?? [] };
}

const EMPTY = sql`('null'::jsonb, '""'::jsonb, '[]'::jsonb)`;

/** The entries of the type that a rule the change turns on would break, as errors on its paths. */
async function checkEntries(tx: SqlRunner, typeId: number, bucketId: number, list: Planned[], errors: FieldErrors): Promise<void> {
  const refuse = async (path: string, query: Sql, what: string) => {
    const { count, first } = await offenders(tx, query);
    if (!count) return;
    const ids = first.join(', ') + (count > first.length ? ', …' : '');
    addFieldError(errors, path, fieldError('entries', `${what}: :count (:ids).`, { count, ids }));
  };
  const ofType = sql`e.content_type_id = ${typeId}::int AND e.kind = 'typed'`;
  for (const [i, { input, stored }] of list.entries()) {
    // A field added as required: no entry has a value for it yet.
    if (!stored && input.required)
      await refuse(
        `fields.${i}.required`,
        sql`SELECT e.entry_id FROM entries e WHERE ${ofType}`,
        'Entries of the type without a value for it in a document',
      );
    if (!stored) continue;
    const value = sql`c.data -> ${stored.key}::text`;
    if (input.required && !stored.required) {
      await refuse(
        `fields.${i}.required`,
        sql`SELECT e.entry_id FROM entries e WHERE ${ofType} AND EXISTS (SELECT 1 FROM entry_contents c WHERE c.entry_pk = e.id AND coalesce(${value}, 'null') IN ${EMPTY})`,
        'Entries of the type without a value for it in a document',
      );
    }
    if (input.unique && !stored.unique) {
      await refuse(
        `fields.${i}.unique`,
        sql`SELECT DISTINCT d.entry_id FROM (SELECT e.entry_id, count(*) OVER (PARTITION BY c.locale, ${value}) AS n
              FROM entries e JOIN entry_contents c ON c.entry_pk = e.id
             WHERE ${ofType} AND e.deleted_at IS NULL AND coalesce(${value}, 'null') NOT IN ${EMPTY}) d WHERE d.n > 1`,
        'Live entries of the type that share a value of it in one locale',
      );
    }
    const gone = stored.type === 'relation' ? stored.targets.filter((t) => !(input.targets ?? []).includes(t)) : [];
    if (gone.length) {
      await refuse(
        `fields.${i}.targets`,
        sql`SELECT DISTINCT e.entry_id FROM entries e JOIN entry_contents c ON c.entry_pk = e.id
              CROSS JOIN LATERAL jsonb_array_elements_text(CASE jsonb_typeof(${value}) WHEN 'array' THEN ${value} WHEN 'string' THEN jsonb_build_array(${value}) ELSE '[]'::jsonb END) v(id)
              JOIN entries t ON t.entry_id = v.id AND t.bucket_id = ${bucketId}::int
              JOIN content_types ty ON ty.id = t.content_type_id AND ty.name = ANY(${gone}::text[])
             WHERE ${ofType}`,
        `Entries of the type that refer to entries of ${gone.join(' or ')} in it`,
      );
    }
  }
}

/**
 * A new field's key: the one proposed, else its name, unless a field of the type holds that key or
 * a removed one did (then `name~2`, …). Taken keys are added to `taken`.
 */
function keyFor(name: string, proposed: string | undefined, taken: Set<string>): string {
  let key = proposed !== undefined && !taken.has(proposed) ? proposed : name;
  for (let n = 2; taken.has(key); n++) key = `${name}~${n}`;
  taken.add(key);
  return key;
}

/**
 * Runs `work` (a transaction that takes typed tables' locks with alterTypedStorage) until it gets
 * them. A busy table (a long read, an index build) is tried again rather than queueing every read
 * behind us; still busy after every attempt, the client retries (409, Retry-After).
 */
export async function withStorageLocks<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (sqlState(err) !== LOCK_NOT_AVAILABLE) throw err;
      if (attempt >= LOCK_ATTEMPTS)
        throw new DomainError('contention', undefined, { message: "The content type's storage is busy: retry shortly." });
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/**
 * The typed table's columns and indexes follow its field definitions: last in a change's
 * transaction (its lock, which reads of the type wait for, is held from here to the commit), and
 * not waited for long (withStorageLocks tries again).
 */
export async function alterTypedStorage(tx: SqlRunner, typeId: number): Promise<void> {
  await shortLockWait(tx);
  await rows(tx, sql`SELECT typed_storage_alter(${typeId}::int)`);
}

/** From here to the commit, a lock is waited for LOCK_WAIT at most (withStorageLocks tries again). */
export async function shortLockWait(tx: SqlRunner): Promise<void> {
  await rows(tx, sql`SELECT set_config('lock_timeout', ${LOCK_WAIT}, true)`);
}

/**
 * Changes the content type `typeName` of the bucket; returns its id. Refusals are `invalid` on the
 * request's paths; a missing type is `not_found`.
 */
export async function changeContentType(
  core: CoreContext,
  bucket: BucketRef,
  typeName: string,
  change: ContentTypeChange,
): Promise<number> {
  // The cleanup a removal queues is sent in the change's transaction: its queue exists first.
  if (change.remove_fields?.length) await core.jobs.prepare(FIELD_CLEANUP_JOB);
  const id = await withStorageLocks(() =>
    transaction(core, async (tx) => {
      const changed = await changeInTransaction(core, tx, bucket, typeName, change);
      if (changed.alter) await alterTypedStorage(tx, changed.id);
      return changed.id;
    }),
  );
  // The change is committed: an index that fails to build (another change's build of the same
  // index, say) costs sorts their speed, never the answer; the next change of the type builds it.
  await buildSortIndexes(core, id).catch((err) => core.log.error('sort index build failed', { contentTypeId: id, error: String(err) }));
  return id;
}

export interface BucketRef {
  id: number;
  workspaceId: number;
  name: string;
}

/**
 * The change in the caller's transaction, up to its typed storage: `alter` says whether
 * alterTypedStorage must follow before the commit. `keys` proposes keys for added fields (by
 * name; a model snapshot's), taken when no field of the type holds or held them.
 */
export async function changeInTransaction(
  core: CoreContext,
  tx: SqlRunner,
  bucket: BucketRef,
  typeName: string,
  change: ContentTypeChange,
  keys: ReadonlyMap<string, string> = new Map(),
): Promise<{ id: number; alter: boolean }> {
  // The type's row is locked: changes of one type run one after the other.
  const [type] = await rows<{ id: number; name_field: string | null }>(
    tx,
    sql`SELECT id, name_field FROM content_types WHERE bucket_id = ${bucket.id}::int AND name = ${typeName} FOR UPDATE`,
  );
  if (!type) throw new DomainError('not_found');
  const current = await rows<FieldRow>(
    tx,
    sql`SELECT id, name, key, type, format, multiple, required, "unique", targets, cascade_on_delete, indexed FROM field_definitions WHERE content_type_id = ${type.id}::int ORDER BY position`,
  );
  const errors = fieldErrors();
  const { list, removed } = plan(current, change, errors);
  throwIfInvalid(errors);
  // The name field follows a rename; when removed, the first single text field that stays names entries.
  const renamedTo = (name: string | null) => list.find((p) => p.stored?.name === name)?.input.name;
  const nameField =
    change.name_field ?? renamedTo(type.name_field) ?? list.find((p) => p.input.type === 'text' && !p.input.multiple)?.input.name ?? null;
  const others = await rows<{ name: string }>(tx, sql`SELECT name FROM content_types WHERE bucket_id = ${bucket.id}::int`);
  const rules = checkFieldDefinitions(
    typeName,
    list.map((p) => p.input),
    change.name_field,
    new Set(others.map((t) => t.name)),
  );
  // Without `fields`, the list is the type's own: its rules held already.
  if (change.fields) moveUnder(rules, '', errors);
  else if (rules.name_field) errors.name_field = rules.name_field;
  throwIfInvalid(errors);
  await checkEntries(tx, type.id, bucket.id, list, errors);
  throwIfInvalid(errors);

  const now = core.clock.now();
  if (removed.length) {
    await rows(tx, sql`DELETE FROM field_definitions WHERE id = ANY(${removed.map((f) => f.id)}::int[])`);
    await rows(
      tx,
      sql`INSERT INTO field_removals (content_type_id, key) SELECT ${type.id}::int, k FROM unnest(${removed.map((f) => f.key)}::text[]) k`,
    );
    await core.jobs.send(FIELD_CLEANUP_JOB, {}, { db: tx });
  }
  const definition = (p: Planned, position: number) => ({
    position,
    name: p.input.name,
    required: p.input.required ?? false,
    unique: p.input.unique ?? false,
    targets: p.input.targets ?? [],
    cascade_on_delete: p.input.cascade_on_delete ?? false,
    indexed: p.input.indexed ?? null,
  });
  const staying = list.flatMap((p, position) => (p.stored ? [{ id: p.stored.id, ...definition(p, position) }] : []));
  // Names and positions are unique per type: cleared first, so that any new order and names fit.
  await rows(tx, sql`UPDATE field_definitions SET name = '~' || id, position = -1 - position WHERE content_type_id = ${type.id}::int`);
  await rows(
    tx,
    sql`UPDATE field_definitions f SET name = u.name, position = u.position, required = u.required, "unique" = u."unique", targets = u.targets, cascade_on_delete = u.cascade_on_delete, indexed = u.indexed
          FROM jsonb_to_recordset(${JSON.stringify(staying)}::jsonb) AS u(id int, name text, position int, required boolean, "unique" boolean, targets text[], cascade_on_delete boolean, indexed boolean)
         WHERE f.id = u.id`,
  );
  const added = list.flatMap((p, position) => (p.stored ? [] : [{ p, position }]));
  if (added.length) {
    const retired = await rows<{ key: string }>(tx, sql`SELECT key FROM field_removals WHERE content_type_id = ${type.id}::int`);
    const taken = new Set([...staying.map((s) => current.find((f) => f.id === s.id)!.key), ...retired.map((r) => r.key)]);
    const fresh = added.map(({ p, position }) => ({
      ...definition(p, position),
      key: keyFor(p.input.name, keys.get(p.input.name), taken),
      type: p.input.type,
      format: p.input.type === 'date' ? (p.input.format ?? 'date') : null,
      multiple: p.input.multiple ?? false,
    }));
    await rows(
      tx,
      sql`INSERT INTO field_definitions (content_type_id, position, name, key, type, format, multiple, required, "unique", targets, cascade_on_delete, indexed)
          SELECT ${type.id}::int, u.position, u.name, u.key, u.type, u.format, u.multiple, u.required, u."unique", u.targets, u.cascade_on_delete, u.indexed
            FROM jsonb_to_recordset(${JSON.stringify(fresh)}::jsonb) AS u(position int, name text, key text, type text, format text, multiple boolean, required boolean, "unique" boolean, targets text[], cascade_on_delete boolean, indexed boolean)`,
    );
  }
  await rows(tx, sql`UPDATE content_types SET name_field = ${nameField}::text, updated_at = ${now} WHERE id = ${type.id}::int`);
  await publishEvent(tx, now, {
    workspaceId: bucket.workspaceId,
    event: 'content_type.updated',
    data: { id: type.id, name: typeName, bucket: bucket.name },
  });
  // The typed table follows last (alterTypedStorage); an index a field now wants is built after
  // the commit (buildSortIndexes).
  const reindexed = list.some(
    (p) =>
      p.stored &&
      indexedField(p.stored) &&
      !indexedField({ type: p.input.type, multiple: p.input.multiple ?? false, indexed: p.input.indexed ?? null }),
  );
  return { id: type.id, alter: added.length > 0 || removed.length > 0 || reindexed };
}
