// Authentication and authorization of both APIs.
// Management: the ADMIN_TOKEN bearer. Public: an API key in `Authorization: Bearer` only, checked
// in the documented order (see openapi.yaml, "Order of checks"). Key, creator permissions and
// workspace are read in one parameterized query, kept per process in an LookupCache that every
// change drops in every process (LISTEN/NOTIFY), so that a permission change, a deleted key or a
// suspension applies to the very next request of every process. With the test clock the query
// runs on every request: it also reads the clock's offset.
import type { Context } from 'koa';
import type { Clock } from '../clock';
import type { SqlRunner } from '../db/database';
import { bearerToken, safeEqual, sha256 } from '../lib/secrets';
import { forbidden, notFound, MESSAGES } from './errors';
import type { LookupCache } from '../core/lookup-cache';
import type { AppContext } from '../context';
import { hasRights, type OperationContext } from '../core/operations/context';

export interface ApiKeyPrincipal {
  keyId: number;
  keyName: string;
  abilities: string[];
  origins: string[];
  user: { id: number; email: string; permissions: string[] };
  workspace: { id: number; name: string; locales: string[]; objectsEnabled: boolean };
}

export function authenticateAdmin(ctx: Context, adminToken: string): void {
  const token = bearerToken(ctx.get('Authorization'));
  if (!token || !safeEqual(token, adminToken)) throw forbidden();
}

export interface KeyRow {
  key_id: number | null;
  key_name: string;
  abilities: string[] | null;
  origins: string[] | null;
  key_workspace_id: number;
  user_id: number;
  email: string;
  permissions: string[] | null;
  workspace_id: number | null;
  workspace_name: string;
  locales: string[] | null;
  objects_enabled: boolean;
  suspended: boolean;
  clock_offset_ms?: number | null;
}

// One row whatever matches: the key (with its creator) and the route's workspace are looked up
// side by side, so that each documented outcome (403 unknown key, 404 unknown workspace, 403
// foreign key) is told apart without a second round trip. `clock` is the test clock's offset,
// read in the same statement when the clock is adjustable.
/** The columns of a key row (KeyRow): the key, its creator and its workspace. */
const KEY_COLUMNS = `k.id AS key_id, k.name AS key_name, k.abilities, k.origins, k.workspace_id AS key_workspace_id,
         u.id AS user_id, u.email, u.permissions,
         w.id AS workspace_id, w.name AS workspace_name, w.locales, w.objects_enabled, w.suspended`;

const keyQuery = (clockColumn: string | undefined) => `
  SELECT ${KEY_COLUMNS}
         ${clockColumn ? `, ${clockColumn} AS clock_offset_ms` : ''}
    FROM (SELECT 1) AS one
    LEFT JOIN api_keys k ON k.key_hash = $1
    LEFT JOIN users u ON u.id = k.user_id
    LEFT JOIN workspaces w ON w.name = $2`;

/** Resolves the calling key for the `{workspace}` of the route. Throws the documented 403/404. */
export async function authenticateApiKey(
  ctx: Context,
  db: SqlRunner,
  clock: Clock,
  cache: LookupCache<KeyRow>,
  workspaceName: string,
): Promise<ApiKeyPrincipal> {
  const token = bearerToken(ctx.get('Authorization'));
  if (!token) throw forbidden();
  const hash = sha256(token);
  const lookup = async () => (await db.query<KeyRow>(keyQuery(clock.offsetColumn), [hash, workspaceName], true)).rows[0];
  let row: KeyRow;
  if (clock.adjustable) {
    row = await lookup();
    clock.useOffset(Number(row.clock_offset_ms ?? 0));
  } else {
    // Only a key of this very workspace is kept: the answers of failed lookups are not.
    let found: KeyRow | undefined;
    const kept = await cache.get(`${hash} ${workspaceName}`, async () => {
      found = await lookup();
      return found.key_id !== null && found.key_workspace_id === found.workspace_id ? found : undefined;
    });
    row = kept ?? found!;
  }
  if (row.key_id === null) throw forbidden();
  if (row.workspace_id === null) throw notFound();
  if (row.key_workspace_id !== row.workspace_id) throw forbidden();
  // From here on the request belongs to the workspace (request logs).
  ctx.state.workspaceId = row.workspace_id;
  ctx.state.apiKeyId = row.key_id;
  if (row.suspended) throw forbidden(MESSAGES.suspended);
  const origins = row.origins ?? [];
  if (origins.length > 0 && !origins.includes(ctx.get('Origin'))) throw forbidden();
  return toPrincipal(row);
}

const toPrincipal = (row: KeyRow): ApiKeyPrincipal => ({
  keyId: row.key_id!,
  keyName: row.key_name,
  abilities: row.abilities ?? [],
  origins: row.origins ?? [],
  user: { id: row.user_id, email: row.email, permissions: row.permissions ?? [] },
  workspace: { id: row.workspace_id!, name: row.workspace_name, locales: row.locales ?? [], objectsEnabled: row.objects_enabled },
});

/**
 * Key `keyId` of workspace `workspaceId` as it is now, for work done later on its behalf
 * (pipeline steps): its abilities and its creator's current permissions. A deleted key or a
 * suspended workspace gives the reason it can no longer act instead. Read from the database,
 * not the per-request cache.
 */
export async function principalOfKey(db: SqlRunner, keyId: number, workspaceId: number): Promise<ApiKeyPrincipal | { refused: string }> {
  const { rows } = await db.query<KeyRow>(
    `SELECT ${KEY_COLUMNS}
       FROM api_keys k JOIN users u ON u.id = k.user_id JOIN workspaces w ON w.id = k.workspace_id
      WHERE k.id = $1 AND k.workspace_id = $2`,
    [keyId, workspaceId],
  );
  const row = rows[0];
  if (!row) return { refused: 'The API key that started the execution no longer exists.' };
  if (row.suspended) return { refused: MESSAGES.suspended };
  return toPrincipal(row);
}

/** Both the key's abilities (or `*`) and its creator's permissions must cover the operation (core/operations/context.ts). */
export function authorize(principal: ApiKeyPrincipal, abilities: string[], permissions: string[]): void {
  if (!hasRights({ abilities: principal.abilities, permissions: principal.user.permissions }, { abilities, permissions }))
    throw forbidden(MESSAGES.notPermitted);
}

/**
 * The key's request as an operation's context: who asks (key, rights, workspace), from where
 * (`pipeline`: a step acting with the key that started its execution).
 */
export function operationContext(
  app: AppContext,
  principal: ApiKeyPrincipal | undefined,
  source: OperationContext['source'] = 'api',
): OperationContext {
  const p = principal!;
  return { core: app, keyId: p.keyId, abilities: p.abilities, permissions: p.user.permissions, workspace: p.workspace, source };
}
