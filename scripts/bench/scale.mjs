// Scaling out behind a transaction-mode pooler: 1, 2 and 4 server processes (the built server,
// dist/) on one PostgreSQL database, all behind one PgBouncer (Debian's 1.18, transaction mode,
// default_pool_size = BENCH_SCALE_POOL_SIZE), each with DATABASE_URL = the pooler,
// DATABASE_DIRECT_URL = the database (LISTEN), DATABASE_POOLER=transaction, DATABASE_POOL_SIZE=10,
// APP_ENV=local (rate limits off) and RESPONSE_CACHE_MB=0 (the API computes every answer).
//
// The rows: in the General bucket of one workspace, `authors` (1,000) and `articles`
// (BENCH_SCALE_ENTRIES, default 20,000), all published, the rows of the anchor bench (anchor.mjs:
// article g titled `title g`, amount (g mod 997) * 1.25 + 0.1, published_at 2024-01-01 + 5 g
// minutes, state `draft` when g is divisible by 3, author `author <1 + g mod 1000>`): a few
// through the API, the rest bulk-inserted (support.mjs typedBulkInsert), then VACUUM ANALYZE.
//
// The questions:
//   read by id  GET /api/v1/{ws}/entries/{random article ULID}
//   query       POST /api/v1/{ws}/general/entries/query  type articles, filter {state eq published,
//               amount gt 100}, sort published_at desc, limit 20, fields [@id, title, amount, author.name]
// For each process count N (the processes started one after another and kept: the first runs the
// migrations), before the load: the query's answer is the same from every process and the rows
// the seed implies (titles, amounts, authors in order), and a few articles read by id are the same
// from every process. Then BENCH_SERVER_WARMUP_SECONDS of reads on every process (not counted),
// and each question with BENCH_CONNECTIONS connections split across the N processes (one
// autocannon per process, all in this process), a warm-up (not counted) and BENCH_SECONDS; every
// answer must be 2xx. Meanwhile a direct pg client samples the client backends of the database in
// pg_stat_activity (its own left out) every 200 ms: those of the listeners (application_name
// `workspace-api listener ...`) and the others (the pooler's server connections); the most seen
// of each is reported.
//
// Prints a table: processes, question, total req/s (the sum over the processes), the split per
// process, p50 and p99 (exact, over all answers), non-2xx/errors, the most server connections
// (non-listener) and listeners seen; then whether the server connections stayed within the
// pooler's pool. On 2 CPUs the curve flattens early (autocannon, the servers, PgBouncer and
// PostgreSQL share them): the point is that it runs, stays correct and holds the connections flat.
//
// Without pgbouncer (/usr/sbin/pgbouncer) or PostgreSQL the section is skipped (BENCH_REQUIRE_POOLER=1,
// BENCH_REQUIRE_POSTGRES=1 make that a failure). As root, PgBouncer (which refuses root) runs as
// postgres through runuser.
//
// Standalone: `node scripts/bench/scale.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per question and process count   BENCH_WARMUP_SECONDS=2
//   BENCH_SERVER_WARMUP_SECONDS=5  reads on every process before each process count's runs, not counted
//   BENCH_CONNECTIONS=10      concurrent connections in all, split across the processes
//   BENCH_SCALE_PROCESSES=1,2,4   process counts (increasing)
//   BENCH_SCALE_ENTRIES=20000 articles (at least 1000; authors: 1000)
//   BENCH_SCALE_POOL_SIZE=8   PgBouncer's default_pool_size (server connections)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where the throwaway database
//                             (wsbench_<random>) is created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_REQUIRE_POOLER=1    fail instead of skipping when pgbouncer is missing
//   BENCH_LOG_LEVEL=silent    the servers' LOG_LEVEL (their output is shown when the set-up fails)
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import {
  ABILITIES,
  AUTHORS,
  BUCKET,
  BULK_SQL,
  CONTENT_TYPES,
  PAGE_QUERY,
  PERMISSIONS,
  articleFields,
  authorOf,
  entriesPath,
  queryPath,
} from './anchor.mjs';
import {
  DEFAULT_PG_URL,
  SERVER_SESSION_OPTIONS,
  checkBuild,
  cleanupAsync,
  cpuBusy,
  createContentTypes,
  createDatabase,
  dropDatabase,
  freePort,
  getJson,
  installSignalHandlers,
  makeTempDir,
  ms,
  pct,
  percentile,
  postgresReachable,
  removeTempDir,
  runStandalone,
  seconds,
  seedTypedEntries,
  setup,
  startServer,
  stopServer,
  tableLines,
  withServerOutput,
  loadOptions,
} from './support.mjs';

