// The typed Entries API under load, on the built server (dist/), with APP_ENV=local (rate limits
// off), on a PostgreSQL server (a throwaway database):
//
// In the General bucket of one workspace, three content types: `person` (name text), `tag` (label
// text) and `article` (title text, body text, rating number, authors relation multiple -> person,
// tags relation multiple -> tag, cover attachment). 1,000 published persons, 1,000 published tags
// and BENCH_ENTRIES (100,000) published articles, each with 5 authors, 5 tags and one of 3 files
// uploaded through the API as its cover. A few of each type are created through the API (the
// articles among them referencing bulk-inserted persons and tags, which the API checks), the rest
// bulk-inserted with one INSERT per type exactly as the API writes them
// (core/content/typed-entries.ts createTypedEntry, write.ts insertEntry/writeDocuments: an
// `entries` row of kind `typed` with ref `<type>/<ULID>`, contract choice `none`, and an
// `entry_contents` row for en-US whose data holds relations as entry ULIDs and the attachment as
// the file id; no `created` revision, reads do not need it), then VACUUM ANALYZE of entries,
// entry_contents and the three typed tables (typed_<content type id>, which entry_contents'
// triggers fill during the inserts; autovacuum would analyze them at some point, maybe in the
// middle of a run: without their statistics the planner takes the 100k rows of the article's
// table for a few and picks a nested loop over a sequential scan, which makes the bare competitor
// about 5x slower (measured by hand). It changes nothing for the API's pages, which render from
// entry_contents (analyzed before as well); its queries that filter or sort on fields read the
// typed tables). A bulk-inserted article must read like an API-created one (envelope, relations
// expanded, cover a file object).
// Then, with autocannon (10 connections, a warm-up that is not counted, then BENCH_SECONDS per
// route), after BENCH_SERVER_WARMUP_SECONDS of random reads:
//   GET /health                                           the ceiling of this machine
//   GET /api/v1/{ws}/entries/{ulid}                       a random article of the 100k per request
//   GET /api/v1/{ws}/entries?contentBucket=general&contentType=article&per_page=10|50|100
//                                                         first page, rendered entries (v1 page)
// with the server's defaults (the response cache on: a page asked again is served from it, file
// URLs signed afresh), then the read, the pages of 50 and 100 and the last page of persons (100
// per page, its cursor found by following the list: a small type listed past its last entry,
// which must not read the articles after it) on a server with
// RESPONSE_CACHE_MB=0 (after BENCH_SERVER_WARMUP_SECONDS of random reads on it too: every
// answer reaches the database; the pages read the entry texts that their first answer kept, and
// render again only what a change dropped), then the pages of 50 and 100 on a server with
// KEEP_RENDERED_ENTRIES=false as well (the cost of rendering every entry, as for the first request
// after a change to all of them: core/content/kept-texts.ts). Every run also reads the server
// process's CPU time (utime + stime of /proc/<pid>/stat, all its threads, in clock ticks of
// `getconf CLK_TCK`) just before and just after the measured run: that difference over the run's
// responses is the server's (Node's) CPU time per response (cpu.mjs processCpuMs).
// Then the competitor, the best a user could get elsewhere, in the same run: a bare `node:http` +
// `pg` server (bare-page-server.mjs, a child process of this bench, so that its CPU is read from
// /proc the same way; the API server stopped, nothing else running) on the same database: a
// pg.Pool of 10 connections with the server's session settings, one named prepared statement per
// request, `GET /?per_page=N` answered with the text PostgreSQL built, `res.end(text)`. Its
// statement builds {"data":[...]} with json_build_object / json_agg from the typed columns
// (typed_<type id>.f<field id>: article title, body, rating, authors and tags as text[] of
// ULIDs, cover a file id; person name, tag label), each related entry joined through entries'
// unique index on entry_id (`r.entry_id = u.id COLLATE "default"`: the typed columns are COLLATE
// "C", and compared in that collation the index is not used), the cover from files; its ids
// (workspace, content types, field columns) looked up in the database at start. The envelope of
// each article and related entry is the API's, but the answer leaves out what costs the API more:
// the file's URLs (download_url, and the temporary URLs it signs with HMAC per answer), the
// next/prev page links, its timestamp format, the request's authentication and log. Before the
// load its page of 50 must hold the API's cache-off page of 50 (the same entries in the same
// order, the same titles, author names, tag labels and covers; a difference is printed as a
// WARNING, like the bulk rows' shape check); then its pages of 50 and 100 are measured like the
// cache-off routes (BENCH_SERVER_WARMUP_SECONDS of its page of 50 first, then warm-up and
// BENCH_SECONDS each, its CPU per response), and rows of their own in the table.
// With BENCH_PROFILE=1, the cache-off page of 50 once more on a server of its own started with
// --cpu-prof (its warm-ups first, as above), and the top 15 functions by self time of the
// measured run's samples (cpu.mjs: file:line, ms, % of the time in functions; (idle) and
// (program) shown apart, out of the 100 %). Then the database round trips of one request (the
// statements PostgreSQL runs for it) of the read and of each list page size, counted one request
// at a time on a server with nothing else to do and the response cache off: with
// pg_stat_statements when the PostgreSQL server has it loaded, otherwise through a small TCP proxy
// of this bench between the server and PostgreSQL that counts the frontend messages that run a
// statement (Q: a simple query, E: an extended-protocol Execute). The background statements of an
// idle server (job polling, the request log flush, outbox polling, listener heartbeats) are
// measured in an idle window first: statements of the kinds (texts) it saw are left out of a
// request's count, and its rate is subtracted from the raw mean. PostgreSQL renders a delivery
// answer in one statement whatever its size (core/content/render.ts): the count must be the
// same for 10, 50 and 100.
//
// Targets (the last line says met / not met for each): the read >= 2800 req/s and the page of 50
// p50 < 25 ms with the defaults; the same round trips for every page size; with the response
// cache off: the page of 50 at least 10 % of GET /health's req/s (the ceiling of this machine,
// measured in the same run), its p50 < 25 ms and the server's CPU < 3 ms per page; a page of 100
// less than 1.6x the cost of a page of 50 (cost per request: 1 / req/s), the bare server's same
// ratio printed beside it; the read's req/s printed without a target (a human compares it with the
// figure before a change), and without a target either the cache-off pages of 50 and 100 against
// the bare node:http + pg server's: our req/s ÷ its req/s (`0.58×`: ours does 58 % of its pages
// per second), with both p50s and both Node CPU times per page.
//
// Standalone: `node scripts/bench/entries.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per route        BENCH_WARMUP_SECONDS=2
//   BENCH_SERVER_WARMUP_SECONDS=20  random reads before the first route, not counted (each
//                             PostgreSQL connection of a fresh server first maps the shared
//                             buffers it touches, a page fault each: slow in a VM)
//   BENCH_CONNECTIONS=10      concurrent connections
//   BENCH_ENTRIES=100000      published articles (at least 1000; persons and tags: 1000 each)
//   BENCH_ROUND_TRIP_REQUESTS=20   sequential requests per route when counting round trips
//   BENCH_ROUND_TRIP_IDLE_SECONDS=10  the idle window before them (background statements)
//   BENCH_ROUND_TRIP_COUNTER=auto  how to count them: auto (pg_stat_statements if loaded, else
//                             the proxy), pg_stat_statements, or proxy
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE); the role
//                             must be allowed to create databases (and extensions, for
//                             pg_stat_statements)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed) to EXPLAIN by hand
//   BENCH_PROFILE=1           also profile the cache-off page of 50 (--cpu-prof), top 15 self times
//   BENCH_LOG_LEVEL=silent    the server's LOG_LEVEL (its output is shown when the set-up fails)
import { spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
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
  postgresReachable,
  removeTempDir,
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
  checkRoutes,
  createContentTypes,
  typedBulkInsert,
  seedTypedEntries,
  bulkMatchesApi,
  loadOptions,
  root,
  trackChild,
} from './support.mjs';
import { readProfile, selfTimes, topSelfTimeLines } from './cpu.mjs';

