// The anchor workload: the same rows as typed entries behind the API and as two plain tables
// (as Directus keeps them), each question asked of both in the same run, on the built server
// (dist/), with APP_ENV=local (rate limits off), on a PostgreSQL server (a throwaway database):
//
// In the General bucket of one workspace, two content types: `authors` (name text; 1,000
// entries, author k named `author k`) and `articles` (title text, amount number, published_at
// date with format datetime, state text, author single relation -> authors; BENCH_ANCHOR_ENTRIES =
// 100,000 entries), all published. Article g (1 to 100,000): title `title g`, amount
// (g mod 997) * 1.25 + 0.1, published_at 2024-01-01T00:00:00Z + 5 g minutes, state `draft` when g
// is divisible by 3 else `published`, author `author <1 + g mod 1000>`. A few of each are created
// through the API, the rest bulk-inserted with one INSERT per type exactly as the API writes them
// (support.mjs typedBulkInsert: the relation as the author's ULID in the document; the typed
// storage `typed_<type id>` is filled by its triggers), then VACUUM ANALYZE. A bulk-inserted
// article must query like an API-created one. Beside them, in the same database, the plain tables
//   authors(id int PRIMARY KEY, name text)
//   articles(id int PRIMARY KEY, title text, amount numeric(38,12), published_at timestamptz,
//            status text, author int)            (primary keys only, no foreign key, no index)
// with the same rows (article g has id g, author k id k).
//
// The questions, each answered by the API on a server with the response cache off
// (RESPONSE_CACHE_MB=0: the API computes every answer) and by its plain SQL through pg, 10 clients
// of their own (the server's session settings), in BENCH_ANCHOR_ROUNDS rounds alternating API
// (autocannon, 10 connections) and SQL, a warm-up that is not counted and BENCH_SECONDS each:
//   filtered page  POST /api/v1/{ws}/general/entries/query  type articles, filter {state eq
//                  published, amount gt 100}, sort published_at desc, limit 20, fields [@id, title,
//                  amount, author.name]
//                  SQL: SELECT a.id, a.title, a.amount, au.name FROM articles a LEFT JOIN authors au
//                  ON au.id = a.author WHERE a.status = 'published' AND a.amount > 100
//                  ORDER BY a.published_at DESC, a.id LIMIT 20
//                  target: at least 5x the plain SQL's answers/s, and p50 < 20 ms
//   monthly aggregate (UTC, Europe/Berlin)  the same route: count, sum [amount], avg [amount],
//                  groupBy [{published_at, interval month, timezone}], limit 100
//                  SQL: SELECT date_trunc('month', published_at AT TIME ZONE $1) AS m, count(*),
//                  sum(amount), avg(amount) FROM articles GROUP BY 1 ORDER BY 1
//                  target: at least 0.9x the plain SQL's answers/s, the same figures to the last digit
//   read by id     GET /api/v1/{ws}/entries/{random article ULID} (author rendered), in rounds
//                  alternating with the v1 page's (BENCH_ANCHOR_ROUNDS of each; plain SQL one run);
//                  SQL: the article by primary key with its author's name (a random id per query)
//                  measured (req/s, p50), no target
//   v1 page of 50  GET /api/v1/{ws}/entries?contentBucket=general&contentType=articles&per_page=50
//                  (the first page, in id order, each article with its author rendered), its
//                  rounds alternating with the read's; SQL: the first 50 articles by primary key with their
//                  authors' names; target: at least 0.40x the read by id's req/s of the same run
// Before the load, the API's answers must equal the plain SQL's: the page's titles, amounts and
// author names in order; every month group's count, sum (exact) and avg (the exact average of the
// SQL's sum and count rounded half away from zero to 12 places, as the API rounds it); articles 1,
// the middle one and the last read by id, and the 50 articles of the v1 page: title, amount,
// published_at, state and author name. The v1 page must also hold articles 1 to 50 in that order
// (the order of their ids), each with fields.author an object whose fields.name is its author's.
// After the page's rounds, its statement is rebuilt with the server's compiled modules as
// core/content/query/run.ts (entryQueryStatement: the page found and projected as JSON text in one
// statement) builds it, checked against the API's answer (the `@id`s of the rows it projects) and
// the text pg_stat_activity shows of the server's connections, prepared as the
// server prepares it, run 8 times, then EXPLAIN (ANALYZE, BUFFERS) of one more execution; and
// EXPLAIN (ANALYZE, BUFFERS) of the plain SQL. Last on that server, each question once more
// through the API with 1 connection, BENCH_SECONDS (a warm-up first, not counted): PostgreSQL's
// figure for the embedded comparison below (the embedded database runs one statement at a time,
// so more connections would only queue there).
// Then on a server with the defaults (response cache on: an answer asked again comes from it),
// for information: the page, both aggregates and the read by id, one run each; and the batch
// writes: BENCH_BATCH_RUNS (20) sequential POST /api/v1/{ws}/general/entries/batch of 100 creates
// of published articles, each with an Idempotency-Key (after 2 not counted): median and p95, every
// answered id an article with its title afterwards; and the same 100 rows inserted into the plain
// `articles` table with one INSERT ... SELECT FROM unnest(...) per batch, as many times.
//
// The embedded database (PGlite, the server's default without DATABASE_URL; data in
// DATA_DIR/pgdata), target "the same questions answer the same figures, within 3x of
// PostgreSQL's time": the same rows (BENCH_ANCHOR_EMBEDDED_ENTRIES articles, by default as many as
// on PostgreSQL), seeded the same way on a server with APP_ENV=local and RESPONSE_CACHE_MB=0:
// the content types and the API-created entries through its API, the bulk inserts, the plain
// tables and then ANALYZE (no VACUUM: nothing vacuums the embedded database behind a run) through
// PGlite in this process. PGlite is one process's database, so each of those queries finds the
// server stopped and the next API call a server started again on the same DATA_DIR
// (support.mjs embeddedDatabase). With the server stopped, the plain SQL's answers are read and
// each question's plain SQL timed through PGlite (one client: it is single-connection; a warm-up,
// then BENCH_SECONDS), for information. Then, the server started again: the same checks (a
// bulk-inserted article queries like an API-created one; the page's rows, every month group's
// figures in UTC and Europe/Berlin, a few articles read by id and the v1 page of 50 equal the
// plain SQL's), the filtered page for BENCH_SERVER_WARMUP_SECONDS (1 connection, not counted), and
// each question through the API with 1 connection. Per question (the v1 page of 50 and the read
// by id among them): the embedded p50 against PostgreSQL's at 1 connection, target embedded p50
// <= 3x PostgreSQL's, with the same figures (with as many articles on both, the plain SQL's
// answers are also compared across the two databases).
//
// Prints a summary table: question, API req/s, p50, plain SQL answers/s, ratio (API / SQL answers
// per second; for the v1 page of 50, its req/s / the read by id's; for the batch, SQL median / API
// median; for the embedded rows, embedded p50 / PostgreSQL's p50 at 1 connection), target,
// met/MISSED. Without PostgreSQL, nothing runs (the embedded target is relative to it).
//
// Standalone: `node scripts/bench/anchor.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per route (and per plain SQL run)   BENCH_WARMUP_SECONDS=2
//   BENCH_SERVER_WARMUP_SECONDS=20  of the filtered page before the first round, not counted
//   BENCH_CONNECTIONS=10      concurrent connections (and pg clients of the plain SQL)
//   BENCH_ANCHOR_ROUNDS=3     rounds of each question (page, aggregates) and its plain SQL, alternating; of the read by id and the v1 page, alternating
//   BENCH_ANCHOR_ENTRIES=100000  articles (at least 1000; authors: 1000)
//   BENCH_ANCHOR_EMBEDDED=1   0 skips the embedded database
//   BENCH_ANCHOR_EMBEDDED_ENTRIES=<BENCH_ANCHOR_ENTRIES>  articles on the embedded database
//   BENCH_BATCH_RUNS=20       sequential batches of 100 creates (and plain SQL inserts of 100 rows)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed) to EXPLAIN by hand
//   BENCH_LOG_LEVEL=silent    the server's LOG_LEVEL (its output is shown when the set-up fails)
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { isDeepStrictEqual } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import {
  DEFAULT_PG_URL,
  SERVER_SESSION_OPTIONS,
  bulkMatchesApi,
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
  measureSingle,
  measureSql,
  ms,
  pct,
  percentile,
  postgresReachable,
  printRouteTable,
  rate,
  removeTempDir,
  root,
  runStandalone,
  seconds,
  seedTypedEntries,
  setup,
  startServer,
  stopServer,
  tableLines,
  times,
  typedBulkInsert,
  verdict,
  withServerOutput,
  checkStatement,
  preparedPlan,
  embeddedDatabase,
  measureOnClients,
  loadOptions,
} from './support.mjs';

