// Configuration from the environment (management-api.md, "Process and configuration").
// Generated secrets (ADMIN_TOKEN, APP_KEY) are kept in DATA_DIR so that restarts keep them.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';

export type AppEnv = 'production' | 'local' | 'test';
export type StorageDriver = 'local' | 's3';

export interface RateLimitConfig {
  enabled: boolean;
  entriesPerMinute: number;
  fileUploadsPerMinute: number;
  fileDeletesPerMinute: number;
  filesPerMinute: number;
  tokenDownloadsPerMinute: number;
  keyInfoPerMinute: number;
  pipelinesPerMinute: number;
  emailsPerMinute: number;
  authLoginPerEmail: number;
  authLoginPerIp: number;
  authVerifyPerOtp: number;
  authVerifyPerIp: number;
  authTokenPerIp: number;
  authSessionPerToken: number;
}

export interface PipelineConfig {
  /** Origins (`scheme://host[:port]`) that `http.request` steps may call (PIPELINE_HTTP_ALLOWLIST). */
  httpAllowlist: string[];
  /** An `http.request` step without an answer within this many milliseconds fails. */
  httpTimeoutMs: number;
  /** How long a process holds an execution without renewing its lease (real seconds). */
  leaseSeconds: number;
}

export interface S3Config {
  bucket: string;
  region: string;
  endpoint: string | undefined;
  forcePathStyle: boolean;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Key prefix of stored content. */
  prefix: string;
}

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  databaseUrl: string | undefined;
  /** Connections of the PostgreSQL pool (DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /** Bytes of delivery answers kept per process (RESPONSE_CACHE_MB, default 64; 0 keeps none: http/response-cache.ts). */
  responseCacheBytes: number;
  dataDir: string;
  adminToken: string;
  /** True when ADMIN_TOKEN was generated (printed once at start-up). */
  adminTokenGenerated: boolean;
  appKey: string;
  appEnv: AppEnv;
  imageProxyUrl: string;
  /**
   * Where temporary images are fetched from: IMAGE_PROXY_URL when set, otherwise the built-in
   * proxy on this server's own loopback address (BASE_URL may be a public name behind a reverse
   * proxy that this machine cannot reach).
   */
  imageProxyFetchUrl: string;
  /** Where the image proxy fetches originals: this server's own address (IMAGE_ORIGIN_URL). */
  imageOriginUrl: string;
  storageDriver: StorageDriver;
  s3: S3Config | undefined;
  /** Stored content younger than this is never pruned (an upload may be about to use it). */
  storagePruneMinAgeSeconds: number;
  objectsEnabled: boolean;
  testClock: boolean;
  redisUrl: string | undefined;
  /** Prefix of every Redis key, so that deployments can share one Redis. */
  redisPrefix: string;
  rateLimits: RateLimitConfig;
  /** Milliseconds a graceful shutdown waits for in-flight requests. */
  shutdownTimeoutMs: number;
  /** How often each process's scheduler looks for due periods, events and deliveries. */
  schedulerTickMs: number;
  /** A webhook delivery that gets no answer within this many milliseconds has failed. */
  webhookTimeoutMs: number;
  pipelines: PipelineConfig;
  /** SMTP server of transactional email (SMTP_URL); unset: the local outbox keeps every message. */
  smtpUrl: string | undefined;
  /** Sender of workspaces without their own `mail_from` (MAIL_FROM). */
  mailFrom: string;
  /** Delay before the first retry of a failed SMTP attempt, doubled for each next one. */
  emailRetryDelaySeconds: number;
  /** Lifetime of hosted-authentication access tokens (AUTH_TOKEN_TTL_SECONDS). */
  authTokenTtlSeconds: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new ConfigError(`${name} must be an integer >= ${min}, got "${raw}"`);
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** Reads a secret from the environment, or from DATA_DIR, or generates and stores it there. */
function secret(env: Env, name: string, dataDir: string): { value: string; generated: boolean } {
  const given = env[name];
  if (given) return { value: given, generated: false };
  const file = path.join(dataDir, `${name.toLowerCase()}.secret`);
  if (existsSync(file)) return { value: readFileSync(file, 'utf8').trim(), generated: true };
  const value = randomBytes(32).toString('base64url');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, value + '\n', { mode: 0o600 });
  return { value, generated: true };
}

function s3Config(env: Env): S3Config {
  if (!env.S3_BUCKET) throw new ConfigError('STORAGE_DRIVER=s3 needs S3_BUCKET');
  return {
    bucket: env.S3_BUCKET,
    region: env.S3_REGION || 'us-east-1',
    endpoint: env.S3_ENDPOINT || undefined,
    forcePathStyle: boolean(env, 'S3_FORCE_PATH_STYLE', Boolean(env.S3_ENDPOINT)),
    accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
    prefix: env.S3_PREFIX ?? 'content/',
  };
}

/** Comma-separated origins; each must be an http(s) URL without path, query or credentials. */
function origins(env: Env, name: string): string[] {
  const raw = env[name] ?? '';
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        throw new ConfigError(`${name} must list origins such as https://example.com, got "${s}"`);
      }
      const bare = (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash && !url.username && !url.password;
      if (!['http:', 'https:'].includes(url.protocol) || !bare) throw new ConfigError(`${name} must list origins such as https://example.com, got "${s}"`);
      return url.origin;
    });
}

