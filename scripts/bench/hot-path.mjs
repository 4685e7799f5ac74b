// The authenticated hot path under load, on the built server (dist/), once on a PostgreSQL server
// and once on the embedded default (PGlite): requests per second and latency of
//   GET /health                       (no auth, no database: the ceiling of this machine)
//   GET /api/v1/{workspace}/api-key   (API key authentication, key info)
//   GET /api/v1/{workspace}/files/{id} (authentication, ability and permission checks, a file row,
//                                       signed temporary URLs)
// measured with autocannon (10 connections, a warm-up that is not counted, then BENCH_SECONDS).
//
// Standalone: `node scripts/bench/hot-path.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per route        BENCH_WARMUP_SECONDS=2
//   BENCH_CONNECTIONS=10      concurrent connections
//   BENCH_DATABASES=postgres,embedded   which databases to run (default both)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_TEST_CLOCK=1        also run with APP_ENV=test TEST_CLOCK=1 (the test clock's cost)
//   BENCH_RATE_LIMITS=1       also run with RATE_LIMIT_ENABLED=true and limits too high to hit
//                             (the rate limiter's cost)
//   BENCH_LOG_LEVEL=silent    the server's LOG_LEVEL (its output is shown when the set-up fails)
//   BENCH_PROFILE=1           run the server under `node --cpu-prof`; the .cpuprofile of each run
//                             is written when it stops (SIGTERM) to BENCH_PROFILE_DIR or a new
//                             temp directory, and its path printed (open it in Chrome DevTools)
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '../..');
const mainJs = path.join(root, 'dist/server/src/main.js');
const ADMIN_TOKEN = 'bench-admin-token';
const APP_KEY = 'bench-app-key-0123456789abcdef0123456789abcdef';

const TARGETS = {
  postgres: { rps: 2500, p50: 4 },
  embedded: { rps: 1000, p50: undefined },
};

const VARIANTS = {
  base: { label: 'APP_ENV=local', env: { APP_ENV: 'local' } },
  testClock: { label: 'APP_ENV=test TEST_CLOCK=1', env: { APP_ENV: 'test', TEST_CLOCK: '1' } },
  rateLimits: {
    label: 'APP_ENV=local RATE_LIMIT_ENABLED=true (limits 1e8/min)',
    env: {
      APP_ENV: 'local',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_KEY_INFO_PER_MINUTE: '100000000',
      RATE_LIMIT_FILES_PER_MINUTE: '100000000',
    },
  },
};

// ---------------------------------------------------------------------------------------------
// Cleanup that also happens on errors, Ctrl-C and SIGTERM of this process.

const live = { children: new Set(), dirs: new Set(), databases: new Map() }; // databases: name -> admin URL

function killChildrenSync() {
  for (const child of live.children) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
}

function cleanupSync() {
  killChildrenSync();
  for (const dir of live.dirs) rmSync(dir, { recursive: true, force: true });
  live.dirs.clear();
  // Last resort on a plain exit: drop leftover databases from a short-lived helper process.
  for (const [name, adminUrl] of live.databases) {
    spawnSync(process.execPath, ['--input-type=module', '-e', dropScript(name, adminUrl)], { cwd: root, stdio: 'ignore', timeout: 15_000 });
  }
  live.databases.clear();
}

const dropScript = (name, adminUrl) =>
  `import pg from 'pg'; const c = new pg.Client(${JSON.stringify(adminUrl)}); await c.connect();` +
  `await c.query(${JSON.stringify(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)}); await c.end();`;

async function cleanupAsync() {
  await Promise.all([...live.children].map((child) => stopServer(child, 5_000).catch(() => {})));
  for (const [name, adminUrl] of [...live.databases]) await dropDatabase(name, adminUrl).catch(() => {});
  cleanupSync();
}