export const BUCKET = 'general';
export const PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry'];
export const ABILITIES = ['entries:read', 'entries:query', 'entries:write'];
export const AUTHORS = 1000;
export const API_CREATED = { authors: 3, articles: 5 }; // through the API before the bulk inserts
const TIMEZONES = ['UTC', 'Europe/Berlin'];
const BATCH_SIZE = 100;
const BATCH_WARMUP = 2;
export const LIST_SIZE = 50; // the v1 page's per_page
const TARGETS = {
  page: { ratio: 5, p50: 20 },
  aggregate: { ratio: 0.9 },
  list: { readRatio: 0.4 }, // the v1 page's req/s at least 0.40x the read by id's
  embedded: { p50Ratio: 3 }, // embedded p50 at most 3x PostgreSQL's, each at 1 connection
};

export const CONTENT_TYPES = [
  { name: 'authors', name_field: 'name', fields: [{ name: 'name', type: 'text' }] },
  {
    name: 'articles',
    name_field: 'title',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'amount', type: 'number' },
      { name: 'published_at', type: 'date', format: 'datetime' },
      { name: 'state', type: 'text' },
      { name: 'author', type: 'relation', targets: ['authors'], multiple: false },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// The rows: the same in JavaScript (API), in the typed entries' bulk insert and in the plain
// tables. Article g and author k count from 1 in creation order; `authors` holds the authors'
// ULIDs in that order.

const START = Date.UTC(2024, 0, 1); // 2024-01-01T00:00:00Z
export const authorOf = (g) => 1 + (g % AUTHORS); // the author's number k
export const authorFields = (k) => ({ name: `author ${k}` });
const iso = (msValue) => new Date(msValue).toISOString().replace('.000Z', 'Z');
// (g mod 997) * 1.25 + 0.1 as a double prints as the exact decimal (checked for every residue),
// which the SQL writes with trim_scale.
export const articleFields = (g, authors) => ({
  title: `title ${g}`,
  amount: (g % 997) * 1.25 + 0.1,
  published_at: iso(START + g * 5 * 60_000),
  state: g % 3 === 0 ? 'draft' : 'published',
  author: authors[authorOf(g) - 1],
});

export const BULK_SQL = {
  authors: typedBulkInsert(`jsonb_build_object('name', 'author ' || n)`),
  // $7 the authors' ULIDs.
  articles: typedBulkInsert(`jsonb_build_object(
         'title', 'title ' || n,
         'amount', trim_scale((n % 997) * 1.25 + 0.1),
         'published_at', to_char(('2024-01-01T00:00:00Z'::timestamptz + n * interval '5 minutes') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
         'state', CASE WHEN n % 3 = 0 THEN 'draft' ELSE 'published' END,
         'author', ($7::text[])[1 + n % ${AUTHORS}])`),
};

/** The plain tables, primary keys only, with the same rows ($1 the number of articles). */
const PLAIN_TABLES = [
  'CREATE TABLE authors (id int PRIMARY KEY, name text)',
  'CREATE TABLE articles (id int PRIMARY KEY, title text, amount numeric(38,12), published_at timestamptz, status text, author int)',
  `INSERT INTO authors (id, name) SELECT k, 'author ' || k FROM generate_series(1, ${AUTHORS}) k`,
];
const PLAIN_ARTICLES = `INSERT INTO articles (id, title, amount, published_at, status, author)
  SELECT g, 'title ' || g, (g % 997) * 1.25 + 0.1, '2024-01-01T00:00:00Z'::timestamptz + g * interval '5 minutes',
         CASE WHEN g % 3 = 0 THEN 'draft' ELSE 'published' END, 1 + g % ${AUTHORS}
    FROM generate_series(1, $1::int) g`;

// ---------------------------------------------------------------------------------------------
// The questions

export const queryPath = (ws) => `/api/v1/${ws}/${BUCKET}/entries/query`;
const batchPath = (ws) => `/api/v1/${ws}/${BUCKET}/entries/batch`;
export const entriesPath = (ws) => `/api/v1/${ws}/entries`;
/** The v1 list of a type (the articles unless `type` says otherwise), `perPage` a page. */
export const listPath = (ws, type = 'articles', perPage = LIST_SIZE) =>
  `${entriesPath(ws)}?contentBucket=${BUCKET}&contentType=${type}&per_page=${perPage}`;
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The filtered page: published articles with amount > 100, newest first, 20, with their author's name. */
export const PAGE_QUERY = {
  type: 'articles',
  filter: { state: { eq: 'published' }, amount: { gt: 100 } },
  sort: [{ field: 'published_at', direction: 'desc' }],
  limit: 20,
  fields: ['@id', 'title', 'amount', 'author.name'],
};
const PAGE_SQL = {
  text: `SELECT a.id, a.title, a.amount, au.name FROM articles a LEFT JOIN authors au ON au.id = a.author WHERE a.status = 'published' AND a.amount > 100 ORDER BY a.published_at DESC, a.id LIMIT 20`,
  values: [],
};

/** The monthly aggregate of the articles' amounts in `timezone`. */
export const aggregateQuery = (timezone) => ({
  type: 'articles',
  aggregate: { count: true, sum: ['amount'], avg: ['amount'] },
  groupBy: [{ field: 'published_at', interval: 'month', timezone }],
  limit: 100,
});
const aggregateSql = (timezone) => ({
  text: `SELECT date_trunc('month', published_at AT TIME ZONE $1) AS m, count(*), sum(amount), avg(amount) FROM articles GROUP BY 1 ORDER BY 1`,
  values: [timezone],
});

const ARTICLES_WITH_AUTHOR =
  'SELECT a.id, a.title, a.amount, a.published_at, a.status, au.name FROM articles a LEFT JOIN authors au ON au.id = a.author';

/** The article by primary key, a random one per query (`values` is read once per query by measureSql). */
const readSql = (count) => ({
  text: `${ARTICLES_WITH_AUTHOR} WHERE a.id = $1`,
  get values() {
    return [1 + Math.floor(Math.random() * count)];
  },
});

/** The v1 page's articles: the first LIST_SIZE by primary key, with their authors' names. */
const LIST_SQL = { text: `${ARTICLES_WITH_AUTHOR} ORDER BY a.id LIMIT ${LIST_SIZE}`, values: [] };

/** The articles read by id before the load (the first, API-created; one in the middle; the last). */
const readChecked = (count) => [1, Math.ceil(count / 2), count];
// An article's fields as the API writes them (published_at in UTC), with its author's name.
const ARTICLE_CHECK_SQL = `SELECT a.title, a.amount, to_char(a.published_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS published_at, a.status, au.name
  FROM articles a LEFT JOIN authors au ON au.id = a.author`;
const READ_CHECK_SQL = `${ARTICLE_CHECK_SQL} WHERE a.id = $1`;
const LIST_CHECK_SQL = `${ARTICLE_CHECK_SQL} ORDER BY a.id LIMIT ${LIST_SIZE}`;

/** The filtered page's answer: 20 rows of the four fields, and more to come. */
export const pageShapeOk = (body) =>
  Array.isArray(body.data) &&
  body.data.length === 20 &&
  body.data.every(
    (r) =>
      isDeepStrictEqual(Object.keys(r).sort(), ['@id', 'amount', 'author', 'title']) &&
      ULID_RE.test(r['@id']) &&
      typeof r.author?.name === 'string',
  ) &&
  body.pagination?.hasMore === true;

/** The monthly aggregate's answer: month groups with count, sum and avg, all on one page. */
export const aggregateShapeOk = (body) =>
  Array.isArray(body.data) &&
  body.data.length > 0 &&
  body.data.every(
    (r) =>
      typeof r.group?.published_at === 'string' &&
      Number.isInteger(r.count) &&
      typeof r.sum?.amount === 'string' &&
      typeof r.avg?.amount === 'string',
  ) &&
  body.pagination?.hasMore === false;

/** A rendered article of the read by id: its fields, the author rendered with its name. */
export const readOk = (a) =>
  ULID_RE.test(a?.id ?? '') &&
  a.status === 'published' &&
  /^title \d+$/.test(a.fields?.title ?? '') &&
  typeof a.fields.amount === 'number' &&
  ULID_RE.test(a.fields.author?.id ?? '') &&
  /^author \d+$/.test(a.fields.author?.fields?.name ?? '');

/** A v1 page of rendered articles (verifyList checks which ones). */
export const listShapeOk = (body) =>
  Array.isArray(body.data) && body.data.length === LIST_SIZE && body.data.every(readOk) && typeof body.next_page_url === 'string';

/** The routes loaded with autocannon (each answers 200, and what it should, before the load). */
function loadRoutes(base, ws, key, seed) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const url = `${base}${queryPath(ws)}`;
  const ids = seed.articles;
  const randomPath = () => `${entriesPath(ws)}/${ids[Math.floor(Math.random() * ids.length)]}`;
  return [
    {
      route: 'page',
      label: `filtered page: POST ${queryPath(ws)}`,
      url,
      headers,
      request: { method: 'POST', body: JSON.stringify(PAGE_QUERY) },
      check: pageShapeOk,
    },
    ...TIMEZONES.map((tz) => ({
      route: `aggregate-${tz}`,
      timezone: tz,
      label: `monthly aggregate ${tz}: POST ${queryPath(ws)}`,
      url,
      headers,
      request: { method: 'POST', body: JSON.stringify(aggregateQuery(tz)) },
      check: aggregateShapeOk,
    })),
    {
      route: 'read',
      label: `read by id: GET ${entriesPath(ws)}/{random article ULID}`,
      url: `${base}${randomPath()}`,
      path: randomPath,
      headers: { Authorization: `Bearer ${key}` },
      request: { requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: randomPath() }) }] },
      check: readOk,
    },
    {
      route: 'list',
      label: `v1 page of ${LIST_SIZE}: GET ${listPath(ws)}`,
      url: `${base}${listPath(ws)}`,
      path: () => listPath(ws),
      headers: { Authorization: `Bearer ${key}` },
      check: listShapeOk,
    },
  ];
}

