// Who asks for an operation, given to it explicitly: the API key and its rights, its creator's
// permissions, the workspace, and where the request came from. The HTTP edge builds one from the
// request's key (http/auth.ts `operationContext`); a pipeline step from the key that started its
// execution, with `source: 'pipeline'`. What the core needs of the process (core/context.ts) rides along.
import type { operations } from '@workspace-api/sdk/openapi';
import type { CoreContext } from '../context';
import { apiKeyActor } from '../../events/audit';
import { DomainError } from '../errors';
import type { WriteContext } from '../content/write';

export interface OperationContext {
  core: CoreContext;
  keyId: number;
  /** The key's abilities (`*` for all). */
  abilities: string[];
  /** Its creator's permissions. */
  permissions: string[];
  workspace: { id: number; name: string; locales: string[]; objectsEnabled: boolean };
  /** Recorded as the revision source of writes. */
  source: 'api' | 'pipeline';
}

type Rights = { abilities: string[]; permissions: string[] };

/** Whether the key has every ability (or `*`) and its creator every permission: the one place of that rule. */
export function hasRights(who: Rights, needed: Rights): boolean {
  const hasAbility = (a: string) => who.abilities.includes('*') || who.abilities.includes(a);
  return needed.abilities.every(hasAbility) && needed.permissions.every((p) => who.permissions.includes(p));
}

/** Refuses (`not_permitted`) unless the caller `hasRights`. */
export function requireRights(cx: Rights, needed: Rights): void {
  if (!hasRights(cx, needed)) throw new DomainError('not_permitted');
}

/** What the entry core needs to write on the caller's behalf. */
export const writeContext = (cx: OperationContext, skipWebhooks?: boolean): WriteContext => ({
  core: cx.core,
  workspace: { id: cx.workspace.id, locales: cx.workspace.locales },
  author: { actor: apiKeyActor(cx.keyId), source: cx.source },
  skipWebhooks,
});

// The typed inputs of an operation, from the spec's generated `operations`.
type ParamsOf<Op extends keyof operations> = operations[Op]['parameters'];
export type QueryOf<Op extends keyof operations> = ParamsOf<Op> extends { query?: infer Q } ? NonNullable<Q> : never;
export type BodyOf<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : never;