/** SMTP_URL: `smtp://` or `smtps://` (user and password in the URL, as nodemailer reads them). */
function smtpUrl(env: Env): string | undefined {
  const raw = env.SMTP_URL;
  if (!raw) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError(`SMTP_URL must be a URL such as smtp://127.0.0.1:1025, got "${raw}"`);
  }
  if (protocol !== 'smtp:' && protocol !== 'smtps:') throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${raw}"`);
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000);
  const baseUrl = (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const appEnv = oneOf(env, 'APP_ENV', ['production', 'local', 'test'] as const, 'local');
  const admin = secret(env, 'ADMIN_TOKEN', dataDir);
  const appKey = secret(env, 'APP_KEY', dataDir);
  const testClock = env.TEST_CLOCK === '1';
  const storageDriver = oneOf(env, 'STORAGE_DRIVER', ['local', 's3'] as const, 'local');
  if (testClock && appEnv === 'production') throw new ConfigError('TEST_CLOCK=1 is refused when APP_ENV=production');
  return {
    port,
    host: env.HOST || '0.0.0.0',
    baseUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    databasePoolSize: Math.max(1, Math.min(100, Number(env.DATABASE_POOL_SIZE) || 10)),
    responseCacheBytes: Math.min(65_536, integer(env, 'RESPONSE_CACHE_MB', 64)) * 1024 * 1024,
    dataDir,
    adminToken: admin.value,
    adminTokenGenerated: admin.generated,
    appKey: appKey.value,
    appEnv,
    // An empty IMAGE_PROXY_URL is meaningful (local mode), so only an unset one takes the default.
    imageProxyUrl: (env.IMAGE_PROXY_URL ?? `${baseUrl}/_image`).replace(/\/+$/, ''),
    imageProxyFetchUrl: (env.IMAGE_PROXY_URL ?? `http://127.0.0.1:${port}/_image`).replace(/\/+$/, ''),
    imageOriginUrl: (env.IMAGE_ORIGIN_URL || `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    storageDriver,
    s3: storageDriver === 's3' ? s3Config(env) : undefined,
    storagePruneMinAgeSeconds: integer(env, 'STORAGE_PRUNE_MIN_AGE_SECONDS', 3600),
    objectsEnabled: boolean(env, 'OBJECTS_ENABLED', true),
    testClock,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'workspace-api',
    rateLimits: {
      enabled: boolean(env, 'RATE_LIMIT_ENABLED', appEnv === 'production'),
      entriesPerMinute: integer(env, 'RATE_LIMIT_ENTRIES_PER_MINUTE', 500, 1),
      fileUploadsPerMinute: integer(env, 'RATE_LIMIT_FILE_UPLOADS_PER_MINUTE', 60, 1),
      fileDeletesPerMinute: integer(env, 'RATE_LIMIT_FILE_DELETES_PER_MINUTE', 60, 1),
      filesPerMinute: integer(env, 'RATE_LIMIT_FILES_PER_MINUTE', 1200, 1),
      tokenDownloadsPerMinute: integer(env, 'RATE_LIMIT_TOKEN_DOWNLOADS_PER_MINUTE', 1200, 1),
      keyInfoPerMinute: integer(env, 'RATE_LIMIT_KEY_INFO_PER_MINUTE', 60, 1),
      pipelinesPerMinute: integer(env, 'RATE_LIMIT_PIPELINES_PER_MINUTE', 30, 1),
      emailsPerMinute: integer(env, 'RATE_LIMIT_EMAILS_PER_MINUTE', 10, 1),
      authLoginPerEmail: integer(env, 'RATE_LIMIT_AUTH_LOGIN_PER_EMAIL', 10, 1),
      authLoginPerIp: integer(env, 'RATE_LIMIT_AUTH_LOGIN_PER_IP', 60, 1),
      authVerifyPerOtp: integer(env, 'RATE_LIMIT_AUTH_VERIFY_PER_OTP', 10, 1),
      authVerifyPerIp: integer(env, 'RATE_LIMIT_AUTH_VERIFY_PER_IP', 120, 1),
      authTokenPerIp: integer(env, 'RATE_LIMIT_AUTH_TOKEN_PER_IP', 60, 1),
      authSessionPerToken: integer(env, 'RATE_LIMIT_AUTH_SESSION_PER_TOKEN', 600, 1),
    },
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000),
    schedulerTickMs: integer(env, 'SCHEDULER_TICK_MS', 1_000, 50),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    pipelines: {
      httpAllowlist: origins(env, 'PIPELINE_HTTP_ALLOWLIST'),
      httpTimeoutMs: integer(env, 'PIPELINE_HTTP_TIMEOUT_MS', 10_000, 100),
      leaseSeconds: integer(env, 'PIPELINE_LEASE_SECONDS', 30, 1),
    },
    smtpUrl: smtpUrl(env),
    mailFrom: env.MAIL_FROM || `no-reply@${new URL(baseUrl).hostname}`,
    emailRetryDelaySeconds: integer(env, 'EMAIL_RETRY_DELAY_SECONDS', 30, 1),
    authTokenTtlSeconds: integer(env, 'AUTH_TOKEN_TTL_SECONDS', 86_400, 60),
  };
}
