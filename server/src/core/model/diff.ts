// What it takes to turn a workspace's model into a snapshot's: the steps of an apply, in the order
// it runs them, with the snapshot's problems keyed by its paths. Pure: the model as read
// (snapshot.ts) and the snapshot in, steps out; apply.ts runs them and checks the entries.
//
// Buckets, content types, contracts and pipelines are matched by name; fields by `key`, then by
// name (so a renamed field keeps its values); webhooks by url, in order. A field whose kind
// (`type`, `multiple`, `format`) differs is replaced: typed storage never converts values.
import type { components } from '@workspace-api/sdk/openapi';
import { canonicalJson } from '@workspace-api/sdk/typegen';
import { addFieldError, fieldError, fieldErrors, moveUnder, type FieldErrors } from '../../lib/field-errors';
import type { ContentTypeChange } from '../content/content-type-changes';
import { contractErrors, contractValues, type ContractInput } from '../content/contract-writes';
import { GENERAL_BUCKET, MAX_CONTENT_TYPES } from '../content/content-types';
import { checkFieldDefinitions, type FieldInput } from '../content/field-rules';
import { normalizeLocales } from '../content/locales';
import type { PipelineInput } from '../pipeline-engine/definitions-store';

type S = components['schemas'];
export type ModelInput = S['ModelInput'];
export type ModelField = S['ModelField'];
export type ModelContentType = S['ModelContentType'];

/** A field as the workspace has it: every member explicit, its key known. */
export type StoredField = ModelField & { key: string };

/** The workspace's model as a plan reads it: webhooks and pipelines with their ids, webhooks with their secrets. */
export interface CurrentModel {
  locales: string[];
  buckets: { name: string; content_types: { name: string; name_field: string | null; fields: StoredField[] }[] }[];
  contracts: { name: string; schema: Record<string, unknown>; mode: 'enforce' | 'report'; bucket: string | null; prefix: string | null }[];
  webhooks: { id: number; url: string; events: string[] }[];
  pipelines: { id: number; name: string; description: string | null; steps: unknown[] }[];
}

/** What a change does to one field of a type (a field-level change of a plan). */
export interface FieldStep {
  action: 'create' | 'rename' | 'update' | 'replace' | 'delete';
  /** Its name now (its new name when created). */
  name: string;
  /** Its key now (none when created). */
  key?: string;
  /** Its name after a rename. */
  to?: string;
  /** The rules it changes (`required: false → true`), in words. */
  details: string[];
}

export type Step =
  | { kind: 'locales'; locales: string[]; added: string[]; removed: string[] }
  | { kind: 'bucket.create'; bucket: string }
  /** `names`: the content types of its bucket in the snapshot (its relations' targets may name them). */
  | { kind: 'type.create'; bucket: string; path: string; type: ModelContentType; names: ReadonlySet<string> }
  | {
      kind: 'type.change';
      bucket: string;
      path: string;
      type: string;
      change: ContentTypeChange;
      /** Keys proposed for added fields, by name. */
      keys: Map<string, string>;
      fields: FieldStep[];
      nameField?: { from: string | null; to: string };
      reordered: boolean;
    }
  | { kind: 'type.delete'; bucket: string; type: string }
  | { kind: 'bucket.delete'; bucket: string }
  | { kind: 'contract.delete'; name: string }
  | { kind: 'contract.save'; input: ContractInput; replacing?: string }
  | { kind: 'webhook.delete'; id: number; url: string }
  | { kind: 'webhook.update'; id: number; url: string; events: string[]; secret?: string }
  | { kind: 'webhook.create'; url: string; events: string[]; secret: string }
  | { kind: 'pipeline.delete'; id: number; name: string }
  | { kind: 'pipeline.save'; input: PipelineInput; replacing?: number };

/** Checks a pipeline's steps (definition.ts, which needs the configuration): errors keyed `steps.<n>…`. */
export type PipelineCheck = (steps: PipelineInput['steps']) => FieldErrors;

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);
const sortedSet = (values: readonly string[] | undefined) => [...new Set(values ?? [])].sort();

/** A field as a definition (FieldDefinition): the snapshot's without its key. */
function definitionOf(f: ModelField): FieldInput {
  const { key: _key, ...definition } = f;
  return definition;
}

