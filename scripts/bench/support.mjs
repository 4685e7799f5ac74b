// The machinery the load benches (hot-path.mjs, objects.mjs) share: cleanup that also happens on
// errors and signals, throwaway PostgreSQL databases, free ports and temp dirs, the built server
// (dist/) as a child process, set-up calls through the management API, autocannon runs with exact
// latency percentiles (and, given its pid, the server's CPU time per response), and plain-text
// tables.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { monotonicUs, processCpuMs } from './cpu.mjs';

export const root = path.resolve(import.meta.dirname, '../..');
export const mainJs = path.join(root, 'dist/server/src/main.js');
export const ADMIN_TOKEN = 'bench-admin-token';
export const APP_KEY = 'bench-app-key-0123456789abcdef0123456789abcdef';
export const DEFAULT_PG_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

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

export function cleanupSync() {
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

/**
 * A child process of a bench that is not startServer's (e.g. a competitor's server): stopped by
 * the cleanup (cleanupAsync: stopServer; on a plain exit: SIGKILL) like the servers. Returns it.
 */
export function trackChild(child) {
  live.children.add(child);
  child.once('exit', () => live.children.delete(child));
  return child;
}

/** Stops every server still running, drops every throwaway database, removes every temp dir. */
export async function cleanupAsync() {
  await Promise.all([...live.children].map((child) => stopServer(child, 5_000).catch(() => {})));
  for (const [name, adminUrl] of [...live.databases]) await dropDatabase(name, adminUrl).catch(() => {});
  cleanupSync();
}

/** SIGINT/SIGTERM clean up and exit; a plain exit cleans up synchronously. Returns the remover. */
export function installSignalHandlers(label) {
  let interrupted = false;
  const onSignal = (signal) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${label}: ${signal}, cleaning up`);
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

export const quoteIdent = (name) => `"${name.replaceAll('"', '""')}"`;

export async function withAdminClient(adminUrl, fn) {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** true, or the connection error. */
export async function postgresReachable(adminUrl) {
  try {
    await withAdminClient(adminUrl, (c) => c.query('SELECT 1'));
    return true;
  } catch (err) {
    return err;
  }
}

/** A new database `wsbench_<random>` on the server of `adminUrl`, dropped by the cleanup. */
export async function createDatabase(adminUrl) {
  const name = `wsbench_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  live.databases.set(name, adminUrl);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Leaves a database out of the cleanup (kept for inspection). */
export const keepDatabase = (name) => live.databases.delete(name);

export async function dropDatabase(name, adminUrl) {
  await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
  live.databases.delete(name);
}

// ---------------------------------------------------------------------------------------------
// The server

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export function makeTempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  live.dirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  live.dirs.delete(dir);
}

// Variables of the caller's environment that would change what is measured.
const STRIPPED_ENV =
  /^(?:(?:DATABASE_URL|DATA_DIR|TEST_CLOCK|APP_ENV|REDIS_URL|REDIS_PREFIX|STORAGE_DRIVER|IMAGE_PROXY_URL|IMAGE_ORIGIN_URL|BASE_URL|HOST|PORT|ADMIN_TOKEN|APP_KEY|LOG_LEVEL|TRUST_PROXY|TRUST_PROXY_HOPS)$|RATE_LIMIT_|S3_)/;

/**
 * Starts dist/server/src/main.js on a free port (PostgreSQL at `databaseUrl`, or the embedded
 * database in `dataDir`) and waits until GET /health answers 200.
 * Returns `{ child, base, startMs }`; `child.output()` is the tail of its stdout and stderr.
 */
export async function startServer({ databaseUrl, dataDir, variantEnv, profileDir }) {
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
export async function stopServer(child, timeoutMs = 20_000) {
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

/** An error of a set-up step with the tail of the server's output (or how to get it). */
export function withServerOutput(server, err) {
  const out = server.child.output().trim();
  return new Error(`${err.message}${out ? `\nserver output:\n${out}` : '\n(BENCH_LOG_LEVEL=error shows the server log)'}`);
}

// ---------------------------------------------------------------------------------------------
// Set-up through the management API and the public API

/** One JSON call; anything but 2xx throws with the status and the start of the body. */
export async function call(base, method, p, token, body) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : undefined;
}

/** A workspace, a creator with `permissions` and an API key on it with `abilities` (default `*`). */
export async function setup(
  base,
  { ws = 'bench', permissions = ['view-file', 'create-file'], email = 'bench@example.com', abilities = ['*'] } = {},
) {
  await call(base, 'POST', '/admin/v1/workspaces', ADMIN_TOKEN, { name: ws });
  const user = await call(base, 'POST', `/admin/v1/workspaces/${ws}/users`, ADMIN_TOKEN, { email, permissions });
  const { key } = await call(base, 'POST', `/admin/v1/workspaces/${ws}/api-keys`, ADMIN_TOKEN, {
    name: 'bench',
    user_id: user.id,
    abilities,
  });
  return { ws, key, userId: user.id };
}

// ---------------------------------------------------------------------------------------------
// Load

export function percentile(sorted, p) {
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
 * `request` goes to autocannon as is: `method`, `body`, or `requests` (e.g. with a
 * `setupRequest` that picks another path for every request). With `serverPid` (the server's
 * child process), also the CPU time the server used during the measured run (read from /proc just
 * before and just after it) and that per response (`cpuMsPerResponse`). `window` is when the
 * measured run ran (monotonicUs), to cut a CPU profile of the server to it.
 */
export async function measure(url, headers, { seconds, warmupSeconds, connections, serverPid }, request = {}) {
  const common = { url, headers, connections, pipelining: 1, timeout: 10, ...request };
  if (warmupSeconds > 0) await runCannon({ ...common, duration: warmupSeconds });
  const latencies = [];
  const cpuBefore = serverPid ? processCpuMs(serverPid) : undefined;
  const fromUs = monotonicUs();
  const result = await runCannon({ ...common, duration: seconds }, (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const toUs = monotonicUs();
  const cpuAfter = serverPid ? processCpuMs(serverPid) : undefined;
  const serverCpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
  latencies.sort((a, b) => a - b);
  const statusCodes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, { count }]) => `${code}×${count}`)
    .join(' ');
  return {
    rps: result.requests.average,
    total: result.requests.total,
    ok: latencies.length, // 2xx answers
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    serverCpuMs,
    // requests.total counts the responses (any status) of the measured run.
    cpuMsPerResponse: serverCpuMs !== undefined && result.requests.total > 0 ? serverCpuMs / result.requests.total : undefined,
    window: { fromUs, toUs },
  };
}

// ---------------------------------------------------------------------------------------------
// Report

/**
 * The load options every section takes, from its caller or the environment: seconds measured,
 * seconds of load warm-up, seconds of warm-up after a server starts, and connections.
 */
export function loadOptions(options, { serverWarmupSeconds = 20 } = {}) {
  const env = process.env;
  return {
    seconds: Number(options.seconds ?? env.BENCH_SECONDS ?? 10),
    warmupSeconds: Number(options.warmupSeconds ?? env.BENCH_WARMUP_SECONDS ?? 2),
    serverWarmupSeconds: Number(options.serverWarmupSeconds ?? env.BENCH_SERVER_WARMUP_SECONDS ?? serverWarmupSeconds),
    connections: Number(options.connections ?? env.BENCH_CONNECTIONS ?? 10),
  };
}

export const pad = (s, n) => String(s).padEnd(n);
export const lpad = (s, n) => String(s).padStart(n);
export const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : '-');

/**
 * Lines of a plain-text table: a header line, then one line per row, each starting with `indent`.
 * A column is `{ title, value(row), width?, align? ('left' | 'right', default right), gap? }`;
 * cells are padded to `width` and written without separators; a column without `width` (the
 * last one, usually) is written as is after its `gap`.
 */
export function tableLines(columns, rows, indent = '  ') {
  const cell = (c, v) => (c.width === undefined ? `${c.gap ?? ''}${v}` : c.align === 'left' ? pad(v, c.width) : lpad(v, c.width));
  const line = (values) => indent + columns.map((c, i) => cell(c, values[i])).join('');
  return [line(columns.map((c) => c.title)), ...rows.map((row) => line(columns.map((c) => c.value(row))))];
}

/** The newest modification time of the .ts files under `dir` (recursive). */
export function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Throws when dist/ is missing; warns (with `label`) when server/src is newer than the build. */
export function checkBuild(label) {
  let built;
  try {
    built = statSync(mainJs).mtimeMs;
  } catch {
    throw new Error(`${path.relative(root, mainJs)} is missing: run \`npm run build\` first`);
  }
  if (newestMtime(path.join(root, 'server/src')) > built) {
    console.log(`${label}: WARNING: server/src has changes newer than dist/: the figures are of the last build (\`npm run build\`)`);
  }
}

// Other work on the machine (a test run, a build) shows in every figure: sample how busy the CPUs
// are just before a run (the load average would still count the previous run of a bench).
export async function cpuBusy(sampleMs = 1000) {
  const total = () =>
    os.cpus().reduce(
      (acc, c) => {
        const t = c.times;
        acc.idle += t.idle;
        acc.all += t.user + t.nice + t.sys + t.idle + t.irq;
        return acc;
      },
      { idle: 0, all: 0 },
    );
  const a = total();
  await new Promise((r) => setTimeout(r, sampleMs));
  const b = total();
  return b.all > a.all ? 1 - (b.idle - a.idle) / (b.all - a.all) : 0;
}
export const pct = (x) => `${(x * 100).toFixed(0)} %`;

// ---------------------------------------------------------------------------------------------
// What the route benches (objects, entries) share: JSON calls, shapes, verdicts and tables

/** A JSON answer of an authenticated call; any non-2xx status throws. */
export async function getJson(url, key, init = {}) {
  const res = await fetch(url, {
    ...init,
    headers: { Authorization: `Bearer ${key}`, ...(init.body ? { 'Content-Type': 'application/json' } : {}), ...init.headers },
  });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`${init.method ?? 'GET'} ${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

export const seconds = (msValue) => `${(msValue / 1000).toFixed(1)} s`;
export const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
/** The type of each property of an object (envelope comparisons). */
export const shapeOf = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeOf(v)]));
export const failed = (row) => row.non2xx > 0 || row.errors - row.timeouts > 0;
/** A target's verdict: `met` or `MISSED`. */
export const verdict = (ok) => (ok ? 'met' : 'MISSED');
/** A row's 2xx answers per second (its `ok` over its `seconds`). */
export const rate = (row) => row.ok / row.seconds;
/** A ratio as `1.23×` (`-` when not finite). */
export const times = (x) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '-');

export function routeVerdict(row) {
  const t = row.target;
  if (row.ceiling) return '(ceiling of this machine)';
  if (!t) return '(no target)';
  const parts = [];
  let ok = true;
  if (t.rps !== undefined) {
    parts.push(`>= ${t.rps} req/s`);
    ok = ok && row.rps >= t.rps;
  }
  if (t.p50 !== undefined) {
    parts.push(`${row.route === 'compare' ? 'median' : 'p50'} < ${t.p50} ms`);
    ok = ok && row.p50 < t.p50;
  }
  if (row.timeouts > 0) ok = false;
  return `${parts.join(', ')}: ${failed(row) ? 'INVALID (non-2xx/errors)' : ok ? 'met' : 'MISSED'}`;
}

/**
 * A table of measure's rows; a column of the server's CPU ms per response when a row has it. The
 * route column is `routeWidth` wide, or wider for a longer label.
 */
export function printRouteTable(title, rows, routeWidth = 68) {
  console.log(title);
  const withCpu = rows.some((r) => r.cpuMsPerResponse !== undefined);
  const lines = tableLines(
    [
      { title: 'route', width: Math.max(routeWidth, ...rows.map((r) => r.label.length + 2)), align: 'left', value: (r) => r.label },
      { title: 'req/s', width: 8, value: (r) => (Number.isFinite(r.rps) ? r.rps.toFixed(0) : '-') },
      { title: 'p50 ms', width: 9, value: (r) => ms(r.p50) },
      { title: 'p99 ms', width: 9, value: (r) => ms(r.p99) },
      ...(withCpu ? [{ title: 'CPU ms/resp', width: 13, value: (r) => ms(r.cpuMsPerResponse) }] : []),
      { title: 'non-2xx', width: 9, value: (r) => r.non2xx },
      { title: 'errors', width: 8, value: (r) => r.errors - r.timeouts },
      { title: 'timeouts', width: 10, value: (r) => r.timeouts },
      { title: 'target', gap: '  ', value: routeVerdict },
    ],
    rows,
  );
  for (const line of lines) console.log(line);
  if (withCpu)
    console.log(
      "    (CPU ms/resp: the server process's CPU time (user + system, all threads, /proc) during the measured run ÷ its responses)",
    );
  for (const row of rows.filter(failed)) {
    console.log(`    WARNING: ${row.label}: ${row.non2xx} non-2xx, ${row.errors - row.timeouts} errors (status codes: ${row.statusCodes})`);
  }
  for (const row of rows.filter((r) => r.timeouts > 0)) {
    console.log(
      `    NOTE: ${row.label}: ${row.timeouts} requests had no answer within 10 s (autocannon's timeout); its percentiles leave them out`,
    );
  }
}

