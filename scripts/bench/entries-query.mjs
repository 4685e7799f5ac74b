// The structured query, aggregation and batch writes of typed entries (the Entries API) under
// load, on the built server (dist/), with APP_ENV=local (rate limits off), on a PostgreSQL server
// (a throwaway database):
//
// In the General bucket of one workspace, two content types: `author` (name text; 1,000 entries)
// and `post` (title text, amount number, published date with format datetime, author single
// relation -> author; BENCH_QUERY_ENTRIES = 100,000 entries), all published. A few of each are
// created through the API, the rest bulk-inserted with one INSERT per type exactly as the API
// writes them (support.mjs typedBulkInsert: an `entries` row of kind `typed` and an
// `entry_contents` row for en-US whose data holds the relation as the author's ULID), then VACUUM
// ANALYZE. Post n: title `Title <n % 100>` (an eq filter matches 1 % of the posts), amount
// ((n * 7919) mod 200,000 - 50,000) / 100 (-500 to 1499.99, up to 2 decimals), published a
// permutation of the posts over 2023-01-01 .. 2025-12-31 as `YYYY-MM-DDTHH:mm:ssZ` (so that month
// groups in Europe/Berlin differ from UTC ones, across the daylight-saving changes), author
// (n * 31) mod 1000. A bulk-inserted post must query like an API-created one.
// With autocannon (10 connections, a warm-up that is not counted, then BENCH_SECONDS per route),
// after BENCH_SERVER_WARMUP_SECONDS of the first query route, each route twice: on a server with
// the response cache off (RESPONSE_CACHE_MB=0: the API computes every answer; the checks before
// the load and the comparison with plain SQL use this one), then on one with the defaults (an
// answer asked again comes from the response cache until a write drops it; the targets below):
//   POST /api/v1/{ws}/general/entries/query   fields [title, published, author.name], sort
//        published desc, limit 20, filter {title: {eq: <random of the 100 titles>}, amount: {gte: 0}}
//        (an eq on a text field: served by the GIN index on documents)            target >= 365 req/s
//   the same with filter {author: {eq: <random author ULID>}, amount: {gte: 0}}   (no target)
//   aggregate {count, sum [amount], avg [amount]}, groupBy [{field: published, interval: month,
//        timezone: UTC | Europe/Berlin}], limit 100, over all the posts           target >= 52 req/s
// and the hand-written SQL GROUP BY of each aggregate (same rows, same figures) through pg, 10
// clients of their own (the server's session settings) for the same warm-up and duration, in
// BENCH_AGGREGATE_ROUNDS rounds alternating with the uncached aggregate route: the API
// must be within 1.3 times its time (SQL answers/s / API 2xx answers/s <= 1.3), and answer exactly
// its figures (every group's count, sum and avg; the avg rounded half away from zero to 12
// places). Before the load, each aggregate and its SQL are also timed one at a time (3 each, after
// one not counted), and the pages of both query routes are compared to SQL for a few filter values.
// Batch writes (POST /api/v1/{ws}/general/entries/batch with an Idempotency-Key), after the load:
//   BENCH_BATCH_RUNS (20) sequential batches of 100 creates of posts (after 2 not counted):
//   median and p95 < 150 ms (and the Server-Timing parts); every answer's ids exist afterwards;
//   the last one replayed with its key answers the same body with Idempotent-Replayed: true.
//   BENCH_CONCURRENT_BATCHES (20) batches at once on the post type, each updating the same 5 posts
//   (amount, expected_version omitted, in a different order per batch), a post of its own (title)
//   and creating 4 posts: a 409 must carry Retry-After (the batch is then retried with the same
//   key after it), no 500; afterwards every batch's effects are there exactly once, every 200
//   answer's ids exist, and no update is lost: each shared post's lock_version and its `updated`
//   revisions grew by the number of batches, the versions the answers gave it are each of those
//   once, and its amount is the one of the batch that got the last version.
//
// Standalone: `node scripts/bench/entries-query.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per route (and per plain SQL run)   BENCH_WARMUP_SECONDS=2
//   BENCH_SERVER_WARMUP_SECONDS=20  of the first query route before the first one, not counted
//   BENCH_CONNECTIONS=10      concurrent connections (and pg clients of the plain SQL)
//   BENCH_AGGREGATE_ROUNDS=3  rounds of each uncached aggregate and its plain SQL, alternating
//   BENCH_QUERY_ENTRIES=100000  posts (at least 1000; authors: 1000)
//   BENCH_BATCH_RUNS=20       sequential batches of 100 creates     BENCH_CONCURRENT_BATCHES=20
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed) to EXPLAIN by hand
//   BENCH_LOG_LEVEL=silent    the server's LOG_LEVEL (its output is shown when the set-up fails)
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import {
  DEFAULT_PG_URL,
  SERVER_SESSION_OPTIONS,
  checkBuild,
  checkRoutes,
  cleanupAsync,
  combineRounds,
  cpuBusy,
  createContentTypes,
  createDatabase,
  dropDatabase,
  failed,
  getJson,
  installSignalHandlers,
  keepDatabase,
  makeTempDir,
  measure,
  measureSql,
  measureSteady,
  ms,
  pct,
  percentile,
  postgresReachable,
  printRouteTable,
  removeTempDir,
  runStandalone,
  seconds,
  seedTypedEntries,
  setup,
  shapeOf,
  startServer,
  stopServer,
  typedBulkInsert,
  bulkMatchesApi,
  verdict,
  withServerOutput,
  loadOptions,
} from './support.mjs';

