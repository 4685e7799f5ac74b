// What the core receives from the process, and nothing more: the database, the clock, the
// configuration, the log, the job queue, stored content, the lookups and kept answers the core
// keeps fresh, and three narrow doors out (the dispatcher's wake-up, a rate limit, the operations'
// body check). The application (context.ts) holds these and more (routing, response caches, the
// pipelines' runner); it satisfies this interface, and the core cannot reach past it.
import type { Config } from '../config';
import type { Clock } from '../clock';
import type { Database } from '../db/database';
import type { Logger } from '../lib/logger';
import type { JobQueue } from '../jobs/queue';
import type { Storage } from '../storage/storage';
import type { LookupCache } from './lookup-cache';
import type { ContentTypeDef } from './content/content-types';
import type { TextKeeper } from './content/kept-texts';
import type { ContractValidators } from './content/contracts';
import type { StepBodyCheck } from './pipeline-engine/definition';

/** The lookups the core reads and drops (core/lookup-cache.ts). */
export interface CoreLookups {
  /** Content types by bucket (`id:<bucket id>` or `<workspace id>/<bucket name>`). */
  contentTypes: LookupCache<Map<string, ContentTypeDef>>;
  /** The content type id of a published entry by `<workspace id>:<entry ULID>` (an entry's type never changes; core/operations/entries.ts getEntry). */
  entryTypes: LookupCache<number>;
}

export interface CoreContext {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  jobs: JobQueue;
  storage: Storage;
  lookups: CoreLookups;
  /** Writes rendered delivery entries for later answers (core/content/kept-texts.ts); absent when none are kept. */
  keeper?: TextKeeper;
  /** Compiled contract validators, one per contract version. */
  contractValidators: ContractValidators;
  /** Wakes the event dispatcher once a unit of work has committed (jobs/scheduler.ts). */
  scheduler: { kick(): void };
  /** Counts a use against a rate-limit group; throws the 429 when it is spent (http/rate-limit.ts). */
  rateLimits: { consume(group: string, key: string): Promise<void> };
  /** Checks a pipeline step's body against the API's operations (http/operations.ts). */
  operations: StepBodyCheck;
}