function installSignalHandlers() {
  let interrupted = false;
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\nhot-path bench: ${signal}, cleaning up`);
    cleanupAsync().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  const onExit = () => cleanupSync();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', onExit);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('exit', onExit);
  };
}

// ---------------------------------------------------------------------------------------------
// Databases

const quoteIdent = (name) => `"${name.replaceAll('"', '""')}"`;

async function withAdminClient(adminUrl, fn) {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function postgresReachable(adminUrl) {
  try {
    await withAdminClient(adminUrl, (c) => c.query('SELECT 1'));
    return true;
  } catch (err) {
    return err;
  }
}

async function createDatabase(adminUrl) {
  const name = `wsbench_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  live.databases.set(name, adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

async function dropDatabase(name, adminUrl) {
  await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  live.databases.delete(name);
}

// ---------------------------------------------------------------------------------------------
// The server

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function makeTempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  live.dirs.add(dir);
  return dir;
}

function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  live.dirs.delete(dir);
}

// Variables of the caller's environment that would change what is measured.
const STRIPPED_ENV = /^(?:(?:DATABASE_URL|DATA_DIR|TEST_CLOCK|APP_ENV|REDIS_URL|REDIS_PREFIX|STORAGE_DRIVER|IMAGE_PROXY_URL|IMAGE_ORIGIN_URL|BASE_URL|HOST|PORT|ADMIN_TOKEN|APP_KEY|LOG_LEVEL|TRUST_PROXY)$|RATE_LIMIT_|S3_)/;

async function startServer({ databaseUrl, dataDir, variantEnv, profileDir }) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !STRIPPED_ENV.test(k)));
  Object.assign(env, {
    HOST: '127.0.0.1',
    PORT: String(port),
    BASE_URL: base,
    ADMIN_TOKEN,
    APP_KEY,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'silent',
    ...variantEnv,
  });
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const args = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, mainJs] : [mainJs];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-8_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.once('exit', () => live.children.delete(child));
  child.output = () => output;

  const started = performance.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`server exited (${child.exitCode ?? child.signalCode}) before answering /health:\n${output}`);
    }
    try {
      const res = await fetch(`${base}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (performance.now() - started > 120_000) {
      await stopServer(child);
      throw new Error(`server did not answer GET /health with 200 within 120 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, base, startMs: performance.now() - started };
}

/** SIGTERM (graceful: the server finishes in-flight requests and exits), SIGKILL after a timeout. */
async function stopServer(child, timeoutMs = 20_000) {
  if (child.exitCode !== null || child.signalCode !== null) return { graceful: true, code: child.exitCode };
  const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
  child.kill('SIGTERM');
  let timer;
  const result = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r(null), timeoutMs)))]);
  clearTimeout(timer);
  if (result) return { graceful: true, ...result };
  child.kill('SIGKILL');
  return { graceful: false, ...(await exited) };
}

// ---------------------------------------------------------------------------------------------
// Set-up through the management API and the public API

async function call(base, method, p, token, body) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

async function setup(base) {
  const ws = 'bench';
  await call(base, 'POST', '/admin/v1/workspaces', ADMIN_TOKEN, { name: ws });
  const user = await call(base, 'POST', `/admin/v1/workspaces/${ws}/users`, ADMIN_TOKEN, {
    email: 'bench@example.com',
    permissions: ['view-file', 'create-file'],
  });
  const { key } = await call(base, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, ADMIN_TOKEN, {
    name: 'bench',
    user_id: user.id,
    abilities: ['*'],
  });
  const file = await call(base, 'POST', `/api/v1/${ws}/files`, key, {
    file: { name: 'a.txt', type: 'text/plain', content: Buffer.from('hello, hot path\n').toString('base64') },
  });
  return { ws, key, fileId: file.id };
}

// ---------------------------------------------------------------------------------------------
// Load

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function runCannon(opts, onResponse) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
    if (onResponse) instance.on('response', onResponse);
  });
}

/**
 * Warm-up (not counted), then the measured run. Latency percentiles come from the exact response
 * times (autocannon's own histogram has 1 ms resolution, too coarse for a "p50 < 4 ms" target).
 */
async function measure(url, headers, { seconds, warmupSeconds, connections }) {
  const common = { url, headers, connections, pipelining: 1, timeout: 10 };
  if (warmupSeconds > 0) await runCannon({ ...common, duration: warmupSeconds });
  const latencies = [];
  const result = await runCannon({ ...common, duration: seconds }, (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  latencies.sort((a, b) => a - b);
  const statusCodes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}×${count}`)
    .join(' ');
  return {
    rps: result.requests.average,
    total: result.requests.total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');

function verdict(row, target) {
  if (!target) return '(ceiling)';
  const bad = row.non2xx > 0 || row.errors > 0 || row.timeouts > 0;
  const parts = [`>= ${target.rps} req/s`];
  let ok = row.rps >= target.rps;
  if (target.p50 !== undefined) {
    parts.push(`p50 < ${target.p50} ms`);
    ok = ok && row.p50 < target.p50;
  }
  return `${parts.join(', ')}: ${bad ? 'INVALID (non-2xx/errors)' : ok ? 'met' : 'MISSED'}`;
}

function printTable(title, rows, baseline) {
  console.log(title);
  const head = `  ${pad('route', 34)}${lpad('req/s', 9)}${lpad('p50 ms', 9)}${lpad('p99 ms', 9)}${lpad('non-2xx', 9)}${lpad('errors', 8)}${lpad('/health', 9)}  target`;
  console.log(head);
  const health = rows.find((r) => r.route === 'health');
  for (const row of rows) {
    const ratio = health && health.rps > 0 ? (row.rps / health.rps).toFixed(3) : '-';
    let line = `  ${pad(row.label, 34)}${lpad(row.rps.toFixed(0), 9)}${lpad(ms(row.p50), 9)}${lpad(ms(row.p99), 9)}${lpad(row.non2xx, 9)}${lpad(row.errors + row.timeouts, 8)}${lpad(ratio, 9)}  ${verdict(row, row.target)}`;
    const before = baseline?.find((r) => r.route === row.route);
    if (before && before.rps > 0) {
      const delta = ((row.rps - before.rps) / before.rps) * 100;
      line += `   (${delta >= 0 ? '+' : ''}${delta.toFixed(1)} % req/s vs ${VARIANTS.base.label})`;
    }
    console.log(line);
    if (row.non2xx > 0 || row.errors > 0 || row.timeouts > 0) {
      console.log(`    WARNING: ${row.label}: ${row.non2xx} non-2xx, ${row.errors} errors, ${row.timeouts} timeouts (status codes: ${row.statusCodes})`);
    }
  }
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

// ---------------------------------------------------------------------------------------------

async function runOne({ database, variant, adminUrl, opts, profileRoot }) {
  const dataDir = makeTempDir('wsapi-bench-hot-');
  let db;
  let server;
  let profileDir;
  let ok = false;
  const notes = [];
  try {
    if (database === 'postgres') db = await createDatabase(adminUrl);
    if (profileRoot) {
      profileDir = path.join(profileRoot, `${database}-${variant}`);
      mkdirSync(profileDir, { recursive: true });
    }
    server = await startServer({ databaseUrl: db?.url, dataDir, variantEnv: VARIANTS[variant].env, profileDir });
    const { ws, key, fileId } = await setup(server.base).catch((err) => {
      const out = server.child.output().trim();
      throw new Error(`${err.message}${out ? `\nserver output:\n${out}` : '\n(BENCH_LOG_LEVEL=error shows the server log)'}`);
    });
    const auth = { Authorization: `Bearer ${key}` };
    const routes = [
      { route: 'health', label: 'GET /health', url: `${server.base}/health`, headers: {}, target: undefined },
      { route: 'api-key', label: `GET /api/v1/${ws}/api-key`, url: `${server.base}/api/v1/${ws}/api-key`, headers: auth, target: TARGETS[database] },
      { route: 'file', label: `GET /api/v1/${ws}/files/${fileId}`, url: `${server.base}/api/v1/${ws}/files/${fileId}`, headers: auth, target: TARGETS[database] },
    ];
    // Each route must answer 200 before it is worth loading.
    for (const r of routes) {
      const res = await fetch(r.url, { headers: r.headers });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${r.label}: HTTP ${res.status} before the load: ${text.slice(0, 300)}`);
    }
    const rows = [];
    for (const r of routes) rows.push({ ...r, ...(await measure(r.url, r.headers, opts)) });
    ok = true;
    return { rows, startMs: server.startMs, notes };
  } finally {
    if (server) {
      const stopped = await stopServer(server.child);
      if (profileDir) {
        const profiles = existsSync(profileDir) ? readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) : [];
        if (profiles.length) for (const f of profiles) notes.push(`  CPU profile: ${path.join(profileDir, f)}`);
        else notes.push(`  CPU profile: none written${stopped.graceful ? '' : ' (the server did not stop on SIGTERM and was killed)'}`);
      } else if (!stopped.graceful) {
        notes.push('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
      }
      // After a failure the caller prints nothing of this run: say it here.
      if (!ok) for (const note of notes) console.log(note);
    }
    if (db) await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

// Other work on the machine (a test run, a build) shows in every figure: sample how busy the CPUs
// are just before a run (the load average would still count the previous run of this bench).
async function cpuBusy(sampleMs = 1000) {
  const total = () => os.cpus().reduce((acc, c) => {
    const t = c.times;
    acc.idle += t.idle;
    acc.all += t.user + t.nice + t.sys + t.idle + t.irq;
    return acc;
  }, { idle: 0, all: 0 });
  const a = total();
  await new Promise((r) => setTimeout(r, sampleMs));
  const b = total();
  return b.all > a.all ? 1 - (b.idle - a.idle) / (b.all - a.all) : 0;
}
const pct = (x) => `${(x * 100).toFixed(0)} %`;

export async function benchHotPath(options = {}) {
  const env = process.env;
  const opts = {
    seconds: Number(options.seconds ?? env.BENCH_SECONDS ?? 10),
    warmupSeconds: Number(options.warmupSeconds ?? env.BENCH_WARMUP_SECONDS ?? 2),
    connections: Number(options.connections ?? env.BENCH_CONNECTIONS ?? 10),
  };
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const databases = (options.databases ?? (env.BENCH_DATABASES || 'postgres,embedded').split(',')).map((s) => s.trim()).filter(Boolean);
  const variants = ['base'];
  if (options.testClock ?? env.BENCH_TEST_CLOCK === '1') variants.push('testClock');
  if (options.rateLimits ?? env.BENCH_RATE_LIMITS === '1') variants.push('rateLimits');
  const profile = options.profile ?? env.BENCH_PROFILE === '1';
  let profileRoot;
  if (profile) {
    profileRoot = env.BENCH_PROFILE_DIR ? path.resolve(env.BENCH_PROFILE_DIR) : mkdtempSync(path.join(os.tmpdir(), 'wsapi-hot-path-cpuprof-'));
    mkdirSync(profileRoot, { recursive: true });
  }

  if (!existsSync(mainJs)) throw new Error(`${path.relative(root, mainJs)} is missing: run \`npm run build\` first`);
  const srcNewest = newestMtime(path.join(root, 'server/src'));
  if (srcNewest > statSync(mainJs).mtimeMs) {
    console.log('hot path: WARNING: server/src has changes newer than dist/: the figures are of the last build (`npm run build`)');
  }

  const removeHandlers = installSignalHandlers();
  const results = {};
  let invalid = false;
  try {
    console.log(
      `hot path: ${opts.connections} connections, ${opts.warmupSeconds} s warm-up + ${opts.seconds} s per route; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon runs on the same machine)${profile ? `; CPU profiles under ${profileRoot}` : ''}`,
    );
    for (const database of databases) {
      if (!(database in TARGETS)) throw new Error(`BENCH_DATABASES: unknown database "${database}" (postgres, embedded)`);
      if (database === 'postgres') {
        const reachable = await postgresReachable(adminUrl);
        if (reachable !== true) {
          const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
          if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
          console.log(`hot path: ${msg}: PostgreSQL skipped`);
          continue;
        }
      }
      results[database] = {};
      for (const variant of variants) {
        const busy = await cpuBusy();
        if (busy > 0.2) console.log(`hot path: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
        const { rows, startMs, notes } = await runOne({ database, variant, adminUrl, opts, profileRoot });
        results[database][variant] = rows;
        const dbLabel = database === 'postgres' ? 'PostgreSQL server' : 'embedded PostgreSQL (PGlite)';
        printTable(
          `hot path on ${dbLabel}, ${VARIANTS[variant].label} (server up in ${(startMs / 1000).toFixed(1)} s; CPUs ${pct(busy)} busy before the run):`,
          rows,
          variant === 'base' ? undefined : results[database].base,
        );
        for (const note of notes) console.log(note);
        if (rows.some((r) => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0)) invalid = true;
      }
    }
    console.log(
      `hot path targets: api-key and files/{id} >= ${TARGETS.postgres.rps} req/s with p50 < ${TARGETS.postgres.p50} ms on PostgreSQL; >= ${TARGETS.embedded.rps} req/s on embedded`,
    );
    if (invalid) console.log('hot path: WARNING: some responses were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { results, invalid, profileRoot };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--build')) {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  try {
    const { invalid } = await benchHotPath();
    // Missed targets are only reported; non-2xx answers mean the bench itself did not work.
    if (invalid) process.exitCode = 1;
  } catch (err) {
    console.error(`hot path bench failed: ${err.stack ?? err}`);
    process.exitCode = 1;
  }
}