const ENTRY_PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry', 'create-file', 'view-file'];
const BUCKET = 'general';
const PERSONS = 1000;
const TAGS = 1000;
const FILES = 3; // uploaded through the API; article n has file n % FILES as its cover
const API_CREATED = { person: 3, tag: 3, article: 5 }; // through the API before the bulk inserts
const AUTHORS_PER_ARTICLE = 5;
const TAGS_PER_ARTICLE = 5;
const PAGE_SIZES = [10, 50, 100];
const TARGETS = {
  read: { rps: 2800 },
  list50: { p50: 25 },
  // Response cache off: rendering by PostgreSQL.
  uncached50: { healthShare: 0.1, p50: 25, cpuMs: 3 },
  page100Cost: 1.6, // a page of 100 against a page of 50, cost per request
};
const CACHE_OFF_ENV = { APP_ENV: 'local', RESPONSE_CACHE_MB: '0' };
// Nor kept entry texts (core/content/kept-texts.ts): every entry of every answer rendered afresh.
const UNKEPT_ENV = { ...CACHE_OFF_ENV, KEEP_RENDERED_ENTRIES: 'false' };
// The competitor: a bare node:http + pg server answering the same page (bare-page-server.mjs).
const BARE_SERVER = path.join(import.meta.dirname, 'bare-page-server.mjs');
const BARE_PAGE_SIZES = [50, 100];

const CONTENT_TYPES = [
  { name: 'person', fields: [{ name: 'name', type: 'text' }] },
  { name: 'tag', fields: [{ name: 'label', type: 'text' }] },
  {
    name: 'article',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'body', type: 'text' },
      { name: 'rating', type: 'number' },
      { name: 'authors', type: 'relation', multiple: true, targets: ['person'] },
      { name: 'tags', type: 'relation', multiple: true, targets: ['tag'] },
      { name: 'cover', type: 'attachment' },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// The seeded entries: the same in JavaScript (API) and in SQL (bulk insert). Entries of a type are
// numbered from 1 in creation order; `persons`, `tags` and `files` hold the ULIDs (file ids) in
// that order, so that article n references the same entries either way.

const LOREM = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(3).trimEnd();
const personFields = (n) => ({ name: `Person ${n}` });
const tagFields = (n) => ({ label: `tag-${n}` });
const authorIndex = (n, k) => (n * 7 + k) % PERSONS; // 0-based, distinct for k = 0..4
const tagIndex = (n, k) => (n * 11 + k) % TAGS;
const articleFields = (n, refs) => ({
  title: `Article ${n}`,
  body: `Body of article ${n}. ${LOREM}`,
  rating: (n % 1000) / 10,
  authors: Array.from({ length: AUTHORS_PER_ARTICLE }, (_, k) => refs.persons[authorIndex(n, k)]),
  tags: Array.from({ length: TAGS_PER_ARTICLE }, (_, k) => refs.tags[tagIndex(n, k)]),
  cover: refs.files[n % FILES],
});

// One INSERT per type (support.mjs typedBulkInsert: the rows createTypedEntry writes).
const BULK_SQL = {
  person: typedBulkInsert(`jsonb_build_object('name', 'Person ' || n)`),
  tag: typedBulkInsert(`jsonb_build_object('label', 'tag-' || n)`),
  // $7 persons' ULIDs, $8 tags' ULIDs, $9 file ids, $10 the lorem text (as articleFields).
  article: typedBulkInsert(`jsonb_build_object(
         'title', 'Article ' || n,
         'body', 'Body of article ' || n || '. ' || $10::text,
         'rating', (n % 1000)::float8 / 10,
         'authors', (SELECT jsonb_agg(($7::text[])[((n * 7 + k) % ${PERSONS}) + 1] ORDER BY k) FROM generate_series(0, ${AUTHORS_PER_ARTICLE - 1}) AS k),
         'tags', (SELECT jsonb_agg(($8::text[])[((n * 11 + k) % ${TAGS}) + 1] ORDER BY k) FROM generate_series(0, ${TAGS_PER_ARTICLE - 1}) AS k),
         'cover', ($9::int[])[(n % ${FILES}) + 1])`),
};

// ---------------------------------------------------------------------------------------------
// Helpers

const entriesPath = (ws) => `/api/v1/${ws}/entries`;
const listPath = (ws, perPage) => `${entriesPath(ws)}?contentBucket=${BUCKET}&contentType=article&per_page=${perPage}`;
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const sleep = (msValue) => new Promise((r) => setTimeout(r, msValue));

/** An article's content: its title, its authors and tags with their name and label, its cover's id. */
function articleContentOk(a) {
  const f = a?.fields;
  return (
    ULID_RE.test(a?.id ?? '') &&
    a.status === 'published' &&
    f?.title?.startsWith('Article ') &&
    Array.isArray(f.authors) &&
    f.authors.length === AUTHORS_PER_ARTICLE &&
    f.authors.every((p) => ULID_RE.test(p.id) && p.fields?.name?.startsWith('Person ')) &&
    Array.isArray(f.tags) &&
    f.tags.length === TAGS_PER_ARTICLE &&
    f.tags.every((t) => ULID_RE.test(t.id) && t.fields?.label?.startsWith('tag-')) &&
    Number.isInteger(f.cover?.id)
  );
}

/** An article as a read renders it: authors and tags expanded to full entries, cover a file. */
const renderedArticleOk = (a) =>
  articleContentOk(a) &&
  [...a.fields.authors, ...a.fields.tags].every((e) => !('_relation' in e)) &&
  typeof a.fields.cover.download_url === 'string';

/** The routes loaded with autocannon; each answers 200 (and what it should) before the load. */
function loadRoutes(base, ws, key, articleIds, lastPersons) {
  const auth = { Authorization: `Bearer ${key}` };
  const p = entriesPath(ws);
  const randomId = () => articleIds[Math.floor(Math.random() * articleIds.length)];
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
      label: `GET ${p}/{random article ULID}`,
      url: `${base}${p}/${articleIds[0]}`,
      path: () => `${p}/${randomId()}`,
      request: { requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: `${p}/${randomId()}` }) }] },
      check: renderedArticleOk,
      target: TARGETS.read,
    },
  ];
  for (const perPage of PAGE_SIZES) {
    routes.push({
      route: `list${perPage}`,
      perPage,
      label: `GET ${p}?contentBucket=${BUCKET}&contentType=article&per_page=${perPage}`,
      url: `${base}${listPath(ws, perPage)}`,
      path: () => listPath(ws, perPage),
      check: (body) =>
        body.data?.length === perPage &&
        body.data.every(renderedArticleOk) &&
        typeof body.next_page_url === 'string' &&
        body.prev_page_url === null,
      target: TARGETS[`list${perPage}`],
    });
  }
  if (lastPersons) {
    // A small type's last page: after it the table holds every article; the list must not read them.
    routes.push({
      route: 'lastPersons',
      label: `GET ${p}?contentBucket=${BUCKET}&contentType=person&per_page=100&cursor={its last page's}`,
      url: `${base}${lastPersons}`,
      path: () => lastPersons,
      check: (body) =>
        body.data?.length === 100 && body.next_page_url === null && body.data.every((e) => e.fields?.name?.startsWith('Person ')),
    });
  }
  for (const r of routes) if (!r.ceiling) r.headers = { ...auth, ...r.headers };
  return routes;
}