// ---------------------------------------------------------------------------------------------
// Exact decimals (sums and averages compared to the last digit)

/** A decimal's text without trailing zeros after the point (`1245.100000000000` -> `1245.1`). */
const trimDecimal = (s) => (String(s).includes('.') ? String(s).replace(/0+$/, '').replace(/\.$/, '') : String(s));

/** A decimal's text as an integer count of 10^-scale (exact; digits past `scale` must be zero). */
function scaled(s, scale) {
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(String(s));
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = (m[3] ?? '').padEnd(scale, '0');
  if (/[1-9]/.test(frac.slice(scale))) throw new Error(`${s} has more than ${scale} decimal places`);
  const v = BigInt(m[2] + frac.slice(0, scale));
  return m[1] ? -v : v;
}

/** An integer count of 10^-scale as text with exactly `scale` places. */
function unscaled(v, scale) {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** The average of an exact sum over n, rounded half away from zero to 12 places, as 12-place text. */
function exactAverage(sum, n) {
  const s = scaled(sum, 12);
  const count = BigInt(n);
  const q = (2n * (s < 0n ? -s : s) + count) / (2n * count);
  return unscaled(s < 0n ? -q : q, 12);
}

/** A decimal rounded half away from zero to 12 places, as 12-place text. */
function round12(s) {
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(String(s));
  const frac = (m[3] ?? '').padEnd(13, '0');
  let v = BigInt(m[2] + frac.slice(0, 12));
  if (frac[12] >= '5') v += 1n;
  return unscaled(m[1] ? -v : v, 12);
}

// ---------------------------------------------------------------------------------------------
// Seeding and the checks before the load

/**
 * The typed entries (a few of each type through the API, the rest with one INSERT per type) and
 * the plain tables, then `maintain` of their tables ('VACUUM (ANALYZE)' on PostgreSQL: autovacuum
 * would otherwise visit the new rows in the middle of a run; 'ANALYZE' on the embedded database).
 * `serve()` answers the base URL of a running server before each step's API calls: on the
 * embedded database each step's queries stop it (support.mjs embeddedDatabase).
 */
export async function seedRows({ serve, ws, key, client, count, maintain }) {
  const started = performance.now();
  const { workspaceId, types } = await createContentTypes(await serve(), client, ws, BUCKET, CONTENT_TYPES);
  const newUlid = monotonicFactory();
  const seedType = async (type, total, fieldsOf, extra) =>
    seedTypedEntries({
      base: await serve(),
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
  const authors = await seedType('authors', AUTHORS, authorFields, []);
  // The API-created articles reference bulk-inserted authors: the API checks that they exist.
  const articles = await seedType('articles', count, (g) => articleFields(g, authors.ids), [authors.ids]);
  let t = performance.now();
  for (const statement of PLAIN_TABLES) await client.query(statement);
  await client.query(PLAIN_ARTICLES, [count]);
  const plainMs = performance.now() - t;
  t = performance.now();
  await client.query(
    `${maintain} entries, entry_contents, typed_${types.get('authors').id}, typed_${types.get('articles').id}, authors, articles`,
  );
  return {
    workspaceId,
    types,
    authors: authors.ids,
    articles: articles.ids,
    created: { authors: authors.created, articles: articles.created },
    apiMs: authors.apiMs + articles.apiMs,
    insertMs: authors.insertMs + articles.insertMs,
    plainMs,
    analyzeMs: performance.now() - t,
    totalMs: performance.now() - started,
  };
}

/** A bulk-inserted article must query like an API-created one (fields, metadata, author). */
async function apiShapeProblems(base, ws, key, seed, count) {
  const problems = [];
  const query = async (id, fields) =>
    (
      await getJson(`${base}${queryPath(ws)}`, key, {
        method: 'POST',
        body: JSON.stringify({ type: 'articles', filter: { '@id': { eq: id } }, ...(fields ? { fields } : {}) }),
      })
    ).data;
  const meta = ['@id', '@status', '@lock_version', '@locales', '@publish_at', 'author.@id', 'author.name'];
  for (const [what, g] of [
    ['API-created', 1],
    ['bulk', count],
  ]) {
    const id = seed.articles[g - 1];
    const [own] = await query(id);
    const expected = articleFields(g, seed.authors);
    if (!isDeepStrictEqual(own, expected))
      problems.push(`${what} article ${g}: own fields ${JSON.stringify(own)}, expected ${JSON.stringify(expected)}`);
    const [m] = await query(id, meta);
    if (
      m?.['@id'] !== id ||
      m['@status'] !== 'published' ||
      m['@lock_version'] !== 0 ||
      !isDeepStrictEqual(m['@locales'], ['en-US']) ||
      m['@publish_at'] !== null
    ) {
      problems.push(`${what} article ${g}: metadata ${JSON.stringify(m)}`);
    }
    if (m?.author?.['@id'] !== expected.author || m?.author?.name !== `author ${authorOf(g)}`)
      problems.push(`${what} article ${g}: author ${JSON.stringify(m?.author)}`);
  }
  return problems;
}

/**
 * The stored rows of the bulk inserts: equal to the API-created ones column by column, and the
 * typed storage filled for every entry (seed.defs: the bucket's content types).
 */
async function storedShapeProblems(client, seed, count) {
  const problems = await bulkMatchesApi(
    client,
    seed.workspaceId,
    [
      ['authors', seed.created.authors[0].id, seed.authors[AUTHORS - 1]],
      ['articles', seed.created.articles[0].id, seed.articles[count - 1]],
    ],
    { authors: AUTHORS, articles: count },
  );
  // Typed storage: a row per entry, every field's column filled (the triggers of the bulk insert).
  for (const [name, n] of [
    ['authors', AUTHORS],
    ['articles', count],
  ]) {
    const def = seed.defs.get(name);
    const columns = def.fields.map((f) => `count(f${f.id})::int AS "${f.name}"`).join(', ');
    const [r] = (await client.query(`SELECT count(*)::int AS rows, ${columns} FROM typed_${def.id} WHERE live AND locale = 'en-US'`)).rows;
    if (Object.values(r).some((v) => v !== n))
      problems.push(`typed_${def.id} (${name}): ${JSON.stringify(r)}, expected ${n} rows with every column filled`);
  }
  return problems;
}

/**
 * The plain SQL's answers the API's must equal, every value as PostgreSQL's text (`textClient`):
 * the page's rows, each aggregate's rows by timezone, and the articles of readChecked.
 */
async function plainAnswers(textClient, count) {
  const page = (await textClient.query(PAGE_SQL.text)).rows;
  const aggregates = {};
  for (const tz of TIMEZONES) {
    const { text, values } = aggregateSql(tz);
    aggregates[tz] = (await textClient.query(text, values)).rows;
  }
  const reads = [];
  for (const g of readChecked(count)) reads.push({ g, row: (await textClient.query(READ_CHECK_SQL, [g])).rows[0] });
  const list = (await textClient.query(LIST_CHECK_SQL)).rows;
  return { page, aggregates, reads, list };
}

/** The filtered page: the API's titles, amounts and author names in order, against the plain SQL's (plainAnswers). */
async function verifyPage(base, ws, key, plain) {
  const api = await getJson(`${base}${queryPath(ws)}`, key, { method: 'POST', body: JSON.stringify(PAGE_QUERY) });
  const a = api.data.map((r) => ({ title: r.title, amount: trimDecimal(String(r.amount)), author: r.author?.name }));
  const p = plain.map((r) => ({ title: r.title, amount: trimDecimal(r.amount), author: r.name }));
  const problems = [];
  if (!isDeepStrictEqual(a, p)) problems.push(`API ${JSON.stringify(a)} vs SQL ${JSON.stringify(p)}`);
  if (api.pagination?.hasMore !== true) problems.push(`pagination ${JSON.stringify(api.pagination)}: expected hasMore true`);
  return { problems, rows: p, apiIds: api.data.map((r) => r['@id']) };
}

/**
 * Each aggregate's answer against the plain SQL's figures: month, count, sum (exact) and avg (the
 * SQL's sum over its count, rounded half away from zero to 12 places; the SQL's own avg rounded so
 * is shown beside it when it differs). `plainByTz`: plainAnswers' aggregates.
 */
async function verifyAggregates(base, ws, key, plainByTz) {
  const out = {};
  for (const tz of TIMEZONES) {
    const api = await getJson(`${base}${queryPath(ws)}`, key, { method: 'POST', body: JSON.stringify(aggregateQuery(tz)) });
    const plain = plainByTz[tz];
    const expected = plain.map((r) => ({
      group: { published_at: r.m.slice(0, 10) },
      count: Number(r.count),
      sum: { amount: trimDecimal(r.sum) },
      avg: { amount: exactAverage(r.sum, r.count) },
    }));
    const diffs = [];
    if (api.pagination?.hasMore !== false) diffs.push(`pagination ${JSON.stringify(api.pagination)}: expected hasMore false`);
    if (api.data.length !== expected.length) diffs.push(`${api.data.length} groups, the SQL has ${expected.length}`);
    for (let i = 0; i < Math.max(api.data.length, expected.length) && diffs.length < 8; i++) {
      if (!isDeepStrictEqual(api.data[i], expected[i]))
        diffs.push(`group ${i}: API ${JSON.stringify(api.data[i])}, SQL ${JSON.stringify(expected[i])} (SQL avg ${plain[i]?.avg})`);
    }
    const avgRounding = plain.filter((r) => round12(r.avg) !== exactAverage(r.sum, r.count)).length;
    out[tz] = { expected, diffs, avgRounding, total: expected.reduce((s, g) => s + g.count, 0) };
  }
  return out;
}

/** A rendered article (read by id, v1 page) as the values compared with the plain SQL's. */
const apiArticle = (a) => ({
  title: a.fields?.title,
  amount: trimDecimal(String(a.fields?.amount)),
  published_at: a.fields?.published_at,
  state: a.fields?.state,
  author: a.fields?.author?.fields?.name,
});
/** A row of ARTICLE_CHECK_SQL as the same values. */
const plainArticle = (row) =>
  row && { title: row.title, amount: trimDecimal(row.amount), published_at: row.published_at, state: row.status, author: row.name };

/** Articles read by id (the route the read question loads) against the plain SQL's rows (plainAnswers' reads). */
async function verifyReads(base, ws, key, seed, reads) {
  const problems = [];
  for (const { g, row } of reads) {
    const api = apiArticle(await getJson(`${base}${entriesPath(ws)}/${seed.articles[g - 1]}`, key));
    const plain = plainArticle(row);
    if (!isDeepStrictEqual(api, plain)) problems.push(`article ${g}: API ${JSON.stringify(api)} vs SQL ${JSON.stringify(plain)}`);
  }
  return { problems, checked: reads.map((r) => r.g) };
}

/**
 * What is wrong with a v1 page of articles (none: []): articles 1 to LIST_SIZE in that order (the
 * order of their ids, as the bulk insert wrote them), each with fields.author an object: its
 * author, with that author's name (`seed`: seedRows' answer).
 */
function listProblems(body, seed) {
  const problems = [];
  if (body.data?.length !== LIST_SIZE) return [`${body.data?.length} articles, expected ${LIST_SIZE}`];
  body.data.forEach((a, i) => {
    const g = i + 1;
    const author = a.fields?.author;
    if (a.id !== seed.articles[i]) problems.push(`article ${g}: id ${a.id}, expected ${seed.articles[i]}`);
    else if (typeof author !== 'object' || author === null)
      problems.push(`article ${g}: fields.author ${JSON.stringify(author)}, expected an object`);
    else if (author.id !== seed.authors[authorOf(g) - 1] || author.fields?.name !== `author ${authorOf(g)}`)
      problems.push(`article ${g}: author ${JSON.stringify(author)}, expected author ${authorOf(g)}`);
  });
  if (typeof body.next_page_url !== 'string') problems.push(`next_page_url ${JSON.stringify(body.next_page_url)}: expected a next page`);
  return problems;
}

/** The v1 page of 50 before the load: listProblems, and its articles against the plain SQL's rows in order (plainAnswers' list). */
async function verifyList(base, ws, key, seed, plainRows) {
  const body = await getJson(`${base}${listPath(ws)}`, key);
  const problems = listProblems(body, seed);
  const api = (body.data ?? []).map(apiArticle);
  const plain = plainRows.map(plainArticle);
  for (let i = 0; i < Math.max(api.length, plain.length) && problems.length < 8; i++) {
    if (!isDeepStrictEqual(api[i], plain[i]))
      problems.push(`article ${i + 1}: API ${JSON.stringify(api[i])} vs SQL ${JSON.stringify(plain[i])}`);
  }
  return { problems, rows: plain };
}

// ---------------------------------------------------------------------------------------------
// The page's statement as the server runs it, and the plans

/** A pg client as the SqlRunner the server's compiled modules take. */
const runnerOf = (client) => ({
  async query(text, values) {
    const r = await client.query(text, values);
    return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length };
  },
  async exec(text) {
    await client.query(text);
  },
  async execReturning(text) {
    const r = await client.query(text);
    return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length };
  },
});

const load = (p) => createRequire(import.meta.url)(path.join(root, 'dist/server/src', p));

/** The bucket's content types as the server reads them (core/content/content-types.ts). */
async function contentTypeDefs(client, bucketId) {
  const { bucketContentTypes } = load('core/content/content-types.js');
  return bucketContentTypes(runnerOf(client), bucketId);
}

/**
 * The statement `POST /entries/query` runs for `body`, built by the server's own compiled modules
 * as core/content/query/run.ts (prepareQuery, then entryQueryStatement: the page found and
 * projected as JSON text in one statement, with a whole reference budget and DELIVERY_ANSWER_MB).
 */
function pageStatement(workspaceId, defs, body) {
  const { parseEntryQuery } = load('core/content/query/parse.js');
  const { entryQueryStatement } = load('core/content/query/run.js');
  const { ByteBudget } = load('lib/byte-budget.js');
  const { fieldErrors } = load('lib/field-errors.js');
  const type = defs.get(body.type);
  const locale = body.locale ?? 'en-US';
  const errors = fieldErrors();
  const plan = parseEntryQuery(body, type, defs, errors);
  if (Object.keys(errors).length) throw new Error(`the bench's query is invalid: ${JSON.stringify(errors)}`);
  const bytes = new ByteBudget(16 * 1024 * 1024, () => new Error('over'));
  return entryQueryStatement(
    { type, locale, plan, prefix: '' },
    { workspace: { id: workspaceId, name: 'bench', locales: [locale] }, config: {} },
    bytes,
  ).toQuery();
}

/** The `@id`s of the rows a query's statement projects (its one row's `items`: the rows' JSON text). */
const projectedIds = (rows) => JSON.parse(`[${rows[0]?.items ?? ''}]`).map((r) => r['@id']);

async function plainPlan(client, statement) {
  await client.query(statement.text, statement.values);
  const explained = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values);
  return explained.rows.map((r) => r['QUERY PLAN']);
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
  return { status: res.status, ms: performance.now() - started, text, json };
}

