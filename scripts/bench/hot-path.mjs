// The authenticated hot path under load, on the built server (dist/), once on a PostgreSQL server
// and once on the embedded default (PGlite): requests per second and latency of
//   GET /health                       (no auth, no database: the ceiling of this machine)
//   GET /api/v1/{workspace}/api-key   (API key authentication, key info)
//   GET /api/v1/{workspace}/files/{id} (authentication, ability and permission checks, a file row,
//                                       signed temporary URLs)
//   POST /api/v1/{workspace}/auth/login, over 50 app users' addresses and over 50 addresses
//                                       without an app user (each logged in once before), for
//                                       hosted authentication's "no timing difference between
//                                       known and unknown addresses": their p50 side by side
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
import { existsSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ADMIN_TOKEN,
  DEFAULT_PG_URL,
  call,
  checkBuild,
  cleanupAsync,
  cpuBusy,
  createDatabase,
  dropDatabase,
  installSignalHandlers,
  makeTempDir,
  measure,
  ms,
  pct,
  postgresReachable,
  removeTempDir,
  setup,
  startServer,
  stopServer,
  tableLines,
  withServerOutput,
  runStandalone,
  loadOptions,
} from './support.mjs';

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
// Set-up: a workspace, a creator, a `*` key and one small file

async function setupHotPath(base) {
  const { ws, key } = await setup(base, { permissions: ['view-file', 'create-file'] });
  const file = await call(base, 'POST', `/api/v1/${ws}/files`, key, {
    file: { name: 'a.txt', type: 'text/plain', content: Buffer.from('hello, hot path\n').toString('base64') },
  });
  return { ws, key, fileId: file.id };
}

/** App users (verified once), and as many addresses that logged in but never verified: no app user. */
const LOGIN_ADDRESSES = 50;
const knownAddress = (i) => `app-user-${i}@example.com`;
const unknownAddress = (i) => `nobody-${i}@example.com`;