const PGBOUNCER = '/usr/sbin/pgbouncer';
const API_CREATED = { authors: 2, articles: 3 };
const LISTENER_PREFIX = 'workspace-api listener';

// The content types and rows of the anchor bench (anchor.mjs).
const amountOf = (g) => articleFields(g, []).amount;

/** The page the seed implies: the 20 newest published articles with amount > 100. */
function expectedPage(count) {
  const rows = [];
  for (let g = count; g >= 1 && rows.length < 20; g--) {
    if (g % 3 !== 0 && amountOf(g) > 100) rows.push({ title: `title ${g}`, amount: amountOf(g), author: `author ${authorOf(g)}` });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// PgBouncer

/** PgBouncer in transaction mode in front of the PostgreSQL of `adminUrl`, on a free port. */
async function startPgbouncer(adminUrl, poolSize) {
  const pgUrl = new URL(adminUrl);
  const port = await freePort();
  const dir = makeTempDir('wsapi-bench-pgbouncer-');
  const file = (f) => path.join(dir, f);
  writeFileSync(file('users.txt'), `"${decodeURIComponent(pgUrl.username || 'postgres')}" ""\n`);
  writeFileSync(
    file('pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${pgUrl.hostname} port=${pgUrl.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${file('users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      `logfile = ${file('pgbouncer.log')}`,
      `pidfile = ${file('pgbouncer.pid')}`,
    ].join('\n') + '\n',
  );
  // PgBouncer refuses to run as root: then it runs as postgres, which owns its files.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), uid, gid);
  }
  const child = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, file('pgbouncer.ini')], { stdio: 'ignore' })
    : spawn(PGBOUNCER, [file('pgbouncer.ini')], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let pid; // pgbouncer's own (under runuser, not the child's)
  const killSync = () => {
    for (const p of [pid, child.pid]) {
      try {
        if (p) process.kill(p, 'SIGTERM');
      } catch {}
    }
  };
  process.on('exit', killSync);
  const log = () => {
    try {
      return readFileSync(file('pgbouncer.log'), 'utf8').slice(-2000);
    } catch {
      return '';
    }
  };
  const pooledUrl = (dbUrl) => {
    const u = new URL(dbUrl);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  const stop = async () => {
    // PgBouncer itself first: runuser then reaps it and exits (runuser forwarding a signal would
    // wait 2 s, SIGKILL it and exit without reaping it).
    if (child.exitCode === null && child.signalCode === null) {
      try {
        if (pid) process.kill(pid, 'SIGTERM');
        else child.kill('SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
    }
    let timer;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 5_000)))]);
    clearTimeout(timer);
    killSync();
    process.off('exit', killSync);
    removeTempDir(dir);
  };
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: pooledUrl(adminUrl), connectionTimeoutMillis: 2_000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => {});
      if (i > 100 || child.exitCode !== null) {
        const out = log();
        await stop();
        throw new Error(`pgbouncer did not start: ${err.message}${out ? `\npgbouncer log:\n${out}` : ''}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    pid = Number(readFileSync(file('pgbouncer.pid'), 'utf8').trim()) || undefined;
  } catch {}
  return { port, pooledUrl, stop, log };
}

// ---------------------------------------------------------------------------------------------
// Load and connection sampling

/** `total` connections split across `n` targets (at least 1 each). */
const split = (total, n) => Array.from({ length: n }, (_, i) => Math.max(1, Math.floor(total / n) + (i < total % n ? 1 : 0)));

function runCannon(opts, onResponse) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
    if (onResponse) instance.on('response', onResponse);
  });
}

/**
 * One autocannon per server at once (`request(base)`: autocannon's url, headers, method, body or
 * requests), a warm-up first (not counted): req/s summed over them, exact percentiles over all
 * 2xx answers.
 */
async function loadAll(servers, connections, request, { seconds: durationS, warmupSeconds }) {
  const perServer = split(connections, servers.length);
  const run = (duration, onResponse) =>
    Promise.all(
      servers.map((s, i) => runCannon({ connections: perServer[i], pipelining: 1, timeout: 10, duration, ...request(s.base) }, onResponse)),
    );
  if (warmupSeconds > 0) await run(warmupSeconds);
  const latencies = [];
  const results = await run(durationS, (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  latencies.sort((a, b) => a - b);
  const sum = (f) => results.reduce((n, r) => n + f(r), 0);
  const statusCodes = {};
  for (const r of results)
    for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  return {
    rps: sum((r) => r.requests.average),
    perProcess: results.map((r) => r.requests.average),
    connections: perServer,
    total: sum((r) => r.requests.total),
    ok: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes: Object.entries(statusCodes)
      .map(([c, n]) => `${c}×${n}`)
      .join(' '),
  };
}

/** Samples the database's client backends (listeners and others) every 200 ms until stopped. */
function sampleConnections(client) {
  const max = { servers: 0, listeners: 0, samples: 0 };
  let running = true;
  let error;
  const loop = (async () => {
    while (running) {
      try {
        const { rows } = await client.query(
          `SELECT count(*) FILTER (WHERE coalesce(application_name, '') LIKE $1)::int AS listeners,
                  count(*) FILTER (WHERE coalesce(application_name, '') NOT LIKE $1)::int AS servers
             FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
          [`${LISTENER_PREFIX}%`],
        );
        max.servers = Math.max(max.servers, rows[0].servers);
        max.listeners = Math.max(max.listeners, rows[0].listeners);
        max.samples++;
      } catch (err) {
        error = err;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return async () => {
    running = false;
    await loop;
    if (error && max.samples === 0) throw error;
    return max;
  };
}