const BUCKET = 'general';
const PERMISSIONS = ['list-entries', 'create-entry', 'update-entry'];
const ABILITIES = ['entries:query', 'entries:write'];
const AUTHORS = 1000;
const TITLES = 100;
const API_CREATED = { author: 3, post: 5 }; // through the API before the bulk inserts
const TIMEZONES = ['UTC', 'Europe/Berlin'];
const BATCH_SIZE = 100;
const BATCH_WARMUP = 2;
const SHARED = 5; // posts every concurrent batch updates
const CONCURRENT_CREATES = 4;
const MAX_ATTEMPTS = 5; // of a concurrent batch answered 409 with Retry-After
const AGGREGATE_RUNS = 3; // one at a time, API and SQL, before the load
const TARGETS = {
  query: { rps: 365 },
  aggregate: { rps: 52 },
  sqlRatio: 1.3,
  batchMs: 150,
};

const CONTENT_TYPES = [
  { name: 'author', name_field: 'name', fields: [{ name: 'name', type: 'text' }] },
  {
    name: 'post',
    name_field: 'title',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'amount', type: 'number' },
      { name: 'published', type: 'date', format: 'datetime' },
      { name: 'author', type: 'relation', targets: ['author'], multiple: false },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// The seeded entries: the same in JavaScript (API) and in SQL (bulk insert), numbered from 1 in
// creation order per type; `authors` holds the authors' ULIDs in that order.

const START = Date.UTC(2023, 0, 1) / 1000; // 2023-01-01T00:00:00Z
const SPAN = 1095 * 86_400; // to 2025-12-31
const PERMUTE = 48_271; // prime: n -> n * PERMUTE mod count spreads the posts over the span
const authorFields = (n) => ({ name: `Author ${n}` });
const authorIndex = (n) => (n * 31) % AUTHORS; // 0-based
const iso = (epochSeconds) => new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
const postFields = (n, count, authors) => ({
  title: `Title ${n % TITLES}`,
  amount: (((n * 7919) % 200_000) - 50_000) / 100,
  published: iso(START + Math.floor((((n * PERMUTE) % count) * SPAN) / count) + (n % 17)),
  author: authors[authorIndex(n)],
});

const BULK_SQL = {
  author: typedBulkInsert(`jsonb_build_object('name', 'Author ' || n)`),
  // $7 the authors' ULIDs, $8 the number of posts (as postFields; the amount a float8 divided as
  // in JavaScript, written as its shortest form, as a JSON number through the API is).
  post: typedBulkInsert(`jsonb_build_object(
         'title', 'Title ' || (n % ${TITLES}),
         'amount', ((n::bigint * 7919) % 200000 - 50000)::float8 / 100,
         'published', to_char(to_timestamp(${START} + ((n::bigint * ${PERMUTE}) % $8::bigint) * ${SPAN} / $8::bigint + n % 17) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
         'author', ($7::text[])[((n * 31) % ${AUTHORS}) + 1])`),
};

// ---------------------------------------------------------------------------------------------
// Requests

const queryPath = (ws) => `/api/v1/${ws}/${BUCKET}/entries/query`;
const batchPath = (ws) => `/api/v1/${ws}/${BUCKET}/entries/batch`;
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const pick = (list) => list[Math.floor(Math.random() * list.length)];

/** The projected, filtered, sorted page: `filter` is one of `QUERY_FILTERS`. */
const pageQuery = (filter) => ({
  type: 'post',
  fields: ['title', 'published', 'author.name'],
  filter,
  sort: [{ field: 'published', direction: 'desc' }],
  limit: 20,
});

/**
 * The filters of the query routes (two conditions, one on the number), each with the hand-written
 * SQL condition on `c` (the post's document) that selects the same posts.
 */
const QUERY_FILTERS = {
  title: {
    label: 'title eq (random of 100) + amount gte 0',
    values: () => Array.from({ length: TITLES }, (_, i) => `Title ${i}`),
    filter: (v) => ({ title: { eq: v }, amount: { gte: 0 } }),
    sql: `c.data ->> 'title' = $2 AND (c.data ->> 'amount')::numeric >= 0`,
  },
  author: {
    label: 'author eq (random of 1000) + amount gte 0',
    values: (seed) => seed.authors,
    filter: (v) => ({ author: { eq: v }, amount: { gte: 0 } }),
    sql: `c.data ->> 'author' = $2 AND (c.data ->> 'amount')::numeric >= 0`,
  },
};

const aggregateQuery = (timezone) => ({
  type: 'post',
  aggregate: { count: true, sum: ['amount'], avg: ['amount'] },
  groupBy: [{ field: 'published', interval: 'month', timezone }],
  limit: 100,
});

/** The page a query route must answer, by hand: rows as projected, and whether there are more. */
async function expectedPage(client, typeId, filterSql, value) {
  const found = (
    await client.query(
      `SELECT c.data ->> 'title' AS title, c.data ->> 'published' AS published, ac.data ->> 'name' AS author_name, count(*) OVER () AS matches
         FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US'
         LEFT JOIN entries ae ON ae.entry_id = c.data ->> 'author' AND ae.deleted_at IS NULL
         LEFT JOIN entry_contents ac ON ac.entry_pk = ae.id AND ac.locale = 'en-US'
        WHERE e.content_type_id = $1 AND e.kind = 'typed' AND e.deleted_at IS NULL AND ${filterSql}
        ORDER BY c.data ->> 'published' COLLATE "C" DESC, e.entry_id COLLATE "C" ASC LIMIT 20`,
      [typeId, value],
    )
  ).rows;
  return {
    data: found.map((r) => ({ title: r.title, published: r.published, author: { name: r.author_name } })),
    pagination: { offset: 0, limit: 20, hasMore: Number(found[0]?.matches ?? 0) > 20 },
  };
}

/**
 * The aggregate by hand: the posts' month (in `timezone`) of published, count, exact sum without
 * trailing zeros, and the average of the amounts rounded half away from zero to 12 places
 * (sign(s) * floor((2|s| * 10^12 + n) / 2n) / 10^12, in exact numerics).
 */
const aggregateSql = (typeId, timezone) => ({
  text: `WITH x AS (
      SELECT to_char(date_trunc('month', (c.data ->> 'published')::timestamptz AT TIME ZONE $2::text), 'YYYY-MM-DD') AS month,
             (c.data ->> 'amount')::numeric AS amount
        FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US'
       WHERE e.content_type_id = $1 AND e.kind = 'typed' AND e.deleted_at IS NULL
    ), g AS (SELECT month, count(*) AS count, sum(amount) AS s, count(amount) AS n FROM x GROUP BY month)
    SELECT month, count::int AS count, trim_scale(s)::text AS sum,
           CASE WHEN n > 0 THEN (sign(s) * div(abs(s) * 2000000000000 + n, 2 * n) * 0.000000000001)::text END AS avg
      FROM g ORDER BY month COLLATE "C" NULLS LAST`,
  values: [typeId, timezone],
});

/** Differences between the API's aggregate rows and the SQL's (at most `max`). */
function aggregateDiffs(api, expected, max = 8) {
  const diffs = [];
  if (api.pagination?.hasMore !== false) diffs.push(`pagination ${JSON.stringify(api.pagination)}: expected hasMore false`);
  if (api.data.length !== expected.length) diffs.push(`${api.data.length} groups, the SQL has ${expected.length}`);
  const n = Math.max(api.data.length, expected.length);
  for (let i = 0; i < n && diffs.length < max; i++) {
    const a = api.data[i];
    const e = expected[i];
    const want = e && { group: { published: e.month }, count: e.count, sum: { amount: e.sum }, avg: { amount: e.avg } };
    if (!isDeepStrictEqual(a, want)) diffs.push(`group ${i}: API ${JSON.stringify(a)}, SQL ${JSON.stringify(want)}`);
  }
  return diffs;
}

const pageShapeOk = (body) =>
  Array.isArray(body.data) &&
  body.data.length <= 20 &&
  body.data.every(
    (r) => isDeepStrictEqual(Object.keys(r).sort(), ['author', 'published', 'title']) && typeof r.author?.name === 'string',
  ) &&
  typeof body.pagination?.hasMore === 'boolean';

const aggregateShapeOk = (body) =>
  Array.isArray(body.data) &&
  body.data.length > 0 &&
  body.data.every(
    (r) =>
      typeof r.group?.published === 'string' &&
      Number.isInteger(r.count) &&
      typeof r.sum?.amount === 'string' &&
      typeof r.avg?.amount === 'string',
  ) &&
  body.pagination?.hasMore === false;

/** The routes loaded with autocannon; each answers 200 (and what it should) before the load. */
function loadRoutes(base, ws, key, seed) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const url = `${base}${queryPath(ws)}`;
  const routes = [
    {
      route: 'health',
      label: 'GET /health (no auth; SELECT 1, storage check)',
      url: `${base}/health`,
      headers: {},
      check: () => true,
      ceiling: true,
    },
  ];
  for (const [name, f] of Object.entries(QUERY_FILTERS)) {
    const values = f.values(seed);
    const body = () => JSON.stringify(pageQuery(f.filter(pick(values))));
    routes.push({
      route: `query-${name}`,
      label: `POST ${queryPath(ws)} (${f.label}; sort published desc, limit 20, 3 fields)`,
      url,
      headers,
      warmup: name === 'title',
      sample: () => ({ method: 'POST', body: body() }),
      request: { method: 'POST', requests: [{ method: 'POST', setupRequest: (req) => ({ ...req, body: body() }) }] },
      check: pageShapeOk,
      target: name === 'title' ? TARGETS.query : undefined,
    });
  }
  for (const tz of TIMEZONES) {
    routes.push({
      route: `aggregate-${tz}`,
      timezone: tz,
      label: `POST ${queryPath(ws)} (count, sum, avg by month of published, ${tz})`,
      url,
      headers,
      request: { method: 'POST', body: JSON.stringify(aggregateQuery(tz)) },
      check: aggregateShapeOk,
      target: TARGETS.aggregate,
    });
  }
  return routes;
}

