// Database rows as the management API's documented bodies.
import type { Workspace, User, ApiKey, Bucket, ContentType, FieldDefinition, Contract } from '../generated/prisma/client';
import { formatTimestamp } from '../lib/time';
import type { WorkspaceDeletion } from '../core/workspace-deletion';
import type { components } from '@workspace-api/sdk/openapi';

type S = components['schemas'];

export const presentWorkspace = (w: Workspace): S['Workspace'] => ({
  name: w.name,
  locales: w.locales,
  objects_enabled: w.objectsEnabled,
  suspended: w.suspended,
  auth_enabled: w.authEnabled,
  auth_redirect_uris: w.authRedirectUris,
  mail_from: w.mailFrom,
  created_at: formatTimestamp(w.createdAt),
});

export const presentUser = (u: User): S['User'] => ({
  id: u.id,
  email: u.email,
  permissions: u.permissions as S['Permission'][],
});

export const presentApiKey = (k: ApiKey): S['ApiKey'] => ({
  id: k.id,
  name: k.name,
  user_id: k.userId,
  abilities: k.abilities as S['Ability'][],
  origins: k.origins,
  created_at: formatTimestamp(k.createdAt),
});

export const presentBucket = (b: Bucket): S['Bucket'] => ({ id: b.id, name: b.name, created_at: formatTimestamp(b.createdAt) });

export const presentContentType = (t: ContentType & { fields: FieldDefinition[] }, bucket: string): S['ContentType'] => ({
  id: t.id,
  name: t.name,
  bucket,
  name_field: t.nameField,
  fields: [...t.fields]
    .sort((a, b) => a.position - b.position)
    .map((f) => ({
      name: f.name,
      type: f.type as S['FieldDefinition']['type'],
      format: f.format as 'date' | 'time' | 'datetime' | null,
      multiple: f.multiple,
      required: f.required,
      unique: f.unique,
      targets: f.targets,
      cascade_on_delete: f.cascadeOnDelete,
      ...(f.indexed === null ? {} : { indexed: f.indexed }),
    })),
  created_at: formatTimestamp(t.createdAt),
  updated_at: formatTimestamp(t.updatedAt),
});

/** A contract, as Prisma reads it (with its bucket) or as core/content/contract-writes.ts does (its bucket's name). */
export const presentContract = (
  c: Omit<Contract, 'workspaceId' | 'bucketId' | 'schema'> & { schema: unknown; bucket: Bucket | string | null },
): S['Contract'] => ({
  id: c.id,
  name: c.name,
  schema: c.schema as Record<string, unknown>,
  mode: c.mode as 'enforce' | 'report',
  bucket: typeof c.bucket === 'string' ? c.bucket : (c.bucket?.name ?? null),
  prefix: c.prefix,
  created_at: formatTimestamp(c.createdAt),
  updated_at: formatTimestamp(c.updatedAt),
});

export const presentDeletion = (d: WorkspaceDeletion): S['WorkspaceDeletion'] => ({
  id: d.id,
  workspace: d.name,
  status: d.status,
  removed: d.removed,
  error: d.error,
  created_at: formatTimestamp(d.created_at),
  finished_at: d.finished_at && formatTimestamp(d.finished_at),
});