const summarize = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { runs: sorted.length, median: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] };
};

/**
 * Sequential batches of 100 creates of published articles (articles count + 1 on), each with an
 * Idempotency-Key; then the same rows into the plain table, one INSERT per batch.
 */
async function benchBatches(base, ws, key, client, seed, count, runs) {
  const problems = [];
  const times = [];
  const expectedTitles = new Map(); // id -> title
  const gOf = (b, j) => count + b * BATCH_SIZE + j + 1;
  for (let b = 0; b < BATCH_WARMUP + runs; b++) {
    const operations = Array.from({ length: BATCH_SIZE }, (_, j) => ({
      action: 'create',
      type: 'articles',
      status: 'published',
      fields: articleFields(gOf(b, j), seed.authors),
    }));
    const res = await postBatch(base, ws, key, randomUUID(), { operations });
    if (res.status !== 200) {
      problems.push(`batch ${b}: HTTP ${res.status} ${res.text.slice(0, 500)}`);
      continue;
    }
    const data = res.json?.data;
    const ok =
      Array.isArray(data) &&
      data.length === BATCH_SIZE &&
      data.every((r, j) => r.index === j && r.action === 'create' && ULID_RE.test(r.id));
    if (!ok) problems.push(`batch ${b}: unexpected answer ${res.text.slice(0, 500)}`);
    else data.forEach((r, j) => expectedTitles.set(r.id, `title ${gOf(b, j)}`));
    if (b >= BATCH_WARMUP) times.push(res.ms);
  }
  const found = new Map(
    (
      await client.query(
        `SELECT e.entry_id, c.data ->> 'title' AS title FROM entries e JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = 'en-US' WHERE e.entry_id = ANY($1::text[]) AND e.deleted_at IS NULL AND e.status = 'published'`,
        [[...expectedTitles.keys()]],
      )
    ).rows.map((r) => [r.entry_id, r.title]),
  );
  const missing = [...expectedTitles].filter(([id, title]) => found.get(id) !== title);
  if (missing.length)
    problems.push(
      `${missing.length} of the ${expectedTitles.size} created ids answered are not published articles with their title, e.g. ${JSON.stringify(missing.slice(0, 3))}`,
    );

  // The same rows into the plain table (ids after the API's, so both sets are new rows).
  const plainTimes = [];
  const offset = (BATCH_WARMUP + runs) * BATCH_SIZE;
  for (let b = 0; b < BATCH_WARMUP + runs; b++) {
    const cols = { id: [], title: [], amount: [], published_at: [], status: [], author: [] };
    for (let j = 0; j < BATCH_SIZE; j++) {
      const g = gOf(b, j) + offset;
      const f = articleFields(g, seed.authors);
      (cols.id.push(g),
        cols.title.push(f.title),
        cols.amount.push(String(f.amount)),
        cols.published_at.push(f.published_at),
        cols.status.push(f.state),
        cols.author.push(authorOf(g)));
    }
    const t = performance.now();
    await client.query(
      `INSERT INTO articles (id, title, amount, published_at, status, author) SELECT * FROM unnest($1::int[], $2::text[], $3::numeric[], $4::timestamptz[], $5::text[], $6::int[])`,
      [cols.id, cols.title, cols.amount, cols.published_at, cols.status, cols.author],
    );
    if (b >= BATCH_WARMUP) plainTimes.push(performance.now() - t);
  }
  return { api: summarize(times), sql: summarize(plainTimes), created: expectedTitles.size, problems };
}

