// A workspace's model read in one statement (one snapshot of the database, never a torn one):
// locales, buckets with their content types and fields, contracts, webhooks and pipelines, in a
// stable order; and its version, the SHA-256 of its canonical JSON, so that the same model always
// has the same version, whichever workspace or process reads it.
import { createHash } from 'node:crypto';
import type { components } from '@workspace-api/sdk/openapi';
import { canonicalJson } from '@workspace-api/sdk/typegen';
import type { SqlRunner } from '../../db/database';
import { DomainError } from '../errors';
import { rows, sql } from '../sql';
import type { FieldRow } from '../content/content-types';
import { definitionOfRow } from '../content/field-rules';
import type { CurrentModel, StoredField } from './diff';

export type Model = components['schemas']['Model'];
type Webhook = components['schemas']['ModelWebhook'];
type PipelineInput = components['schemas']['PipelineInput'];

/** A field: its name and key first, then its definition with every member explicit. */
function fieldOf(f: Omit<FieldRow, 'id'>): StoredField {
  const { name, ...definition } = definitionOfRow(f);
  return { name, key: f.key, ...definition };
}

/** Names in code-unit order, whatever the database's collation. */
const C = sql`COLLATE "C"`;

/** The workspace's model (`lock`: its row is locked against other model applies until the commit). */
export async function readModel(runner: SqlRunner, workspaceId: number, lock = false): Promise<CurrentModel> {
  const [found] = await rows<{
    model: Omit<CurrentModel, 'buckets'> & {
      buckets: { name: string; content_types: { name: string; name_field: string | null; fields: Omit<FieldRow, 'id'>[] }[] }[];
    };
  }>(
    runner,
    sql`SELECT json_build_object(
          'locales', w.locales,
          'buckets', (SELECT coalesce(json_agg(json_build_object('name', b.name, 'content_types',
                        (SELECT coalesce(json_agg(json_build_object('name', t.name, 'name_field', t.name_field, 'fields',
                           (SELECT coalesce(json_agg(json_build_object('name', f.name, 'key', f.key, 'type', f.type, 'format', f.format, 'multiple', f.multiple,
                                      'required', f.required, 'unique', f."unique", 'targets', f.targets, 'cascade_on_delete', f.cascade_on_delete, 'indexed', f.indexed) ORDER BY f.position), '[]')
                              FROM field_definitions f WHERE f.content_type_id = t.id)) ORDER BY t.name ${C}), '[]')
                           FROM content_types t WHERE t.bucket_id = b.id)) ORDER BY b.name ${C}), '[]')
                        FROM buckets b WHERE b.workspace_id = w.id),
          'contracts', (SELECT coalesce(json_agg(json_build_object('name', c.name, 'schema', c.schema, 'mode', c.mode, 'bucket', cb.name, 'prefix', c.prefix) ORDER BY c.name ${C}), '[]')
                          FROM contracts c LEFT JOIN buckets cb ON cb.id = c.bucket_id WHERE c.workspace_id = w.id),
          'webhooks', (SELECT coalesce(json_agg(json_build_object('id', h.id, 'url', h.url, 'events', h.events) ORDER BY h.url ${C}, h.id), '[]')
                         FROM webhooks h WHERE h.workspace_id = w.id),
          'pipelines', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'name', p.name, 'description', p.description, 'steps', p.steps) ORDER BY p.name ${C}), '[]')
                          FROM pipelines p WHERE p.workspace_id = w.id)
        ) AS model
        FROM workspaces w WHERE w.id = ${workspaceId}::int AND NOT w.deleting ${lock ? sql`FOR NO KEY UPDATE OF w` : sql``}`,
  );
  if (!found) throw new DomainError('not_found');
  const { model } = found;
  return {
    ...model,
    buckets: model.buckets.map((b) => ({
      name: b.name,
      content_types: b.content_types.map((t) => ({ ...t, fields: t.fields.map(fieldOf) })),
    })),
  };
}

/** The model as the API shows it: webhooks and pipelines without their ids. */
function published(model: CurrentModel): Omit<Model, 'workspace' | 'version'> {
  return {
    locales: model.locales,
    buckets: model.buckets,
    contracts: model.contracts,
    webhooks: model.webhooks.map((h) => ({ url: h.url, events: h.events as Webhook['events'] })),
    pipelines: model.pipelines.map((p) => ({ name: p.name, description: p.description, steps: p.steps as PipelineInput['steps'] })),
  };
}

/** The version of a model: the first 32 hex digits of the SHA-256 of its canonical JSON. */
export const modelVersion = (model: CurrentModel): string =>
  createHash('sha256')
    .update(canonicalJson(published(model)))
    .digest('hex')
    .slice(0, 32);

/** The snapshot `GET .../model` answers. */
export const presentModel = (workspace: string, model: CurrentModel): Model => ({
  workspace,
  version: modelVersion(model),
  ...published(model),
});