/** The path of the last page of persons, 100 per page, found by following the list's next pages. */
async function lastPersonsPath(base, ws, key) {
  let url = `${base}${entriesPath(ws)}?contentBucket=${BUCKET}&contentType=person&per_page=100`;
  for (;;) {
    const next = (await getJson(url, key)).next_page_url;
    if (!next) return url.slice(base.length);
    url = next;
  }
}

/**
 * The routes measured again with the response cache off: the read (the warm-up route), the
 * pages of 50 and 100 and the persons' last page, without the defaults' targets (renderingTargets
 * judges them).
 */
function uncachedRoutes(routes) {
  return routes
    .filter((r) => r.route === 'read' || r.perPage === 50 || r.perPage === 100 || r.route === 'lastPersons')
    .map((r) => ({
      ...r,
      route: `${r.route}-uncached`,
      label: `${r.label} (response cache off)`,
      target: undefined,
      perPage: undefined,
      warmup: r.route === 'read',
    }));
}

/** The pages of 50 and 100 again with nothing kept either (UNKEPT_ENV): rendering every entry, as after a change to all of them. */
function unkeptRoutes(routes) {
  return routes
    .filter((r) => r.perPage === 50 || r.perPage === 100)
    .map((r) => ({
      ...r,
      route: `${r.route}-unkept`,
      label: `${r.label} (response cache off, nothing kept)`,
      target: undefined,
      perPage: undefined,
      warmup: r.perPage === 50,
    }));
}

/** Each route checked, then measured in steady state, with the server's CPU time per response. */
async function measureRoutes(routes, server, opts) {
  await checkRoutes(routes, server.base);
  return measureSteady(routes, { ...opts, serverPid: server.child.pid });
}

/**
 * BENCH_PROFILE=1: the cache-off page of 50 on a server of its own started with --cpu-prof (the
 * route itself for the server warm-up, then measure's warm-up and run). Node writes the profile
 * when the server exits; its samples are cut to the measured run. Returns the run's row and the
 * self times (cpu.mjs selfTimes).
 */
async function profilePage50({ db, dataDir, ws, key, articles, opts }) {
  const profileDir = makeTempDir('wsapi-bench-entries-profile-');
  let server;
  try {
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: CACHE_OFF_ENV, profileDir });
    const route = uncachedRoutes(loadRoutes(server.base, ws, key, articles)).find((r) => r.route === 'list50-uncached');
    const [row] = await measureRoutes([{ ...route, label: `${route.label}, under --cpu-prof`, warmup: true }], server, opts);
    const stopped = await stopServer(server.child);
    server = undefined;
    if (!stopped.graceful) throw new Error('the profiled server did not stop within 20 s of SIGTERM and was killed: no profile written');
    return { row, times: selfTimes(readProfile(profileDir), row.window) };
  } finally {
    if (server) await stopServer(server.child);
    removeTempDir(profileDir);
  }
}

// ---------------------------------------------------------------------------------------------
// The competitor: a bare node:http + pg server (bare-page-server.mjs) answering the same page with
// one hand-written statement over the same database

/**
 * Starts bare-page-server.mjs in a child process (its CPU read from /proc like the server's),
 * tracked by the cleanup; resolves once it printed its port. Its stdin is a pipe from this
 * process: it exits when this process is gone. `apiBase` prefixes its entries' api_url.
 */
