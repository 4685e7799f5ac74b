// The content model the generator reads: what the management API returns for a workspace's
// content types and contracts. Normalizing it first (only the properties types depend on, in one
// order) is what makes the output and its hash independent of where the model came from: the
// CLI reads it over HTTP, the server from its database.
import type { components } from '../generated/openapi.js';
import { byCodeUnits } from './names.js';

type Schemas = components['schemas'];

/** A content type as `GET .../content-types` lists it (ids and timestamps are ignored). */
export type ContentTypeModel = Pick<Schemas['ContentType'], 'name' | 'bucket' | 'name_field' | 'fields'>;
/** A contract as `GET .../contracts` lists it (ids and timestamps are ignored). */
export type ContractModel = Pick<Schemas['Contract'], 'name' | 'schema' | 'mode' | 'bucket' | 'prefix'>;
export type FieldModel = ContentTypeModel['fields'][number];

/** Everything the generated module is made from. */
export interface ContentModel {
  /** The workspace name (named in the module's header and in `Content['workspace']`). */
  workspace: string;
  contentTypes: ContentTypeModel[];
  contracts: ContractModel[];
}

/** JSON with object keys in code-unit order at every level: one text per value. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort(byCodeUnits)) {
    // defineProperty: `__proto__` is an ordinary key of a stored schema.
    Object.defineProperty(out, key, {
      value: sortKeys((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The first of each key: a model the API gives never repeats one, and a repeated key would be invalid TypeScript. */
function unique<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => !seen.has(key(item)) && Boolean(seen.add(key(item))));
}

/**
 * The model reduced to what the types depend on: content types sorted by bucket and name (fields
 * keep their definition order, as the API gives them), contracts by name with their schemas'
 * keys sorted.
 */
export function normalizeModel(model: ContentModel): ContentModel {
  const contentTypes = unique(model.contentTypes, (t) => JSON.stringify([t.bucket, t.name]))
    .map((t) => ({
      bucket: t.bucket,
      name: t.name,
      name_field: t.name_field ?? null,
      fields: unique(t.fields, (f) => f.name).map((f) => ({
        name: f.name,
        type: f.type,
        format: f.type === 'date' ? (f.format ?? 'date') : null,
        multiple: f.multiple === true,
        required: f.required === true,
        unique: f.unique === true,
        targets: f.type === 'relation' ? [...(f.targets ?? [])] : [],
        cascade_on_delete: f.cascade_on_delete === true,
      })),
    }))
    .sort((a, b) => byCodeUnits(a.bucket, b.bucket) || byCodeUnits(a.name, b.name));
  const contracts = unique(model.contracts, (c) => c.name)
    .map((c) => ({
      name: c.name,
      schema: sortKeys(c.schema) as ContractModel['schema'],
      mode: c.mode,
      bucket: c.bucket ?? null,
      prefix: c.prefix ?? null,
    }))
    .sort((a, b) => byCodeUnits(a.name, b.name));
  return { workspace: model.workspace, contentTypes, contracts };
}

/** `sha256:<hex>` of the normalized model's canonical JSON (Web Crypto: Node 18+ and browsers). */
export async function modelHash(normalized: ContentModel): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(normalized));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return 'sha256:' + Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
