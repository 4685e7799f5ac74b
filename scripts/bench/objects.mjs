// The Objects API under load, on the built server (dist/), with APP_ENV=local (rate limits off):
//
// On a PostgreSQL server (a throwaway database), 100,000 published objects in the General bucket
// of one workspace: a few created through the API, the rest bulk-inserted with SQL exactly as the
// API writes them (core/content/json-entries.ts: an `entries` row and an `entry_contents` row for
// en-US; no `created` revision, reads do not need it), then VACUUM ANALYZE. Then, with autocannon
// (10 connections, a warm-up that is not counted, then BENCH_SECONDS per route):
//   GET  /api/v1/{ws}/objects/{id}                      a random id of the 100k per request
//   GET  /api/v1/{ws}/objects?per_page=20                first page, summary view
//   GET  /api/v1/{ws}/objects?per_page=20&cursor=<deep>  a page ~90,000 ids in (same cost expected)
//   GET  /api/v1/{ws}/objects?view=full&per_page=20
//   POST /api/v1/{ws}/objects/query                      eq filter on a data path, numeric sort,
//                                                        limit 20 (and its EXPLAIN (ANALYZE, BUFFERS):
//                                                        the statement is rebuilt with the server's
//                                                        compiled modules as core/query/run.ts builds
//                                                        it, and checked against the API's answer and
//                                                        the text pg_stat_activity shows)
// each table headed by GET /health (the ceiling of this machine), and, sequentially, GET /objects/{id}/revisions/compare between the two revisions of a ~1 MiB
// document whose update changed 1 % of its keys.
// On the embedded default (PGlite), 10,000 objects: 100 created through the API (10 in parallel,
// which gives its create rate; all 10,000 that way would take minutes), the rest with the same
// INSERT through PGlite while the server is stopped, then the server again on the same DATA_DIR;
// the read, list and query routes, without targets.
//
// Standalone: `node scripts/bench/objects.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per route        BENCH_WARMUP_SECONDS=2
//   BENCH_SERVER_WARMUP_SECONDS=20  random reads before the first route, not counted (each
//                             PostgreSQL connection of a fresh server first maps the shared
//                             buffers it touches, a page fault each: slow in a VM)
//   BENCH_CONNECTIONS=10      concurrent connections
//   BENCH_DATABASES=postgres,embedded   which databases to run (default both)
//   BENCH_OBJECTS=100000      objects on PostgreSQL             BENCH_OBJECTS_EMBEDDED=10000
//                             (at least 2000 each; the deep cursor page needs 90,000)
//   BENCH_COMPARE_RUNS=30     sequential compare requests
//   BENCH_EMBEDDED_ANALYZE=1  ANALYZE the embedded database after seeding (the server never does)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE); the role
//                             must be allowed to create databases
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed) to EXPLAIN by hand
//   BENCH_LOG_LEVEL=silent    the server's LOG_LEVEL (its output is shown when the set-up fails)
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  DEFAULT_PG_URL,
  call,
  checkBuild,
  cleanupAsync,
  cpuBusy,
  createDatabase,
  dropDatabase,
  keepDatabase,
  installSignalHandlers,
  makeTempDir,
  ms,
  pct,
  percentile,
  postgresReachable,
  removeTempDir,
  root,
  setup,
  startServer,
  stopServer,
  tableLines,
  withServerOutput,
  failed,
  getJson,
  printRouteTable,
  seconds,
  shapeOf,
  runStandalone,
  measureSteady,
  checkStatement,
  preparedPlan,
  embeddedDatabase,
  loadOptions,
} from './support.mjs';

const ENTRY_PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry'];
const API_CREATED = 5; // objects created through the API before the bulk insert (shape check)
const EMBEDDED_API_CREATED = 100; // on the embedded database (also gives its create rate)
const DEEP_INDEX = 90_000; // the deep cursor continues after the object at this position (1-based)
const QUERY = { filter: { category: { eq: 'c7' } }, sort: [{ field: 'rating', direction: 'desc', type: 'number' }], limit: 20 };
const TARGETS = {
  read: { rps: 3000, p50: 3 },
  list: { p50: 20 },
  query: { p50: 20 },
  compare: { p50: 100 },
};

// ---------------------------------------------------------------------------------------------
// The seeded documents: the same in JavaScript (API) and in SQL (bulk insert).