// ---------------------------------------------------------------------------------------------

async function runPostgres({ adminUrl, opts, count, batchRuns }) {
  const dataDir = makeTempDir('wsapi-bench-anchor-');
  const db = await createDatabase(adminUrl);
  const client = new pg.Client({ connectionString: db.url, options: SERVER_SESSION_OPTIONS });
  // Every value as PostgreSQL's text (timestamps, counts, exact numerics), for the aggregate checks.
  const textClient = new pg.Client({ connectionString: db.url, options: SERVER_SESSION_OPTIONS, types: { getTypeParser: () => (v) => v } });
  let server;
  try {
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local', RESPONSE_CACHE_MB: '0' } });
    await client.connect();
    await textClient.connect();
    const prepared = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedRows({ serve: async () => server.base, ws, key, client, count, maintain: 'VACUUM (ANALYZE)' });
      seed.defs = await contentTypeDefs(client, seed.types.get('articles').bucket_id);
      const shapeProblems = [
        ...(await apiShapeProblems(server.base, ws, key, seed, count)),
        ...(await storedShapeProblems(client, seed, count)),
      ];
      return { ws, key, seed, shapeProblems };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    const { ws, key, seed, shapeProblems } = prepared;
    console.log(
      `anchor: seeded ${count.toLocaleString('en-US')} published articles and ${AUTHORS.toLocaleString('en-US')} authors on PostgreSQL in ${seconds(seed.totalMs)} ` +
        `(${API_CREATED.authors} authors and ${API_CREATED.articles} articles through the API ${seconds(seed.apiMs)}; the rest with one INSERT per type ${seconds(seed.insertMs)}; ` +
        `the plain tables ${seconds(seed.plainMs)}; VACUUM ANALYZE ${seconds(seed.analyzeMs)})`,
    );
    if (shapeProblems.length)
      for (const p of shapeProblems) console.log(`anchor: WARNING: bulk-inserted entries do not query like API-created ones: ${p}`);
    else
      console.log(
        'anchor: a bulk-inserted article queries like an API-created one (fields, metadata, author; rows equal column by column); typed storage holds every entry, every column filled',
      );

    const expected = await plainAnswers(textClient, count);
    const page = await verifyPage(server.base, ws, key, expected.page);
    const aggregates = await verifyAggregates(server.base, ws, key, expected.aggregates);
    const reads = await verifyReads(server.base, ws, key, seed, expected.reads);
    const list = await verifyList(server.base, ws, key, seed, expected.list);

    const routes = loadRoutes(server.base, ws, key, seed);
    await checkRoutes(routes, server.base);
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`anchor: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const byRoute = (name) => routes.find((r) => r.route === name);
    const pageRoute = byRoute('page');
    if (opts.serverWarmupSeconds > 0)
      await measure(pageRoute.url, pageRoute.headers, { ...opts, warmupSeconds: 0, seconds: opts.serverWarmupSeconds }, pageRoute.request);

    // Each question and its plain SQL (10 clients of their own, the server idle meanwhile),
    // alternately for BENCH_ANCHOR_ROUNDS rounds; the comparison takes all the rounds together.
    const rounds = ` (${opts.rounds} rounds of ${opts.seconds} s, alternating)`;
    const compared = [];
    const alternate = async (route, statement, sqlLabel) => {
      const api = [];
      const plain = [];
      for (let i = 0; i < opts.rounds; i++) {
        api.push(await measure(route.url, route.headers, opts, route.request));
        plain.push(await measureSql(db.url, statement, opts));
      }
      const row = {
        question: route.route,
        api: { ...route, ...combineRounds(api, opts.seconds), label: `${route.label}${rounds}` },
        sql: {
          route: `sql-${route.route}`,
          label: `  ${sqlLabel} (pg, ${opts.connections} clients)${rounds}`,
          ...combineRounds(plain, opts.seconds),
        },
      };
      compared.push(row);
      return row;
    };
    await alternate(pageRoute, PAGE_SQL, 'plain SQL');

    // The page's statement as the server runs it (checked right after its load: the server's
    // connections last ran it), its plan and the plain SQL's.
    const statement = pageStatement(seed.workspaceId, seed.defs, PAGE_QUERY);
    const check = await checkStatement(client, db.name, statement, page.apiIds, {
      idsOf: projectedIds,
      like: 'WITH found AS MATERIALIZED%',
    });
    const plan = await preparedPlan(client, statement);
    const sqlPlan = await plainPlan(client, PAGE_SQL);

    for (const tz of TIMEZONES) await alternate(byRoute(`aggregate-${tz}`), aggregateSql(tz), 'plain SQL');
    // The read by id and the v1 page of 50 (judged against that read), alternately for
    // BENCH_ANCHOR_ROUNDS rounds, so that a slow window of the machine weighs on both; then the
    // plain SQL of each, one run (for information).
    const pair = [
      { route: byRoute('read'), statement: readSql(count), runs: [] },
      { route: byRoute('list'), statement: LIST_SQL, runs: [] },
    ];
    for (let i = 0; i < opts.rounds; i++)
      for (const q of pair) q.runs.push(await measure(q.route.url, q.route.headers, opts, q.route.request));
    for (const q of pair) {
      compared.push({
        question: q.route.route,
        api: { ...q.route, ...combineRounds(q.runs, opts.seconds), label: `${q.route.label}${rounds}` },
        sql: {
          route: `sql-${q.route.route}`,
          label: `  plain SQL (pg, ${opts.connections} clients)`,
          ...(await measureSql(db.url, q.statement, opts)),
          seconds: opts.seconds,
        },
      });
    }
    // Each question at 1 connection: what the embedded database is compared with.
    const single = await measureSingle(routes, opts);

    // The defaults (response cache on), for information; then the batch writes.
    const stopped = await stopServer(server.child);
    if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local' } });
    const cachedRoutes = loadRoutes(server.base, ws, key, seed).map((r) => ({
      ...r,
      route: `${r.route}-cached`,
      label: `${r.label} [defaults]`,
    }));
    await checkRoutes(cachedRoutes, server.base);
    const cached = [];
    for (const r of cachedRoutes) cached.push({ ...r, ...(await measure(r.url, r.headers, opts, r.request)) });
    const batches = await benchBatches(server.base, ws, key, client, seed, count, batchRuns);
    return {
      compared,
      single,
      cached,
      startMs: server.startMs,
      busy,
      seed,
      shapeProblems,
      expected,
      page,
      aggregates,
      reads,
      list,
      statement,
      check,
      plan,
      sqlPlan,
      batches,
    };
  } finally {
    await client.end().catch(() => {});
    await textClient.end().catch(() => {});
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    }
    // BENCH_KEEP_DATABASE=1 keeps it for EXPLAIN by hand.
    if (process.env.BENCH_KEEP_DATABASE === '1') (keepDatabase(db.name), console.log(`anchor: kept ${db.url}`));
    else await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// The embedded database

/** Each question's plain SQL through `client` (one: PGlite is single-connection), for information. */
async function timePlainSql(client, count, opts) {
  const label = '  plain SQL (PGlite in this process, 1 client, server stopped)';
  const statements = [
    ['page', PAGE_SQL],
    ...TIMEZONES.map((tz) => [`aggregate-${tz}`, aggregateSql(tz)]),
    ['read', readSql(count)],
    ['list', LIST_SQL],
  ];
  const out = {};
  for (const [question, statement] of statements)
    out[question] = { route: `sql-${question}`, label, ...(await measureOnClients([client], statement, opts)), seconds: opts.seconds };
  return out;
}

async function runEmbedded({ opts, count }) {
  const dataDir = makeTempDir('wsapi-bench-anchor-embedded-');
  const embedded = embeddedDatabase({ dataDir, variantEnv: { APP_ENV: 'local', RESPONSE_CACHE_MB: '0' } });
  const serve = async () => (await embedded.serve()).base;
  const client = embedded.client;
  // Every value as PostgreSQL's text, as the PostgreSQL section's textClient reads them.
  const { types } = await import('@electric-sql/pglite');
  const asText = Object.fromEntries(Object.keys(types.parsers).map((type) => [type, (v) => v]));
  const textClient = { query: (text, values) => client.query(text, values, { parsers: asText }) };
  try {
    const prepared = await (async () => {
      const { ws, key } = await setup(await serve(), { permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedRows({ serve, ws, key, client, count, maintain: 'ANALYZE' });
      // Still with the server stopped (the seeding's last statements stopped it): the checks of the
      // stored rows, the plain SQL's answers and its timings.
      seed.defs = await contentTypeDefs(client, seed.types.get('articles').bucket_id);
      const storedProblems = await storedShapeProblems(client, seed, count);
      const expected = await plainAnswers(textClient, count);
      const sql = await timePlainSql(client, count, opts);
      const base = await serve();
      const shapeProblems = [...(await apiShapeProblems(base, ws, key, seed, count)), ...storedProblems];
      return { base, ws, key, seed, shapeProblems, expected, sql };
    })().catch((err) => {
      throw embedded.server ? withServerOutput(embedded.server, err) : err;
    });
    const { base, ws, key, seed, shapeProblems, expected, sql } = prepared;
    const otherMs = seed.totalMs - seed.apiMs - seed.insertMs - seed.plainMs - seed.analyzeMs;
    console.log(
      `anchor: seeded ${count.toLocaleString('en-US')} published articles and ${AUTHORS.toLocaleString('en-US')} authors on the embedded database in ${seconds(seed.totalMs)} ` +
        `(${API_CREATED.authors} authors and ${API_CREATED.articles} articles through the API ${seconds(seed.apiMs)}; the rest with one INSERT per type through PGlite, the server stopped, ${seconds(seed.insertMs)}; ` +
        `the plain tables ${seconds(seed.plainMs)}; ANALYZE ${seconds(seed.analyzeMs)}; the content types and the server's starts between the steps ${seconds(otherMs)})`,
    );
    if (shapeProblems.length)
      for (const p of shapeProblems)
        console.log(`anchor: WARNING: embedded: bulk-inserted entries do not query like API-created ones: ${p}`);
    else
      console.log(
        'anchor: embedded: a bulk-inserted article queries like an API-created one (fields, metadata, author; rows equal column by column); typed storage holds every entry, every column filled',
      );

    const page = await verifyPage(base, ws, key, expected.page);
    const aggregates = await verifyAggregates(base, ws, key, expected.aggregates);
    const reads = await verifyReads(base, ws, key, seed, expected.reads);
    const list = await verifyList(base, ws, key, seed, expected.list);
    const routes = loadRoutes(base, ws, key, seed);
    await checkRoutes(routes, base);
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`anchor: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const pageRoute = routes.find((r) => r.route === 'page');
    if (opts.serverWarmupSeconds > 0)
      await measure(
        pageRoute.url,
        pageRoute.headers,
        { ...opts, connections: 1, warmupSeconds: 0, seconds: opts.serverWarmupSeconds },
        pageRoute.request,
      );
    const single = await measureSingle(routes, opts);
    return { single, sql, startMs: embedded.server.startMs, busy, seed, shapeProblems, expected, page, aggregates, reads, list };
  } finally {
    const stopped = await embedded.close();
    if (stopped && !stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

/** The checks before the load (`r`: a database's run), as lines to print. */
function checkLines(r) {
  const lines = [];
  lines.push(
    `  filtered page compared with the plain SQL before the load: ` +
      (r.page.problems.length
        ? `DIFFERS: ${r.page.problems.join('; ')}`
        : `the same ${r.page.rows.length} titles, amounts and author names in the same order (first: ${JSON.stringify(r.page.rows[0])})`),
  );
  for (const tz of TIMEZONES) {
    const a = r.aggregates[tz];
    lines.push(
      `  aggregate ${tz}: ${a.expected.length} month groups, ${a.total.toLocaleString('en-US')} articles; API vs plain SQL: ` +
        (a.diffs.length ? `${a.diffs.length} DIFFERENCES` : 'every group equal (month, count, sum exact, avg to 12 places)') +
        (a.avgRounding ? ` (the SQL's own avg() rounded to 12 places differs from the exact average in ${a.avgRounding} groups)` : ''),
    );
    for (const d of a.diffs) lines.push(`    ${d}`);
  }
  lines.push(
    `  read by id of articles ${r.reads.checked.join(', ')} compared with the plain SQL: ` +
      (r.reads.problems.length ? `DIFFERS: ${r.reads.problems.join('; ')}` : 'the same title, amount, published_at, state and author name'),
  );
  lines.push(
    `  v1 page of ${LIST_SIZE} compared with the plain SQL before the load: ` +
      (r.list.problems.length
        ? `DIFFERS: ${r.list.problems.join('; ')}`
        : `articles 1 to ${LIST_SIZE} in id order, each with its author rendered (fields.author.fields.name); the same title, amount, published_at, state and author name`),
  );
  return lines;
}