async function startBarePageServer({ databaseUrl, ws, apiBase }) {
  const child = trackChild(
    spawn(process.execPath, [BARE_SERVER, databaseUrl, ws, BUCKET, apiBase], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-8_000);
  };
  child.stderr.on('data', keep);
  child.output = () => output;
  try {
    const port = await new Promise((resolve, reject) => {
      let stdout = '';
      const timer = setTimeout(() => reject(new Error(`the bare server printed no port within 30 s:\n${output}`)), 30_000);
      child.stdout.on('data', (chunk) => {
        keep(chunk);
        stdout += chunk;
        const m = /^(\d+)\n/.exec(stdout);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the bare server exited (${code ?? signal}) before printing its port:\n${output}`));
      });
    });
    return { child, base: `http://127.0.0.1:${port}` };
  } catch (err) {
    await stopServer(child, 5_000);
    throw err;
  }
}

/** The bare server's pages of 50 and 100, measured like the cache-off routes (the page of 50 warms it up). */
function bareRoutes(base) {
  return BARE_PAGE_SIZES.map((perPage) => ({
    route: `bare${perPage}`,
    barePerPage: perPage,
    label: `GET /?per_page=${perPage} (bare node:http + pg server, one prepared statement)`,
    url: `${base}/?per_page=${perPage}`,
    headers: {},
    check: (body) => body.data?.length === perPage && body.data.every(articleContentOk),
    warmup: perPage === 50,
  }));
}

/**
 * The bare page of 50 must hold what the API's cache-off page of 50 holds: the same entries in
 * the same order, and per entry the same title, author names, tag labels and cover. Returns the
 * problems found.
 */
function compareBarePage(api, bare) {
  const problems = [];
  const ids = (page) => page?.data?.map((a) => a.id) ?? [];
  const [apiIds, bareIds] = [ids(api), ids(bare)];
  if (!isDeepStrictEqual(apiIds, bareIds)) {
    const n = Math.max(apiIds.length, bareIds.length);
    const at = Array.from({ length: n }, (_, i) => i).find((i) => apiIds[i] !== bareIds[i]);
    problems.push(
      `entry ids differ (${bareIds.length} entries vs the API's ${apiIds.length}; first at index ${at}: ${bareIds[at] ?? 'none'} vs the API's ${apiIds[at] ?? 'none'})`,
    );
    return problems;
  }
  const content = (a) => ({
    title: a.fields?.title,
    authors: a.fields?.authors?.map((p) => p.fields?.name),
    tags: a.fields?.tags?.map((t) => t.fields?.label),
    cover: a.fields?.cover?.id,
  });
  api.data.forEach((a, i) => {
    const [want, got] = [content(a), content(bare.data[i])];
    if (!isDeepStrictEqual(want, got)) problems.push(`entry ${i} (${a.id}): ${JSON.stringify(got)} vs the API's ${JSON.stringify(want)}`);
  });
  return problems;
}

/**
 * The competitor, after the cache-off routes (their server stopped: nothing else runs): the bare
 * server started on the same database, its page of 50 compared with the API's cache-off page of
 * 50 (`apiPage50`), then its pages of 50 and 100 measured with measureRoutes (its pid for the CPU
 * per response), and the server stopped.
 */
async function measureBarePages({ databaseUrl, ws, apiBase, apiPage50, opts }) {
  const bare = await startBarePageServer({ databaseUrl, ws, apiBase });
  try {
    const res = await fetch(`${bare.base}/?per_page=50`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the bare server's page of 50: HTTP ${res.status} ${text.slice(0, 300)}`);
    const problems = compareBarePage(apiPage50, JSON.parse(text));
    const rows = await measureRoutes(bareRoutes(bare.base), bare, opts);
    return { rows, problems };
  } catch (err) {
    const out = bare.child.output().trim();
    throw new Error(`${err.message}${out ? `\nbare server output:\n${out}` : ''}`);
  } finally {
    const stopped = await stopServer(bare.child);
    if (!stopped.graceful) console.log('  WARNING: the bare server did not stop within 20 s of SIGTERM and was killed');
  }
}

// ---------------------------------------------------------------------------------------------
// Seeding

/** A few of each type through the API, the rest with one INSERT per type; then VACUUM ANALYZE. */
async function seedPostgres(base, ws, key, client, count) {
  const started = performance.now();
  const { workspaceId, bucketId, types } = await createContentTypes(base, client, ws, BUCKET, CONTENT_TYPES);

  const files = [];
  for (let i = 1; i <= FILES; i++) {
    const content = Buffer.from(`Cover file ${i} of the entries bench.\n`).toString('base64');
    files.push(
      (await call(base, 'POST', `/api/v1/${ws}/files`, key, { file: { name: `cover-${i}.txt`, type: 'text/plain', content } })).id,
    );
  }

  const newUlid = monotonicFactory();
  const refs = { persons: [], tags: [], files };
  const created = { person: [], tag: [], article: [] };
  let apiMs = 0;
  let insertMs = 0;
  /** Entries 1..total of `type`: API_CREATED[type] through the API, the rest with BULK_SQL[type]. */
  const seedType = async (type, total, fieldsOf, ids, extra) => {
    const seeded = await seedTypedEntries({
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
    created[type].push(...seeded.created);
    ids.push(...seeded.ids);
    apiMs += seeded.apiMs;
    insertMs += seeded.insertMs;
  };
  await seedType('person', PERSONS, personFields, refs.persons, []);
  await seedType('tag', TAGS, tagFields, refs.tags, []);
  // The API-created articles reference bulk-inserted persons and tags: the API checks that they
  // are live typed entries of the target types in the bucket.
  const articles = [];
  await seedType('article', count, (n) => articleFields(n, refs), articles, [refs.persons, refs.tags, files, LOREM]);

  const t1 = performance.now();
  // VACUUM as well: autovacuum would otherwise visit the new rows in the middle of a run. The
  // typed tables too (typed_<type id>, filled by the triggers of entry_contents during the
  // inserts): without their statistics the planner takes typed_<article> for a few rows.
  const typedTables = CONTENT_TYPES.map((t) => `typed_${types.get(t.name).id}`);
  await client.query(`VACUUM (ANALYZE) entries, entry_contents, ${typedTables.join(', ')}`);
  const analyzeMs = performance.now() - t1;
  return { workspaceId, bucketId, types, refs, articles, created, apiMs, insertMs, analyzeMs, totalMs: performance.now() - started };
}

/** A bulk-inserted article must read like one the API created: envelope, fields, related entries, cover. */
async function shapeCheck(base, ws, key, client, seed, count) {
  const problems = [];
  const viaApi = await getJson(`${base}${entriesPath(ws)}/${seed.created.article[0].id}`, key);
  const bulkId = seed.articles[count - 1];
  const bulk = await getJson(`${base}${entriesPath(ws)}/${bulkId}`, key);
  const sameShape = (what, a, b) => {
    if (!isDeepStrictEqual(shapeOf(a ?? {}), shapeOf(b ?? {})))
      problems.push(`${what}: shapes differ: ${JSON.stringify(shapeOf(a ?? {}))} vs ${JSON.stringify(shapeOf(b ?? {}))}`);
  };
  sameShape('envelope', bulk, viaApi);
  sameShape('fields', bulk.fields, viaApi.fields);
  sameShape('authors[0]', bulk.fields?.authors?.[0], viaApi.fields?.authors?.[0]);
  sameShape('authors[0].fields', bulk.fields?.authors?.[0]?.fields, viaApi.fields?.authors?.[0]?.fields);
  sameShape('tags[0]', bulk.fields?.tags?.[0], viaApi.fields?.tags?.[0]);
  sameShape('cover', bulk.fields?.cover, viaApi.fields?.cover);
  for (const [what, a, n] of [
    ['bulk', bulk, count],
    ['API-created', viaApi, 1],
  ]) {
    const expected = articleFields(n, seed.refs);
    if (!renderedArticleOk(a)) problems.push(`the ${what} article ${n} does not render as expected: ${JSON.stringify(a).slice(0, 600)}`);
    for (const k of ['title', 'body', 'rating'])
      if (!isDeepStrictEqual(a.fields?.[k], expected[k]))
        problems.push(`${what} article ${n}: fields.${k} is ${JSON.stringify(a.fields?.[k])}, expected ${JSON.stringify(expected[k])}`);
    const authorIds = a.fields?.authors?.map((p) => p.id);
    const tagIds = a.fields?.tags?.map((t) => t.id);
    if (!isDeepStrictEqual(authorIds, expected.authors))
      problems.push(`${what} article ${n}: authors ${JSON.stringify(authorIds)}, expected ${JSON.stringify(expected.authors)}`);
    if (!isDeepStrictEqual(tagIds, expected.tags))
      problems.push(`${what} article ${n}: tags ${JSON.stringify(tagIds)}, expected ${JSON.stringify(expected.tags)}`);
    const names = a.fields?.authors?.map((p) => p.fields?.name);
    const expectedNames = expected.authors.map((id) => `Person ${seed.refs.persons.indexOf(id) + 1}`);
    if (!isDeepStrictEqual(names, expectedNames))
      problems.push(`${what} article ${n}: author names ${JSON.stringify(names)}, expected ${JSON.stringify(expectedNames)}`);
    if (a.fields?.cover?.id !== expected.cover)
      problems.push(`${what} article ${n}: cover ${JSON.stringify(a.fields?.cover)}, expected file ${expected.cover}`);
    if (a.name !== expected.title) problems.push(`${what} article ${n}: name ${JSON.stringify(a.name)}, expected the title`);
    if (!a.api_url?.endsWith(`/api/v1/${ws}/entries/${a.id}`)) problems.push(`${what} article ${n}: api_url ${a.api_url}`);
  }
  for (const field of ['status', 'status_label', 'publish_at', 'tags', 'locales', 'lock_version']) {
    if (!isDeepStrictEqual(bulk[field], viaApi[field]))
      problems.push(`${field}: ${JSON.stringify(bulk[field])} vs ${JSON.stringify(viaApi[field])}`);
  }
  if (bulk.id !== bulkId) problems.push(`the bulk article reads with id ${bulk.id}, asked for ${bulkId}`);
  // The rows themselves, column by column (except ids and times), and the counts.
  problems.push(
    ...(await bulkMatchesApi(
      client,
      seed.workspaceId,
      [
        ['person', seed.created.person[0].id, seed.refs.persons[PERSONS - 1]],
        ['tag', seed.created.tag[0].id, seed.refs.tags[TAGS - 1]],
        ['article', seed.created.article[0].id, bulkId],
      ],
      { person: PERSONS, tag: TAGS, article: count },
    )),
  );
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Round trips: the statements PostgreSQL runs for one request

/**
 * A TCP proxy between the server and PostgreSQL that counts the frontend messages that run a
 * statement: `Q` (a simple query, however many statements its text holds) and `E` (an
 * extended-protocol Execute), and remembers their text (from `Q`, and from the `P`arse of the
 * statement an Execute's portal was `B`ound to). Bytes are forwarded unchanged. Not for TLS: the
 * server is started with a URL without sslmode.
 */
async function startCountingProxy(targetUrl) {
  const target = new URL(targetUrl);
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(target.port || 5432);
  const counter = { total: 0, log: [], connections: 0 };
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    counter.connections++;
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    const conn = { startup: true, buffer: Buffer.alloc(0), statements: new Map(), portals: new Map(), app: '' };
    client.on('data', (chunk) => {
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
      try {
        readFrontend(conn, chunk, counter);
      } catch (err) {
        // A message this parser cannot follow: stop counting on this connection, keep forwarding.
        conn.broken = err;
      }
    });
    upstream.pipe(client);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(server.address().port);
  url.searchParams.delete('sslmode');
  return {
    url: url.toString(),
    counter,
    snapshot: () => ({ total: counter.total, logLength: counter.log.length }),
    statementsSince: (snap) => counter.log.slice(snap.logLength),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const cstring = (buf, at) => {
  const end = buf.indexOf(0, at);
  return { value: buf.toString('utf8', at, end), next: end + 1 };
};

function readFrontend(conn, chunk, counter) {
  if (conn.broken) return;
  conn.buffer = conn.buffer.length ? Buffer.concat([conn.buffer, chunk]) : chunk;
  let buf = conn.buffer;
  for (;;) {
    if (conn.startup) {
      // Untyped messages: SSLRequest / GSSENCRequest (then another), a CancelRequest, or the
      // StartupMessage (protocol 3.0), after which every message has a type byte.
      if (buf.length < 8) break;
      const len = buf.readInt32BE(0);
      if (buf.length < len) break;
      const code = buf.readInt32BE(4);
      if (code === 196608) {
        conn.startup = false;
        const parts = buf.toString('utf8', 8, len - 1).split('\0');
        for (let i = 0; i + 1 < parts.length; i += 2) if (parts[i] === 'application_name') conn.app = parts[i + 1];
      } else if (code !== 80877103 && code !== 80877104) {
        conn.broken = new Error(`untyped message ${code}`);
      }
      buf = buf.subarray(len);
      if (conn.broken) break;
      continue;
    }
    if (buf.length < 5) break;
    const type = String.fromCharCode(buf[0]);
    const len = buf.readInt32BE(1);
    if (buf.length < 1 + len) break;
    const body = buf.subarray(5, 1 + len);
    if (type === 'Q') {
      counter.total++;
      counter.log.push({ app: conn.app, text: cstring(body, 0).value });
    } else if (type === 'P') {
      const name = cstring(body, 0);
      conn.statements.set(name.value, cstring(body, name.next).value);
    } else if (type === 'B') {
      const portal = cstring(body, 0);
      conn.portals.set(portal.value, conn.statements.get(cstring(body, portal.next).value) ?? '(unknown prepared statement)');
    } else if (type === 'E') {
      counter.total++;
      counter.log.push({ app: conn.app, text: conn.portals.get(cstring(body, 0).value) ?? '(unknown portal)' });
    }
    buf = buf.subarray(1 + len);
  }
  conn.buffer = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
}

/**
 * Counting with pg_stat_statements (top-level statements of the bench database, the counter's
 * own reads left out), or undefined when the server has not loaded it.
 */
async function pgStatStatementsCounter(dbUrl) {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    // In a transaction: an extension the server cannot use (not in shared_preload_libraries)
    // is not left behind.
    await client.query('BEGIN');
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    await client.end().catch(() => {});
    return { unavailable: err.message };
  }
  const read = async () =>
    new Map(
      (
        await client.query(
          `SELECT queryid::text AS id, calls::float8 AS calls, query FROM pg_stat_statements
            WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'`,
        )
      ).rows.map((r) => [r.id, r]),
    );
  return {
    async snapshot() {
      const stats = await read();
      return { stats, total: [...stats.values()].reduce((s, r) => s + r.calls, 0) };
    },
    async statementsSince(snap) {
      const now = await read();
      const out = [];
      for (const [id, r] of now) for (let i = 0; i < r.calls - (snap.stats.get(id)?.calls ?? 0); i++) out.push({ app: '', text: r.query });
      return out;
    },
    close: () => client.end().catch(() => {}),
  };
}

/** The request log's deferred, batched write (server/src/http/request-log.ts), counted apart. */
const REQUEST_LOG = /^\s*INSERT INTO request_logs\b/i;
const REQUEST_LOG_FLUSH_MS = 250;

const oneLine = (text, width = 150) => {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > width ? `${s.slice(0, width - 1)}…` : s;
};

/**
 * Starts a server on `db` (through the proxy, or directly with pg_stat_statements), then:
 * a few requests of each route, not counted (pool connections opened, statements prepared,
 * caches filled); an idle window (BENCH_ROUND_TRIP_IDLE_SECONDS) that gives the background
 * statements of an idle server (job polling, the request log flush, outbox polling, listener
 * heartbeats): their rate and their texts; then `runs` requests per route one at a time, each
 * counted from just before it until its request log row has been written (FLUSH_MS after its
 * answer). A request's count leaves out the statements whose text the idle window saw (they are
 * printed) and the request log's INSERT (counted apart: batched, at most one every 250 ms for
 * all requests); the raw mean minus the idle rate is printed as well.
 */
async function countRoundTrips({ db, dataDir, routes, runs, mode, idleSeconds }) {
  let counter;
  let method;
  let databaseUrl = db.url;
  if (mode !== 'proxy') {
    const pgss = await pgStatStatementsCounter(db.url);
    if (!pgss.unavailable) {
      counter = pgss;
      method = 'pg_stat_statements (calls of top-level statements in the bench database)';
    } else if (mode === 'pg_stat_statements') {
      throw new Error(`BENCH_ROUND_TRIP_COUNTER=pg_stat_statements, but it is not usable: ${pgss.unavailable}`);
    } else {
      method = `a TCP proxy between server and PostgreSQL counting Q and E frontend messages (pg_stat_statements not usable: ${oneLine(pgss.unavailable, 120)})`;
    }
  } else method = 'a TCP proxy between server and PostgreSQL counting Q and E frontend messages (BENCH_ROUND_TRIP_COUNTER=proxy)';
  let proxy;
  if (!counter) {
    proxy = await startCountingProxy(db.url);
    counter = proxy;
    databaseUrl = proxy.url;
  }
  let server;
  try {
    // Rendering's own statements: no answer comes from the response cache.
    server = await startServer({ databaseUrl, dataDir, variantEnv: CACHE_OFF_ENV });
    // The request log's INSERT follows a request by FLUSH_MS (server/src/http/request-log.ts):
    // the window waits for it, so that everything a request causes is counted in its own.
    const settle = REQUEST_LOG_FLUSH_MS + 100;
    const once = async (r) => {
      const res = await fetch(`${server.base}${r.path()}`, { headers: r.headers });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${r.label}: HTTP ${res.status} while counting round trips: ${text.slice(0, 300)}`);
    };
    for (let i = 0; i < 5; i++) for (const r of routes) await once(r);
    await sleep(settle);

    const idleMs = idleSeconds * 1000;
    const idleBefore = await counter.snapshot();
    await sleep(idleMs);
    const idleAfter = await counter.snapshot();
    const idleStatements = idleAfter.total - idleBefore.total;
    const idleSeen = await counter.statementsSince(idleBefore);
    const background = new Map();
    for (const s of idleSeen) if (!REQUEST_LOG.test(s.text)) background.set(s.text, (background.get(s.text) ?? 0) + 1);
    const idlePerMs = idleStatements / idleMs;

    const results = [];
    for (const r of routes) {
      const raw = [];
      const counts = [];
      const logWrites = [];
      const windows = [];
      const excluded = new Map();
      const perRequest = [];
      for (let i = 0; i < runs; i++) {
        const before = await counter.snapshot();
        const t = performance.now();
        await once(r);
        await sleep(settle);
        const after = await counter.snapshot();
        windows.push(performance.now() - t);
        const seen = await counter.statementsSince(before);
        raw.push(after.total - before.total);
        const own = seen.filter((s) => !background.has(s.text) && !REQUEST_LOG.test(s.text));
        for (const s of seen) if (background.has(s.text)) excluded.set(s.text, (excluded.get(s.text) ?? 0) + 1);
        counts.push(own.length);
        perRequest.push(own);
        logWrites.push(seen.filter((s) => REQUEST_LOG.test(s.text)).length);
      }
      const freq = new Map();
      for (const c of counts) freq.set(c, (freq.get(c) ?? 0) + 1);
      const modal = [...freq.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
      const sorted = [...counts].sort((a, b) => a - b);
      // One request with the usual count, and what the others ran that it did not.
      const statements = perRequest.find((own) => own.length === modal);
      const usual = new Set(statements.map((x) => x.text));
      const odd = perRequest.filter((own) => own.length !== modal).flatMap((own) => own.filter((x) => !usual.has(x.text)));
      const meanRaw = raw.reduce((s, x) => s + x, 0) / runs;
      const meanWindow = windows.reduce((s, x) => s + x, 0) / runs;
      results.push({
        route: r.route,
        label: r.label,
        perPage: r.perPage,
        counts,
        mode: modal,
        modeRuns: freq.get(modal),
        min: sorted[0],
        max: sorted[sorted.length - 1],
        meanRaw,
        corrected: meanRaw - idlePerMs * meanWindow,
        meanWindow,
        excluded,
        logWrites: logWrites.reduce((a, b) => a + b, 0),
        odd,
        statements,
      });
    }
    return { method, results, idleStatements, idleMs, background, runs, settle };
  } finally {
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the counting server did not stop within 20 s of SIGTERM and was killed');
    }
    await counter?.close();
  }
}

// ---------------------------------------------------------------------------------------------

async function runPostgres({ adminUrl, opts, count, roundTripRuns, roundTripMode, roundTripIdleSeconds, profile }) {
  const dataDir = makeTempDir('wsapi-bench-entries-');
  const db = await createDatabase(adminUrl);
  const client = new pg.Client({ connectionString: db.url, options: '-c max_parallel_workers_per_gather=0 -c random_page_cost=1.1' });
  let server;
  try {
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: { APP_ENV: 'local' } });
    await client.connect();
    const prepared = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: ENTRY_PERMISSIONS });
      const seed = await seedPostgres(server.base, ws, key, client, count);
      const shapeProblems = await shapeCheck(server.base, ws, key, client, seed, count);
      return { ws, key, seed, shapeProblems };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    const { ws, key, seed, shapeProblems } = prepared;
    console.log(
      `entries: seeded ${count.toLocaleString('en-US')} published articles (${AUTHORS_PER_ARTICLE} authors, ${TAGS_PER_ARTICLE} tags, a cover each), ` +
        `${PERSONS.toLocaleString('en-US')} persons, ${TAGS.toLocaleString('en-US')} tags and ${FILES} files on PostgreSQL in ${seconds(seed.totalMs)} ` +
        `(${FILES} files, ${API_CREATED.person} persons, ${API_CREATED.tag} tags and ${API_CREATED.article} articles through the API ${seconds(seed.apiMs)}; ` +
        `the rest with one INSERT per type ${seconds(seed.insertMs)}; VACUUM ANALYZE ${seconds(seed.analyzeMs)})`,
    );
    if (shapeProblems.length)
      for (const p of shapeProblems) console.log(`entries: WARNING: bulk-inserted entries do not read like API-created ones: ${p}`);
    else {
      console.log(
        'entries: a bulk-inserted article reads like an API-created one (envelope, fields, authors and tags expanded, cover a file object; rows equal column by column), and so do persons and tags (rows)',
      );
    }

    const routes = loadRoutes(server.base, ws, key, seed.articles);
    const busy = await cpuBusy();
    if (busy > 0.2) console.log(`entries: WARNING: the CPUs are ${pct(busy)} busy with other work: the next figures will be low and noisy`);
    const rows = await measureRoutes(routes, server, opts);
    const startMs = server.startMs;

    // The read and the pages of 50 and 100 again with the response cache off
    // (RESPONSE_CACHE_MB=0): what rendering itself costs, as for an answer asked for the first
    // time after a change.
    const first = await stopServer(server.child);
    if (!first.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: CACHE_OFF_ENV });
    const lastPersons = await lastPersonsPath(server.base, ws, key);
    rows.push(...(await measureRoutes(uncachedRoutes(loadRoutes(server.base, ws, key, seed.articles, lastPersons)), server, opts)));
    // The API's cache-off page of 50, for the competitor's answer to be compared with.
    const apiPage50 = await getJson(`${server.base}${listPath(ws, 50)}`, key);
    const apiBase = server.base;
    const stopped = await stopServer(server.child);
    server = undefined;
    if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    server = await startServer({ databaseUrl: db.url, dataDir, variantEnv: UNKEPT_ENV });
    rows.push(...(await measureRoutes(unkeptRoutes(loadRoutes(server.base, ws, key, seed.articles)), server, opts)));
    const unkept = await stopServer(server.child);
    server = undefined;
    if (!unkept.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');

    // The competitor: a bare node:http + pg server on the same database, the same page.
    const bare = await measureBarePages({ databaseUrl: db.url, ws, apiBase, apiPage50, opts });
    rows.push(...bare.rows);
    if (bare.problems.length)
      for (const p of bare.problems)
        console.log(`entries: WARNING: the bare node:http + pg server's page of 50 differs from the API's cache-off page of 50: ${p}`);
    else
      console.log(
        "entries: the bare node:http + pg server's page of 50 holds the API's cache-off page of 50 (the same entries in the same order; titles, author names, tag labels and covers equal)",
      );

    const profiled = profile ? await profilePage50({ db, dataDir, ws, key, articles: seed.articles, opts }) : undefined;

    // Round trips on a server of its own, with nothing else running.
    const counted = routes.filter((r) => r.route === 'read' || r.perPage);
    const roundTrips = await countRoundTrips({
      db,
      dataDir,
      routes: counted,
      runs: roundTripRuns,
      mode: roundTripMode,
      idleSeconds: roundTripIdleSeconds,
    });
    return { rows, startMs, busy, seed, roundTrips, profiled, bareProblems: bare.problems };
  } finally {
    await client.end().catch(() => {});
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    }
    // BENCH_KEEP_DATABASE=1 keeps it for EXPLAIN by hand.
    if (process.env.BENCH_KEEP_DATABASE === '1') (keepDatabase(db.name), console.log(`entries: kept ${db.url}`));
    else await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

// autocannon counts a timeout (no answer within 10 s) as an error too: a timeout is a slow server,
// any other error or a non-2xx answer means the bench itself did not work.

/** A target's word: met, not met, or none (`ok` undefined: a figure without a target). */
const targetWord = (ok) => (ok === undefined ? '(no target)' : ok ? 'met' : 'not met');
const valid = (...rows) => !rows.some((r) => failed(r) || r.timeouts > 0);

/** The targets with the defaults (response cache on), from the route table's rows. */
function cachedTargets(rows) {
  const read = rows.find((r) => r.route === 'read');
  const page50 = rows.find((r) => r.route === 'list50');
  return [
    {
      name: `read by ULID >= ${TARGETS.read.rps} req/s`,
      figure: `${read.rps.toFixed(0)} req/s`,
      ok: valid(read) && read.rps >= TARGETS.read.rps,
    },
    {
      name: `list page per_page=50 p50 < ${TARGETS.list50.p50} ms`,
      figure: `${ms(page50.p50)} ms`,
      ok: valid(page50) && page50.p50 < TARGETS.list50.p50,
    },
  ];
}

/**
 * The targets of delivery answers rendered by PostgreSQL, from the cache-off rows: the page of 50
 * against GET /health of the same run, its p50 and the server's CPU per page; the cost per
 * request (1 / req/s) of a page of 100 against a page of 50; the read's figure, without a target.
 */
function renderingTargets(rows, { bareProblems = [] } = {}) {
  const row = (route) => rows.find((r) => r.route === route);
  const [health, page50, page100, read, bare50, bare100, unkept50, unkept100] = [
    'health',
    'list50-uncached',
    'list100-uncached',
    'read-uncached',
    'bare50',
    'bare100',
    'list50-unkept',
    'list100-unkept',
  ].map(row);
  const t = TARGETS.uncached50;
  const share = page50.rps / health.rps;
  const costRatio = page50.rps / page100.rps; // (1 / rps100) / (1 / rps50)
  const bareCostRatio = bare50.rps / bare100.rps;
  const cpu = page50.cpuMsPerResponse;
  // Against the competitor (no target): ours ÷ its req/s, and the Node CPU per page of each.
  const versusBare = (ours, theirs) =>
    `${(ours.rps / theirs.rps).toFixed(2)}× its req/s (${ours.rps.toFixed(0)} vs ${theirs.rps.toFixed(0)} req/s, p50 ${ms(ours.p50)} vs ${ms(theirs.p50)} ms, ` +
    `Node CPU per page ${ms(ours.cpuMsPerResponse)} vs ${ms(theirs.cpuMsPerResponse)} ms)` +
    (valid(ours, theirs) ? '' : ' INVALID: non-2xx, errors or timeouts') +
    (bareProblems.length ? ' NOTE: the answers differ (WARNING above)' : '');
  return [
    {
      name: `cache-off page of 50 >= ${(t.healthShare * 100).toFixed(0)} % of GET /health's req/s`,
      figure: `${(share * 100).toFixed(1)} % (${page50.rps.toFixed(0)} of ${health.rps.toFixed(0)} req/s)`,
      ok: valid(page50, health) && share >= t.healthShare,
    },
    { name: `cache-off page of 50 p50 < ${t.p50} ms`, figure: `${ms(page50.p50)} ms`, ok: valid(page50) && page50.p50 < t.p50 },
    {
      name: `server (Node) CPU per cache-off page of 50 < ${t.cpuMs} ms`,
      figure:
        cpu === undefined
          ? 'not measured (no /proc)'
          : `${ms(cpu)} ms (${(page50.serverCpuMs / 1000).toFixed(2)} s of CPU over ${page50.total} responses)`,
      ok: valid(page50) && cpu < t.cpuMs,
    },
    {
      name: `cache-off page of 100 < ${TARGETS.page100Cost}× the cost per request of a page of 50`,
      figure:
        `${costRatio.toFixed(2)}× (${page100.rps.toFixed(0)} vs ${page50.rps.toFixed(0)} req/s); ` +
        `the bare node:http + pg server's: ${bareCostRatio.toFixed(2)}× (${bare100.rps.toFixed(0)} vs ${bare50.rps.toFixed(0)} req/s)`,
      ok: valid(page50, page100) && costRatio < TARGETS.page100Cost,
    },
    { name: 'cache-off single read', figure: `${read.rps.toFixed(0)} req/s, p50 ${ms(read.p50)} ms`, ok: undefined },
    { name: 'cache-off page of 50 vs a bare node:http + pg server', figure: versusBare(page50, bare50), ok: undefined },
    { name: 'cache-off page of 100 vs a bare node:http + pg server', figure: versusBare(page100, bare100), ok: undefined },
    {
      name: 'page of 50 with nothing kept (KEEP_RENDERED_ENTRIES=false) vs a bare node:http + pg server',
      figure: versusBare(unkept50, bare50),
      ok: undefined,
    },
    { name: 'page of 100 with nothing kept vs a bare node:http + pg server', figure: versusBare(unkept100, bare100), ok: undefined },
    {
      name: 'page of 100 with nothing kept, cost per request ÷ a page of 50',
      figure: `${(unkept50.rps / unkept100.rps).toFixed(2)}× (${unkept100.rps.toFixed(0)} vs ${unkept50.rps.toFixed(0)} req/s)`,
      ok: undefined,
    },
  ];
}

function reportRendering(targets, opts) {
  console.log(
    `  delivery answers rendered by PostgreSQL (response cache off, ${opts.connections} connections; CPU: the server process's utime + stime over the run ÷ its responses):`,
  );
  for (const t of targets) console.log(`    ${t.name}: ${t.figure}: ${targetWord(t.ok)}`);
}

function reportProfile({ row, times }) {
  console.log(
    `  where the server's CPU goes on the cache-off page of 50 (BENCH_PROFILE=1: a server of its own under --cpu-prof; the samples of the measured run only): ` +
      `${row.rps.toFixed(0)} req/s, p50 ${ms(row.p50)} ms, CPU ${ms(row.cpuMsPerResponse)} ms per page under the profiler; top 15 by self time ` +
      '(the time from a sample to the next, on the clock: it includes time the main thread waited for a CPU while in that function):',
  );
  for (const line of topSelfTimeLines(times, { top: 15, root })) console.log(line);
}

/** true when the page sizes cost the same number of statements. */
function reportRoundTrips(rt) {
  console.log(
    `  database round trips per request (statements PostgreSQL ran for it), counted with ${rt.method}; ` +
      `a server of its own with nothing else to do, ${rt.runs} requests per route one at a time after 5 uncounted ones, each counted until ${rt.settle} ms after its answer ` +
      `(its request log row is written ${REQUEST_LOG_FLUSH_MS} ms after it). ` +
      `An idle window of ${seconds(rt.idleMs)} saw ${rt.idleStatements} background statements (${((rt.idleStatements / rt.idleMs) * 1000).toFixed(1)}/s) of ${rt.background.size} kinds; ` +
      "statements of those kinds are left out of the requests' counts:",
  );
  const lines = tableLines(
    [
      { title: 'route', width: 88, align: 'left', value: (r) => r.label },
      { title: 'statements', width: 12, value: (r) => r.mode },
      { title: 'requests', width: 10, value: (r) => `${r.modeRuns}/${r.counts.length}` },
      { title: 'min', width: 5, value: (r) => r.min },
      { title: 'max', width: 5, value: (r) => r.max },
      { title: 'log INSERTs', width: 13, value: (r) => r.logWrites },
      { title: 'raw mean', width: 10, value: (r) => r.meanRaw.toFixed(2) },
      { title: 'raw - idle', width: 12, value: (r) => r.corrected.toFixed(2) },
      { title: 'window ms', width: 11, value: (r) => r.meanWindow.toFixed(0) },
    ],
    rt.results,
    '    ',
  );
  for (const line of lines) console.log(line);
  console.log(
    '    (statements: the count most of the requests had, background kinds and the request log INSERT left out; requests: how many had it; ' +
      'log INSERTs: request log writes in all the windows (batched: one per request only because they come one at a time); ' +
      'raw mean: every statement in the windows; raw - idle: minus the idle rate times the mean window)',
  );
  const lists = rt.results.filter((r) => r.perPage);
  const same = lists.every((r) => r.mode === lists[0].mode);
  const steady = rt.results.every((r) => r.min === r.max);
  console.log(
    `    list pages per_page=${lists.map((r) => r.perPage).join(', ')}: ${lists.map((r) => r.mode).join(', ')} statements per request: ` +
      (same ? 'the same for every page size (met)' : 'NOT the same for every page size (MISSED)') +
      (steady
        ? '; every counted request had exactly its count'
        : '; NOTE: some requests had another count (min/max): a background statement of a kind the idle window did not see?'),
  );
  for (const r of rt.results.filter((x) => x.odd.length)) {
    console.log(`    statements in the requests of ${r.label} with another count than ${r.mode}, not run by the usual one:`);
    r.odd.forEach((s, i) => console.log(`      ${i + 1}. ${s.app ? `[${s.app}] ` : ''}${oneLine(s.text)}`));
  }
  for (const r of rt.results.filter((x) => x.route === 'read' || x.perPage === 50)) {
    console.log(`    the statements of one ${r.label} request:`);
    r.statements.forEach((s, i) => console.log(`      ${i + 1}. ${s.app ? `[${s.app}] ` : ''}${oneLine(s.text)}`));
  }
  const excluded = new Map();
  for (const r of rt.results) for (const [text, n] of r.excluded) excluded.set(text, (excluded.get(text) ?? 0) + n);
  console.log(`    background statements of the idle window (${rt.background.size} kinds; times seen idle / inside counted requests):`);
  for (const [text, n] of [...rt.background.entries()].sort((a, b) => b[1] - a[1]))
    console.log(`      ${n} / ${excluded.get(text) ?? 0}  ${oneLine(text, 130)}`);
  return same;
}

// ---------------------------------------------------------------------------------------------

export async function benchEntries(options = {}) {
  const env = process.env;
  const opts = {
    ...loadOptions(options, { serverWarmupSeconds: 20 }),
  };
  const count = Number(options.entries ?? env.BENCH_ENTRIES ?? 100_000);
  const roundTripRuns = Number(options.roundTripRequests ?? env.BENCH_ROUND_TRIP_REQUESTS ?? 20);
  const roundTripMode = options.roundTripCounter ?? (env.BENCH_ROUND_TRIP_COUNTER || 'auto');
  const roundTripIdleSeconds = Number(options.roundTripIdleSeconds ?? env.BENCH_ROUND_TRIP_IDLE_SECONDS ?? 10);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  const profile = options.profile ?? env.BENCH_PROFILE === '1';
  // Full pages of 100 and every article distinct from the API-created ones.
  if (!(count >= 1000)) throw new Error('BENCH_ENTRIES must be at least 1000');
  if (!(roundTripRuns >= 1)) throw new Error('BENCH_ROUND_TRIP_REQUESTS must be at least 1');
  if (!(roundTripIdleSeconds > 0)) throw new Error('BENCH_ROUND_TRIP_IDLE_SECONDS must be more than 0');
  if (!['auto', 'proxy', 'pg_stat_statements'].includes(roundTripMode))
    throw new Error(`BENCH_ROUND_TRIP_COUNTER: unknown counter "${roundTripMode}" (auto, proxy, pg_stat_statements)`);
  checkBuild('entries');

  const removeHandlers = installSignalHandlers('entries bench');
  let result;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `entries: ${opts.connections} connections, ${opts.serverWarmupSeconds} s of random reads first, then ${opts.warmupSeconds} s warm-up + ${opts.seconds} s per route; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon runs on the same machine)`,
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`entries: ${msg}: skipped (the entries bench runs on PostgreSQL only)`);
      return { result, invalid };
    }
    result = await runPostgres({ adminUrl, opts, count, roundTripRuns, roundTripMode, roundTripIdleSeconds, profile });
    printRouteTable(
      `entries on PostgreSQL server, ${count.toLocaleString('en-US')} articles, APP_ENV=local, ${opts.connections} connections (server up in ${seconds(result.startMs)}; CPUs ${pct(result.busy)} busy before the run):`,
      result.rows,
      88,
    );
    const list = Object.fromEntries(result.rows.filter((r) => r.perPage).map((r) => [r.perPage, r]));
    console.log(
      `  list pages, first page p50: ${PAGE_SIZES.map((n) => `per_page=${n} ${ms(list[n].p50)} ms`).join(', ')} (per entry: ${PAGE_SIZES.map((n) => `${ms(list[n].p50 / n)} ms`).join(', ')})`,
    );
    const rendering = renderingTargets(result.rows, { bareProblems: result.bareProblems });
    reportRendering(rendering, opts);
    if (result.profiled) reportProfile(result.profiled);
    result.sameRoundTrips = reportRoundTrips(result.roundTrips);
    if (result.rows.some(failed) || (result.profiled && failed(result.profiled.row))) invalid = true;
    const targets = [
      ...cachedTargets(result.rows),
      {
        name: 'the same number of database round trips for per_page=10, 50 and 100',
        figure: result.roundTrips.results
          .filter((r) => r.perPage)
          .map((r) => r.mode)
          .join(', '),
        ok: result.sameRoundTrips,
      },
      ...rendering,
    ];
    console.log(
      `entries targets (PostgreSQL, ${count.toLocaleString('en-US')} articles): ${targets.map((t) => `${t.name} (${t.figure}): ${targetWord(t.ok)}`).join('; ')}`,
    );
    console.log(`entries: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('entries: WARNING: some responses were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, invalid };
}

await runStandalone(import.meta, 'entries', benchEntries);