/** Hosted authentication on; the app users and the other addresses of the login rows. */
async function setupLogin(base, ws) {
  await call(base, 'PATCH', `/admin/v1/workspaces/${ws}`, ADMIN_TOKEN, { auth_enabled: true });
  const post = (route, body) =>
    fetch(`${base}/api/v1/${ws}/auth/${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  for (let i = 0; i < LOGIN_ADDRESSES; i++) {
    for (const email of [knownAddress(i), unknownAddress(i)]) {
      const login = await post('login', { email });
      if (login.status !== 204) throw new Error(`login: HTTP ${login.status} ${await login.text()}`);
    }
    const outbox = await call(base, 'GET', `/admin/v1/workspaces/${ws}/outbox?limit=2`, ADMIN_TOKEN);
    const mail = outbox.data.find((m) => [m.to].flat().includes(knownAddress(i)));
    const otp = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
    const verify = await post('verify', { email: knownAddress(i), otp });
    if (verify.status !== 200) throw new Error(`verify: HTTP ${verify.status} ${await verify.text()}`);
  }
}

/** Login requests rotating over `address(0..LOGIN_ADDRESSES-1)`. */
function loginRequests(address) {
  let n = 0;
  return {
    method: 'POST',
    requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: address(n++ % LOGIN_ADDRESSES) }) }) }],
  };
}

// ---------------------------------------------------------------------------------------------
// Report

function verdict(row, target) {
  if (target === null) return '(compare the two login rows)';
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
  const health = rows.find((r) => r.route === 'health');
  const ratio = (row) => (health && health.rps > 0 ? (row.rps / health.rps).toFixed(3) : '-');
  const [head, ...lines] = tableLines(
    [
      { title: 'route', width: 34, align: 'left', value: (r) => r.label },
      { title: 'req/s', width: 9, value: (r) => r.rps.toFixed(0) },
      { title: 'p50 ms', width: 9, value: (r) => ms(r.p50) },
      { title: 'p99 ms', width: 9, value: (r) => ms(r.p99) },
      { title: 'non-2xx', width: 9, value: (r) => r.non2xx },
      { title: 'errors', width: 8, value: (r) => r.errors + r.timeouts },
      { title: '/health', width: 9, value: ratio },
      { title: 'target', gap: '  ', value: (r) => verdict(r, r.target) },
    ],
    rows,
  );
  console.log(head);
  rows.forEach((row, i) => {
    let line = lines[i];
    const before = baseline?.find((r) => r.route === row.route);
    if (before && before.rps > 0) {
      const delta = ((row.rps - before.rps) / before.rps) * 100;
      line += `   (${delta >= 0 ? '+' : ''}${delta.toFixed(1)} % req/s vs ${VARIANTS.base.label})`;
    }
    console.log(line);
    if (row.non2xx > 0 || row.errors > 0 || row.timeouts > 0) {
      console.log(
        `    WARNING: ${row.label}: ${row.non2xx} non-2xx, ${row.errors} errors, ${row.timeouts} timeouts (status codes: ${row.statusCodes})`,
      );
    }
  });
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
    const { ws, key, fileId } = await setupHotPath(server.base).catch((err) => {
      throw withServerOutput(server, err);
    });
    const auth = { Authorization: `Bearer ${key}` };
    await setupLogin(server.base, ws).catch((err) => {
      throw withServerOutput(server, err);
    });
    const loginUrl = `${server.base}/api/v1/${ws}/auth/login`;
    const json = { 'Content-Type': 'application/json' };
    const routes = [
      { route: 'health', label: 'GET /health', url: `${server.base}/health`, headers: {}, target: undefined },
      {
        route: 'api-key',
        label: `GET /api/v1/${ws}/api-key`,
        url: `${server.base}/api/v1/${ws}/api-key`,
        headers: auth,
        target: TARGETS[database],
      },
      {
        route: 'file',
        label: `GET /api/v1/${ws}/files/${fileId}`,
        url: `${server.base}/api/v1/${ws}/files/${fileId}`,
        headers: auth,
        target: TARGETS[database],
      },
      {
        route: 'login-known',
        label: 'POST …/auth/login (app users)',
        url: loginUrl,
        headers: json,
        target: null,
        status: 204,
        request: loginRequests(knownAddress),
      },
      {
        route: 'login-unknown',
        label: 'POST …/auth/login (no app user)',
        url: loginUrl,
        headers: json,
        target: null,
        status: 204,
        request: loginRequests(unknownAddress),
      },
    ];
    // Each route must answer before it is worth loading.
    for (const r of routes) {
      const res = await fetch(r.url, {
        method: r.request?.method ?? 'GET',
        headers: r.headers,
        body: r.request ? JSON.stringify({ email: knownAddress(0) }) : undefined,
      });
      const text = await res.text();
      if (res.status !== (r.status ?? 200)) throw new Error(`${r.label}: HTTP ${res.status} before the load: ${text.slice(0, 300)}`);
    }
    const rows = [];
    for (const r of routes) rows.push({ ...r, ...(await measure(r.url, r.headers, opts, r.request)) });
    const [known, other] = ['login-known', 'login-unknown'].map((name) => rows.find((r) => r.route === name));
    notes.push(
      `  login p50: app users ${ms(known.p50)} ms, addresses without one ${ms(other.p50)} ms (difference ${ms(Math.abs(known.p50 - other.p50))} ms, ` +
        `${LOGIN_ADDRESSES} addresses each, all with an earlier login; the same statements run for both)`,
    );
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

export async function benchHotPath(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 20 }),
  };
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  const databases = (options.databases ?? (env.BENCH_DATABASES || 'postgres,embedded').split(',')).map((s) => s.trim()).filter(Boolean);
  const variants = ['base'];
  if (options.testClock ?? env.BENCH_TEST_CLOCK === '1') variants.push('testClock');
  if (options.rateLimits ?? env.BENCH_RATE_LIMITS === '1') variants.push('rateLimits');
  const profile = options.profile ?? env.BENCH_PROFILE === '1';
  let profileRoot;
  if (profile) {
    profileRoot = env.BENCH_PROFILE_DIR
      ? path.resolve(env.BENCH_PROFILE_DIR)
      : mkdtempSync(path.join(os.tmpdir(), 'wsapi-hot-path-cpuprof-'));
    mkdirSync(profileRoot, { recursive: true });
  }

  checkBuild('hot path');

  const removeHandlers = installSignalHandlers('hot-path bench');
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
        if (busy > 0.2)
          console.log(`hot path: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
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

await runStandalone(import.meta, 'hot path', benchHotPath);
