// Rate limits per group and caller, shared by every server process: counters live in PostgreSQL
// (the `rate_limits` table, rate-limiter-flexible's atomic upsert) or, when REDIS_URL is set, in
// Redis. A limited request gets `429` with `Retry-After`.
import { RateLimiterPostgres, RateLimiterRedis, type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import type { Config } from '../config';
import type { Database } from '../db/database';
import { HttpError, MESSAGES } from './errors';
import { sha256 } from '../lib/secrets';
import type { RateLimitRule, RateLimitScope } from './spec';

/** What a request can be counted per (see `RateLimitScope`). */
export interface RateLimitSubject {
  workspace: string;
  keyId?: number;
  ip: string;
  /** Counted by no scope (see `RateLimitScope`). */
  authorization: string;
  /** The validated JSON body, once there is one. */
  body?: unknown;
}

/**
 * The counter key of a request in a rule's scope, or undefined when the request has nothing to
 * count there. Other than API keys, scopes are counted per workspace and hashed, so that the
 * counters hold no address, token or email; body values count case-insensitively (addresses).
 */
export function rateLimitKey(per: RateLimitScope, s: RateLimitSubject): string | undefined {
  if (per === 'key') return s.keyId === undefined ? undefined : `key:${s.keyId}`;
  let value: unknown;
  if (per === 'ip') value = s.ip;
  else {
    const prop = (s.body as Record<string, unknown> | undefined)?.[per.slice('body.'.length)];
    value = typeof prop === 'string' ? prop.toLowerCase() : undefined;
  }
  return typeof value === 'string' ? `${per}:${sha256(`${s.workspace}\n${value}`)}` : undefined;
}

/** Groups and their per-minute limits. Feature routes name a group in `x-rate-limit`. */
export function rateLimitGroups(config: Config): Record<string, number> {
  const r = config.rateLimits;
  return {
    entries: r.entriesPerMinute,
    'file-uploads': r.fileUploadsPerMinute,
    'file-deletes': r.fileDeletesPerMinute,
    files: r.filesPerMinute,
    'token-downloads': r.tokenDownloadsPerMinute,
    'key-info': r.keyInfoPerMinute,
    pipelines: r.pipelinesPerMinute,
    emails: r.emailsPerMinute,
    'auth-login-email': r.authLoginPerEmail,
    'auth-login-ip': r.authLoginPerIp,
    'auth-verify-otp': r.authVerifyPerOtp,
    'auth-verify-ip': r.authVerifyPerIp,
    'auth-token-ip': r.authTokenPerIp,
    'auth-session-token': r.authSessionPerToken,
  };
}

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  private readonly redis?: Redis;

  constructor(
    private readonly config: Config,
    db: Database,
  ) {
    if (!config.rateLimits.enabled) return;
    if (config.redisUrl) {
      // ioredis loads only when Redis is configured.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on this synchronous path only when configured
      const { default: RedisClient } = require('ioredis') as typeof import('ioredis');
      this.redis = new RedisClient(config.redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: 2 });
    }
    // rate-limiter-flexible talks to PostgreSQL through a `query({text, values})` client.
    // Counters a crash may lose (they expire within minutes anyway): no wait for the WAL flush.
    const storeClient = { query: (q: { text: string; values?: unknown[] }) => db.relaxed.query(q.text, q.values, true) };
    for (const [group, points] of Object.entries(rateLimitGroups(config))) {
      const opts = { keyPrefix: group, points, duration: 60 };
      this.limiters.set(
        group,
        this.redis
          ? new RateLimiterRedis({ ...opts, keyPrefix: `${config.redisPrefix}:${group}`, storeClient: this.redis })
          : new RateLimiterPostgres({
              ...opts,
              storeClient,
              storeType: 'client',
              tableName: 'rate_limits',
              tableCreated: true,
              clearExpiredByTimeout: false,
            }),
      );
    }
  }

  get enabled(): boolean {
    return this.config.rateLimits.enabled;
  }

  /**
   * Counts `points` for `key` in `group`; throws `429` with `Retry-After` past the limit. A
   * reservation of several points that does not fit is handed back: the request runs nothing, so
   * the units left stay usable by a smaller one.
   */
  async consume(group: string, key: string, points = 1): Promise<void> {
    const limiter = this.limiters.get(group);
    if (!limiter) {
      if (this.enabled) throw new Error(`unknown rate-limit group ${group}`);
      return;
    }
    try {
      await limiter.consume(key, points);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      if (points > 1) await limiter.reward(key, points);
      const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw new HttpError(429, { message: MESSAGES.tooManyRequests }, { 'Retry-After': String(retryAfter) });
    }
  }

  /** Counts the request in every rule that can name it (see `rateLimitKey`), in order. */
  async consumeRules(rules: RateLimitRule[], subject: RateLimitSubject): Promise<void> {
    if (!this.enabled) return;
    for (const rule of rules) {
      const key = rateLimitKey(rule.per, subject);
      if (key !== undefined) await this.consume(rule.group, key);
    }
  }

  /** Throws when the Redis store cannot be reached; undefined when there is none (`GET /health`). */
  check(): Promise<unknown> | undefined {
    return this.redis?.ping();
  }

  async close(): Promise<void> {
    await this.redis?.quit().catch(() => undefined);
  }
}

/** Removes expired PostgreSQL counters (the `rate-limits:prune` task). */
export async function pruneRateLimits(db: Database): Promise<number> {
  const res = await db.query('DELETE FROM rate_limits WHERE expire IS NOT NULL AND expire < $1', [Date.now()]);
  return res.rowCount;
}