/** The kind of a field's values: what typed storage keeps (a difference replaces the field). */
const kindOf = (f: ModelField) => `${f.type}/${f.multiple ?? false}/${f.type === 'date' ? (f.format ?? 'date') : ''}`;

/** The rules of a field that a change may change in place, as comparable values. */
const rulesOf = (f: ModelField) => ({
  required: f.required ?? false,
  unique: f.unique ?? false,
  indexed: f.indexed ?? null,
  targets: sortedSet(f.targets),
  cascade_on_delete: f.cascade_on_delete ?? false,
});

function ruleChanges(from: ModelField, to: ModelField): string[] {
  const a = rulesOf(from);
  const b = rulesOf(to);
  return (Object.keys(a) as (keyof typeof a)[])
    .filter((k) => !same(a[k], b[k]))
    .map((k) => `${k}: ${JSON.stringify(a[k])} → ${JSON.stringify(b[k])}`);
}

/** Names listed more than once, as errors on the later ones' `name` (`<at>.<i>.name`). */
function duplicates(names: string[], at: string, errors: FieldErrors, what: string): void {
  const seen = new Set<string>();
  names.forEach((name, i) => {
    if (seen.has(name))
      addFieldError(errors, `${at}.${i}.name`, fieldError('distinct', `The ${what} :name is listed more than once.`, { name }));
    seen.add(name);
  });
}

/**
 * Matches the snapshot's fields to the type's: by key, then by name. Returns, for each snapshot
 * field, its stored field (or none: added).
 */
function matchFields(stored: StoredField[], wanted: ModelField[]): (StoredField | undefined)[] {
  const byKey = new Map(stored.map((f) => [f.key, f]));
  const taken = new Set<StoredField>();
  const matched: (StoredField | undefined)[] = wanted.map((w) => {
    const f = w.key === undefined ? undefined : byKey.get(w.key);
    if (f && !taken.has(f)) {
      taken.add(f);
      return f;
    }
    return undefined;
  });
  wanted.forEach((w, i) => {
    if (matched[i]) return;
    const f = stored.find((s) => s.name === w.name && !taken.has(s));
    if (f) {
      taken.add(f);
      matched[i] = f;
    }
  });
  return matched;
}

/** The change of an existing type, or none when the snapshot's type is the type. */
function typeChange(
  bucket: string,
  path: string,
  stored: CurrentModel['buckets'][number]['content_types'][number],
  wanted: ModelContentType,
): Step | undefined {
  const matched = matchFields(stored.fields, wanted.fields);
  const fields: FieldStep[] = [];
  const renames = new Map<string, string>();
  const removals: string[] = [];
  const keys = new Map<string, string>();
  wanted.fields.forEach((w, i) => {
    const f = matched[i];
    if (!f) {
      fields.push({ action: 'create', name: w.name, details: [] });
      if (w.key !== undefined) keys.set(w.name, w.key);
    } else if (kindOf(f) !== kindOf(w)) {
      fields.push({
        action: 'replace',
        name: f.name,
        key: f.key,
        to: w.name,
        details: [`${kindOf(f).replace(/\/$/, '')} → ${kindOf(w).replace(/\/$/, '')}`],
      });
      removals.push(f.name);
    } else {
      if (f.name !== w.name) {
        renames.set(f.name, w.name);
        fields.push({ action: 'rename', name: f.name, key: f.key, to: w.name, details: [] });
      }
      const details = ruleChanges(f, w);
      if (details.length) fields.push({ action: 'update', name: w.name, key: f.key, details });
    }
  });
  for (const f of stored.fields) {
    if (!matched.includes(f)) {
      fields.push({ action: 'delete', name: f.name, key: f.key, details: [] });
      removals.push(f.name);
    }
  }
  const kept = wanted.fields.flatMap((w, i) => (matched[i] && !removals.includes(matched[i].name) ? [matched[i].key] : []));
  const reordered = !same(
    kept,
    stored.fields.filter((f) => kept.includes(f.key)).map((f) => f.key),
  );
  const nameField =
    typeof wanted.name_field === 'string' &&
    wanted.name_field !== ((stored.name_field !== null && renames.get(stored.name_field)) || stored.name_field)
      ? { from: stored.name_field, to: wanted.name_field }
      : undefined;
  if (!fields.length && !reordered && !nameField) return undefined;
  const change: ContentTypeChange = { fields: wanted.fields.map(definitionOf) };
  if (renames.size) change.rename_fields = Object.fromEntries(renames);
  if (removals.length) change.remove_fields = removals;
  if (nameField) change.name_field = nameField.to;
  return { kind: 'type.change', bucket, path, type: stored.name, change, keys, fields, nameField, reordered };
}