/** Whether a question's answers equalled the plain SQL's before the load (`r`: a database's run). */
function figuresMatch(r, question) {
  if (question === 'page') return r.page.problems.length === 0;
  if (question === 'read') return r.reads.problems.length === 0;
  if (question === 'list') return r.list.problems.length === 0;
  return r.aggregates[question.slice('aggregate-'.length)].diffs.length === 0;
}

function reportPostgres(r, count, opts) {
  printRouteTable(
    `anchor on PostgreSQL server, ${count.toLocaleString('en-US')} articles, APP_ENV=local, RESPONSE_CACHE_MB=0, ${opts.connections} connections (server up in ${seconds(r.startMs)}; CPUs ${pct(r.busy)} busy before the run):`,
    r.compared.flatMap((q) => [
      { ...q.api, target: undefined },
      { ...q.sql, target: undefined },
    ]),
    100,
  );
  printRouteTable(
    "the same server, each question at 1 connection (PostgreSQL's figure for the embedded comparison):",
    r.single.map((x) => ({ ...x, target: undefined })),
    100,
  );
  printRouteTable(
    'anchor with the defaults (response cache on: the same answer asked again comes from it), one run each, for information:',
    r.cached.map((x) => ({ ...x, target: undefined })),
    100,
  );

  const lines = checkLines(r);
  const [utc, berlin] = TIMEZONES.map((tz) => new Map(r.aggregates[tz].expected.map((g) => [g.group.published_at, g.count])));
  const differ = [...new Set([...utc.keys(), ...berlin.keys()])].filter((m) => utc.get(m) !== berlin.get(m)).length;
  lines.push(`  (${differ} of the month groups count differently in UTC and Europe/Berlin)`);
  const b = r.batches;
  lines.push(
    `  batch of ${BATCH_SIZE} creates (defaults server), ${b.api.runs}× sequential after ${BATCH_WARMUP} not counted: median ${ms(b.api.median)} ms, p95 ${ms(b.api.p95)} ms, max ${ms(b.api.max)} ms; ` +
      `${b.created.toLocaleString('en-US')} created ids checked; plain SQL INSERT of the same ${BATCH_SIZE} rows: median ${ms(b.sql.median)} ms, p95 ${ms(b.sql.p95)} ms`,
  );
  for (const p of b.problems) lines.push(`    PROBLEM: ${p}`);
  for (const line of lines) console.log(line);

  console.log(
    `  filtered page statement (rebuilt with dist/ modules as core/content/query/run.ts and core/query/run.ts build it), values ${JSON.stringify(r.statement.values)}:`,
  );
  if (r.check.problems.length)
    for (const p of r.check.problems) console.log(`  WARNING: the rebuilt statement may not be the server's: ${p}`);
  else
    console.log(
      `  (same entries in the same order as the API answer; its first ${r.check.compared} characters, all pg_stat_activity keeps (the select list), identical to the server's statements there)`,
    );
  for (const line of r.statement.text.split('\n')) console.log(`    ${line}`);
  console.log(
    '  EXPLAIN (ANALYZE, BUFFERS) of it, prepared as the server prepares it and run 8 times first (the plan PostgreSQL then keeps):',
  );
  for (const line of r.plan) console.log(`    ${line}`);
  console.log(`  plain SQL: ${PAGE_SQL.text}`);
  console.log('  EXPLAIN (ANALYZE, BUFFERS) of it (after one run):');
  for (const line of r.sqlPlan) console.log(`    ${line}`);
}

