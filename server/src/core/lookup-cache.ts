// Lookups kept per process (API keys, so that an authenticated request costs no round trip of its
// own; content types, which every entry write and render reads; on a channel of its own, the
// answers of delivery reads, http/response-cache.ts). Correct across processes because
// every change to what they read (api_keys, users, workspaces, buckets, content types and field
// definitions) notifies `auth_changed` (triggers, see the auth_changed_notify and
// lookups_changed_notify migrations) and every process drops its caches on it. While this process
// is not listening (connecting, or its listening connection was lost), nothing is cached: each
// request reads the database, as without a cache.
import type { Database, Listener } from '../db/database';

/** The channel's name predates content types in it. */
export const LOOKUPS_CHANGED_CHANNEL = 'auth_changed';

/** Every change to content a delivery read answers, with its workspace's id (http/response-cache.ts). */
export const CONTENT_CHANGED_CHANNEL = 'content_changed';

/** The scope of an entry that may depend on any workspace: dropped on every change. */
const EVERY = '';
/** Workspaces whose drop is remembered for loads in flight; past this many, a drop is of everything. */
const MAX_DROPPED_SCOPES = 10_000;

export class LookupCache<T> {
  private readonly entries = new Map<string, { value: T; until: number; weight: number; scope: string }>();
  /** The keys of each scope (a workspace's id, or EVERY). */
  private readonly scopes = new Map<string, Set<string>>();
  /** The weights of the kept entries together (see `budget`). */
  private weight = 0;
  /** Bumped on every drop: a lookup that began before a change of its scope must not fill the cache after it. */
  private sequence = 0;
  /** `sequence` at the last drop of everything, and at the last drop of each scope since. */
  private droppedAll = 0;
  private readonly droppedScopes = new Map<string, number>();
  private listening = false;
  private listener?: Listener;
  /** Caches of other lookups that this one's listener drives. */
  private readonly followers: LookupCache<unknown>[] = [];

  constructor(
    /** Entries kept at most (the oldest go first). */
    private readonly maxEntries = 10_000,
    /** A backstop only: a change drops entries at once. */
    private readonly ttlMs = 60_000,
    /** Entries weigh `weigh(value, key)` and together at most `max` (the oldest go first): answers by every byte they hold. */
    private readonly budget?: { weigh: (value: T, key: string) => number; max: number },
  ) {}

  /**
   * Starts following the database's change notifications on `channel`: a notification whose
   * payload is a workspace's id drops that workspace's entries (and those of no workspace), any
   * other drops everything.
   */
  listen(db: Database, channel = LOOKUPS_CHANGED_CHANNEL): void {
    this.listener = db.listen(
      channel,
      (payload) => this.hear(payload),
      (listening) => {
        // Changes made while not listening were missed: start over either way.
        for (const cache of [this, ...this.followers]) {
          cache.listening = listening;
          cache.drop();
        }
      },
    );
  }

  /** Another cache, kept and dropped by this one's notifications (one listening connection for all). */
  follower<U>(maxEntries = this.maxEntries, ttlMs = this.ttlMs): LookupCache<U> {
    const cache = new LookupCache<U>(maxEntries, ttlMs);
    cache.listening = this.listening;
    this.followers.push(cache as LookupCache<unknown>);
    return cache;
  }

  async stop(): Promise<void> {
    this.listening = false;
    for (const cache of this.followers) cache.listening = false;
    await this.listener?.stop();
  }

  private hear(payload: string): void {
    const scope = /^[1-9][0-9]{0,9}$/.test(payload) ? payload : undefined;
    for (const cache of [this, ...this.followers]) cache.drop(scope);
  }

  /**
   * Resolves once every process has dropped what it cached before now (see `Listener.confirm`).
   * An operation that changes lookups answers only then, so its client's next request sees the
   * change in whichever process it reaches.
   */
  async confirmDropped(): Promise<void> {
    await this.listener?.confirm();
  }

  /** Drops every entry, or those of the workspace `scope` and those of no workspace. */
  drop(scope?: string): void {
    this.sequence++;
    if (scope === undefined || scope === EVERY || this.droppedScopes.size >= MAX_DROPPED_SCOPES) {
      this.droppedAll = this.sequence;
      this.droppedScopes.clear();
      this.entries.clear();
      this.scopes.clear();
      this.weight = 0;
      return;
    }
    this.droppedScopes.set(scope, this.sequence);
    for (const s of [scope, EVERY]) for (const key of this.scopes.get(s) ?? []) this.remove(key);
  }

  /** Whether a load begun at `sequence` for `scope` may still be kept. */
  private current(sequence: number, scope: string): boolean {
    if (scope === EVERY) return this.sequence === sequence;
    return this.droppedAll <= sequence && (this.droppedScopes.get(scope) ?? 0) <= sequence;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.weight -= entry.weight;
    this.entries.delete(key);
    const keys = this.scopes.get(entry.scope)!;
    keys.delete(key);
    if (!keys.size) this.scopes.delete(entry.scope);
  }

  /** What is kept now, with the weight counted for each (diagnostics and tests). */
  kept(): { key: string; value: T; weight: number }[] {
    return [...this.entries].map(([key, e]) => ({ key, value: e.value, weight: e.weight }));
  }

  /**
   * The cached value of `key`, or `load()`'s, kept when it is defined and nothing of its `scope`
   * (the workspace it depends on; by default any) changed meanwhile.
   */
  async get(key: string, load: () => Promise<T | undefined>, scope: string = EVERY): Promise<T | undefined> {
    if (!this.listening) return load();
    const hit = this.entries.get(key);
    const now = Date.now();
    if (hit && hit.until > now) return hit.value;
    const sequence = this.sequence;
    const value = await load();
    if (value !== undefined && this.listening && this.current(sequence, scope)) {
      const weight = this.budget?.weigh(value, key) ?? 0;
      if (this.budget && weight > this.budget.max) return value;
      this.remove(key);
      // Entries are in the order they expire (one time-to-live, a refreshed key moves last): the
      // expired go first, then the oldest while the new one does not fit.
      for (const [oldest, entry] of this.entries) {
        if (entry.until > now && this.entries.size < this.maxEntries && !(this.budget && this.weight + weight > this.budget.max)) break;
        this.remove(oldest);
      }
      this.entries.set(key, { value, until: now + this.ttlMs, weight, scope });
      let keys = this.scopes.get(scope);
      if (!keys) this.scopes.set(scope, (keys = new Set()));
      keys.add(key);
      this.weight += weight;
    }
    return value;
  }
}