/** The snapshot's locales, buckets and content types against the workspace's. */
function contentSteps(current: CurrentModel, wanted: ModelInput, errors: FieldErrors): Step[] {
  const steps: Step[] = [];
  const locales = normalizeLocales(wanted.locales);
  if (!same(locales, current.locales)) {
    steps.push({
      kind: 'locales',
      locales,
      added: locales.filter((l) => !current.locales.includes(l)),
      removed: current.locales.filter((l) => !locales.includes(l)),
    });
  }
  duplicates(
    wanted.buckets.map((b) => b.name),
    'buckets',
    errors,
    'bucket',
  );
  if (!wanted.buckets.some((b) => b.name === GENERAL_BUCKET)) {
    addFieldError(
      errors,
      'buckets',
      fieldError('general', `The bucket ${GENERAL_BUCKET} is the workspace's default bucket, deleted with the workspace only: list it.`),
    );
  }
  const typeCount = wanted.buckets.reduce((n, b) => n + b.content_types.length, 0);
  if (typeCount > MAX_CONTENT_TYPES) {
    addFieldError(
      errors,
      'buckets',
      fieldError('limit', 'The snapshot holds :count content types; a workspace holds :max at most.', {
        count: typeCount,
        max: MAX_CONTENT_TYPES,
      }),
    );
  }
  const creates: Step[] = [];
  const changes: Step[] = [];
  const deletes: Step[] = [];
  wanted.buckets.forEach((bucket, b) => {
    const at = `buckets.${b}`;
    const stored = current.buckets.find((s) => s.name === bucket.name);
    if (!stored) steps.push({ kind: 'bucket.create', bucket: bucket.name });
    duplicates(
      bucket.content_types.map((t) => t.name),
      `${at}.content_types`,
      errors,
      'content type',
    );
    const names = new Set(bucket.content_types.map((t) => t.name));
    bucket.content_types.forEach((type, t) => {
      const path = `${at}.content_types.${t}`;
      const nameField = type.name_field ?? undefined;
      moveUnder(checkFieldDefinitions(type.name, type.fields.map(definitionOf), nameField, names), `${path}.`, errors);
      const existing = stored?.content_types.find((s) => s.name === type.name);
      // Each field's key as it will be: its own, else its stored field's, else its name. Two
      // alike would make the apply give one of them another key than the snapshot says.
      const matched = existing ? matchFields(existing.fields, type.fields) : [];
      const keys = new Set<string>();
      type.fields.forEach((f, i) => {
        const key = f.key ?? matched[i]?.key ?? f.name;
        if (keys.has(key))
          addFieldError(
            errors,
            `${path}.fields.${i}.key`,
            fieldError('distinct', 'The key :key is the key of another field of the content type.', { key }),
          );
        keys.add(key);
      });
      if (!existing) creates.push({ kind: 'type.create', bucket: bucket.name, path, type, names });
      else {
        const change = typeChange(bucket.name, path, existing, type);
        if (change) changes.push(change);
      }
    });
    for (const s of stored?.content_types ?? [])
      if (!names.has(s.name)) deletes.push({ kind: 'type.delete', bucket: bucket.name, type: s.name });
  });
  steps.push(...creates, ...changes, ...deletes);
  return steps;
}

/** The buckets the snapshot leaves out: deleted after the contracts moved off them. */
const bucketDeletes = (current: CurrentModel, wanted: ModelInput): Step[] =>
  current.buckets.filter((s) => !wanted.buckets.some((b) => b.name === s.name)).map((s) => ({ kind: 'bucket.delete', bucket: s.name }));

/**
 * The snapshot's contracts against the workspace's. Without them in the snapshot, only those of
 * buckets it deletes go (with their bucket: said in the plan).
 */