// ---------------------------------------------------------------------------------------------
// Seeding and the checks before the load

/** A few of each type through the API, the rest with one INSERT per type; then VACUUM ANALYZE. */
async function seedPostgres(base, ws, key, client, count) {
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
  const authors = await seedType('author', AUTHORS, authorFields, []);
  // The API-created posts reference bulk-inserted authors: the API checks that they exist.
  const posts = await seedType('post', count, (n) => postFields(n, count, authors.ids), [authors.ids, count]);
  const t = performance.now();
  // VACUUM as well: autovacuum would otherwise visit the new rows in the middle of a run.
  await client.query('VACUUM (ANALYZE) entries, entry_contents');
  return {
    workspaceId,
    types,
    authors: authors.ids,
    posts: posts.ids,
    created: { author: authors.created, post: posts.created },
    apiMs: authors.apiMs + posts.apiMs,
    insertMs: authors.insertMs + posts.insertMs,
    analyzeMs: performance.now() - t,
    totalMs: performance.now() - started,
  };
}

/** A bulk-inserted post must query like an API-created one: fields, metadata, rows. */
async function shapeCheck(base, ws, key, client, seed, count) {
  const problems = [];
  const query = async (id, fields) =>
    (
      await getJson(`${base}${queryPath(ws)}`, key, {
        method: 'POST',
        body: JSON.stringify({ type: 'post', filter: { '@id': { eq: id } }, ...(fields ? { fields } : {}) }),
      })
    ).data;
  const meta = [
    '@id',
    '@status',
    '@lock_version',
    '@locales',
    '@created_at',
    '@updated_at',
    '@publish_at',
    '@published_at',
    'author.@id',
    'author.name',
  ];
  for (const [what, n] of [
    ['API-created', 1],
    ['bulk', count],
  ]) {
    const id = seed.posts[n - 1];
    const [own] = await query(id);
    const expected = postFields(n, count, seed.authors);
    if (!isDeepStrictEqual(own, expected))
      problems.push(`${what} post ${n}: own fields ${JSON.stringify(own)}, expected ${JSON.stringify(expected)}`);
    const [m] = await query(id, meta);
    if (
      m?.['@id'] !== id ||
      m['@status'] !== 'published' ||
      m['@lock_version'] !== 0 ||
      !isDeepStrictEqual(m['@locales'], ['en-US']) ||
      m['@publish_at'] !== null ||
      typeof m['@published_at'] !== 'string'
    ) {
      problems.push(`${what} post ${n}: metadata ${JSON.stringify(m)}`);
    }
    if (m?.author?.['@id'] !== expected.author || m?.author?.name !== `Author ${authorIndex(n) + 1}`)
      problems.push(`${what} post ${n}: author ${JSON.stringify(m?.author)}`);
    if (what === 'bulk') {
      const [api] = await query(seed.posts[0], meta);
      if (!isDeepStrictEqual(shapeOf(m ?? {}), shapeOf(api ?? {})))
        problems.push(`metadata shapes differ: bulk ${JSON.stringify(shapeOf(m ?? {}))} vs API ${JSON.stringify(shapeOf(api ?? {}))}`);
    }
  }
  problems.push(
    ...(await bulkMatchesApi(
      client,
      seed.workspaceId,
      [
        ['author', seed.created.author[0].id, seed.authors[AUTHORS - 1]],
        ['post', seed.created.post[0].id, seed.posts[count - 1]],
      ],
      { author: AUTHORS, post: count },
    )),
  );
  return problems;
}