const LOREM = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3).trimEnd();
const objectData = (n) => ({
  title: `Object ${n}`,
  category: `c${n % 50}`,
  rating: (n % 1000) / 10,
  tags: [`t${n % 7}`, `u${n % 11}`],
  body: `Body of object ${n}. ${LOREM}`,
});

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** `value` in Crockford base32, `length` characters (a ULID's time part: 10 for milliseconds). */
function crockford(value, length) {
  let out = '';
  let v = BigInt(value);
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(v % 32n)] + out;
    v /= 32n;
  }
  return out;
}

/**
 * Objects n = from..to as the API writes them, in one statement: ULID-like entry ids (this run's
 * millisecond time, 6 random characters, n in 10 characters), ref `items/<n>`, published, en-US.
 */
const BULK_INSERT = `
WITH src AS (
  SELECT n, $3::text || (SELECT string_agg(substr($4::text, ((n::bigint >> (5 * k)) & 31)::int + 1, 1), '' ORDER BY k DESC)
                           FROM generate_series(0, 9) AS k) AS entry_id
    FROM generate_series($5::int, $6::int) AS n
), ins AS (
  INSERT INTO entries (entry_id, workspace_id, bucket_id, kind, ref, live_ref, status, lock_version, locales,
                       contract_choice, contract_name, validation_issues, validation_checked_at, created_at, updated_at)
  SELECT entry_id, $1::int, $2::int, 'json', 'items/' || n, 'items/' || n, 'published', 0, '{en-US}'::text[],
         'auto', NULL, '[]'::jsonb, NULL, statement_timestamp(), statement_timestamp()
    FROM src ORDER BY n
  RETURNING id, ref
)
INSERT INTO entry_contents (entry_pk, locale, data)
SELECT id, 'en-US', jsonb_build_object(
         'title', 'Object ' || n,
         'category', 'c' || (n % 50),
         'rating', (n % 1000)::float8 / 10,
         'tags', jsonb_build_array('t' || (n % 7), 'u' || (n % 11)),
         'body', 'Body of object ' || n || '. ' || $7::text)
  FROM (SELECT id, split_part(ref, '/', 2)::int AS n FROM ins) AS x`;

// ---------------------------------------------------------------------------------------------
// Helpers

const objectsPath = (ws) => `/api/v1/${ws}/objects`;

/** Runs `fn(i)` for i = 0..count-1 with at most `concurrency` at a time. */
async function inParallel(count, concurrency, fn) {
  let next = 0;
  const worker = async () => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

const encodeCursor = (keys) => Buffer.from(JSON.stringify(keys)).toString('base64url');
const decodeCursor = (cursor) => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));

/** The routes loaded with autocannon; each answers 200 (and what it should) before the load. */
function loadRoutes(base, ws, key, ids, deepCursor) {
  const auth = { Authorization: `Bearer ${key}` };
  const p = objectsPath(ws);
  const randomId = () => ids[Math.floor(Math.random() * ids.length)];
  const routes = [
    {
      route: 'health',
      label: 'GET /health (no auth; SELECT 1, storage check)',
      url: `${base}/health`,
      headers: {},
      check: () => true,
      ceiling: true,
    },
    {
      route: 'read',
      label: `GET ${p}/{random id}`,
      url: `${base}${p}/${ids[0]}`,
      request: { requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `${p}/${randomId()}` }) }] },
      check: (body) => body.status === 'published' && body.data?.title?.startsWith('Object '),
      target: TARGETS.read,
    },
    {
      route: 'list',
      label: `GET ${p}?per_page=20`,
      url: `${base}${p}?per_page=20`,
      check: (body) => body.data.length === 20 && body.data.every((o) => !('data' in o)) && body.next_cursor,
      target: TARGETS.list,
    },
  ];
  if (deepCursor) {
    routes.push({
      route: 'deep',
      label: `GET ${p}?per_page=20&cursor=<~${DEEP_INDEX / 1000}k in>`,
      url: `${base}${p}?per_page=20&cursor=${deepCursor.cursor}`,
      check: (body) => body.data.length === 20 && body.data[0].id > deepCursor.afterId && body.prev_cursor,
      target: TARGETS.list,
    });
  }
  routes.push(
    {
      route: 'full',
      label: `GET ${p}?view=full&per_page=20`,
      url: `${base}${p}?view=full&per_page=20`,
      check: (body) => body.data.length === 20 && body.data.every((o) => o.data?.title),
      target: TARGETS.list,
    },
    {
      route: 'query',
      label: `POST ${p}/query (eq, numeric sort)`,
      url: `${base}${p}/query`,
      request: { method: 'POST', body: JSON.stringify(QUERY) },
      headers: { 'Content-Type': 'application/json' },
      check: (body) =>
        body.data.length === 20 &&
        body.data.every((o, i) => o.data.category === 'c7' && (i === 0 || body.data[i - 1].data.rating >= o.data.rating)) &&
        body.pagination.hasMore === true,
      target: TARGETS.query,
    },
  );
  for (const r of routes) if (!r.ceiling) r.headers = { ...auth, ...r.headers };
  return routes;
}

