// The explicit context every handler and service receives: no module-level singletons.
import type { Config } from './config';
import type { Database } from './db/database';
import type { Clock } from './clock';
import type { RateLimits } from './http/rate-limit';
import type { TaskRegistry } from './tasks';
import type { Logger } from './lib/logger';
import type { JobQueue } from './jobs/queue';
import type { Scheduler } from './jobs/scheduler';
import type { Storage } from './storage/storage';
import type { RequestLogBuffer } from './http/request-log';
import type { ContractValidators } from './core/content/contracts';
import type { LookupCache } from './core/lookup-cache';
import type { TextKeeper } from './core/content/kept-texts';
import type { ResponseCache } from './http/response-cache';
import type { KeyRow } from './http/auth';
import type { ContentTypeDef } from './core/content/content-types';
import type { Operations } from './http/operations';
import type { PipelineRunner } from './pipelines/runner';
import type { AuthWorkspaceRow } from './http/auth-workspace';

export interface AppContext {
  config: Config;
  db: Database;
  clock: Clock;
  rateLimits: RateLimits;
  tasks: TaskRegistry;
  log: Logger;
  jobs: JobQueue;
  scheduler: Scheduler;
  storage: Storage;
  requestLogs: RequestLogBuffer;
  /** Lookups of this process, dropped on every change in any process (core/lookup-cache.ts). */
  lookups: {
    /** API key lookups; its listener drives the others. */
    keys: LookupCache<KeyRow>;
    /** Content types by bucket (`id:<bucket id>` or `<workspace id>/<bucket name>`). */
    contentTypes: LookupCache<Map<string, ContentTypeDef>>;
    /** Hosted-authentication settings of workspaces by name (http/auth-workspace.ts). */
    authWorkspaces: LookupCache<AuthWorkspaceRow>;
    /** The content type id of a published entry by `<workspace id>:<entry ULID>` (an entry's type never changes; core/operations/entries.ts getEntry). */
    entryTypes: LookupCache<number>;
  };
  /** Follows content changes of every process (http/response-cache.ts): a write confirms every process dropped its answers. */
  contentChanges: ResponseCache;
  /** Delivery answers of this process (the same cache); absent when none are kept. */
  responses?: ResponseCache;
  /** Writes rendered delivery entries for later answers (core/content/kept-texts.ts); absent when none are kept. */
  keeper?: TextKeeper;
  /** Compiled contract validators, one per contract version. */
  contractValidators: ContractValidators;
  /** The spec's operations with their validation and handlers (the router's, and pipeline steps'). */
  operations: Operations;
  /** Pipeline executions run by this process. */
  pipelines: PipelineRunner;
}