/**
 * Runs a section when its file is run directly (`node scripts/bench/<name>.mjs [--build]`;
 * without --build it runs dist/ as it is). Missed targets are only reported; non-2xx answers mean
 * the bench itself did not work (exit code 1).
 */
export async function runStandalone(meta, label, bench) {
  if (meta.url !== `file://${process.argv[1]}`) return;
  if (process.argv.includes('--build')) {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
  try {
    const { invalid } = await bench();
    if (invalid) process.exitCode = 1;
  } catch (err) {
    console.error(`${label} bench failed: ${err.stack ?? err}`);
    process.exitCode = 1;
  }
}

/**
 * Each route answers 200, and what its `check(body, sample)` (may be async) expects, before the
 * load. The request: `r.sample()` when the route has it (`{path?, method?, body?}`, e.g. one of the
 * random requests its load sends; passed on to `check`), else `r.path()`, else `r.url`, with the
 * method and body of `r.request`.
 */
export async function checkRoutes(routes, base) {
  for (const r of routes) {
    const sample = r.sample?.() ?? {};
    const url = sample.path ? `${base}${sample.path}` : r.path ? `${base}${r.path()}` : r.url;
    const res = await fetch(url, {
      method: sample.method ?? r.request?.method ?? 'GET',
      headers: r.headers,
      body: sample.body ?? r.request?.body,
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${r.label}: HTTP ${res.status} before the load: ${text.slice(0, 300)}`);
    if (!(await r.check(r.ceiling ? text : JSON.parse(text), sample)))
      throw new Error(`${r.label}: unexpected answer before the load: ${text.slice(0, 1200)}`);
  }
}

/**
 * Measures each route in turn on a server in steady state: each of its PostgreSQL connections maps
 * the shared buffers it touches page by page (a page fault each, costly in a VM), so a fresh server
 * reads slower for its first tens of seconds. The route marked `warmup: true` (else the `read`
 * route) runs `opts.serverWarmupSeconds` first, not counted.
 */
export async function measureSteady(routes, opts) {
  const warm = routes.find((r) => r.warmup) ?? routes.find((r) => r.route === 'read');
  if (warm && opts.serverWarmupSeconds > 0)
    await measure(warm.url, warm.headers, { ...opts, warmupSeconds: 0, seconds: opts.serverWarmupSeconds }, warm.request);
  const rows = [];
  for (const r of routes) rows.push({ ...r, ...(await measure(r.url, r.headers, opts, r.request)) });
  return rows;
}

/** Each route through the API with 1 connection, one run (a warm-up first, not counted). */
export async function measureSingle(routes, opts) {
  const rows = [];
  for (const r of routes)
    rows.push({
      ...r,
      label: `${r.label} (1 connection)`,
      ...(await measure(r.url, r.headers, { ...opts, connections: 1 }, r.request)),
      seconds: opts.seconds,
    });
  return rows;
}

/** Runs of one route as one row: answers and errors summed, the mean rate, the median p50, the worst p99. */
export function combineRounds(runs, secondsEach) {
  const sum = (k) => runs.reduce((n, r) => n + (r[k] ?? 0), 0);
  return {
    rps: sum('rps') / runs.length,
    ok: sum('ok'),
    total: sum('total'),
    seconds: secondsEach * runs.length,
    p50: percentile(
      runs.map((r) => r.p50).sort((a, b) => a - b),
      50,
    ),
    p99: Math.max(...runs.map((r) => r.p99)),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    statusCodes: runs
      .map((r) => r.statusCodes)
      .filter(Boolean)
      .join(' '),
    lastError: runs.findLast((r) => r.lastError)?.lastError,
  };
}

/**
 * `statement` ({text, values}) through `connections` pg clients of their own (the server's session
 * settings), each issuing it again as soon as it has its answer: a warm-up that is not counted,
 * then `seconds`. The same figures as `measure` (a row for printRouteTable): requests per second
 * over the measured run (requests started in it, until the last answer), exact latency
 * percentiles, errors (`lastError` the last of them).
 */
export async function measureSql(dbUrl, statement, { seconds, warmupSeconds, connections }) {
  const clients = [];
  try {
    for (let i = 0; i < connections; i++) {
      const client = new pg.Client({ connectionString: dbUrl, options: SERVER_SESSION_OPTIONS });
      clients.push(client);
      await client.connect();
    }
    return await measureOnClients(clients, statement, { seconds, warmupSeconds });
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
}

// ---------------------------------------------------------------------------------------------
// Typed entries (entries, entries-query): content types, and entries bulk-inserted as the API
// writes them

/** The session settings of the server's PostgreSQL pool (server/src/db/database.ts): EXPLAIN and plain SQL see its plans. */
export const SERVER_SESSION_OPTIONS = '-c max_parallel_workers_per_gather=0 -c random_page_cost=1.1 -c jit=off';

/**
 * Creates `contentTypes` in `bucket` of `ws` through the management API; returns the workspace's
 * id, the bucket's id and the types' rows by name (`{name, id, bucket_id}`).
 */
export async function createContentTypes(base, client, ws, bucket, contentTypes) {
  for (const type of contentTypes)
    await call(base, 'POST', `/admin/v1/workspaces/${ws}/buckets/${bucket}/content-types`, ADMIN_TOKEN, type);
  const [{ id: workspaceId }] = (await client.query('SELECT id FROM workspaces WHERE name = $1', [ws])).rows;
  const types = new Map(
    (
      await client.query(
        `SELECT t.name, t.id, t.bucket_id FROM content_types t JOIN buckets b ON b.id = t.bucket_id WHERE b.workspace_id = $1 AND b.name = $2`,
        [workspaceId, bucket],
      )
    ).rows.map((r) => [r.name, r]),
  );
  for (const t of contentTypes)
    if (!types.has(t.name)) throw new Error(`content type ${t.name} not found in the database after creating it`);
  return { workspaceId, bucketId: types.get(contentTypes[0].name).bucket_id, types };
}

/**
 * Entries n = $6.. of one content type as createTypedEntry writes them, in one statement: the
 * ULIDs ($5, generated here in increasing order) become entry ids in that order, ref and live_ref
 * `<type>/<ULID>`, published, no schedule, en-US, no tags, contract choice `none`; the en-US
 * document is `${doc}` of n (SQL, may read $7..). Parameters: $1 workspace id, $2 bucket id, $3
 * content type id, $4 content type name. (published_at is the trigger's, as for API writes.)
 */
export const typedBulkInsert = (doc) => `
WITH src AS (
  SELECT u.entry_id, $6::int + u.i - 1 AS n FROM unnest($5::text[]) WITH ORDINALITY AS u(entry_id, i)
), ins AS (
  INSERT INTO entries (entry_id, workspace_id, bucket_id, content_type_id, kind, ref, live_ref, status, publish_at, lock_version, locales, tags,
                       contract_choice, contract_name, validation_issues, validation_checked_at, created_at, updated_at)
  SELECT entry_id, $1::int, $2::int, $3::int, 'typed', $4::text || '/' || entry_id, $4::text || '/' || entry_id, 'published', NULL, 0,
         '{en-US}'::text[], '{}'::text[], 'none', NULL, '[]'::jsonb, NULL, statement_timestamp(), statement_timestamp()
    FROM src ORDER BY n
  RETURNING id, entry_id
)
INSERT INTO entry_contents (entry_pk, locale, data)
SELECT ins.id, 'en-US', ${doc}
  FROM ins JOIN src USING (entry_id)`;

/**
 * Entries 1..total of the content type `type` (a row of createContentTypes), published: the first
 * `viaApi` through the API (`fieldsOf(n)`), the rest with `bulkSql` (a typedBulkInsert statement;
 * `extra` its parameters from $7 on) and ULIDs of `newUlid` (a ulid monotonicFactory, shared by
 * the types of a run so that ids increase in creation order). Returns the ids in order, the
 * API-created entries as answered, and the time of each part.
 */
export async function seedTypedEntries({
  base,
  ws,
  key,
  client,
  bucket,
  workspaceId,
  type,
  total,
  viaApi,
  fieldsOf,
  bulkSql,
  extra = [],
  newUlid,
}) {
  const ids = [];
  const created = [];
  let t = performance.now();
  for (let n = 1; n <= Math.min(viaApi, total); n++) {
    const entry = await call(base, 'POST', `/api/v1/${ws}/entries?contentBucket=${bucket}&contentType=${type.name}`, key, {
      fields: fieldsOf(n),
      status: 'published',
    });
    created.push(entry);
    ids.push(entry.id);
  }
  const apiMs = performance.now() - t;
  t = performance.now();
  const first = ids.length + 1;
  const bulk = Array.from({ length: total - ids.length }, () => newUlid());
  if (bulk.length) await client.query(bulkSql, [workspaceId, type.bucket_id, type.id, type.name, bulk, first, ...extra]);
  for (const id of bulk) ids.push(id); // (a spread of 300,000 arguments overflows the stack)
  return { ids, created, apiMs, insertMs: performance.now() - t };
}

/**
 * The row of a typed entry as a bulk insert must reproduce it: its columns except ids and times
 * (times compared with each other), and the locales of its documents.
 */
export async function typedEntryRow(client, entryId) {
  const columns = `kind, migrated, ref = content_type_name || '/' || entry_id AS ref_ok, live_ref = ref AS live_ref_ok, status, publish_at, lock_version, locales, contract_choice,
                   contract_name, validation_issues, validation_checked_at, validation_pending, validation_failed, tags, deleted_at,
                   created_at = updated_at AS times_equal, published_at IS NOT DISTINCT FROM (CASE WHEN status = 'published' THEN updated_at END) AS published_at_ok,
                   (SELECT array_agg(locale) FROM entry_contents c WHERE c.entry_pk = x.id) AS content_locales`;
  return (
    await client.query(
      `SELECT ${columns} FROM (SELECT e.*, t.name AS content_type_name FROM entries e JOIN content_types t ON t.id = e.content_type_id WHERE e.entry_id = $1) x`,
      [entryId],
    )
  ).rows[0];
}

/**
 * What a bulk insert must match: each `[what, API-created entry ID, bulk entry ID]` pair's rows
 * equal (typedEntryRow), and `expected` published entries with a document per content type name.
 * Returns the problems found.
 */
export async function bulkMatchesApi(client, workspaceId, pairs, expected) {
  const problems = [];
  for (const [what, apiId, bulkId] of pairs) {
    const [a, b] = [await typedEntryRow(client, apiId), await typedEntryRow(client, bulkId)];
    if (!isDeepStrictEqual(a, b)) problems.push(`${what} rows differ: API ${JSON.stringify(a)} vs bulk ${JSON.stringify(b)}`);
  }
  const { rows } = await client.query(
    `SELECT t.name, count(*)::int AS n FROM entries e JOIN entry_contents c ON c.entry_pk = e.id JOIN content_types t ON t.id = e.content_type_id
      WHERE e.workspace_id = $1 AND e.kind = 'typed' AND e.status = 'published' AND e.deleted_at IS NULL GROUP BY t.name`,
    [workspaceId],
  );
  const counts = Object.fromEntries(rows.map((r) => [r.name, r.n]));
  for (const [name, n] of Object.entries(expected)) {
    if (counts[name] !== n) problems.push(`${counts[name] ?? 0} published ${name} entries with a document, expected ${n}`);
  }
  return problems;
}

/** A bound value as an SQL literal (NULL, numbers, booleans, strings, arrays of strings), for EXECUTE. */
const literal = (v) => {
  const quote = (t) => `'${String(t).replace(/'/g, "''")}'`;
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return quote(`{${v.map((x) => `"${String(x).replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
  return quote(v);
};

/**
 * The plan the server runs: its query statements are prepared (db/database.ts, `'bounded'`), so
 * after a few runs PostgreSQL may use its generic plan. Prepared the same way here, run 8 times,
 * then EXPLAIN (ANALYZE, BUFFERS) of one more execution.
 */
export async function preparedPlan(client, statement) {
  for (let i = 0; i < 8; i++) await client.query({ name: 'bench_plan', text: statement.text, values: statement.values });
  const explained = await client.query(`EXPLAIN (ANALYZE, BUFFERS) EXECUTE bench_plan(${statement.values.map(literal).join(', ')})`);
  await client.query('DEALLOCATE bench_plan');
  return explained.rows.map((r) => r['QUERY PLAN']);
}

/**
 * A statement rebuilt from the server's modules must be the server's: the same rows in the same
 * order as the API answer (`idColumn` of its rows), and its text a continuation of what
 * pg_stat_activity shows of the server's connections matching `like` (their last statement,
 * truncated to track_activity_query_size, so the rows tell the rest).
 */
export async function checkStatement(
  client,
  dbName,
  statement,
  apiIds,
  { idColumn, idsOf = (rows) => rows.map((r) => r[idColumn]), like },
) {
  const problems = [];
  const ids = idsOf((await client.query(statement.text, statement.values)).rows).slice(0, apiIds.length);
  if (!isDeepStrictEqual(ids, apiIds)) problems.push(`rows differ from the API answer: ${ids.join(',')} vs ${apiIds.join(',')}`);
  const seen = (
    await client.query(`SELECT query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND query LIKE $2`, [
      dbName,
      like,
    ])
  ).rows.map((r) => r.query);
  const same = seen.filter((q) => statement.text.startsWith(q));
  if (!seen.length) problems.push('pg_stat_activity showed no query statement of the server to compare with');
  else if (!same.length) problems.push(`the text differs from the server's (pg_stat_activity): ${seen[0].slice(0, 300)}…`);
  return { problems, compared: same.length ? Math.max(...same.map((q) => q.length)) : 0 };
}

/**
 * `statement` ({text, values}) through `clients` already connected (anything with pg's
 * `query(text, values)`: pg clients, a PGlite instance), each issuing it again as soon as it has
 * its answer: a warm-up that is not counted, then `seconds`. The figures of measureSql, which
 * runs it on clients of its own.
 */
export async function measureOnClients(clients, statement, { seconds, warmupSeconds }) {
  const run = async (durationS, latencies) => {
    const started = performance.now();
    const end = started + durationS * 1000;
    const counts = { total: 0, errors: 0, lastError: undefined };
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < end) {
          const t = performance.now();
          try {
            await client.query(statement.text, statement.values);
            counts.total++;
            latencies?.push(performance.now() - t);
          } catch (err) {
            counts.errors++;
            counts.lastError = err;
          }
        }
      }),
    );
    return { ...counts, elapsedMs: performance.now() - started };
  };
  if (warmupSeconds > 0) await run(warmupSeconds);
  const latencies = [];
  const r = await run(seconds, latencies);
  latencies.sort((a, b) => a - b);
  return {
    rps: r.total / (r.elapsedMs / 1000),
    total: r.total,
    ok: r.total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: 0,
    errors: r.errors,
    timeouts: 0,
    statusCodes: '',
    lastError: r.lastError,
  };
}