async function measureRoutes(routes, opts) {
  for (const r of routes) {
    const res = await fetch(r.url, { method: r.request?.method ?? 'GET', headers: r.headers, body: r.request?.body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${r.label}: HTTP ${res.status} before the load: ${text.slice(0, 300)}`);
    if (!r.check(r.ceiling ? text : JSON.parse(text)))
      throw new Error(`${r.label}: unexpected answer before the load: ${text.slice(0, 600)}`);
  }
  return measureSteady(routes, opts);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: seeding, the query's statement and plan, the deep cursor, compare

/** Objects 1..API_CREATED through the API, the rest with one INSERT; then VACUUM ANALYZE. */
async function seedPostgres(base, ws, key, client, count) {
  const started = performance.now();
  const created = [];
  for (let n = 1; n <= Math.min(API_CREATED, count); n++) {
    created.push(await call(base, 'POST', objectsPath(ws), key, { ref: `items/${n}`, status: 'published', data: objectData(n) }));
  }
  const apiMs = performance.now() - started;
  const { bucket_id: bucketId } = created[0];
  const [{ id: workspaceId }] = (await client.query('SELECT id FROM workspaces WHERE name = $1', [ws])).rows;
  const prefix = crockford(Date.now(), 10) + crockford(BigInt(`0x${randomBytes(4).toString('hex')}`) & ((1n << 30n) - 1n), 6);
  const t0 = performance.now();
  if (count > API_CREATED) await client.query(BULK_INSERT, [workspaceId, bucketId, prefix, CROCKFORD, API_CREATED + 1, count, LOREM]);
  const insertMs = performance.now() - t0;
  const t1 = performance.now();
  // VACUUM as well: autovacuum would otherwise visit the 100k new rows in the middle of a run.
  await client.query('VACUUM (ANALYZE) entries, entry_contents');
  const analyzeMs = performance.now() - t1;
  return { workspaceId, bucketId, created, apiMs, insertMs, analyzeMs, totalMs: performance.now() - started };
}

/** A bulk-inserted object must read exactly like one the API created. */
async function shapeCheck(base, ws, key, client, created, count) {
  const problems = [];
  const n = count;
  const [{ id }] = (await client.query(`SELECT id FROM entries WHERE ref = $1`, [`items/${n}`])).rows;
  const bulk = await getJson(`${base}${objectsPath(ws)}/${id}`, key);
  const viaApi = await getJson(`${base}${objectsPath(ws)}/${created[0].id}`, key);
  if (!isDeepStrictEqual(shapeOf(bulk), shapeOf(viaApi)))
    problems.push(`envelope shapes differ: ${JSON.stringify(shapeOf(bulk))} vs ${JSON.stringify(shapeOf(viaApi))}`);
  if (!isDeepStrictEqual(bulk.data, objectData(n))) problems.push(`data of items/${n} differs: ${JSON.stringify(bulk.data)}`);
  if (!isDeepStrictEqual(viaApi.data, objectData(1))) problems.push(`data of items/1 differs: ${JSON.stringify(viaApi.data)}`);
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(bulk.entry_id)) problems.push(`entry_id ${bulk.entry_id} is not a ULID`);
  for (const field of ['kind', 'bucket', 'bucket_id', 'contract', 'locale', 'locales', 'status', 'lock_version', 'validation']) {
    if (!isDeepStrictEqual(bulk[field], viaApi[field]))
      problems.push(`${field}: ${JSON.stringify(bulk[field])} vs ${JSON.stringify(viaApi[field])}`);
  }
  const [{ objects }] = (
    await client.query(
      `SELECT count(*)::int AS objects FROM entries e JOIN entry_contents c ON c.entry_pk = e.id WHERE e.workspace_id = (SELECT id FROM workspaces WHERE name = $1) AND e.kind = 'json' AND e.status = 'published' AND e.deleted_at IS NULL`,
      [ws],
    )
  ).rows;
  if (objects !== count) problems.push(`${objects} published objects with a document, expected ${count}`);
  return problems;
}

/**
 * The statement `POST /objects/query` runs, built by the server's own compiled `queryStatement`
 * (visibility as objects/routes.ts `placeVisibility` for a body without bucket, ref or prefix).
 */
function queryStatement(workspaceId, body) {
  const require = createRequire(import.meta.url);
  const load = (p) => require(path.join(root, 'dist/server/src', p));
  const { parseFilter, parseSort } = load('core/query/parse.js');
  const { queryStatement: build } = load('core/query/run.js');
  const { fieldErrors } = load('http/errors.js');
  const errors = fieldErrors();
  const plan = {
    filter: parseFilter(body.filter, errors),
    sort: parseSort(body.sort, errors),
    locale: body.locale ?? 'en-US',
    offset: body.offset ?? 0,
    limit: body.limit ?? 20,
  };
  if (Object.keys(errors).length) throw new Error(`the bench's query is invalid: ${JSON.stringify(errors)}`);
  return build({ workspaceId, kinds: ['json'], bucketIds: [], also: [] }, plan).statement.toQuery();
}

/** The cursor of a page that continues after the DEEP_INDEX-th object (checked against a real one). */
async function deepCursor(base, ws, key, client, workspaceId) {
  const first = await getJson(`${base}${objectsPath(ws)}?per_page=100`, key);
  if (!first.next_cursor) throw new Error('the first page of 100 has no next_cursor');
  const keys = decodeCursor(first.next_cursor);
  const lastId = first.data[first.data.length - 1].id;
  if (!isDeepStrictEqual(keys, [1, lastId]))
    throw new Error(`next_cursor is ${JSON.stringify(keys)}, not [1, ${lastId}] as assumed: fix the bench`);
  const found = (
    await client.query(
      `SELECT id FROM entries WHERE workspace_id = $1 AND kind = 'json' AND status = 'published' AND deleted_at IS NULL ORDER BY id OFFSET $2 LIMIT 1`,
      [workspaceId, DEEP_INDEX - 1],
    )
  ).rows;
  if (!found.length) return undefined;
  return { afterId: found[0].id, cursor: encodeCursor([1, found[0].id]) };
}

/** A ~1 MiB document (5,000 keys), one update changing 1 % of them, then compare timed sequentially. */
async function benchCompare(base, ws, key, runs) {
  const p = objectsPath(ws);
  const filler = 'x'.repeat(180);
  const keys = Array.from({ length: 5000 }, (_, i) => `field_${String(i).padStart(4, '0')}`);
  const data = Object.fromEntries(keys.map((k, i) => [k, `${i}:${filler}`]));
  const createBody = { ref: 'big/document', status: 'published', data };
  const size = Buffer.byteLength(JSON.stringify(createBody));
  if (size > 1_048_576) throw new Error(`the compare document is ${size} bytes, over the 1 MiB body limit`);
  let t = performance.now();
  const created = await getJson(`${base}${p}`, key, { method: 'POST', body: JSON.stringify(createBody) });
  const createMs = performance.now() - t;
  const changed = { ...data };
  keys.forEach((k, i) => {
    if (i % 100 === 0) changed[k] = `${i}:changed:${filler}`;
  });
  const updateBody = JSON.stringify({ lock_version: created.lock_version, ref: created.ref, data: changed });
  if (Buffer.byteLength(updateBody) > 1_048_576) throw new Error('the compare document is over the 1 MiB body limit');
  t = performance.now();
  await getJson(`${base}${p}/${created.id}`, key, { method: 'PATCH', body: updateBody });
  const updateMs = performance.now() - t;
  const revisions = (await getJson(`${base}${p}/${created.id}/revisions`, key)).data;
  const from = revisions.find((r) => r.event === 'created');
  const to = revisions.find((r) => r.event === 'updated');
  if (!from || !to) throw new Error(`expected a created and an updated revision, got ${JSON.stringify(revisions)}`);
  const url = `${base}${p}/${created.id}/revisions/compare?from=${from.id}&to=${to.id}`;
  const once = async () => {
    const s = performance.now();
    const body = await getJson(url, key);
    return { ms: performance.now() - s, body };
  };
  const cold = await once();
  const expected = keys.filter((_, i) => i % 100 === 0).length;
  if (cold.body.changes.length !== expected || cold.body.truncated) {
    throw new Error(`compare answered ${cold.body.changes.length} changes (truncated ${cold.body.truncated}), expected ${expected}`);
  }
  await once(); // a second warm-up call, not counted either
  const times = [];
  for (let i = 0; i < runs; i++) times.push((await once()).ms);
  const sorted = [...times].sort((a, b) => a - b);
  return {
    size,
    keys: keys.length,
    changes: expected,
    createMs,
    updateMs,
    coldMs: cold.ms,
    median: percentile(sorted, 50),
    max: sorted[sorted.length - 1],
    runs,
    label: `GET ${p}/{id}/revisions/compare`,
  };
}

async function runPostgres({ adminUrl, opts, count, compareRuns }) {
  const dataDir = makeTempDir('wsapi-bench-objects-');
  const db = await createDatabase(adminUrl);
  // The server's session settings (server/src/db/database.ts), so that EXPLAIN shows its plan.
  const client = new pg.Client({ connectionString: db.url, options: '-c max_parallel_workers_per_gather=0 -c random_page_cost=1.1' });
  let server;
  try {
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local' } });
    await client.connect();
    const prepared = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: ENTRY_PERMISSIONS });
      const seed = await seedPostgres(server.base, ws, key, client, count);
      const shapeProblems = await shapeCheck(server.base, ws, key, client, seed.created, count);
      const deep = await deepCursor(server.base, ws, key, client, seed.workspaceId);
      return { ws, key, seed, shapeProblems, deep };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    const { ws, key, seed, shapeProblems, deep } = prepared;
    console.log(
      `objects: seeded ${count.toLocaleString('en-US')} published objects on PostgreSQL in ${seconds(seed.totalMs)} ` +
        `(${Math.min(API_CREATED, count)} through the API ${seconds(seed.apiMs)}, ${Math.max(0, count - API_CREATED).toLocaleString('en-US')} with one INSERT ${seconds(seed.insertMs)}, VACUUM ANALYZE ${seconds(seed.analyzeMs)})`,
    );
    if (shapeProblems.length)
      for (const p of shapeProblems) console.log(`objects: WARNING: bulk-inserted objects do not read like API-created ones: ${p}`);
    else
      console.log(
        'objects: a bulk-inserted object reads exactly like an API-created one (envelope shape, data, kind, status, locales, validation)',
      );

    const ids = (
      await client.query(`SELECT id FROM entries WHERE workspace_id = $1 AND kind = 'json' AND status = 'published' ORDER BY id`, [
        seed.workspaceId,
      ])
    ).rows.map((r) => r.id);
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`objects: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const rows = await measureRoutes(loadRoutes(server.base, ws, key, ids, deep), opts);

    // The statement of the query route, checked, and its plan.
    const statement = queryStatement(seed.workspaceId, QUERY);
    const apiIds = (await getJson(`${server.base}${objectsPath(ws)}/query`, key, { method: 'POST', body: JSON.stringify(QUERY) })).data.map(
      (o) => o.id,
    );
    const check = await checkStatement(client, db.name, statement, apiIds, { idColumn: 'id', like: '%c.data IS NULL%' });
    const plan = await preparedPlan(client, statement);

    const compare = await benchCompare(server.base, ws, key, compareRuns);
    return { rows, startMs: server.startMs, busy, seed, deep, statement, check, plan, compare };
  } finally {
    await client.end().catch(() => {});
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    }
    // BENCH_KEEP_DATABASE=1 keeps it for EXPLAIN by hand.
    if (process.env.BENCH_KEEP_DATABASE === '1') (keepDatabase(db.name), console.log(`objects: kept ${db.url}`));
    else await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// The embedded default: a few objects through the API, the rest through PGlite

async function runEmbedded({ opts, count, analyze }) {
  const dataDir = makeTempDir('wsapi-bench-objects-');
  const embedded = embeddedDatabase({ dataDir, variantEnv: { APP_ENV: 'local' } });
  try {
    let server = await embedded.serve();
    const viaApi = Math.min(EMBEDDED_API_CREATED, count);
    const { ws, key, created, apiMs } = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: ENTRY_PERMISSIONS });
      const started = performance.now();
      const created = new Array(viaApi);
      await inParallel(viaApi, 10, async (i) => {
        created[i] = await call(server.base, 'POST', objectsPath(ws), key, {
          ref: `items/${i + 1}`,
          status: 'published',
          data: objectData(i + 1),
        });
      });
      return { ws, key, created, apiMs: performance.now() - started };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });

    // The rest straight into the embedded database (its first query stops the server: PGlite is
    // one process's database), then the server again on the same DATA_DIR.
    const t0 = performance.now();
    const pglite = embedded.client;
    const [{ id: workspaceId }] = (await pglite.query('SELECT id FROM workspaces WHERE name = $1', [ws])).rows;
    const prefix = crockford(Date.now(), 10) + crockford(BigInt(`0x${randomBytes(4).toString('hex')}`) & ((1n << 30n) - 1n), 6);
    if (count > viaApi) await pglite.query(BULK_INSERT, [workspaceId, created[0].bucket_id, prefix, CROCKFORD, viaApi + 1, count, LOREM]);
    if (analyze) await pglite.query('ANALYZE');
    const ids = (
      await pglite.query(`SELECT id FROM entries WHERE workspace_id = $1 AND kind = 'json' AND status = 'published' ORDER BY id`, [
        workspaceId,
      ])
    ).rows.map((r) => r.id);
    const insertMs = performance.now() - t0;
    server = await embedded.serve();
    if (ids.length !== count) throw new Error(`the embedded database holds ${ids.length} objects, expected ${count}`);
    const last = await getJson(`${server.base}${objectsPath(ws)}/${ids[ids.length - 1]}`, key);
    if (!isDeepStrictEqual(last.data, objectData(count))) throw new Error(`object items/${count} reads ${JSON.stringify(last.data)}`);
    console.log(
      `objects: seeded ${count.toLocaleString('en-US')} published objects on the embedded database: ${viaApi} through the API (10 in parallel) in ${seconds(apiMs)} ` +
        `(${(viaApi / (apiMs / 1000)).toFixed(0)} creates/s), ${(count - viaApi).toLocaleString('en-US')} with the same INSERT through PGlite (server stopped) in ${seconds(insertMs)}; ` +
        (analyze
          ? 'then ANALYZE (BENCH_EMBEDDED_ANALYZE=1)'
          : 'no ANALYZE (the embedded database never runs one; BENCH_EMBEDDED_ANALYZE=1 runs one)'),
    );
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`objects: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const rows = (await measureRoutes(loadRoutes(server.base, ws, key, ids, undefined), opts)).map((r) => ({ ...r, target: undefined }));
    return { rows, startMs: server.startMs, busy };
  } finally {
    const stopped = await embedded.close();
    if (stopped && !stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

// autocannon counts a timeout (no answer within 10 s) as an error too: a timeout is a slow server,
// any other error or a non-2xx answer means the bench itself did not work.

function reportPostgres(r, count, opts) {
  const compareRow = {
    route: 'compare',
    label: `${r.compare.label} (${r.compare.runs}× sequential)`,
    rps: NaN,
    p50: r.compare.median,
    p99: r.compare.max,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    target: TARGETS.compare,
  };
  printRouteTable(
    `objects on PostgreSQL server, ${count.toLocaleString('en-US')} objects, APP_ENV=local, ${opts.connections} connections (server up in ${seconds(r.startMs)}; CPUs ${pct(r.busy)} busy before the run):`,
    [...r.rows, compareRow],
  );
  console.log(`  (compare row: p50 = median, p99 = max of ${r.compare.runs} sequential requests)`);
  const list = r.rows.find((x) => x.route === 'list');
  const deep = r.rows.find((x) => x.route === 'deep');
  if (deep) {
    console.log(
      `  cursor pages, per_page=20 summary: first page p50 ${ms(list.p50)} ms, p99 ${ms(list.p99)} ms | page after object #${DEEP_INDEX.toLocaleString('en-US')} (id ${r.deep.afterId}) p50 ${ms(deep.p50)} ms, p99 ${ms(deep.p99)} ms ` +
        `(deep/first p50 ${(deep.p50 / list.p50).toFixed(2)}×)`,
    );
  } else {
    console.log(`  deep cursor page: skipped (fewer than ${DEEP_INDEX.toLocaleString('en-US')} objects)`);
  }
  const c = r.compare;
  console.log(
    `  compare: a ${(c.size / 1024).toFixed(0)} KiB document (${c.keys.toLocaleString('en-US')} keys), created in ${ms(c.createMs)} ms, updated (${c.changes} keys changed) in ${ms(c.updateMs)} ms; ` +
      `compare of its two revisions: first call ${ms(c.coldMs)} ms, then ${c.runs}× median ${ms(c.median)} ms, max ${ms(c.max)} ms (target < ${TARGETS.compare.p50} ms: ${c.median < TARGETS.compare.p50 ? 'met' : 'MISSED'}${c.max < TARGETS.compare.p50 ? '' : ', max over'})`,
  );
  console.log(`  query statement (rebuilt with dist/ modules as core/query/run.ts does), values ${JSON.stringify(r.statement.values)}:`);
  if (r.check.problems.length)
    for (const p of r.check.problems) console.log(`  WARNING: the rebuilt statement may not be the server's: ${p}`);
  else
    console.log(
      `  (same rows as the API answer; its first ${r.check.compared} characters identical to the server's statement in pg_stat_activity)`,
    );
  for (const line of r.statement.text.split('\n')) console.log(`    ${line}`);
  console.log(
    '  EXPLAIN (ANALYZE, BUFFERS) of it, prepared as the server prepares it and run 8 times first (the plan PostgreSQL then keeps):',
  );
  for (const line of r.plan) console.log(`    ${line}`);
}

// ---------------------------------------------------------------------------------------------

export async function benchObjects(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 20 }),
  };
  const count = Number(options.objects ?? env.BENCH_OBJECTS ?? 100_000);
  const embeddedCount = Number(options.embeddedObjects ?? env.BENCH_OBJECTS_EMBEDDED ?? 10_000);
  const embeddedAnalyze = options.embeddedAnalyze ?? env.BENCH_EMBEDDED_ANALYZE === '1';
  const compareRuns = Number(options.compareRuns ?? env.BENCH_COMPARE_RUNS ?? 30);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  const databases = (options.databases ?? (env.BENCH_DATABASES || 'postgres,embedded').split(',')).map((s) => s.trim()).filter(Boolean);
  // The checks before each load expect full pages and more than 20 matches of the query.
  if (!(count >= 2000) || !(embeddedCount >= 2000)) throw new Error('BENCH_OBJECTS and BENCH_OBJECTS_EMBEDDED must be at least 2000');
  checkBuild('objects');

  const removeHandlers = installSignalHandlers('objects bench');
  const results = {};
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `objects: ${opts.connections} connections, ${opts.serverWarmupSeconds} s of random reads first, then ${opts.warmupSeconds} s warm-up + ${opts.seconds} s per route; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon runs on the same machine)`,
    );
    for (const database of databases) {
      if (database === 'postgres') {
        const reachable = await postgresReachable(adminUrl);
        if (reachable !== true) {
          const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
          if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
          console.log(`objects: ${msg}: PostgreSQL skipped`);
          continue;
        }
        const r = await runPostgres({ adminUrl, opts, count, compareRuns });
        results.postgres = r;
        reportPostgres(r, count, opts);
        if (r.rows.some(failed)) invalid = true;
      } else if (database === 'embedded') {
        const r = await runEmbedded({ opts, count: embeddedCount, analyze: embeddedAnalyze });
        results.embedded = r;
        printRouteTable(
          `objects on embedded PostgreSQL (PGlite), ${embeddedCount.toLocaleString('en-US')} objects${embeddedAnalyze ? ' (ANALYZEd)' : ''}, APP_ENV=local, ${opts.connections} connections — for information, no targets (server up in ${seconds(r.startMs)}; CPUs ${pct(r.busy)} busy before the run):`,
          r.rows,
        );
        if (r.rows.some(failed)) invalid = true;
      } else {
        throw new Error(`BENCH_DATABASES: unknown database "${database}" (postgres, embedded)`);
      }
    }
    if (results.postgres) {
      console.log(
        `objects targets (PostgreSQL, ${count.toLocaleString('en-US')} objects): read by id >= ${TARGETS.read.rps} req/s with p50 < ${TARGETS.read.p50} ms; ` +
          `list pages and the query p50 < ${TARGETS.list.p50} ms; a deep cursor page as cheap as the first; compare of a 1 MiB document < ${TARGETS.compare.p50} ms`,
      );
    }
    console.log(`objects: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('objects: WARNING: some responses were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { results, invalid };
}

await runStandalone(import.meta, 'objects', benchObjects);