// ---------------------------------------------------------------------------------------------
// Seeding and checks

async function seedRows({ base, ws, key, client, count }) {
  const started = performance.now();
  const { workspaceId, types } = await createContentTypes(base, client, ws, BUCKET, CONTENT_TYPES);
  const newUlid = monotonicFactory();
  const seedType = (type, total, fieldsOf, extra) =>
    seedTypedEntries({
      base,
      ws,
      key,
      client,
      bucket: BUCKET,
      workspaceId,
      type: types.get(type),
      total,
      viaApi: API_CREATED[type],
      fieldsOf,
      bulkSql: BULK_SQL[type],
      extra,
      newUlid,
    });
  const authors = await seedType('authors', AUTHORS, (k) => ({ name: `author ${k}` }), []);
  const articles = await seedType('articles', count, (g) => articleFields(g, authors.ids), [authors.ids]);
  await client.query(`VACUUM (ANALYZE) entries, entry_contents, typed_${types.get('authors').id}, typed_${types.get('articles').id}`);
  return { authors: authors.ids, articles: articles.ids, totalMs: performance.now() - started };
}

/** The query's answer and a few reads by id: the same from every process, and what the seed implies. */
async function checkAnswers(servers, ws, key, seed, count) {
  const problems = [];
  const expected = expectedPage(count);
  let first;
  for (const [i, s] of servers.entries()) {
    const body = await getJson(`${s.base}${queryPath(ws)}`, key, { method: 'POST', body: JSON.stringify(PAGE_QUERY) });
    const rows = (body.data ?? []).map((r) => ({ title: r.title, amount: Number(r.amount), author: r.author?.name }));
    if (!isDeepStrictEqual(rows, expected))
      problems.push(
        `process ${i + 1}: query rows ${JSON.stringify(rows).slice(0, 400)}, expected ${JSON.stringify(expected).slice(0, 400)}`,
      );
    if (i === 0) first = body;
    else if (!isDeepStrictEqual(body, first)) problems.push(`process ${i + 1}: query answer differs from process 1's`);
  }
  for (const g of [1, Math.ceil(count / 2), count]) {
    const id = seed.articles[g - 1];
    let firstRead;
    for (const [i, s] of servers.entries()) {
      const a = await getJson(`${s.base}${entriesPath(ws)}/${id}`, key);
      if (a.id !== id || a.fields?.title !== `title ${g}` || a.fields?.author?.fields?.name !== `author ${authorOf(g)}`) {
        problems.push(`process ${i + 1}: article ${g} read as ${JSON.stringify(a).slice(0, 300)}`);
      }
      // The same answer from every process, its own BASE_URL (in the rendered links) aside.
      const text = JSON.stringify(a).replaceAll(s.base, '{BASE_URL}');
      if (i === 0) firstRead = text;
      else if (text !== firstRead)
        problems.push(`process ${i + 1}: article ${g} differs from process 1's: ${text.slice(0, 300)} vs ${firstRead.slice(0, 300)}`);
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

async function run({ adminUrl, opts, count, counts, poolSize }) {
  const dataDir = makeTempDir('wsapi-bench-scale-');
  const db = await createDatabase(adminUrl);
  const client = new pg.Client({ connectionString: db.url, options: SERVER_SESSION_OPTIONS });
  const bouncer = await startPgbouncer(adminUrl, poolSize);
  const servers = [];
  const rows = [];
  const problems = [];
  try {
    await client.connect();
    const variantEnv = {
      DATABASE_DIRECT_URL: db.url,
      DATABASE_POOLER: 'transaction',
      DATABASE_POOL_SIZE: '10',
      APP_ENV: 'local',
      RESPONSE_CACHE_MB: '0',
    };
    const start = async () => servers.push(await startServer({ databaseUrl: bouncer.pooledUrl(db.url), dataDir, variantEnv }));
    await start();
    const { ws, key, seed } = await (async () => {
      const { ws, key } = await setup(servers[0].base, { permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedRows({ base: servers[0].base, ws, key, client, count });
      return { ws, key, seed };
    })().catch((err) => {
      throw withServerOutput(servers[0], err);
    });
    console.log(
      `scale: seeded ${count.toLocaleString('en-US')} published articles and ${AUTHORS.toLocaleString('en-US')} authors in ${seconds(seed.totalMs)} (through process 1, behind the pooler)`,
    );

    const questions = [
      {
        name: 'read by id',
        request: (base) => {
          const randomPath = () => `${entriesPath(ws)}/${seed.articles[Math.floor(Math.random() * seed.articles.length)]}`;
          return {
            url: `${base}${randomPath()}`,
            headers: { Authorization: `Bearer ${key}` },
            requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: randomPath() }) }],
          };
        },
      },
      {
        name: 'query',
        request: (base) => ({
          url: `${base}${queryPath(ws)}`,
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(PAGE_QUERY),
        }),
      },
    ];

    for (const n of counts) {
      while (servers.length < n) await start();
      const active = servers.slice(0, n);
      const found = await checkAnswers(active, ws, key, seed, count);
      for (const p of found) problems.push(`${n} processes: ${p}`);
      console.log(
        `scale: ${n} process${n > 1 ? 'es' : ''} (ports ${active.map((s) => new URL(s.base).port).join(', ')}): ${found.length ? `${found.length} PROBLEMS in the answers before the load` : 'the query and the reads by id answer the same, expected rows from every process'}`,
      );
      if (opts.serverWarmupSeconds > 0)
        await loadAll(active, opts.connections, questions[0].request, { seconds: opts.serverWarmupSeconds, warmupSeconds: 0 });
      for (const q of questions) {
        const stopSampling = sampleConnections(client);
        let r;
        try {
          r = await loadAll(active, opts.connections, q.request, opts);
        } finally {
          r = { ...r, ...(await stopSampling()) };
        }
        rows.push({ processes: n, question: q.name, ...r });
      }
    }
    return { rows, problems };
  } finally {
    await client.end().catch(() => {});
    for (const s of servers) {
      const stopped = await stopServer(s.child);
      if (!stopped.graceful) console.log('  WARNING: a server did not stop within 20 s of SIGTERM and was killed');
    }
    await bouncer.stop();
    await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

function report({ rows, problems }, poolSize, opts) {
  const invalid = (r) => r.non2xx > 0 || r.errors > 0 || r.ok === 0;
  console.log(
    `scale summary (${opts.connections} connections split across the processes, ${opts.warmupSeconds} s warm-up + ${opts.seconds} s each; PgBouncer transaction mode, default_pool_size ${poolSize}):`,
  );
  const lines = tableLines(
    [
      { title: 'processes', width: 9, value: (r) => r.processes },
      { title: '  question', width: 14, align: 'left', value: (r) => `  ${r.question}` },
      { title: 'req/s', width: 9, value: (r) => r.rps.toFixed(0) },
      { title: '  per process', width: 26, align: 'left', value: (r) => `  ${r.perProcess.map((x) => x.toFixed(0)).join(' + ')}` },
      { title: 'p50 ms', width: 8, value: (r) => ms(r.p50) },
      { title: 'p99 ms', width: 8, value: (r) => ms(r.p99) },
      { title: 'non-2xx/err', width: 12, value: (r) => `${r.non2xx}/${r.errors}` },
      { title: 'server conns', width: 13, value: (r) => r.servers },
      { title: 'listeners', width: 10, value: (r) => r.listeners },
    ],
    rows,
  );
  for (const line of lines) console.log(line);
  console.log(
    '  (server conns / listeners: the most client backends of the database seen in pg_stat_activity during the load, sampled every 200 ms; listeners: application_name "workspace-api listener ...", direct connections)',
  );
  for (const r of rows.filter(invalid))
    console.log(
      `  WARNING: ${r.processes} processes, ${r.question}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.ok} 2xx (status codes: ${r.statusCodes})`,
    );
  const maxServers = Math.max(...rows.map((r) => r.servers));
  const flat = maxServers <= poolSize;
  console.log(
    `scale: the pooler's pool is ${poolSize} server connections; the non-listener connections ${flat ? `stayed <= ${poolSize}` : `EXCEEDED ${poolSize}`} ` +
      `(at most ${maxServers} seen, while the processes' pools held up to ${Math.max(...rows.map((r) => r.processes)) * 10} client connections to the pooler)`,
  );
  for (const p of problems) console.log(`scale: PROBLEM: ${p}`);
  return { invalid: rows.some(invalid) || problems.length > 0 || !flat };
}

export async function benchScale(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 5 }),
  };
  const count = Number(options.entries ?? env.BENCH_SCALE_ENTRIES ?? 20_000);
  const counts = String(options.processes ?? env.BENCH_SCALE_PROCESSES ?? '1,2,4')
    .split(',')
    .map(Number);
  const poolSize = Number(options.poolSize ?? env.BENCH_SCALE_POOL_SIZE ?? 8);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  if (!(count >= 1000)) throw new Error('BENCH_SCALE_ENTRIES must be at least 1000');
  if (!counts.length || counts.some((n, i) => !(Number.isInteger(n) && n >= 1) || (i > 0 && n <= counts[i - 1])))
    throw new Error('BENCH_SCALE_PROCESSES must be increasing positive integers, e.g. 1,2,4');
  if (!(Number.isInteger(poolSize) && poolSize >= 1)) throw new Error('BENCH_SCALE_POOL_SIZE must be a positive integer');

  if (!existsSync(PGBOUNCER)) {
    const msg = `${PGBOUNCER} is missing (apt-get install pgbouncer)`;
    if (env.BENCH_REQUIRE_POOLER === '1') throw new Error(`BENCH_REQUIRE_POOLER=1 but ${msg}`);
    console.log(`scale: ${msg}: skipped`);
    return { invalid: false };
  }
  checkBuild('scale');
  const removeHandlers = installSignalHandlers('scale bench');
  const started = performance.now();
  try {
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`scale: ${msg}: skipped`);
      return { invalid: false };
    }
    console.log(
      `scale: ${counts.join(', ')} server processes behind PgBouncer (transaction mode, pool ${poolSize}), ${count.toLocaleString('en-US')} articles; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon, the servers, PgBouncer and PostgreSQL share them)`,
    );
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`scale: WARNING: the CPUs are ${pct(busy)} busy with other work: the figures will be low and noisy`);
    const result = await run({ adminUrl, opts, count, counts, poolSize });
    const { invalid } = report(result, poolSize, opts);
    console.log(`scale: section took ${seconds(performance.now() - started)}`);
    if (invalid)
      console.log(
        'scale: WARNING: some answers were not 2xx or not as expected, or the connections exceeded the pool: those figures are not valid',
      );
    return { ...result, invalid };
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
}

await runStandalone(import.meta, 'scale', benchScale);