// ---------------------------------------------------------------------------------------------
// The embedded database (PGlite) of a server: one process's database, so a bench reaches it
// directly only while that server is stopped.

/**
 * The embedded database in `dataDir`, reached either through its server (`serve()`: started with
 * `variantEnv` and no DATABASE_URL) or through PGlite in this process (`client.query(text, values,
 * options)`, PGlite's), never both at once: a query stops the server when it runs and opens
 * PGlite; `serve()` closes PGlite when it is open and starts the server again on the same
 * DATA_DIR. So set-up steps written for a client beside a running server (createContentTypes,
 * seedTypedEntries: their API calls first, then their queries) run on it unchanged, as long as
 * the caller asks `serve()` for the server before each step's API calls. `server` is the server
 * started last (its output stays readable after it stopped); `close()` stops or closes whichever
 * runs and answers stopServer's result when a server was still running.
 */
export function embeddedDatabase({ dataDir, variantEnv }) {
  let server;
  let running = false;
  let pglite; // a promise of the open instance
  const stop = async () => {
    if (!running) return undefined;
    running = false;
    return stopServer(server.child);
  };
  const closePglite = async () => {
    if (!pglite) return;
    const open = pglite;
    pglite = undefined;
    await (await open).close();
  };
  const openPglite = async () => {
    const stopped = await stop();
    // Killed, it may have left the database mid-write.
    if (stopped && !stopped.graceful) throw new Error('the embedded server did not stop within 20 s of SIGTERM (killed)');
    const { PGlite } = await import('@electric-sql/pglite');
    return PGlite.create(path.join(dataDir, 'pgdata'));
  };
  return {
    get server() {
      return server;
    },
    async serve() {
      if (running) return server;
      await closePglite();
      server = await startServer({ dataDir, variantEnv });
      running = true;
      return server;
    },
    client: {
      async query(text, values, options) {
        pglite ??= openPglite();
        return (await pglite).query(text, values, options);
      },
    },
    async close() {
      await closePglite().catch(() => {});
      return stop();
    },
  };
}
