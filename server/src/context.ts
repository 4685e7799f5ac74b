// The explicit context every handler and service receives: no module-level singletons. The core
// sees only its part (core/context.ts); the rest serves the HTTP layer, the jobs and the pipelines.
import type { CoreContext, CoreLookups } from './core/context';
import type { RateLimits } from './http/rate-limit';
import type { TaskRegistry } from './tasks';
import type { Scheduler } from './jobs/scheduler';
import type { RequestLogBuffer } from './http/request-log';
import type { LookupCache } from './core/lookup-cache';
import type { ResponseCache } from './http/response-cache';
import type { KeyRow } from './http/auth';
import type { Operations } from './http/operations';
import type { PipelineRunner } from './pipelines/runner';
import type { AuthWorkspaceRow } from './http/auth-workspace';

export interface AppContext extends CoreContext {
  rateLimits: RateLimits;
  tasks: TaskRegistry;
  scheduler: Scheduler;
  requestLogs: RequestLogBuffer;
  /** Lookups of this process, dropped on every change in any process (core/lookup-cache.ts). */
  lookups: CoreLookups & {
    /** API key lookups; its listener drives the others. */
    keys: LookupCache<KeyRow>;
    /** Hosted-authentication settings of workspaces by name (http/auth-workspace.ts). */
    authWorkspaces: LookupCache<AuthWorkspaceRow>;
  };
  /** Follows content changes of every process (http/response-cache.ts): a write confirms every process dropped its answers. */
  contentChanges: ResponseCache;
  /** Delivery answers of this process (the same cache); absent when none are kept. */
  responses?: ResponseCache;
  /** The spec's operations with their validation and handlers (the router's, and pipeline steps'). */
  operations: Operations;
  /** Pipeline executions run by this process. */
  pipelines: PipelineRunner;
}