/** The questions of the embedded comparison, in loadRoutes' order, with their summary names. */
const EMBEDDED_QUESTIONS = [
  ['page', 'filtered page'],
  ...TIMEZONES.map((tz) => [`aggregate-${tz}`, `monthly aggregate ${tz}`]),
  ['read', 'read by id'],
  ['list', `v1 page of ${LIST_SIZE}`],
];

function reportEmbedded(e, pgRun, count, pgCount) {
  printRouteTable(
    `anchor on embedded PostgreSQL (PGlite), ${count.toLocaleString('en-US')} articles (ANALYZEd), APP_ENV=local, RESPONSE_CACHE_MB=0, 1 connection (server up in ${seconds(e.startMs)}; CPUs ${pct(e.busy)} busy before the run):`,
    EMBEDDED_QUESTIONS.flatMap(([question]) => [{ ...e.single.find((x) => x.route === question), target: undefined }, e.sql[question]]),
    100,
  );
  const lines = checkLines(e);
  // With as many articles, the plain tables hold the same rows: their answers must be the same.
  if (count === pgCount) {
    const same = isDeepStrictEqual(e.expected, pgRun.expected);
    lines.push(
      `  plain SQL answers (page, month groups, reads, v1 page) of the embedded database vs PostgreSQL's: ${same ? 'equal, value for value' : 'DIFFERENT'}`,
    );
    if (!same) for (const line of plainDifferences(e.expected, pgRun.expected)) lines.push(`    ${line}`);
  } else {
    lines.push(
      `  (${count.toLocaleString('en-US')} articles here, ${pgCount.toLocaleString('en-US')} on PostgreSQL: the times below compare different sizes)`,
    );
  }
  for (const [question, name] of EMBEDDED_QUESTIONS) {
    const c = embeddedComparison(e, pgRun, question);
    lines.push(
      `  ${name}: embedded p50 ${ms(c.api.p50)} ms, PostgreSQL p50 ${ms(c.pg.p50)} ms (1 connection each): ${times(c.ratio)} (target <= ${TARGETS.embedded.p50Ratio}×: ${verdict(c.ok)}); ` +
        `figures ${c.same ? "the same as the plain SQL's" : "DIFFERENT from the plain SQL's"}; plain SQL in PGlite p50 ${ms(e.sql[question].p50)} ms per query (${e.sql[question].rps.toFixed(1)}/s, for information)`,
    );
  }
  for (const line of lines) console.log(line);
}

/** Where two plainAnswers differ (at most 8 places). */
function plainDifferences(a, b) {
  const out = [];
  const compare = (what, x, y) => {
    for (let i = 0; i < Math.max(x.length, y.length) && out.length < 8; i++)
      if (!isDeepStrictEqual(x[i], y[i]))
        out.push(`${what} row ${i}: embedded ${JSON.stringify(x[i])}, PostgreSQL ${JSON.stringify(y[i])}`);
  };
  compare('page', a.page, b.page);
  for (const tz of TIMEZONES) compare(`aggregate ${tz}`, a.aggregates[tz], b.aggregates[tz]);
  compare('reads', a.reads, b.reads);
  compare('v1 page', a.list, b.list);
  return out;
}

/** A question on the embedded database against PostgreSQL at 1 connection: the ratio of the p50s and the verdict. */
function embeddedComparison(e, pgRun, question) {
  const api = e.single.find((x) => x.route === question);
  const pg = pgRun.single.find((x) => x.route === question);
  const ratio = api.p50 / pg.p50;
  const same = figuresMatch(e, question);
  return { api, pg, ratio, same, ok: ratio <= TARGETS.embedded.p50Ratio && same && !failed(api) && !failed(pg) };
}