function contractSteps(current: CurrentModel, wanted: ModelInput, validate: boolean, errors: FieldErrors): Step[] {
  const buckets = new Set(wanted.buckets.map((b) => b.name));
  if (!wanted.contracts)
    return current.contracts
      .filter((c) => c.bucket !== null && !buckets.has(c.bucket))
      .map((c) => ({ kind: 'contract.delete', name: c.name }));
  const contracts = wanted.contracts;
  duplicates(
    contracts.map((c) => c.name),
    'contracts',
    errors,
    'contract',
  );
  const steps: Step[] = [];
  for (const c of current.contracts) if (!contracts.some((w) => w.name === c.name)) steps.push({ kind: 'contract.delete', name: c.name });
  contracts.forEach((input, i) => {
    if (validate) moveUnder(contractErrors(input), `contracts.${i}.`, errors);
    const values = contractValues(input);
    if (values.bucket !== null && !buckets.has(values.bucket))
      addFieldError(
        errors,
        `contracts.${i}.bucket`,
        fieldError('exists', 'The bucket :name is not a bucket of the snapshot.', { name: values.bucket }),
      );
    const stored = current.contracts.find((c) => c.name === input.name);
    if (!stored) steps.push({ kind: 'contract.save', input });
    else if (!same(contractValues(stored), values)) steps.push({ kind: 'contract.save', input, replacing: stored.name });
  });
  return steps;
}

function webhookSteps(current: CurrentModel, wanted: NonNullable<ModelInput['webhooks']>, errors: FieldErrors): Step[] {
  const steps: Step[] = [];
  const unmatched = [...current.webhooks];
  const creates: Step[] = [];
  wanted.forEach((w, i) => {
    const at = unmatched.findIndex((s) => s.url === w.url);
    if (at < 0) {
      if (w.secret === undefined)
        addFieldError(
          errors,
          `webhooks.${i}.secret`,
          fieldError('required', 'The :attribute field is required for a webhook the workspace does not have.'),
        );
      else creates.push({ kind: 'webhook.create', url: w.url, events: w.events, secret: w.secret });
      return;
    }
    const [stored] = unmatched.splice(at, 1);
    // A secret given is set, never compared: a plan must not tell whether a guess is right.
    if (!same(sortedSet(stored.events), sortedSet(w.events)) || w.secret !== undefined)
      steps.push({ kind: 'webhook.update', id: stored.id, url: w.url, events: w.events, secret: w.secret });
  });
  return [...unmatched.map((s): Step => ({ kind: 'webhook.delete', id: s.id, url: s.url })), ...steps, ...creates];
}

function pipelineSteps(current: CurrentModel, wanted: PipelineInput[], check: PipelineCheck, errors: FieldErrors): Step[] {
  duplicates(
    wanted.map((p) => p.name),
    'pipelines',
    errors,
    'pipeline',
  );
  const steps: Step[] = [];
  for (const p of current.pipelines)
    if (!wanted.some((w) => w.name === p.name)) steps.push({ kind: 'pipeline.delete', id: p.id, name: p.name });
  wanted.forEach((input, i) => {
    moveUnder(check(input.steps), `pipelines.${i}.`, errors);
    const stored = current.pipelines.find((p) => p.name === input.name);
    if (!stored) steps.push({ kind: 'pipeline.save', input });
    else if (!same([stored.description, stored.steps], [input.description ?? null, input.steps]))
      steps.push({ kind: 'pipeline.save', input, replacing: stored.id });
  });
  return steps;
}

/**
 * The steps from `current` to `wanted`, and the snapshot's problems (keyed by its paths). Without
 * `checkPipeline` (an apply's check of its own result), contracts and pipelines are not validated
 * again and secrets are not set again.
 */
export function diffModel(
  current: CurrentModel,
  wanted: ModelInput,
  checkPipeline?: PipelineCheck,
): { steps: Step[]; errors: FieldErrors } {
  const errors = fieldErrors();
  const steps = contentSteps(current, wanted, errors);
  steps.push(...contractSteps(current, wanted, checkPipeline !== undefined, errors), ...bucketDeletes(current, wanted));
  const webhooks = checkPipeline ? wanted.webhooks : wanted.webhooks?.map(({ secret: _secret, ...w }) => w);
  if (webhooks) steps.push(...webhookSteps(current, webhooks, errors));
  if (wanted.pipelines) steps.push(...pipelineSteps(current, wanted.pipelines, checkPipeline ?? (() => fieldErrors()), errors));
  return { steps, errors };
}