/** The pages of the query routes for a few filter values, compared with SQL. */
async function verifyPages(base, ws, key, client, seed, samples = 5) {
  const problems = [];
  let compared = 0;
  const typeId = seed.types.get('post').id;
  for (const [name, f] of Object.entries(QUERY_FILTERS)) {
    const values = f.values(seed);
    for (let i = 0; i < samples; i++) {
      const value = values[Math.floor((i * values.length) / samples)];
      const body = pageQuery(f.filter(value));
      const api = await getJson(`${base}${queryPath(ws)}`, key, { method: 'POST', body: JSON.stringify(body) });
      const expected = await expectedPage(client, typeId, f.sql, value);
      compared++;
      if (!isDeepStrictEqual(api, expected)) {
        problems.push(
          `${name} ${JSON.stringify(body.filter)}: API ${JSON.stringify(api).slice(0, 700)} vs SQL ${JSON.stringify(expected).slice(0, 700)}`,
        );
      }
    }
  }
  return { problems, compared };
}

/**
 * Each aggregate route's answer against the hand-written GROUP BY, and both one at a time
 * (AGGREGATE_RUNS each after one not counted: their medians, without the contention of the load).
 */
async function verifyAggregates(base, ws, key, client, seed) {
  const out = {};
  const timed = async (fn) => {
    const t = performance.now();
    const value = await fn();
    return { ms: performance.now() - t, value };
  };
  const median = (list) =>
    percentile(
      [...list].sort((a, b) => a - b),
      50,
    );
  for (const tz of TIMEZONES) {
    const body = JSON.stringify(aggregateQuery(tz));
    const statement = aggregateSql(seed.types.get('post').id, tz);
    const apiCall = async () => {
      const res = await fetch(`${base}${queryPath(ws)}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body,
      });
      return { status: res.status, text: await res.text() };
    };
    const apiRuns = [];
    const sqlRuns = [];
    let res;
    let expected;
    for (let i = 0; i <= AGGREGATE_RUNS; i++) {
      const a = await timed(apiCall);
      const b = await timed(() => client.query(statement));
      res = a.value;
      expected = b.value.rows;
      if (i > 0) (apiRuns.push(a.ms), sqlRuns.push(b.ms));
    }
    const single = { api: median(apiRuns), sql: median(sqlRuns) };
    if (res.status !== 200) out[tz] = { expected, single, diffs: [`HTTP ${res.status}: ${res.text.slice(0, 500)}`] };
    else out[tz] = { expected, single, api: JSON.parse(res.text), diffs: aggregateDiffs(JSON.parse(res.text), expected) };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Batch writes

async function postBatch(base, ws, key, idempotencyKey, body) {
  const started = performance.now();
  const res = await fetch(`${base}${batchPath(ws)}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    ms: performance.now() - started,
    text,
    json,
    retryAfter: res.headers.get('retry-after'),
    replayed: res.headers.get('idempotent-replayed'),
    timing: res.headers.get('server-timing'),
  };
}

/** `batch;dur=41.7, batch_work;dur=35.2` -> { batch: 41.7, batch_work: 35.2 } */
const parseTiming = (header) =>
  Object.fromEntries(
    (header ?? '')
      .split(',')
      .map((p) => /^\s*([\w-]+);dur=([\d.]+)/.exec(p))
      .filter(Boolean)
      .map((m) => [m[1], Number(m[2])]),
  );

/** A post to create in a batch: `title`, the fields of post n otherwise. */
const newPost = (title, n, count, seed) => ({ action: 'create', type: 'post', fields: { ...postFields(n, count, seed.authors), title } });

/** Existing posts among `ids` with their title (ids may repeat across answers: counted once each). */
async function postsById(client, ids) {
  const found = (
    await client.query(
      `SELECT e.entry_id, c.data ->> 'title' AS title FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US' WHERE e.entry_id = ANY($1::text[]) AND e.deleted_at IS NULL`,
      [ids],
    )
  ).rows;
  return new Map(found.map((r) => [r.entry_id, r.title]));
}

/** Sequential batches of 100 creates: latency, Server-Timing, the ids afterwards, a replay. */
async function benchSequentialBatches(base, ws, key, client, seed, count, runs) {
  const problems = [];
  const times = [];
  const timings = [];
  const expectedTitles = new Map(); // id -> title
  let last;
  for (let b = 0; b < BATCH_WARMUP + runs; b++) {
    const body = {
      operations: Array.from({ length: BATCH_SIZE }, (_, j) => newPost(`seq batch ${b} item ${j}`, b * BATCH_SIZE + j + 1, count, seed)),
    };
    const idempotencyKey = randomUUID();
    const res = await postBatch(base, ws, key, idempotencyKey, body);
    if (res.status !== 200) {
      problems.push(`batch ${b}: HTTP ${res.status} ${res.text.slice(0, 500)}`);
      continue;
    }
    const data = res.json?.data;
    const ok =
      Array.isArray(data) &&
      data.length === BATCH_SIZE &&
      data.every(
        (r, j) => r.index === j && r.action === 'create' && ULID_RE.test(r.id) && r.lock_version === 0 && Object.keys(r).length === 4,
      );
    if (!ok) problems.push(`batch ${b}: unexpected answer ${res.text.slice(0, 500)}`);
    else data.forEach((r, j) => expectedTitles.set(r.id, `seq batch ${b} item ${j}`));
    if (b >= BATCH_WARMUP) {
      times.push(res.ms);
      timings.push(parseTiming(res.timing));
    }
    last = { idempotencyKey, body, res };
  }
  const found = await postsById(client, [...expectedTitles.keys()]);
  const missing = [...expectedTitles].filter(([id, title]) => found.get(id) !== title);
  if (missing.length)
    problems.push(
      `${missing.length} of the ${expectedTitles.size} created ids answered are not posts with their title, e.g. ${JSON.stringify(missing.slice(0, 3))}`,
    );
  let replay = 'not tried';
  if (last) {
    const again = await postBatch(base, ws, key, last.idempotencyKey, last.body);
    const same = again.status === 200 && again.replayed === 'true' && isDeepStrictEqual(again.json, last.res.json);
    replay = same
      ? `the same body with Idempotent-Replayed: true in ${ms(again.ms)} ms`
      : `HTTP ${again.status}, Idempotent-Replayed ${again.replayed}, same body ${isDeepStrictEqual(again.json, last.res.json)}`;
    if (!same) problems.push(`replay of the last batch with its key: ${replay}`);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = (key) =>
    percentile(
      timings
        .map((t) => t[key])
        .filter(Number.isFinite)
        .sort((a, b) => a - b),
      50,
    );
  return {
    runs: times.length,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted[sorted.length - 1],
    serverTiming: Object.fromEntries(['batch', 'batch_work', 'batch_finish', 'batch_sql'].map((k) => [k, median(k)])),
    created: expectedTitles.size,
    replay,
    problems,
  };
}

/**
 * `batches` batches at once on the post type: each updates the SHARED posts (amount; the order
 * rotated per batch, reversed for odd ones), a post of its own (title), and creates
 * CONCURRENT_CREATES posts. A 409 must carry Retry-After, and the batch is retried with the same
 * key after it (up to MAX_ATTEMPTS). Then every effect is checked.
 */
async function benchConcurrentBatches(base, ws, key, client, seed, count, batches) {
  const problems = [];
  const run = randomUUID().slice(0, 8);
  const shared = seed.posts.slice(10, 10 + SHARED);
  const own = seed.posts.slice(100, 100 + batches);
  const stateOf = async (ids) =>
    new Map(
      (
        await client.query(
          `SELECT e.entry_id, e.lock_version, c.data,
                  (SELECT count(*)::int FROM entry_revisions r WHERE r.entry_pk = e.id AND r.event = 'updated') AS updates
             FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US' WHERE e.entry_id = ANY($1::text[])`,
          [ids],
        )
      ).rows.map((r) => [r.entry_id, r]),
    );
  const before = await stateOf([...shared, ...own]);
  const amountOf = (i, k) => (i + 1) * 1000 + k + 0.25; // batch i's amount for shared post k
  const createTitle = (i, j) => `concurrent ${run} batch ${i} create ${j}`;
  const ownTitle = (i) => `concurrent ${run} batch ${i}`;
  const plans = Array.from({ length: batches }, (_, i) => {
    let order = shared.map((_, k) => (k + i) % SHARED);
    if (i % 2) order = order.reverse();
    const operations = [
      ...order.map((k) => ({ action: 'update', id: shared[k], fields: { amount: amountOf(i, k) } })),
      { action: 'update', id: own[i], fields: { title: ownTitle(i) } },
      ...Array.from({ length: CONCURRENT_CREATES }, (_, j) => newPost(createTitle(i, j), i * 10 + j + 1, count, seed)),
    ];
    return { i, order, body: { operations }, key: randomUUID() };
  });

  const statuses = new Map();
  const conflicts = { total: 0, withRetryAfter: 0, bodies: [] };
  const started = performance.now();
  const outcomes = await Promise.all(
    plans.map(async (plan) => {
      const attempts = [];
      for (let a = 0; a < MAX_ATTEMPTS; a++) {
        const res = await postBatch(base, ws, key, plan.key, plan.body);
        attempts.push(res);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status !== 409) break;
        conflicts.total++;
        if (res.retryAfter) conflicts.withRetryAfter++;
        else {
          conflicts.bodies.push(res.text.slice(0, 300));
          break; // not contention: no retry
        }
        await new Promise((r) => setTimeout(r, Math.max(1, Number(res.retryAfter) || 1) * 1000));
      }
      return { plan, attempts, final: attempts[attempts.length - 1] };
    }),
  );
  const wallMs = performance.now() - started;

  // Every answer: 200 with its results, or 409 with Retry-After; never anything else.
  for (const { plan, attempts, final } of outcomes) {
    for (const res of attempts)
      if (res.status !== 200 && res.status !== 409) problems.push(`batch ${plan.i}: HTTP ${res.status} ${res.text.slice(0, 400)}`);
    if (final.status !== 200) continue;
    const data = final.json?.data;
    const ops = plan.body.operations;
    const ok =
      Array.isArray(data) &&
      data.length === ops.length &&
      data.every(
        (r, n) =>
          r.index === n &&
          r.action === ops[n].action &&
          ULID_RE.test(r.id) &&
          Number.isInteger(r.lock_version) &&
          (ops[n].action !== 'update' || r.id === ops[n].id),
      );
    if (!ok) problems.push(`batch ${plan.i}: unexpected answer ${final.text.slice(0, 500)}`);
  }
  const succeeded = outcomes.filter((o) => o.final.status === 200 && Array.isArray(o.final.json?.data));
  const after = await stateOf([...shared, ...own]);

  // Creates: exactly once per successful batch, none of the others; the answered ids exist.
  const titles = (
    await client.query(
      `SELECT c.data ->> 'title' AS title, count(*)::int AS n, array_agg(e.entry_id) AS ids FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US'
        WHERE e.content_type_id = $1 AND e.deleted_at IS NULL AND starts_with(c.data ->> 'title', $2) GROUP BY 1`,
      [seed.types.get('post').id, `concurrent ${run} batch `],
    )
  ).rows;
  const byTitle = new Map(titles.map((r) => [r.title, r]));
  for (const { plan, final } of outcomes) {
    const ok = final.status === 200;
    for (let j = 0; j < CONCURRENT_CREATES; j++) {
      const row = byTitle.get(createTitle(plan.i, j));
      const n = row?.n ?? 0;
      if (n !== (ok ? 1 : 0)) problems.push(`batch ${plan.i} (HTTP ${final.status}): ${n} posts titled "${createTitle(plan.i, j)}"`);
      const answered = ok ? final.json?.data?.[SHARED + 1 + j]?.id : undefined;
      if (ok && (!row || !row.ids.includes(answered)))
        problems.push(`batch ${plan.i}: the created id ${answered} it answered is not the post titled "${createTitle(plan.i, j)}"`);
    }
    const mine = after.get(own[plan.i]);
    const was = before.get(own[plan.i]);
    const expectTitle = ok ? ownTitle(plan.i) : was.data.title;
    if (mine.data.title !== expectTitle || mine.lock_version !== was.lock_version + (ok ? 1 : 0)) {
      problems.push(
        `batch ${plan.i} (HTTP ${final.status}): its own post has title ${JSON.stringify(mine.data.title)} and version ${mine.lock_version}, expected ${JSON.stringify(expectTitle)} and ${was.lock_version + (ok ? 1 : 0)}`,
      );
    }
  }
  // Shared posts: one version and one revision per successful batch, the last writer's amount.
  const sharedReport = [];
  shared.forEach((id, k) => {
    const b = before.get(id);
    const a = after.get(id);
    const versions = succeeded
      .map((o) => ({ i: o.plan.i, v: o.final.json.data.find((r) => r.id === id)?.lock_version }))
      .sort((x, y) => x.v - y.v);
    const expectedVersions = succeeded.map((_, n) => b.lock_version + n + 1);
    const lastWriter = versions[versions.length - 1];
    const amountOk = lastWriter ? a.data.amount === amountOf(lastWriter.i, k) : a.data.amount === b.data.amount;
    const ok =
      a.lock_version === b.lock_version + succeeded.length &&
      a.updates - b.updates === succeeded.length &&
      isDeepStrictEqual(
        versions.map((x) => x.v),
        expectedVersions,
      ) &&
      amountOk;
    sharedReport.push({ id, versionFrom: b.lock_version, versionTo: a.lock_version, revisions: a.updates - b.updates, ok });
    if (!ok) {
      problems.push(
        `shared post ${k} (${id}): version ${b.lock_version} -> ${a.lock_version}, ${a.updates - b.updates} updated revisions, ${succeeded.length} successful batches, ` +
          `answered versions ${JSON.stringify(versions.map((x) => x.v))}, amount ${a.data.amount} (last writer batch ${lastWriter?.i}: ${lastWriter ? amountOf(lastWriter.i, k) : '-'})`,
      );
    }
  });
  if (conflicts.total > conflicts.withRetryAfter)
    problems.push(`${conflicts.total - conflicts.withRetryAfter} 409 answers without Retry-After: ${conflicts.bodies.join(' | ')}`);
  const latencies = outcomes.map((o) => o.attempts.reduce((s, r) => s + r.ms, 0)).sort((a, b) => a - b);
  return {
    batches,
    succeeded: succeeded.length,
    statuses: [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}×${n}`)
      .join(' '),
    conflicts,
    retried: outcomes.filter((o) => o.attempts.length > 1).length,
    wallMs,
    median: percentile(latencies, 50),
    max: latencies[latencies.length - 1],
    sharedReport,
    problems,
  };
}

// ---------------------------------------------------------------------------------------------

async function runPostgres({ adminUrl, opts, count, batchRuns, concurrentBatches }) {
  const dataDir = makeTempDir('wsapi-bench-entries-query-');
  const db = await createDatabase(adminUrl);
  const client = new pg.Client({ connectionString: db.url, options: SERVER_SESSION_OPTIONS });
  let server;
  try {
    // First with the response cache off (RESPONSE_CACHE_MB=0): the API's own computation, which
    // the checks and the comparison with plain SQL measure; then with the server's defaults.
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local', RESPONSE_CACHE_MB: '0' } });
    await client.connect();
    const prepared = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedPostgres(server.base, ws, key, client, count);
      const shapeProblems = await shapeCheck(server.base, ws, key, client, seed, count);
      return { ws, key, seed, shapeProblems };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    const { ws, key, seed, shapeProblems } = prepared;
    console.log(
      `entries-query: seeded ${count.toLocaleString('en-US')} published posts and ${AUTHORS.toLocaleString('en-US')} authors on PostgreSQL in ${seconds(seed.totalMs)} ` +
        `(${API_CREATED.author} authors and ${API_CREATED.post} posts through the API ${seconds(seed.apiMs)}; the rest with one INSERT per type ${seconds(seed.insertMs)}; VACUUM ANALYZE ${seconds(seed.analyzeMs)})`,
    );
    if (shapeProblems.length)
      for (const p of shapeProblems) console.log(`entries-query: WARNING: bulk-inserted entries do not query like API-created ones: ${p}`);
    else
      console.log(
        'entries-query: a bulk-inserted post queries like an API-created one (fields, metadata, author; rows equal column by column), and so does an author (rows)',
      );

    const pages = await verifyPages(server.base, ws, key, client, seed).catch((err) => ({ problems: [err.message], compared: 0 }));
    const aggregates = await verifyAggregates(server.base, ws, key, client, seed);

    const routes = loadRoutes(server.base, ws, key, seed);
    const busy = await cpuBusy();
    if (busy > 0.2)
      console.log(`entries-query: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const uncached = routes
      .filter((r) => !r.ceiling)
      .map((r) => ({ ...r, route: `${r.route}-uncached`, label: `${r.label} (response cache off)`, target: undefined }));
    await checkRoutes(uncached, server.base);
    const uncachedRows = await measureSteady(
      uncached.filter((r) => !r.timezone),
      opts,
    );
    // Each aggregate and its plain SQL (10 clients of their own, the server idle meanwhile),
    // alternately for BENCH_AGGREGATE_ROUNDS rounds: at 5 to 10 answers a second, one run of each
    // varies by a third on this machine; the comparison takes all the rounds together.
    const sqlRows = [];
    for (const tz of TIMEZONES) {
      const route = uncached.find((r) => r.timezone === tz);
      const api = [];
      const plain = [];
      for (let i = 0; i < opts.aggregateRounds; i++) {
        api.push(await measure(route.url, route.headers, opts, route.request));
        plain.push(await measureSql(db.url, aggregateSql(seed.types.get('post').id, tz), opts));
      }
      const rounds = ` (${opts.aggregateRounds} rounds of ${opts.seconds} s, alternating)`;
      uncachedRows.push({ ...route, ...combineRounds(api, opts.seconds), label: `${route.label}${rounds}` });
      sqlRows.push({
        route: `sql-${tz}`,
        timezone: tz,
        label: `plain SQL GROUP BY of the ${tz} aggregate (pg, ${opts.connections} clients)${rounds}`,
        ...combineRounds(plain, opts.seconds),
      });
    }

    // The defaults: answers asked again come from the response cache (dropped by every write).
    const stopped = await stopServer(server.child);
    if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local' } });
    const cached = loadRoutes(server.base, ws, key, seed).map(({ timezone, ...r }) => (timezone ? { ...r, zone: timezone } : r));
    await checkRoutes(cached, server.base);
    const rows = [...(await measureSteady(cached, opts)), ...uncachedRows];

    const batches = await benchSequentialBatches(server.base, ws, key, client, seed, count, batchRuns);
    const concurrent = await benchConcurrentBatches(server.base, ws, key, client, seed, count, concurrentBatches);
    return { rows, sqlRows, startMs: server.startMs, busy, seed, shapeProblems, pages, aggregates, batches, concurrent };
  } finally {
    await client.end().catch(() => {});
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    }
    // BENCH_KEEP_DATABASE=1 keeps it for EXPLAIN by hand.
    if (process.env.BENCH_KEEP_DATABASE === '1') (keepDatabase(db.name), console.log(`entries-query: kept ${db.url}`));
    else await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function report(r, count, opts) {
  printRouteTable(
    `entries-query on PostgreSQL server, ${count.toLocaleString('en-US')} posts, APP_ENV=local, ${opts.connections} connections (server up in ${seconds(r.startMs)}; CPUs ${pct(r.busy)} busy before the run):`,
    [...r.rows, ...r.sqlRows],
    104,
  );
  const lines = [];
  lines.push(
    `  query pages compared with SQL before the load (${r.pages.compared} filter values): ` +
      (r.pages.problems.length ? `${r.pages.problems.length} DIFFER` : 'every page equal (rows, order, author names, hasMore)'),
  );
  for (const p of r.pages.problems.slice(0, 5)) lines.push(`    ${p}`);
  let exact = true;
  let ratios = true;
  for (const tz of TIMEZONES) {
    const a = r.aggregates[tz];
    const api = r.rows.find((x) => x.timezone === tz);
    const sql = r.sqlRows.find((x) => x.timezone === tz);
    // Answers per second that were answers (2xx): a 503 is not a result.
    const apiOk = api.ok / api.seconds;
    const sqlOk = sql.ok / sql.seconds;
    const ratio = sqlOk / apiOk;
    ratios &&= ratio <= TARGETS.sqlRatio && !failed(api);
    exact &&= a.diffs.length === 0;
    const total = a.expected.reduce((s, g) => s + g.count, 0);
    lines.push(
      `  aggregate ${tz}: ${a.expected.length} month groups, ${total.toLocaleString('en-US')} posts; API vs hand-written SQL GROUP BY: ` +
        (a.diffs.length ? `${a.diffs.length} DIFFERENCES` : 'every group equal (count, sum, avg to 12 places)') +
        `; under load API ${apiOk.toFixed(1)} 2xx/s${failed(api) ? ` (and non-2xx: ${api.statusCodes})` : ''}, plain SQL ${sqlOk.toFixed(1)}/s: ` +
        `SQL/API ${Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : '- (no 2xx answer)'} (target <= ${TARGETS.sqlRatio}×: ${verdict(ratio <= TARGETS.sqlRatio && !failed(api))}); ` +
        `one at a time (median of ${AGGREGATE_RUNS}): API ${ms(a.single.api)} ms, SQL ${ms(a.single.sql)} ms (${(a.single.api / a.single.sql).toFixed(2)}×)` +
        (sql.errors ? ` (SQL errors: ${sql.errors}, ${sql.lastError?.message})` : ''),
    );
    for (const d of a.diffs) lines.push(`    ${d}`);
  }
  const [utc, berlin] = TIMEZONES.map((tz) => new Map(r.aggregates[tz].expected.map((g) => [g.month, g.count])));
  const differ = [...new Set([...utc.keys(), ...berlin.keys()])].filter((m) => utc.get(m) !== berlin.get(m)).length;
  lines.push(`  (${differ} of the month groups count differently in UTC and Europe/Berlin)`);
  const b = r.batches;
  lines.push(
    `  batch of ${BATCH_SIZE} creates, ${b.runs}× sequential (after ${BATCH_WARMUP} not counted): median ${ms(b.median)} ms, p95 ${ms(b.p95)} ms, max ${ms(b.max)} ms ` +
      `(target < ${TARGETS.batchMs} ms: median ${verdict(b.median < TARGETS.batchMs)}, p95 ${verdict(b.p95 < TARGETS.batchMs)}); ` +
      `Server-Timing medians: ${Object.entries(b.serverTiming)
        .map(([k, v]) => `${k} ${ms(v)}`)
        .join(', ')} ms; ` +
      `${b.created.toLocaleString('en-US')} created ids checked; replay: ${b.replay}`,
  );
  for (const p of b.problems) lines.push(`    PROBLEM: ${p}`);
  const c = r.concurrent;
  lines.push(
    `  ${c.batches} concurrent batches (${SHARED} shared updates in rotated orders, 1 own update, ${CONCURRENT_CREATES} creates each): ${c.succeeded}/${c.batches} committed in ${ms(c.wallMs)} ms ` +
      `(per batch median ${ms(c.median)} ms, max ${ms(c.max)} ms); answers ${c.statuses}; 409: ${c.conflicts.total} (${c.conflicts.withRetryAfter} with Retry-After), ${c.retried} batches retried; ` +
      `shared posts: ${c.sharedReport.map((s) => `v${s.versionFrom}->v${s.versionTo}/${s.revisions} rev`).join(', ')}: ` +
      (c.problems.length
        ? `${c.problems.length} PROBLEMS (MISSED)`
        : 'no lost update, every effect exactly once, every answered id exists (met)'),
  );
  for (const p of c.problems.slice(0, 10)) lines.push(`    PROBLEM: ${p}`);
  for (const line of lines) console.log(line);
  return { exact, ratios, concurrentOk: c.problems.length === 0, batchOk: b.problems.length === 0 };
}

// ---------------------------------------------------------------------------------------------

export async function benchEntriesQuery(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 20 }),
    aggregateRounds: Number(options.aggregateRounds ?? env.BENCH_AGGREGATE_ROUNDS ?? 3),
  };
  if (!(opts.aggregateRounds >= 1)) throw new Error('BENCH_AGGREGATE_ROUNDS must be at least 1');
  const count = Number(options.entries ?? env.BENCH_QUERY_ENTRIES ?? 100_000);
  const batchRuns = Number(options.batchRuns ?? env.BENCH_BATCH_RUNS ?? 20);
  const concurrentBatches = Number(options.concurrentBatches ?? env.BENCH_CONCURRENT_BATCHES ?? 20);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  // The concurrent batches update posts 11..15 and their own posts from 101 on.
  if (!(count >= 1000)) throw new Error('BENCH_QUERY_ENTRIES must be at least 1000');
  if (!(batchRuns >= 1)) throw new Error('BENCH_BATCH_RUNS must be at least 1');
  if (!(concurrentBatches >= 1 && concurrentBatches <= count - 100))
    throw new Error('BENCH_CONCURRENT_BATCHES must be at least 1 (and leave posts for them)');
  checkBuild('entries-query');

  const removeHandlers = installSignalHandlers('entries-query bench');
  let result;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `entries-query: ${opts.connections} connections, ${opts.serverWarmupSeconds} s of queries first, then ${opts.warmupSeconds} s warm-up + ${opts.seconds} s per route; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon and the plain SQL clients run on the same machine)`,
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`entries-query: ${msg}: skipped (the entries-query bench runs on PostgreSQL only)`);
      return { result, invalid };
    }
    result = await runPostgres({ adminUrl, opts, count, batchRuns, concurrentBatches });
    const v = report(result, count, opts);
    if (result.rows.some(failed) || result.sqlRows.some((r) => r.errors > 0)) invalid = true;
    const q = result.rows.find((x) => x.route === 'query-title');
    const aggs = result.rows.filter((x) => x.zone);
    const summary = [
      `structured query >= ${TARGETS.query.rps} req/s: ${verdict(q.rps >= TARGETS.query.rps && !failed(q))}`,
      `aggregates >= ${TARGETS.aggregate.rps} req/s: ${verdict(aggs.every((x) => x.rps >= TARGETS.aggregate.rps && !failed(x)))}`,
      `exactly the SQL figures: ${verdict(v.exact)}`,
      `within ${TARGETS.sqlRatio}× plain SQL: ${verdict(v.ratios)}`,
      `batch of ${BATCH_SIZE} creates < ${TARGETS.batchMs} ms (median): ${verdict(result.batches.median < TARGETS.batchMs && v.batchOk)}`,
      `concurrent batches without lost update, 500 or 409 without Retry-After: ${verdict(v.concurrentOk)}`,
    ];
    console.log(`entries-query targets (PostgreSQL, ${count.toLocaleString('en-US')} posts): ${summary.join('; ')}`);
    console.log(`entries-query: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('entries-query: WARNING: some responses were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, invalid };
}

await runStandalone(import.meta, 'entries-query', benchEntriesQuery);