/** The summary table (`e`: the embedded run, if any); answers its rows. */
function summary(r, e, count, embeddedCount) {
  const rows = [];
  const q = (name) => r.compared.find((x) => x.question === name);
  const pageQ = q('page');
  const pageRatio = rate(pageQ.api) / rate(pageQ.sql);
  const pageOk = pageRatio >= TARGETS.page.ratio && pageQ.api.p50 < TARGETS.page.p50 && !failed(pageQ.api) && r.page.problems.length === 0;
  rows.push({
    question: 'filtered page',
    api: rate(pageQ.api),
    p50: pageQ.api.p50,
    sql: rate(pageQ.sql),
    ratio: pageRatio,
    target: `>= ${TARGETS.page.ratio}× SQL, p50 < ${TARGETS.page.p50} ms, same rows`,
    verdict: verdict(pageOk),
    ok: pageOk,
  });
  for (const tz of TIMEZONES) {
    const a = q(`aggregate-${tz}`);
    const ratio = rate(a.api) / rate(a.sql);
    const ok = ratio >= TARGETS.aggregate.ratio && !failed(a.api) && r.aggregates[tz].diffs.length === 0;
    rows.push({
      question: `monthly aggregate ${tz}`,
      api: rate(a.api),
      p50: a.api.p50,
      sql: rate(a.sql),
      ratio,
      target: `>= ${TARGETS.aggregate.ratio}× SQL, same figures`,
      verdict: verdict(ok),
      ok,
    });
  }
  const read = q('read');
  rows.push({
    question: 'read by id (author rendered)',
    api: rate(read.api),
    p50: read.api.p50,
    sql: rate(read.sql),
    ratio: rate(read.api) / rate(read.sql),
    target: '(measured)',
    verdict: '-',
  });
  const list = q('list');
  const listRatio = rate(list.api) / rate(read.api);
  const listOk = listRatio >= TARGETS.list.readRatio && !failed(list.api) && !failed(read.api) && r.list.problems.length === 0;
  rows.push({
    question: `v1 page of ${LIST_SIZE} (author rendered)`,
    api: rate(list.api),
    p50: list.api.p50,
    sql: rate(list.sql),
    ratio: listRatio,
    target: `>= ${TARGETS.list.readRatio.toFixed(2)}× the read by id's req/s, same rows`,
    verdict: verdict(listOk),
    ok: listOk,
  });
  const b = r.batches;
  rows.push({
    question: `batch of ${BATCH_SIZE} creates (sequential)`,
    api: 1000 / b.api.median,
    p50: b.api.median,
    sql: 1000 / b.sql.median,
    ratio: b.sql.median / b.api.median,
    target: `(timed: median ${ms(b.api.median)} ms, p95 ${ms(b.api.p95)} ms)`,
    verdict: b.problems.length ? 'PROBLEMS' : '-',
  });
  for (const [question, name] of e ? EMBEDDED_QUESTIONS : []) {
    const c = embeddedComparison(e, r, question);
    const sameWhat = question === 'page' || question === 'list' ? 'same rows' : 'same figures';
    rows.push({
      question: `embedded: ${name}`,
      api: rate(c.api),
      p50: c.api.p50,
      sql: rate(e.sql[question]),
      ratio: c.ratio,
      target: `<= ${TARGETS.embedded.p50Ratio}× PostgreSQL p50 (${ms(c.pg.p50)} ms), ${c.same ? sameWhat : `NOT the ${sameWhat}`}`,
      verdict: verdict(c.ok),
      ok: c.ok,
    });
  }
  const sizes = e
    ? `${count.toLocaleString('en-US')} articles on PostgreSQL, ${embeddedCount.toLocaleString('en-US')} embedded`
    : `PostgreSQL, ${count.toLocaleString('en-US')} articles`;
  console.log(`anchor summary (${sizes}, response cache off for the comparisons; ratio = API answers/s ÷ plain SQL answers/s):`);
  const table = tableLines(
    [
      { title: 'question', width: Math.max(34, ...rows.map((x) => x.question.length + 2)), align: 'left', value: (x) => x.question },
      { title: 'API req/s', width: 11, value: (x) => (Number.isFinite(x.api) ? x.api.toFixed(1) : '-') },
      { title: 'p50 ms', width: 10, value: (x) => ms(x.p50) },
      { title: 'SQL tps', width: 11, value: (x) => (Number.isFinite(x.sql) ? x.sql.toFixed(1) : '-') },
      { title: 'ratio', width: 10, value: (x) => times(x.ratio) },
      { title: '  target', width: 54, align: 'left', value: (x) => `  ${x.target}` },
      { title: 'verdict', gap: '  ', value: (x) => x.verdict },
    ],
    rows,
  );
  for (const line of table) console.log(line);
  console.log(
    `  (the v1 page of ${LIST_SIZE} row: ratio = its req/s ÷ the read by id's req/s, measured in alternating rounds on the same server)`,
  );
  console.log(
    `  (the batch row: req/s = 1000 / median ms of one batch at a time, p50 = its median; SQL: one INSERT of the same ${BATCH_SIZE} rows; ratio = SQL median ÷ API median)`,
  );
  if (e) {
    console.log(
      '  (the embedded rows: the embedded API at 1 connection; SQL tps: the plain SQL in PGlite, 1 client in this process, the server stopped; ' +
        "ratio = embedded p50 ÷ PostgreSQL API p50 at 1 connection; the figures: the API's answers against the plain SQL's on the same database)",
    );
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------

export async function benchAnchor(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 20 }),
    rounds: Number(options.rounds ?? env.BENCH_ANCHOR_ROUNDS ?? 3),
  };
  if (!(opts.rounds >= 1)) throw new Error('BENCH_ANCHOR_ROUNDS must be at least 1');
  const count = Number(options.entries ?? env.BENCH_ANCHOR_ENTRIES ?? 100_000);
  const withEmbedded = options.embedded ?? env.BENCH_ANCHOR_EMBEDDED !== '0';
  const embeddedCount = Number(options.embeddedEntries ?? env.BENCH_ANCHOR_EMBEDDED_ENTRIES ?? count);
  const batchRuns = Number(options.batchRuns ?? env.BENCH_BATCH_RUNS ?? 20);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  if (!(count >= 1000)) throw new Error('BENCH_ANCHOR_ENTRIES must be at least 1000');
  if (withEmbedded && !(embeddedCount >= 1000)) throw new Error('BENCH_ANCHOR_EMBEDDED_ENTRIES must be at least 1000');
  if (!(batchRuns >= 1)) throw new Error('BENCH_BATCH_RUNS must be at least 1');
  checkBuild('anchor');

  const removeHandlers = installSignalHandlers('anchor bench');
  let result;
  let embedded;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `anchor: ${opts.connections} connections, ${opts.serverWarmupSeconds} s of the filtered page first, then ${opts.warmupSeconds} s warm-up + ${opts.seconds} s per run; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon and the plain SQL clients run on the same machine); ` +
        (withEmbedded
          ? `then the embedded database, ${embeddedCount.toLocaleString('en-US')} articles, 1 connection`
          : 'embedded database: skipped (BENCH_ANCHOR_EMBEDDED=0)'),
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`anchor: ${msg}: skipped (the anchor bench needs PostgreSQL; the embedded target is relative to it)`);
      return { result, embedded, invalid };
    }
    result = await runPostgres({ adminUrl, opts, count, batchRuns });
    reportPostgres(result, count, opts);
    if (result.compared.some((x) => failed(x.api) || x.sql.errors > 0) || result.single.some(failed) || result.cached.some(failed))
      invalid = true;
    if (withEmbedded) {
      embedded = await runEmbedded({ opts, count: embeddedCount });
      reportEmbedded(embedded, result, embeddedCount, count);
      if (embedded.single.some(failed) || Object.values(embedded.sql).some((x) => x.errors > 0)) invalid = true;
    }
    const rows = summary(result, embedded, count, embeddedCount);
    const targets = rows.filter((x) => x.ok !== undefined).map((x) => `${x.question} ${x.target} (${times(x.ratio)}): ${x.verdict}`);
    const sizes = embedded
      ? `PostgreSQL ${count.toLocaleString('en-US')} articles, embedded ${embeddedCount.toLocaleString('en-US')}`
      : `PostgreSQL, ${count.toLocaleString('en-US')} articles`;
    console.log(`anchor targets (${sizes}): ${targets.join('; ')}`);
    console.log(`anchor: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('anchor: WARNING: some responses were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, embedded, invalid };
}

await runStandalone(import.meta, 'anchor', benchAnchor);
