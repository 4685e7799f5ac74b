// Delivery at the scale of real content models (issue 37's targets): the anchor's questions asked
// of a workspace that holds only the anchor's two content types and of one that holds them beside
// 100 more, on the built server (dist/) with APP_ENV=local (rate limits off), the response cache
// off (RESPONSE_CACHE_MB=0: the API computes every answer) and LOG_LEVEL=error (a 5xx's cause, the
// database's message, is read from the server's log and printed), on a PostgreSQL server (a
// throwaway database), both workspaces in one database behind one server, in one run:
//
// Workspace A `anchor`, bucket general: the anchor bench's model (anchor.mjs CONTENT_TYPES):
// `authors` (name text; 1,000 entries, as in anchor.mjs, so that its rows, its bulk insert
// BULK_SQL and its request shapes are reused unchanged) and `articles` (title text, amount number,
// published_at date with format datetime, state text, author single relation -> authors;
// BENCH_MODEL_ARTICLES entries, default 20,000), all published, the anchor's rows (article g:
// title `title g`, amount (g mod 997) * 1.25 + 0.1, published_at 2024-01-01T00:00:00Z + 5 g
// minutes, state `draft` when g is divisible by 3 else `published`, author `author <1 + g mod
// 1000>`): 3 authors and 5 articles through the API, the rest with one INSERT per type as the API
// writes them (support.mjs typedBulkInsert).
// Workspace B `large`, bucket general: the same authors and articles (the same rows), and 100 more
// content types created through the management API (the OpenAPI's limits: at most 200 fields per
// type, at most 50 relation targets, targets must exist in the bucket, so each type targets
// only types created before it):
//   `wide`      200 fields cycling through the kinds text (the first named `title`, its
//               name_field), number, date (format date), date (format datetime), boolean, json,
//               text multiple, single relation and multiple relation (`<kind>_<i>`: title,
//               number_1, date_1, datetime_1, boolean_1, json_1, tags_1, ref_1, refs_1, text_2,
//               ...; 23 text, 23 number, 22 of each other kind); relation fields with an odd index
//               target `authors`, the even ones `articles`.
//   `type_01` .. `type_99`  30 fields each: title, text_2..4; number_1..4; date_1..4 (date);
//               datetime_1..3; boolean_1..3; json_1..3; tags_1..3 (text multiple); `author`
//               (single -> authors), `parent` (single -> the type before: articles for type_01,
//               type_<k-1> after), `link` (single -> authors and that type), `coauthors`
//               (multiple -> authors), `related` (multiple -> the type before), `mixed` (multiple
//               -> authors and the type before).
// 20 entries of each, published, every field with a value, every relation pointing at existing
// entries (two for a multiple relation, one for entry 1 of a type when the type before is one of
// the 100): entry 1 of each type through the API (POST /api/v1/{ws}/entries; a 5xx answer is
// reported and that entry bulk-inserted instead), entries 2..20 with one INSERT per type. Then
// checks of the stored rows (a bulk-inserted entry's row equals an API-created one's column by
// column, the published count of every type, and every column of every type's typed storage
// filled for every entry) and VACUUM ANALYZE.
//
// Then, in this order:
//  1. Quick probe of the 200-field type in B (target: all 200): GET /api/v1/large/entries/{id}
//     (entry 1), GET /api/v1/large/entries?contentBucket=general&contentType=wide&per_page=20, and
//     POST /api/v1/large/general/entries/query {type wide, filter {number_1 gt 0}, fields: its first
//     64 fields (every kind; relations as bare IDs), limit 20}: status, time, size, and the answer's
//     message when not 200 with the error the server logged. The bench goes on whatever they answer.
//  2. The four questions (the anchor's request shapes, imported from anchor.mjs), checked in both
//     workspaces before the load (200 and the anchor's answer shapes; a failure is reported, not
//     fatal), and A's and B's answers compared (the same titles, amounts, author names and month
//     figures: the articles are the same rows):
//       read by id      GET /api/v1/{ws}/entries/{random article ULID} (author rendered)
//       v1 list of 50   GET /api/v1/{ws}/entries?contentBucket=general&contentType=articles&per_page=50
//       filtered page   POST /api/v1/{ws}/general/entries/query type articles, filter {state eq
//                       published, amount gt 100}, sort published_at desc, limit 20, fields [@id,
//                       title, amount, author.name]
//       monthly aggregate  the same route: count, sum [amount], avg [amount], groupBy
//                       [{published_at, interval month, timezone UTC}], limit 100
//  3. The largest statement each request sends: a second server on the same database (the probe
//     server, its own DATA_DIR) reaches PostgreSQL through a TCP proxy in this process that reads
//     the frontend messages: every statement executed (a Bind ('B') of a statement parsed ('P')
//     before on that connection, or by name: node-postgres skips the Parse of a name it already
//     prepared; or a simple Query ('Q')) is counted under the question being asked, with the
//     length of its text in bytes (the server's background statements meanwhile, recognized by
//     their tables, counted apart). 3 requests of each question in each workspace, one at a time;
//     the wide probe's 3 requests; and the first 20 distinct maximal queries below (their count of
//     distinct statement texts too). Printed per question: the largest, statements per request,
//     and each distinct text (bytes, times sent, how it starts). pg_stat_statements needs
//     shared_preload_libraries (a server restart; this machine's PostgreSQL 15 does not load it)
//     and pg_stat_activity.query is cut at track_activity_query_size (1024 bytes by default, as
//     here), so a proxy is the reliable reader.
//  4. Load: BENCH_SERVER_WARMUP_SECONDS (default 20) split over the four questions in A and in B
//     (at least 1 s each, 10 connections: every pool connection prepares every statement), not
//     counted; then BENCH_MODEL_ROUNDS (default 2) rounds, each the four questions in A, then
//     the four in B (autocannon, BENCH_CONNECTIONS = 10 connections, a warm-up not counted, then
//     BENCH_SECONDS each). After the warm-up and after each workspace's part of a round, the
//     memory of the server's PostgreSQL backends (pg_stat_activity: its connections carry
//     application_name `wsbench-main` in DATABASE_URL; the probe server's `wsbench-probe`):
//     /proc/<pid>/status VmRSS, /proc/<pid>/smaps_rollup Pss_Anon (the backend's own heap: caches,
//     plans; shared buffers are shared memory, not anonymous) and Private_Dirty, max and sum.
//  5. Distinct maximal queries (workspace B, the main server, one key, 10 at a time): 200
//     (BENCH_MODEL_DISTINCT_QUERIES) structured queries on type_99, each {filter: {$or: [99
//     conditions]}, fields: 40 paths, limit 20}: the conditions over relation paths up to 3 levels
//     (author.name eq "author N", parent.author.name, parent.parent.author.name, parent.title,
//     parent.parent.title, startsWith, in, parent.number_1 gt, parent.parent.date_1 lt), their
//     order and the 40 fields (of 44: own fields, metadata, relation paths) rotated per query so
//     that every query is a statement text of its own ($or + 99 operators = 100 filter items, the
//     spec's limit). The probe server answers the first first: a 4xx is printed and the query
//     shrunk (10 conditions fewer) until accepted; it then answers the first 20 (statement sizes).
//     On the measured server: first, 1 s of the filtered page in B at 10
//     connections (so that all 10 pool connections exist and are warm); then the backends' memory
//     before, after the first query alone, at its peak (the largest Pss_Anon sum of samples every
//     0.5 s while the rest run: the pool closes connections idle for 10 s, so fewer may be left at
//     the end) and after all of them; target (the issue's: no backend grows): each backend's
//     Pss_Anon grows by at most 64 MB beyond what it held after the first (its largest of every
//     sample and the end; a backend opened since, beyond its smallest); the sum's growth is printed
//     beside it. A query that fails (e.g. 422 for
//     the 30 s statement timeout) is counted by status and its message printed.
//  6. Each question in B at 1 connection (a warm-up, then BENCH_SECONDS): PostgreSQL's figure for
//     the embedded comparison; the backends' memory once more.
//
// The embedded database (PGlite, the server's default without DATABASE_URL; data in
// DATA_DIR/pgdata; BENCH_MODEL_EMBEDDED=0 skips it): workspace B's model with
// BENCH_MODEL_EMBEDDED_ARTICLES articles (default 5,000), seeded the same way (the API steps on
// the server, the bulk inserts, the checks and ANALYZE through PGlite in this process with the
// server stopped: support.mjs embeddedDatabase), on a server with APP_ENV=local and
// RESPONSE_CACHE_MB=0; the wide probe (statuses, for information), the four questions checked,
// BENCH_SERVER_WARMUP_SECONDS of the filtered page at 1 connection (not counted), then each
// question at 1 connection; target: embedded p50 <= 3x PostgreSQL's p50 at 1 connection (with
// fewer articles than on PostgreSQL unless BENCH_MODEL_EMBEDDED_ARTICLES says otherwise: printed).
// Then the same distinct maximal queries there (one key, 10 at a time), with the server process's
// RSS (PGlite keeps its plans in the server's own heap) before, after the first, at its peak
// (every 0.5 s) and after all; target: it grows by at most 64 MB beyond what the first left.
//
// Prints: the wide probe; per workspace the load table (req/s, p50, p99, non-2xx); the summary
// (question, A req/s, B req/s, B/A (2xx answers per second; target >= 0.8), A p50, B p50, A and B
// non-2xx, met/MISSED); the backends' memory; the largest statement per question and workspace
// (bytes, statements per request); the distinct maximal queries; the embedded comparison; and a
// line of the targets with met/MISSED each. Without PostgreSQL nothing runs.
//
// Standalone: `node scripts/bench/model-scale.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_SECONDS=10          measured seconds per run   BENCH_WARMUP_SECONDS=2 (per run, not counted)
//   BENCH_SERVER_WARMUP_SECONDS=20  of the filtered page before the first round (and on the embedded server)
//   BENCH_CONNECTIONS=10      concurrent connections of the rounds
//   BENCH_MODEL_ROUNDS=2      rounds (each: A's four questions, then B's)
//   BENCH_MODEL_ARTICLES=20000  articles in each workspace (at least 100; authors: 1000)
//   BENCH_MODEL_DISTINCT_QUERIES=200  distinct maximal queries of step 5
//   BENCH_MODEL_EMBEDDED=1    0 skips the embedded database
//   BENCH_MODEL_EMBEDDED_ARTICLES=5000  articles on the embedded database (at least 100)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where the throwaway database
//                             (wsbench_<random>) is created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed)
//   BENCH_LOG_LEVEL=error     the servers' LOG_LEVEL (their output is shown when the set-up fails)
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import {
  ABILITIES,
  API_CREATED,
  AUTHORS,
  BUCKET,
  BULK_SQL,
  CONTENT_TYPES,
  LIST_SIZE,
  PAGE_QUERY,
  PERMISSIONS,
  aggregateQuery,
  aggregateShapeOk,
  articleFields,
  authorFields,
  entriesPath,
  listPath,
  listShapeOk,
  pageShapeOk,
  queryPath,
  readOk,
} from './anchor.mjs';
import {
  DEFAULT_PG_URL,
  SERVER_SESSION_OPTIONS,
  bulkMatchesApi,
  call,
  checkBuild,
  cleanupAsync,
  combineRounds,
  cpuBusy,
  createContentTypes,
  createDatabase,
  dropDatabase,
  embeddedDatabase,
  failed,
  installSignalHandlers,
  keepDatabase,
  loadOptions,
  makeTempDir,
  measure,
  measureSingle,
  ms,
  pct,
  postgresReachable,
  printRouteTable,
  rate,
  removeTempDir,
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
} from './support.mjs';

const WS_A = 'anchor';
const WS_B = 'large';
const MAIN_APP = 'wsbench-main'; // application_name of the measured server's connections
const PROBE_APP = 'wsbench-probe'; // the probe server's (through the statement proxy)
const BENCH_APP = 'wsbench-model-bench'; // this process's own
const WIDE_LIST_SIZE = 20;
const WIDE_QUERY_FIELDS = 64;
const EXTRA_TYPES = 99;
const EXTRA_ENTRIES = 20;
const WIDE_FIELDS = 200;
const PROBE_REQUESTS = 3; // requests per question through the probe server
const SETTLE_MS = 300; // after a question's probe requests, before the next label: statements a request sends after its answer count as its own
const PROBE_MAXIMAL = 20; // distinct maximal queries through the probe server (their sizes; all of them on the measured server)
const MB = 1024; // kB per MB
const TARGETS = { ratio: 0.8, embedded: 3, memoryGrowthMb: 64 };

// ---------------------------------------------------------------------------------------------
// The model of workspace B beyond the anchor's two types

const KINDS = ['text', 'number', 'date', 'datetime', 'boolean', 'json', 'tags', 'ref', 'refs'];

/** A field's definition for the management API from its spec `{name, kind, targets}`. */
function fieldDef({ name, kind, targets }) {
  switch (kind) {
    case 'text':
      return { name, type: 'text' };
    case 'number':
      return { name, type: 'number' };
    case 'date':
      return { name, type: 'date', format: 'date' };
    case 'datetime':
      return { name, type: 'date', format: 'datetime' };
    case 'boolean':
      return { name, type: 'boolean' };
    case 'json':
      return { name, type: 'json' };
    case 'tags':
      return { name, type: 'text', multiple: true };
    case 'ref':
      return { name, type: 'relation', targets, multiple: false };
    case 'refs':
      return { name, type: 'relation', targets, multiple: true };
  }
  throw new Error(`unknown kind ${kind}`);
}

const typeName = (k) => `type_${String(k).padStart(2, '0')}`;
const prevOf = (k) => (k === 1 ? 'articles' : typeName(k - 1));

/** The 200-field type: the kinds in turn, relations alternately to authors and articles. */
function wideSpecs() {
  const counts = {};
  const specs = [];
  for (let i = 0; i < WIDE_FIELDS; i++) {
    const kind = KINDS[i % KINDS.length];
    const j = (counts[kind] = (counts[kind] ?? 0) + 1);
    const name = kind === 'text' && j === 1 ? 'title' : `${kind}_${j}`;
    specs.push({ name, kind, targets: kind === 'ref' || kind === 'refs' ? [j % 2 ? 'authors' : 'articles'] : undefined });
  }
  return specs;
}

/** type_<k>: 30 fields, 24 scalar ones and 6 relations (authors, the type before, both). */
function extraSpecs(k) {
  const prev = prevOf(k);
  const specs = [{ name: 'title', kind: 'text' }];
  for (let j = 2; j <= 4; j++) specs.push({ name: `text_${j}`, kind: 'text' });
  for (let j = 1; j <= 4; j++) specs.push({ name: `number_${j}`, kind: 'number' });
  for (let j = 1; j <= 4; j++) specs.push({ name: `date_${j}`, kind: 'date' });
  for (const kind of ['datetime', 'boolean', 'json', 'tags']) for (let j = 1; j <= 3; j++) specs.push({ name: `${kind}_${j}`, kind });
  specs.push(
    { name: 'author', kind: 'ref', targets: ['authors'] },
    { name: 'parent', kind: 'ref', targets: [prev] },
    { name: 'link', kind: 'ref', targets: ['authors', prev] },
    { name: 'coauthors', kind: 'refs', targets: ['authors'] },
    { name: 'related', kind: 'refs', targets: [prev] },
    { name: 'mixed', kind: 'refs', targets: ['authors', prev] },
  );
  return specs;
}

/** The 100 types in creation order: `{name, specs, def}` (def: the management API's body). */
function extraTypes() {
  const types = [{ name: 'wide', specs: wideSpecs() }];
  for (let k = 1; k <= EXTRA_TYPES; k++) types.push({ name: typeName(k), specs: extraSpecs(k) });
  for (const t of types) t.def = { name: t.name, name_field: 'title', fields: t.specs.map(fieldDef) };
  return types;
}

const pad2 = (x) => String(x).padStart(2, '0');

/**
 * Entry n (1..20) of a type (`t`, index `ti` in creation order): every field a value. `pick(target,
 * s)` answers the ULID of an existing entry of `target` (s: a seed), or undefined (the field is
 * then left out: entry 1 through the API before the bulk inserts).
 */
function extraFields(t, ti, n, pick) {
  const fields = {};
  t.specs.forEach((spec, i) => {
    const j = i + 1;
    let v;
    switch (spec.kind) {
      case 'text':
        v = spec.name === 'title' ? `${t.name} entry ${n}` : `${spec.name} of ${t.name} entry ${n}`;
        break;
      case 'number':
        v = n * 100 + j + 0.25;
        break;
      case 'date':
        v = `2024-${pad2(1 + ((ti + j) % 12))}-${pad2(1 + ((n + j) % 28))}`;
        break;
      case 'datetime':
        v = `2024-${pad2(1 + ((ti + j) % 12))}-${pad2(1 + ((n + j) % 28))}T${pad2((n + j) % 24)}:${pad2((7 * j) % 60)}:${pad2(n % 60)}Z`;
        break;
      case 'boolean':
        v = (n + j) % 2 === 0;
        break;
      case 'json':
        v = { n, field: spec.name, nested: { type: t.name, list: [j, n] } };
        break;
      case 'tags':
        v = [`tag ${n % 5}`, `tag ${j}`];
        break;
      case 'ref': {
        const target = spec.targets[(n + j) % spec.targets.length];
        v = pick(target, n * 31 + j);
        break;
      }
      case 'refs': {
        // Two references: two entries of the one target type, or one of each of the two.
        const s = n * 17 + j;
        const ids =
          spec.targets.length === 1
            ? [pick(spec.targets[0], s), pick(spec.targets[0], s + 7)]
            : spec.targets.map((target, x) => pick(target, s + x));
        v = [...new Set(ids.filter(Boolean))];
        if (!v.length) v = undefined;
        break;
      }
    }
    if (v !== undefined) fields[spec.name] = v;
  });
  return fields;
}

// ---------------------------------------------------------------------------------------------
// The questions (the request shapes, paths and answer checks are anchor.mjs's)

/** The monthly aggregate the questions ask: in UTC. */
const AGGREGATE_QUERY = aggregateQuery('UTC');

const QUESTIONS = [
  ['read', 'read by id (author rendered)'],
  ['list', `v1 list of ${LIST_SIZE}`],
  ['page', 'filtered page'],
  ['aggregate', 'monthly aggregate'],
];
const questionName = (q) => QUESTIONS.find(([k]) => k === q)?.[1] ?? q;

/** The four questions of workspace `ws` as autocannon routes (measure's `url`, `headers`, `request`). */
function questionRoutes(base, ws, key, articleIds) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const getHeaders = { Authorization: `Bearer ${key}` };
  const randomPath = () => `${entriesPath(ws)}/${articleIds[Math.floor(Math.random() * articleIds.length)]}`;
  // A question POSTed to the query route (`query`: its body).
  const queryRoute = (route, name, query, check) => ({
    route,
    ws,
    label: `${ws}: ${name}: POST ${queryPath(ws)}`,
    url: `${base}${queryPath(ws)}`,
    headers,
    request: { method: 'POST', body: JSON.stringify(query) },
    sample: () => ({ path: queryPath(ws), method: 'POST', body: JSON.stringify(query) }),
    check,
  });
  return [
    {
      route: 'read',
      ws,
      label: `${ws}: read by id: GET ${entriesPath(ws)}/{random article ULID}`,
      url: `${base}${randomPath()}`,
      headers: getHeaders,
      request: { requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: randomPath() }) }] },
      sample: () => ({ path: randomPath(), method: 'GET' }),
      check: readOk,
    },
    {
      route: 'list',
      ws,
      label: `${ws}: v1 list of ${LIST_SIZE}: GET ${listPath(ws)}`,
      url: `${base}${listPath(ws)}`,
      headers: getHeaders,
      sample: () => ({ path: listPath(ws), method: 'GET' }),
      check: listShapeOk,
    },
    queryRoute('page', 'filtered page', PAGE_QUERY, pageShapeOk),
    queryRoute('aggregate', 'monthly aggregate', AGGREGATE_QUERY, aggregateShapeOk),
  ];
}

/** One request: status, time, size, the parsed body (when JSON) and its message. */
async function ask(base, key, { path: p, method = 'GET', body }) {
  const started = performance.now();
  try {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body,
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {}
    const firstError = json?.errors && Object.entries(json.errors)[0];
    const message =
      res.status === 200
        ? undefined
        : `${json?.message ?? text.slice(0, 300)}${firstError ? ` (${firstError[0]}: ${[].concat(firstError[1]).join('; ')})` : ''}`;
    return { status: res.status, ms: performance.now() - started, bytes: Buffer.byteLength(text), json, message };
  } catch (err) {
    return { status: 0, ms: performance.now() - started, bytes: 0, message: String(err.message ?? err) };
  }
}

/** Each route's sample request: 200 and the shape the anchor expects (answers the problems; never throws). */
async function checkQuestions(server, key, routes) {
  const problems = [];
  const answers = {};
  for (const r of routes) {
    const { result: res, errors } = await serverErrors(server.child, () => ask(server.base, key, r.sample()));
    if (res.status !== 200)
      problems.push(`${r.label}: HTTP ${res.status} ${res.message}${errors.length ? ` (the server logged: ${errors[0]})` : ''}`);
    else if (!r.check(res.json)) problems.push(`${r.label}: unexpected answer ${JSON.stringify(res.json).slice(0, 600)}`);
    answers[r.route] = res.json;
  }
  return { problems, answers };
}

/** A's and B's answers hold the same rows (their ULIDs differ): the page, the month figures, the v1 list's articles. */
function sameAnswers(a, b) {
  const diffs = [];
  const page = (x) => x?.data?.map((r) => [r.title, r.amount, r.author?.name]);
  const list = (x) =>
    x?.data?.map((r) => [r.fields?.title, r.fields?.amount, r.fields?.published_at, r.fields?.state, r.fields?.author?.fields?.name]);
  if (!isDeepStrictEqual(page(a.page), page(b.page))) diffs.push('filtered page');
  if (!isDeepStrictEqual(a.aggregate?.data, b.aggregate?.data)) diffs.push('monthly aggregate');
  if (!isDeepStrictEqual(list(a.list), list(b.list))) diffs.push('v1 list');
  return diffs;
}

// ---------------------------------------------------------------------------------------------
// The 200-field type's probe and the distinct maximal queries

function wideRequests(ws, wide) {
  const fields = wide.specs.slice(0, WIDE_QUERY_FIELDS).map((s) => s.name);
  const body = { type: 'wide', filter: { number_1: { gt: 0 } }, fields, limit: 20 };
  return [
    { what: 'read one wide entry by id', path: `${entriesPath(ws)}/${wide.ids[0]}`, method: 'GET' },
    { what: `v1 list of wide (per_page ${WIDE_LIST_SIZE})`, path: listPath(ws, 'wide', WIDE_LIST_SIZE), method: 'GET' },
    {
      what: `query on wide (filter number_1 gt 0, ${fields.length} fields)`,
      path: queryPath(ws),
      method: 'POST',
      body: JSON.stringify(body),
    },
  ];
}

/**
 * What a server (its child process, LOG_LEVEL=error) logs as `unhandled error` while `fn` runs:
 * the first line of each error's stack (the database's message for a failed statement).
 */
async function serverErrors(child, fn) {
  let text = '';
  const keep = (chunk) => {
    text += chunk;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  try {
    const result = await fn();
    await sleep(200); // the log line is written before the answer; let the pipe deliver it
    const errors = [];
    for (const line of text.split('\n')) {
      if (!line.includes('unhandled error')) continue;
      try {
        errors.push(String(JSON.parse(line).error ?? line).split('\n')[0]);
      } catch {
        errors.push(line.slice(0, 300));
      }
    }
    return { result, errors };
  } finally {
    child.stdout.off('data', keep);
    child.stderr.off('data', keep);
  }
}

/** The wide type's three requests, one at a time, each 5xx with the error the server logged. */
async function probeWide(server, key, ws, wide) {
  const out = [];
  for (const r of wideRequests(ws, wide)) {
    const { result, errors } = await serverErrors(server.child, () => ask(server.base, key, r));
    out.push({ ...r, ...result, logged: errors[0] });
  }
  return out;
}

function printWide(title, rows) {
  console.log(title);
  for (const r of rows) {
    console.log(
      `  ${r.what}: ${r.method} ${r.path.length > 90 ? `${r.path.slice(0, 90)}…` : r.path}: HTTP ${r.status} in ${ms(r.ms)} ms, ${r.bytes.toLocaleString('en-US')} bytes: ${r.status === 200 ? 'met' : 'MISSED'}`,
    );
    if (r.status !== 200) console.log(`    message: ${r.message}${r.logged ? `; the server logged: ${r.logged}` : ''}`);
  }
}

// Conditions of the maximal queries on type_99 (parent: type_98, its parent type_97): relation
// paths up to 3 levels, each `(v) => [path, {op: operand}]`.
const LAST = typeName(EXTRA_TYPES);
const CONDITIONS = [
  (v) => ['author.name', { eq: `author ${1 + (v % AUTHORS)}` }],
  (v) => ['parent.author.name', { eq: `author ${1 + ((v * 7) % AUTHORS)}` }],
  (v) => ['parent.parent.author.name', { eq: `author ${1 + ((v * 13) % AUTHORS)}` }],
  (v) => ['parent.title', { eq: `${typeName(EXTRA_TYPES - 1)} entry ${1 + (v % EXTRA_ENTRIES)}` }],
  (v) => ['parent.parent.title', { eq: `${typeName(EXTRA_TYPES - 2)} entry ${1 + (v % EXTRA_ENTRIES)}` }],
  (v) => ['author.name', { startsWith: `author ${1 + (v % 99)}` }],
  (v) => [
    'parent.author.name',
    { in: [`author ${1 + (v % AUTHORS)}`, `author ${1 + ((v + 1) % AUTHORS)}`, `author ${1 + ((v + 2) % AUTHORS)}`] },
  ],
  (v) => ['parent.number_1', { gt: (v % 2000) + 0.5 }],
  (v) => ['parent.parent.date_1', { lt: `2024-${pad2(1 + (v % 12))}-15` }],
  (v) => ['parent.parent.author.name', { ne: `author ${1 + (v % AUTHORS)}` }],
];
// 44 paths: own fields, metadata, relation paths (no relation with a path below it).
const FIELD_POOL = [
  ...extraSpecs(EXTRA_TYPES)
    .filter((s) => s.kind !== 'ref' && s.kind !== 'refs')
    .map((s) => s.name),
  '@id',
  '@status',
  '@updated_at',
  '@created_at',
  '@lock_version',
  'author.name',
  'author.@id',
  'parent.title',
  'parent.number_1',
  'parent.date_1',
  'parent.tags_1',
  'parent.author.name',
  'parent.parent.title',
  'parent.parent.number_2',
  'parent.parent.author.name',
  'coauthors.name',
  'related.title',
  'related.number_1',
  'link',
  'mixed',
];

/** Query q of the maximal ones: `conditions` ORed conditions, `fields` paths, both rotated by q (a statement text of its own). */
function maximalQuery(q, conditions, fields) {
  const step = 1 + (q % 7);
  const shift = Math.floor(q / 7);
  const or = Array.from({ length: conditions }, (_, j) => {
    const [p, op] = CONDITIONS[(j * step + shift) % CONDITIONS.length](q * 131 + j);
    return { [p]: op };
  });
  const start = q % FIELD_POOL.length;
  const chosen = Array.from({ length: fields }, (_, i) => FIELD_POOL[(start + i) % FIELD_POOL.length]);
  return { type: LAST, filter: { $or: or }, fields: chosen, limit: 20 };
}

/** Runs `count` tasks 10 at a time; answers the count of each status. */
async function runConcurrently(count, concurrency, task) {
  const statuses = {};
  let next = 0;
  const messages = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const r = await task(i);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status !== 200 && messages.length < 3) messages.push(`#${i}: HTTP ${r.status} ${r.message}`);
      }
    }),
  );
  return { statuses, messages };
}
const statusText = (statuses) =>
  Object.entries(statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');

// ---------------------------------------------------------------------------------------------
// The statement proxy: a TCP proxy between a server and PostgreSQL that reads the frontend's
// messages (the protocol's startup packets, then type byte + int32 length + body).

// The server's own work beside the requests (job queue, scheduler and its advisory locks, webhooks,
// outbox, request-log flushes, transaction control, connection checks): counted apart from the
// request's statements.
const BACKGROUND =
  /\bpgboss\.|\b(?:outbox_events|webhook_deliveries|task_runs|request_logs|pipeline_executions|pipeline_step_runs|email_messages|idempotency_records|clock_state|workspace_usage|audit_logs)\b|pg_(?:try_)?advisory|set_config\('statement_timeout'|^\s*(?:BEGIN|COMMIT|ROLLBACK|SELECT 1)\s*$/i;

function startStatementProxy(targetHost, targetPort) {
  const named = new Map(); // prepared statement name -> {bytes, head}
  const upstreamPorts = new Set();
  const stats = new Map(); // label -> {executed, max, head, texts: Map sha1 -> {bytes, head, count}}
  const sockets = new Set();
  let label;
  const record = (st) => {
    if (!label || !st) return;
    let s = stats.get(label);
    if (!s) stats.set(label, (s = { executed: 0, background: 0, max: 0, head: '', texts: new Map() }));
    if (st.background) {
      s.background++;
      return;
    }
    s.executed++;
    const seen = s.texts.get(st.hash);
    if (seen) seen.count++;
    else s.texts.set(st.hash, { bytes: st.bytes, head: st.head, count: 1 });
    if (st.bytes > s.max) {
      s.max = st.bytes;
      s.head = st.head;
    }
  };
  const statementOf = (body, from, to) => ({
    background: BACKGROUND.test(body.toString('utf8', from, to)),
    bytes: to - from,
    head: body.toString('utf8', from, Math.min(to, from + 160)).replace(/\s+/g, ' '),
    hash: createHash('sha1').update(body.subarray(from, to)).digest('hex'),
  });
  const server = net.createServer((down) => {
    const up = net.connect(targetPort, targetHost);
    sockets.add(down).add(up);
    up.once('connect', () => upstreamPorts.add(up.localPort));
    let buf = Buffer.alloc(0);
    let startup = true;
    let unnamed;
    const feed = (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (startup) {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          if (buf.length < len) return;
          const code = buf.readInt32BE(4);
          buf = buf.subarray(len);
          // SSLRequest, GSSENCRequest and CancelRequest come before (or instead of) the startup message.
          if (code !== 80877103 && code !== 80877104 && code !== 80877102) startup = false;
          continue;
        }
        if (buf.length < 5) return;
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) return;
        const type = String.fromCharCode(buf[0]);
        const body = buf.subarray(5, 1 + len);
        if (type === 'P') {
          const nameEnd = body.indexOf(0);
          const textEnd = body.indexOf(0, nameEnd + 1);
          const st = statementOf(body, nameEnd + 1, textEnd);
          const name = body.toString('utf8', 0, nameEnd);
          if (name) named.set(name, st);
          else unnamed = st;
        } else if (type === 'B') {
          const portalEnd = body.indexOf(0);
          const nameEnd = body.indexOf(0, portalEnd + 1);
          const name = body.toString('utf8', portalEnd + 1, nameEnd);
          record(name ? named.get(name) : unnamed);
        } else if (type === 'Q') {
          record(statementOf(body, 0, body.indexOf(0)));
        }
        buf = buf.subarray(1 + len);
      }
    };
    down.on('data', (chunk) => {
      try {
        feed(chunk);
      } catch {
        startup = false; // never stop the traffic for the reader's sake
        buf = Buffer.alloc(0);
      }
      if (!up.write(chunk)) down.pause();
    });
    up.on('drain', () => down.resume());
    up.pipe(down);
    const close = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('error', close).on('close', close);
    up.on('error', close).on('close', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        upstreamPorts,
        /** Counts what follows under `name` (undefined: counts nothing). */
        label(name) {
          label = name;
        },
        stats: (name) => stats.get(name),
        close() {
          for (const s of sockets) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      }),
    );
  });
}

const sleep = (msValue) => new Promise((r) => setTimeout(r, msValue));
const NO_STATS = { executed: 0, background: 0, max: 0, head: '', texts: new Map() };

/** 3 requests of each question in each workspace (and the wide probe) through the probe server, each counted under its label. */
async function statementSizes(proxy, probeBase, workspaces, wideRequestsB, keyB) {
  const out = [];
  for (const w of workspaces) {
    for (const r of questionRoutes(probeBase, w.ws, w.key, w.seed.articles)) {
      const label = `${w.ws} ${r.route}`;
      proxy.label(label);
      const statuses = [];
      for (let i = 0; i < PROBE_REQUESTS; i++) statuses.push((await ask(probeBase, w.key, r.sample())).status);
      await sleep(SETTLE_MS);
      proxy.label(undefined);
      out.push({ ws: w.ws, question: r.route, label, statuses, requests: PROBE_REQUESTS, ...(proxy.stats(label) ?? NO_STATS) });
    }
  }
  for (const r of wideRequestsB) {
    const label = `${WS_B} wide: ${r.what}`;
    proxy.label(label);
    const statuses = [];
    for (let i = 0; i < PROBE_REQUESTS; i++) statuses.push((await ask(probeBase, keyB, r)).status);
    await sleep(SETTLE_MS);
    proxy.label(undefined);
    out.push({ ws: WS_B, question: r.what, label, statuses, requests: PROBE_REQUESTS, ...(proxy.stats(label) ?? NO_STATS) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The backends' memory

const kbField = (text, name) => {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

/** Each backend of the server (application_name `app`): VmRSS, Pss_Anon and Private_Dirty (kB); max and sum of each. */
async function backendMemory(client, dbName, app) {
  const { rows } = await client.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND backend_type = 'client backend' ORDER BY pid`,
    [dbName, app],
  );
  const per = [];
  for (const { pid } of rows) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const smaps = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      per.push({ pid, rss: kbField(status, 'VmRSS'), pssAnon: kbField(smaps, 'Pss_Anon'), privateDirty: kbField(smaps, 'Private_Dirty') });
    } catch {
      /* the backend just exited (an idle connection closed by the pool) */
    }
  }
  const agg = (k) => ({ max: Math.max(0, ...per.map((p) => p[k] ?? 0)), sum: per.reduce((s, p) => s + (p[k] ?? 0), 0) });
  const byPid = new Map(per.map((p) => [p.pid, p.pssAnon ?? 0]));
  return { pids: per.map((p) => p.pid), n: per.length, rss: agg('rss'), pssAnon: agg('pssAnon'), privateDirty: agg('privateDirty'), byPid };
}

/**
 * Samples backendMemory every `everyMs` until `stop()`, which answers the sample with the largest
 * Pss_Anon sum (`at`: seconds after the start). The pool closes connections idle for 10 s, so at
 * the end of a run its backends may be fewer than during it.
 */
function memoryPeak(client, dbName, app, everyMs = 500) {
  let stopped = false;
  let peak;
  // Each backend's largest and smallest Pss_Anon over every sample (the per-backend growth).
  const most = new Map();
  const least = new Map();
  const started = performance.now();
  const loop = (async () => {
    while (!stopped) {
      const m = await backendMemory(client, dbName, app).catch(() => undefined);
      if (m && (!peak || m.pssAnon.sum > peak.m.pssAnon.sum)) peak = { m, at: (performance.now() - started) / 1000 };
      for (const [pid, v] of m?.byPid ?? []) {
        most.set(pid, Math.max(most.get(pid) ?? 0, v));
        least.set(pid, Math.min(least.get(pid) ?? Infinity, v));
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return peak && { ...peak, most, least };
    },
  };
}

const mb = (kb) => (kb / MB).toFixed(1);

function memoryRows(readings) {
  return tableLines(
    [
      { title: 'when', width: 52, align: 'left', value: (r) => r.when },
      { title: 'backends', width: 14, value: (r) => `${r.m.n}${r.newPids || r.gonePids ? ` (+${r.newPids}/-${r.gonePids})` : ''}` },
      { title: 'RSS max MB', width: 12, value: (r) => mb(r.m.rss.max) },
      { title: 'RSS sum MB', width: 12, value: (r) => mb(r.m.rss.sum) },
      { title: 'Pss_Anon max', width: 14, value: (r) => mb(r.m.pssAnon.max) },
      { title: 'Pss_Anon sum', width: 14, value: (r) => mb(r.m.pssAnon.sum) },
      { title: 'Priv_Dirty max', width: 16, value: (r) => mb(r.m.privateDirty.max) },
      { title: 'Priv_Dirty sum', width: 16, value: (r) => mb(r.m.privateDirty.sum) },
    ],
    readings,
  );
}

/** Readings with how many of their backends were not in the reading before, and how many of that one's are gone. */
function withNewPids(readings) {
  let prev;
  return readings.map((r) => {
    const newPids = prev ? r.m.pids.filter((p) => !prev.includes(p)).length : 0;
    const gonePids = prev ? prev.filter((p) => !r.m.pids.includes(p)).length : 0;
    prev = r.m.pids;
    return { ...r, newPids, gonePids };
  });
}

// ---------------------------------------------------------------------------------------------
// Seeding

/**
 * A workspace's rows: the anchor's authors and articles (anchor.mjs's rows and bulk insert), and
 * with `large` the 100 more types and their entries. `serve()` answers the base URL of a running
 * server before each step's API calls (the embedded database's queries stop it).
 */
async function seedWorkspace({ serve, ws, key, client, count, large, newUlid }) {
  const started = performance.now();
  const extras = large ? extraTypes() : [];
  let t = performance.now();
  const { workspaceId, types } = await createContentTypes(await serve(), client, ws, BUCKET, [
    ...CONTENT_TYPES,
    ...extras.map((x) => x.def),
  ]);
  const typesMs = performance.now() - t;
  const seedType = async (type, total, fieldsOf, bulkSql, extra) =>
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
      bulkSql,
      extra,
      newUlid,
    });
  const authors = await seedType('authors', AUTHORS, authorFields, BULK_SQL.authors, []);
  const articles = await seedType('articles', count, (g) => articleFields(g, authors.ids), BULK_SQL.articles, [authors.ids]);
  const seed = {
    ws,
    workspaceId,
    types,
    authors: authors.ids,
    articles: articles.ids,
    created: { authors: authors.created, articles: articles.created },
    extras,
    apiFailures: [],
    typesMs,
  };
  t = performance.now();
  if (large) await seedExtras({ serve, ws, key, client, seed, newUlid });
  seed.extrasMs = performance.now() - t;
  seed.totalMs = performance.now() - started;
  return seed;
}

const EXTRA_BULK_SQL = typedBulkInsert('($7::jsonb -> (n - $6::int)::int)'); // $7: the documents of entries $6.. as one JSON array

/**
 * Entry 1 of each extra type through the API (its relations: authors, articles, and entry 1 of
 * the type before when that one exists), then entries 2..20 (and any entry 1 the API could not
 * create) with one INSERT per type.
 */
async function seedExtras({ serve, ws, key, client, seed, newUlid }) {
  const idsOf = new Map([
    ['authors', seed.authors],
    ['articles', seed.articles],
  ]);
  const base = await serve();
  for (const [ti, t] of seed.extras.entries()) {
    // Through the API: only entries that exist now (entry 1 of an earlier extra type, when created).
    const pick = (target, s) => {
      const ids = idsOf.get(target);
      if (!ids?.length) return undefined;
      return target === 'authors' || target === 'articles' ? ids[s % ids.length] : ids[0];
    };
    const fields = extraFields(t, ti, 1, pick);
    const res = await fetch(`${base}/api/v1/${ws}/entries?contentBucket=${BUCKET}&contentType=${t.name}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ fields, status: 'published' }),
    });
    const text = await res.text();
    if (res.status === 201) {
      t.apiCreated = JSON.parse(text).id;
      idsOf.set(t.name, [t.apiCreated]);
    } else if (res.status >= 500) {
      let message = text.slice(0, 300);
      try {
        message = JSON.parse(text).message ?? message;
      } catch {}
      seed.apiFailures.push({ type: t.name, status: res.status, message });
    } else {
      throw new Error(`POST entry 1 of ${t.name}: HTTP ${res.status} ${text.slice(0, 500)} (the bench's values are wrong)`);
    }
  }
  // The rest: every id known before the documents are written (relations to any entry of the target types).
  for (const t of seed.extras) {
    t.ids = [...(t.apiCreated ? [t.apiCreated] : [newUlid()]), ...Array.from({ length: EXTRA_ENTRIES - 1 }, () => newUlid())];
    idsOf.set(t.name, t.ids);
  }
  for (const [ti, t] of seed.extras.entries()) {
    const pick = (target, s) => idsOf.get(target)[s % idsOf.get(target).length];
    const first = t.apiCreated ? 2 : 1;
    const docs = [];
    for (let n = first; n <= EXTRA_ENTRIES; n++) docs.push(extraFields(t, ti, n, pick));
    const type = seed.types.get(t.name);
    await client.query(EXTRA_BULK_SQL, [
      seed.workspaceId,
      type.bucket_id,
      type.id,
      type.name,
      t.ids.slice(first - 1),
      first,
      JSON.stringify(docs),
    ]);
  }
}

/** The stored rows: bulk-inserted rows like API-created ones, the published counts, every typed column filled. */
async function storedProblems(client, seed, count) {
  const pairs = [
    ['authors', seed.created.authors[0].id, seed.authors[AUTHORS - 1]],
    ['articles', seed.created.articles[0].id, seed.articles[count - 1]],
  ];
  // The 200-field type, the first and the last of the 30-field ones (when the API created their entry 1).
  for (const t of seed.extras)
    if (t.apiCreated && ['wide', typeName(1), LAST].includes(t.name)) pairs.push([t.name, t.apiCreated, t.ids[EXTRA_ENTRIES - 1]]);
  const expected = { authors: AUTHORS, articles: count, ...Object.fromEntries(seed.extras.map((t) => [t.name, EXTRA_ENTRIES])) };
  const problems = await bulkMatchesApi(client, seed.workspaceId, pairs, expected);
  for (const t of seed.extras) {
    const type = seed.types.get(t.name);
    const { rows: defs } = await client.query('SELECT id, name FROM field_definitions WHERE content_type_id = $1 ORDER BY position', [
      type.id,
    ]);
    const [r] = (
      await client.query(
        `SELECT count(*)::int AS rows, ${defs.map((f) => `count(f${f.id})::int AS "${f.name}"`).join(', ')} FROM typed_${type.id} WHERE live AND locale = 'en-US'`,
      )
    ).rows;
    const short = Object.entries(r).filter(([, v]) => v !== EXTRA_ENTRIES);
    if (short.length) problems.push(`typed_${type.id} (${t.name}): ${short.map(([k, v]) => `${k} ${v}`).join(', ')} of ${EXTRA_ENTRIES}`);
  }
  return { problems, pairs: pairs.length };
}

function seedLine(where, seed, count) {
  const extra = seed.extras.length
    ? `; ${seed.extras.length} more types (1 of ${WIDE_FIELDS} fields, ${EXTRA_TYPES} of 30) with ${EXTRA_ENTRIES} entries each ${seconds(seed.extrasMs)} (entry 1 of ${seed.extras.filter((t) => t.apiCreated).length} types through the API, the rest bulk)`
    : '';
  return `model-scale: ${where}: workspace ${seed.ws}: ${count.toLocaleString('en-US')} articles, ${AUTHORS.toLocaleString('en-US')} authors${extra}; ${seed.types.size} content types created in ${seconds(seed.typesMs)}; seeded in ${seconds(seed.totalMs)}`;
}

function printSeedChecks(where, seed, stored) {
  for (const f of seed.apiFailures)
    console.log(
      `model-scale: ${where}: NOTE: POST /api/v1/${seed.ws}/entries of entry 1 of ${f.type}: HTTP ${f.status} ${f.message} (bulk-inserted instead)`,
    );
  if (stored.problems.length) for (const p of stored.problems) console.log(`model-scale: ${where}: WARNING: stored rows: ${p}`);
  else
    console.log(
      `model-scale: ${where}: stored rows checked: ${stored.pairs} bulk-inserted entries equal to API-created ones column by column, every type's published count, ` +
        `every typed-storage column of the ${seed.extras.length} more types filled for every entry`,
    );
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

async function runPostgres({ adminUrl, opts, count, distinctQueries }) {
  const dataDir = makeTempDir('wsapi-bench-model-');
  const probeDir = makeTempDir('wsapi-bench-model-probe-');
  const db = await createDatabase(adminUrl);
  const withApp = (urlText, app, port) => {
    const url = new URL(urlText);
    if (port) url.port = String(port);
    url.searchParams.set('application_name', app);
    return url.toString();
  };
  const client = new pg.Client({ connectionString: withApp(db.url, BENCH_APP), options: SERVER_SESSION_OPTIONS });
  // LOG_LEVEL error: a 5xx's cause (the database's message) is read from the server's log.
  const variantEnv = { APP_ENV: 'local', RESPONSE_CACHE_MB: '0', LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error' };
  let server;
  let probe;
  let proxy;
  const r = { memory: [] };
  try {
    server = await startServer({ databaseUrl: withApp(db.url, MAIN_APP), dataDir, variantEnv });
    r.startMs = server.startMs;
    await client.connect();
    const newUlid = monotonicFactory();
    const workspaces = await (async () => {
      const out = [];
      for (const [ws, large] of [
        [WS_A, false],
        [WS_B, true],
      ]) {
        const { key } = await setup(server.base, { ws, permissions: PERMISSIONS, abilities: ABILITIES });
        const seed = await seedWorkspace({ serve: async () => server.base, ws, key, client, count, large, newUlid });
        console.log(seedLine('PostgreSQL', seed, count));
        out.push({ ws, key, seed });
      }
      const t = performance.now();
      await client.query('VACUUM (ANALYZE)');
      console.log(`model-scale: PostgreSQL: VACUUM ANALYZE ${seconds(performance.now() - t)}`);
      for (const w of out) printSeedChecks(`PostgreSQL ${w.ws}`, w.seed, await storedProblems(client, w.seed, count));
      return out;
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    const [A, B] = workspaces;
    const wide = B.seed.extras.find((t) => t.name === 'wide');

    // 1. The 200-field type, first.
    r.wide = await probeWide(server, B.key, B.ws, wide);
    printWide(`model-scale: PostgreSQL: the ${WIDE_FIELDS}-field type in ${B.ws} (target: all 200):`, r.wide);

    // 2. The questions checked, A's and B's answers compared.
    r.routes = {
      [A.ws]: questionRoutes(server.base, A.ws, A.key, A.seed.articles),
      [B.ws]: questionRoutes(server.base, B.ws, B.key, B.seed.articles),
    };
    const checked = {};
    for (const w of workspaces) {
      checked[w.ws] = await checkQuestions(server, w.key, r.routes[w.ws]);
      for (const p of checked[w.ws].problems) console.log(`model-scale: WARNING: before the load: ${p}`);
    }
    r.checkProblems = [...checked[A.ws].problems, ...checked[B.ws].problems];
    r.sameDiffs = sameAnswers(checked[A.ws].answers, checked[B.ws].answers);
    console.log(
      `model-scale: before the load: the four questions answer 200 with the anchor's shapes in both workspaces: ${r.checkProblems.length ? 'NO' : 'yes'}; ` +
        `A's and B's answers hold the same rows (page, month figures, v1 list): ${r.sameDiffs.length ? `DIFFER in ${r.sameDiffs.join(', ')}` : 'yes'}`,
    );

    // 3. Statement sizes through the probe server, and the maximal queries' accepted shape.
    proxy = await startStatementProxy(new URL(db.url).hostname, Number(new URL(db.url).port || 5432));
    probe = await startServer({ databaseUrl: withApp(db.url, PROBE_APP, proxy.port), dataDir: probeDir, variantEnv });
    r.sizes = await statementSizes(proxy, probe.base, workspaces, wideRequests(B.ws, wide), B.key);
    r.maximal = { conditions: 99, fields: 40, shrunk: [] };
    for (;;) {
      const { result: res, errors } = await serverErrors(probe.child, () =>
        ask(probe.base, B.key, {
          path: queryPath(B.ws),
          method: 'POST',
          body: JSON.stringify(maximalQuery(0, r.maximal.conditions, r.maximal.fields)),
        }),
      );
      if (res.status < 400 || res.status >= 500 || r.maximal.conditions <= 10) {
        r.maximal.firstStatus = res.status;
        r.maximal.firstMessage =
          res.status === 200 ? undefined : `HTTP ${res.status} ${res.message}${errors.length ? ` (the server logged: ${errors[0]})` : ''}`;
        break;
      }
      r.maximal.shrunk.push(`${r.maximal.conditions} conditions, ${r.maximal.fields} fields: HTTP ${res.status} ${res.message}`);
      r.maximal.conditions -= 10;
    }
    proxy.label('maximal');
    r.maximal.viaProbe = Math.min(distinctQueries, PROBE_MAXIMAL);
    const viaProbe = await runConcurrently(r.maximal.viaProbe, 10, (q) =>
      ask(probe.base, B.key, {
        path: queryPath(B.ws),
        method: 'POST',
        body: JSON.stringify(maximalQuery(q, r.maximal.conditions, r.maximal.fields)),
      }),
    );
    await sleep(SETTLE_MS);
    proxy.label(undefined);
    r.maximal.probe = { ...viaProbe, ...(proxy.stats('maximal') ?? NO_STATS) };
    r.maximal.bodyBytes = Buffer.byteLength(JSON.stringify(maximalQuery(0, r.maximal.conditions, r.maximal.fields)));
    await stopServer(probe.child);
    probe = undefined;
    await proxy.close();
    proxy = undefined;

    // 4. Load: warm-up, then rounds of A's four questions and B's, the backends' memory after each.
    r.busy = await cpuBusy();
    if (r.busy > 0.2)
      console.log(`model-scale: WARNING: the CPUs are ${pct(r.busy)} busy with other work: the next figures will be low and noisy`);
    const page = (w) => r.routes[w].find((x) => x.route === 'page');
    // Every question in both workspaces, so that every pool connection has prepared every statement.
    if (opts.serverWarmupSeconds > 0) {
      const all = [...r.routes[A.ws], ...r.routes[B.ws]];
      for (const route of all)
        await measure(
          route.url,
          route.headers,
          { ...opts, warmupSeconds: 0, seconds: Math.max(1, opts.serverWarmupSeconds / all.length) },
          route.request,
        );
    }
    r.memory.push({ when: 'after the warm-up', m: await backendMemory(client, db.name, MAIN_APP) });
    const runs = { [A.ws]: {}, [B.ws]: {} };
    for (let i = 1; i <= opts.rounds; i++) {
      for (const w of [A.ws, B.ws]) {
        for (const route of r.routes[w]) (runs[w][route.route] ??= []).push(await measure(route.url, route.headers, opts, route.request));
        r.memory.push({ when: `after round ${i} of ${w}`, m: await backendMemory(client, db.name, MAIN_APP) });
      }
    }
    const rounds = ` (${opts.rounds} rounds of ${opts.seconds} s)`;
    r.rows = {};
    for (const w of [A.ws, B.ws])
      r.rows[w] = r.routes[w].map((route) => ({
        ...route,
        ...combineRounds(runs[w][route.route], opts.seconds),
        label: `${route.label}${rounds}`,
      }));

    // 5. The distinct maximal queries on the main server: its backends' memory.
    await measure(page(B.ws).url, page(B.ws).headers, { ...opts, warmupSeconds: 0, seconds: 1, connections: 10 }, page(B.ws).request);
    const mem = [{ when: 'before the maximal queries', m: await backendMemory(client, db.name, MAIN_APP) }];
    const maxBody = (q) => ({
      path: queryPath(B.ws),
      method: 'POST',
      body: JSON.stringify(maximalQuery(q, r.maximal.conditions, r.maximal.fields)),
    });
    const first = await ask(server.base, B.key, maxBody(0));
    mem.push({ when: `after the first (HTTP ${first.status}, ${ms(first.ms)} ms)`, m: await backendMemory(client, db.name, MAIN_APP) });
    const t = performance.now();
    const sampler = memoryPeak(client, db.name, MAIN_APP);
    const rest = await runConcurrently(distinctQueries - 1, 10, (q) => ask(server.base, B.key, maxBody(q + 1)));
    r.maximal.restMs = performance.now() - t;
    const peak = await sampler.stop();
    if (peak) mem.push({ when: `peak during the rest (at ${peak.at.toFixed(1)} s)`, m: peak.m, most: peak.most, least: peak.least });
    rest.statuses[first.status] = (rest.statuses[first.status] ?? 0) + 1;
    if (first.status !== 200) rest.messages.unshift(`#0: HTTP ${first.status} ${first.message}`);
    mem.push({ when: `after all ${distinctQueries}`, m: await backendMemory(client, db.name, MAIN_APP) });
    r.maximal.main = { ...rest, memory: mem };
    r.maximal.count = distinctQueries;

    // 6. Each question in B at 1 connection (the embedded comparison's reference).
    r.single = await measureSingle(r.routes[B.ws], opts);
    r.memory.push({ when: `after ${B.ws} at 1 connection`, m: await backendMemory(client, db.name, MAIN_APP) });
    r.count = count;
    return r;
  } finally {
    await client.end().catch(() => {});
    if (probe) await stopServer(probe.child);
    if (proxy) await proxy.close();
    if (server) {
      const stopped = await stopServer(server.child);
      if (!stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    }
    if (process.env.BENCH_KEEP_DATABASE === '1') (keepDatabase(db.name), console.log(`model-scale: kept ${db.url}`));
    else await dropDatabase(db.name, adminUrl);
    removeTempDir(dataDir);
    removeTempDir(probeDir);
  }
}

// ---------------------------------------------------------------------------------------------
// The embedded database

/**
 * The distinct maximal queries on the embedded server, whose plans PGlite keeps in the server's own
 * memory: its RSS before, after the first, at its peak (sampled every 0.5 s) and after all.
 */
async function embeddedMaximal(server, base, key, maximal) {
  const rss = () => kbField(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'), 'VmRSS');
  const body = (q) => ({
    path: queryPath(WS_B),
    method: 'POST',
    body: JSON.stringify(maximalQuery(q, maximal.conditions, maximal.fields)),
  });
  const before = rss();
  const first = await ask(base, key, body(0));
  const afterFirst = rss();
  let peak = afterFirst;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, rss());
      await sleep(500);
    }
  })();
  const t = performance.now();
  const rest = await runConcurrently(maximal.count - 1, 10, (q) => ask(base, key, body(q + 1)));
  const restMs = performance.now() - t;
  sampling = false;
  await sampler;
  const afterAll = rss();
  rest.statuses[first.status] = (rest.statuses[first.status] ?? 0) + 1;
  return {
    before,
    afterFirst,
    peak: Math.max(peak, afterAll),
    afterAll,
    firstMs: first.ms,
    restMs,
    statuses: rest.statuses,
    messages: rest.messages,
  };
}

async function runEmbedded({ opts, count, maximal }) {
  const dataDir = makeTempDir('wsapi-bench-model-embedded-');
  const embedded = embeddedDatabase({
    dataDir,
    variantEnv: { APP_ENV: 'local', RESPONSE_CACHE_MB: '0', LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error' },
  });
  const serve = async () => (await embedded.serve()).base;
  const client = embedded.client;
  try {
    const { base, key, seed, stored } = await (async () => {
      const { key } = await setup(await serve(), { ws: WS_B, permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedWorkspace({ serve, ws: WS_B, key, client, count, large: true, newUlid: monotonicFactory() });
      const stored = await storedProblems(client, seed, count);
      const t = performance.now();
      await client.query('ANALYZE');
      seed.analyzeMs = performance.now() - t;
      return { base: await serve(), key, seed, stored };
    })().catch((err) => {
      throw embedded.server ? withServerOutput(embedded.server, err) : err;
    });
    console.log(
      `${seedLine('embedded', seed, count)} (ANALYZE ${seconds(seed.analyzeMs)}; the server stopped for each step through PGlite)`,
    );
    printSeedChecks('embedded', seed, stored);
    const e = { startMs: embedded.server.startMs, count };
    e.wide = await probeWide(
      embedded.server,
      key,
      WS_B,
      seed.extras.find((t) => t.name === 'wide'),
    );
    printWide(`model-scale: embedded: the ${WIDE_FIELDS}-field type (for information):`, e.wide);
    const routes = questionRoutes(base, WS_B, key, seed.articles);
    e.check = await checkQuestions(embedded.server, key, routes);
    for (const p of e.check.problems) console.log(`model-scale: embedded: WARNING: before the load: ${p}`);
    e.busy = await cpuBusy();
    if (e.busy > 0.2)
      console.log(`model-scale: WARNING: the CPUs are ${pct(e.busy)} busy with other work: the next figures will be low and noisy`);
    const page = routes.find((x) => x.route === 'page');
    if (opts.serverWarmupSeconds > 0)
      await measure(page.url, page.headers, { ...opts, connections: 1, warmupSeconds: 0, seconds: opts.serverWarmupSeconds }, page.request);
    e.single = await measureSingle(routes, opts);
    e.maximal = await embeddedMaximal(embedded.server, base, key, maximal);
    return e;
  } finally {
    const stopped = await embedded.close();
    if (stopped && !stopped.graceful) console.log('  WARNING: the server did not stop within 20 s of SIGTERM and was killed');
    removeTempDir(dataDir);
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function report(r, e, opts) {
  const targets = [];
  for (const w of [WS_A, WS_B])
    printRouteTable(
      `model-scale: PostgreSQL, workspace ${w}, ${opts.connections} connections, APP_ENV=local, RESPONSE_CACHE_MB=0:`,
      r.rows[w].map((x) => ({ ...x, target: undefined })),
      96,
    );

  console.log(
    `model-scale: ${WS_B} (100 more content types) against ${WS_A} (the anchor's two), ${r.count.toLocaleString('en-US')} articles each, ${opts.connections} connections (req/s: 2xx answers per second over ${opts.rounds} rounds):`,
  );
  const rows = QUESTIONS.map(([q, name]) => {
    const a = r.rows[WS_A].find((x) => x.route === q);
    const b = r.rows[WS_B].find((x) => x.route === q);
    const ratio = rate(b) / rate(a);
    const ok = ratio >= TARGETS.ratio && !failed(a) && !failed(b);
    targets.push(`${name} B/A ${times(ratio)} (>= ${TARGETS.ratio}): ${verdict(ok)}`);
    return { name, a, b, ratio, ok };
  });
  for (const line of tableLines(
    [
      { title: 'question', width: 32, align: 'left', value: (x) => x.name },
      { title: 'A req/s', width: 10, value: (x) => rate(x.a).toFixed(1) },
      { title: 'B req/s', width: 10, value: (x) => rate(x.b).toFixed(1) },
      { title: 'B/A', width: 8, value: (x) => times(x.ratio) },
      { title: 'A p50 ms', width: 10, value: (x) => ms(x.a.p50) },
      { title: 'B p50 ms', width: 10, value: (x) => ms(x.b.p50) },
      { title: 'A non-2xx', width: 11, value: (x) => x.a.non2xx + x.a.errors - x.a.timeouts },
      { title: 'B non-2xx', width: 11, value: (x) => x.b.non2xx + x.b.errors - x.b.timeouts },
      { title: 'target', gap: '  ', value: (x) => `B/A >= ${TARGETS.ratio}: ${verdict(x.ok)}` },
    ],
    rows,
  ))
    console.log(line);
  if (r.sameDiffs.length || r.checkProblems.length)
    console.log(`  WARNING: before the load: ${[...r.checkProblems, ...r.sameDiffs.map((d) => `A and B differ in the ${d}`)].join('; ')}`);

  const wideOk = r.wide.every((x) => x.status === 200);
  targets.push(`${WIDE_FIELDS}-field type read/list/query all 200 (${r.wide.map((x) => x.status).join('/')}): ${verdict(wideOk)}`);
  console.log(
    `model-scale: the ${WIDE_FIELDS}-field type in ${WS_B}: ${r.wide.map((x) => `${x.what}: HTTP ${x.status}`).join('; ')}: ${verdict(wideOk)}`,
  );

  console.log(
    `model-scale: the server's PostgreSQL backends (application_name ${MAIN_APP}: the request pool and the relaxed pool; (+n/-k): backends not in the reading before / gone since):`,
  );
  for (const line of memoryRows(withNewPids(r.memory))) console.log(line);

  console.log(
    `model-scale: the largest statement each question sends (bytes of its text; through the probe server and the statement proxy, ${PROBE_REQUESTS} requests each, one at a time; ` +
      `statements/request: every statement executed (Bind or simple Query), the server's background work left out (job queue, scheduler, webhooks, request-log flushes, BEGIN/COMMIT: "bg", in all)):`,
  );
  const sizeRows = QUESTIONS.map(([q, name]) => ({
    name,
    a: r.sizes.find((s) => s.ws === WS_A && s.question === q),
    b: r.sizes.find((s) => s.ws === WS_B && s.question === q),
  }));
  for (const s of r.sizes.filter((x) => !QUESTIONS.some(([q]) => q === x.question))) sizeRows.push({ name: s.question, b: s });
  const perRequest = (s) => (s ? (s.executed / s.requests).toFixed(1) : '-');
  for (const line of tableLines(
    [
      { title: 'question', width: 52, align: 'left', value: (x) => x.name },
      { title: 'A bytes', width: 10, value: (x) => x.a?.max.toLocaleString('en-US') ?? '-' },
      { title: 'B bytes', width: 10, value: (x) => x.b?.max.toLocaleString('en-US') ?? '-' },
      { title: 'A stmts/req', width: 13, value: (x) => perRequest(x.a) },
      { title: 'B stmts/req', width: 13, value: (x) => perRequest(x.b) },
      { title: 'bg (A; B)', width: 11, value: (x) => `${x.a ? `${x.a.background}; ` : ''}${x.b?.background}` },
      { title: 'statuses (A; B)', gap: '  ', value: (x) => `${x.a ? `${x.a.statuses.join(',')}; ` : ''}${x.b?.statuses.join(',')}` },
    ],
    sizeRows,
  ))
    console.log(line);
  console.log('  the statements of each (distinct texts, largest first: bytes × times sent, and how each starts):');
  for (const x of sizeRows) {
    for (const s of [x.a, x.b].filter(Boolean)) {
      const texts = [...s.texts.values()].sort((p, q) => q.bytes - p.bytes);
      console.log(
        `    ${s.label}: ${texts
          .slice(0, 4)
          .map((t) => `${t.bytes.toLocaleString('en-US')} B ×${t.count} ${JSON.stringify(t.head.slice(0, 70))}`)
          .join('; ')}${texts.length > 4 ? `; and ${texts.length - 4} more` : ''}`,
      );
    }
  }

  const m = r.maximal;
  const [before, afterFirst] = m.main.memory;
  const afterAll = m.main.memory.at(-1);
  const highest = Math.max(...m.main.memory.slice(2).map((x) => x.m.pssAnon.sum));
  const growthKb = highest - afterFirst.m.pssAnon.sum;
  // The issue's target is per backend: the most any one grew beyond what it held after the first
  // (a backend opened since: beyond its smallest sample), over every sample and the last reading.
  const peakReading = m.main.memory.find((x) => x.most);
  let backendGrowthKb = 0;
  for (const [pid, v] of [...(peakReading?.most ?? []), ...afterAll.m.byPid]) {
    const base = afterFirst.m.byPid.get(pid) ?? peakReading?.least.get(pid) ?? v;
    backendGrowthKb = Math.max(backendGrowthKb, v - base);
  }
  const memOk = backendGrowthKb <= TARGETS.memoryGrowthMb * MB;
  const allOk = Object.keys(m.main.statuses).every((s) => s === '200');
  targets.push(
    `distinct maximal queries: the most one backend grew beyond the first ${mb(backendGrowthKb)} MB (<= ${TARGETS.memoryGrowthMb} MB): ${verdict(memOk)}${allOk ? '' : ' (not all answered 200)'}; all backends together ${mb(growthKb)} MB`,
  );
  console.log(
    `model-scale: ${m.count} distinct maximal queries on ${LAST} in ${WS_B} (one key, 10 at a time): $or of ${m.conditions} conditions over relation paths, ${m.fields} fields, limit 20 (body ${m.bodyBytes.toLocaleString('en-US')} bytes):`,
  );
  for (const s of m.shrunk) console.log(`  shrunk after: ${s}`);
  if (m.firstMessage) console.log(`  the first through the probe server: ${m.firstMessage}`);
  console.log(
    `  through the probe server (the first ${m.viaProbe}): ${statusText(m.probe.statuses)}; ${m.probe.texts.size} distinct statement texts among ${m.probe.executed} statements (and ${m.probe.background} background ones); largest ${m.probe.max.toLocaleString('en-US')} bytes, starting ${JSON.stringify(m.probe.head.slice(0, 120))}`,
  );
  console.log(`  on the measured server: ${statusText(m.main.statuses)} (the ${m.count - 1} after the first in ${seconds(m.restMs)})`);
  // Each distinct failure once (with the first query that had it).
  const failures = new Map();
  for (const msg of [...m.probe.messages, ...m.main.messages]) {
    const text = msg.replace(/^#\d+: /, '');
    if (!failures.has(text)) failures.set(text, msg);
  }
  for (const msg of failures.values()) console.log(`    ${msg}`);
  for (const line of memoryRows(withNewPids([before, ...m.main.memory.slice(1)]))) console.log(line);
  console.log(
    `  the most one backend's Pss_Anon grew beyond what the first left (every 0.5 s sample and the reading after all): ${mb(backendGrowthKb)} MB (target <= ${TARGETS.memoryGrowthMb} MB): ${verdict(memOk)}; ` +
      `growth of the Pss_Anon sum (the higher of its peak and the reading after all): ${mb(growthKb)} MB; ` +
      `after all vs after the first: Pss_Anon sum ${mb(afterAll.m.pssAnon.sum - afterFirst.m.pssAnon.sum)} MB, Private_Dirty sum ${mb(afterAll.m.privateDirty.sum - afterFirst.m.privateDirty.sum)} MB, RSS sum ${mb(afterAll.m.rss.sum - afterFirst.m.rss.sum)} MB` +
      (afterAll.m.n < afterFirst.m.n
        ? ` (${afterFirst.m.n - afterAll.m.n} fewer backends at the end: the pool closes connections idle for 10 s)`
        : ''),
  );

  if (e) {
    console.log(
      `model-scale: embedded database (PGlite), workspace ${WS_B}'s model with ${e.count.toLocaleString('en-US')} articles, against PostgreSQL (${r.count.toLocaleString('en-US')} articles), both at 1 connection:`,
    );
    const eRows = QUESTIONS.map(([q, name]) => {
      const pgRow = r.single.find((x) => x.route === q);
      const emb = e.single.find((x) => x.route === q);
      const ratio = emb.p50 / pgRow.p50;
      const ok = ratio <= TARGETS.embedded && !failed(pgRow) && !failed(emb);
      targets.push(`embedded ${name} p50 ${times(ratio)} PostgreSQL's (<= ${TARGETS.embedded}×): ${verdict(ok)}`);
      return { name, pgRow, emb, ratio, ok };
    });
    for (const line of tableLines(
      [
        { title: 'question', width: 32, align: 'left', value: (x) => x.name },
        { title: 'PG req/s', width: 10, value: (x) => rate(x.pgRow).toFixed(1) },
        { title: 'PG p50 ms', width: 11, value: (x) => ms(x.pgRow.p50) },
        { title: 'emb req/s', width: 11, value: (x) => rate(x.emb).toFixed(1) },
        { title: 'emb p50 ms', width: 12, value: (x) => ms(x.emb.p50) },
        { title: 'emb/PG p50', width: 12, value: (x) => times(x.ratio) },
        { title: 'non-2xx (PG, emb)', width: 19, value: (x) => `${x.pgRow.non2xx}, ${x.emb.non2xx}` },
        { title: 'target', gap: '  ', value: (x) => `<= ${TARGETS.embedded}×: ${verdict(x.ok)}` },
      ],
      eRows,
    ))
      console.log(line);
    if (e.count !== r.count)
      console.log(
        `  (${e.count.toLocaleString('en-US')} articles embedded, ${r.count.toLocaleString('en-US')} on PostgreSQL: the page and the aggregate compare different sizes)`,
      );
    if (e.check.problems.length) console.log(`  WARNING: before the load: ${e.check.problems.join('; ')}`);
    const x = e.maximal;
    const grewKb = x.peak - x.afterFirst;
    const heapOk = grewKb <= TARGETS.memoryGrowthMb * MB && Object.keys(x.statuses).every((st) => st === '200');
    console.log(
      `model-scale: embedded: the same ${r.maximal.count ?? ''} distinct maximal queries (one key, 10 at a time): ${statusText(x.statuses)}, the first in ${ms(x.firstMs)} ms, the rest in ${seconds(x.restMs)}`,
    );
    for (const msg of x.messages) console.log(`    ${msg}`);
    console.log(
      `  the server process's RSS: before ${mb(x.before)} MB, after the first ${mb(x.afterFirst)} MB, peak (every 0.5 s) ${mb(x.peak)} MB, after all ${mb(x.afterAll)} MB; grew beyond the first ${mb(grewKb)} MB (target <= ${TARGETS.memoryGrowthMb} MB): ${verdict(heapOk)}`,
    );
    targets.push(
      `embedded distinct maximal queries: the server's RSS grew ${mb(grewKb)} MB beyond the first (<= ${TARGETS.memoryGrowthMb} MB): ${verdict(heapOk)}`,
    );
  }
  return targets;
}

// ---------------------------------------------------------------------------------------------

export async function benchModelScale(options = {}) {
  const env = process.env;
  const opts = { ...loadOptions(options, { serverWarmupSeconds: 20 }), rounds: Number(options.rounds ?? env.BENCH_MODEL_ROUNDS ?? 2) };
  const count = Number(options.articles ?? env.BENCH_MODEL_ARTICLES ?? 20_000);
  const withEmbedded = options.embedded ?? env.BENCH_MODEL_EMBEDDED !== '0';
  const embeddedCount = Number(options.embeddedArticles ?? env.BENCH_MODEL_EMBEDDED_ARTICLES ?? 5_000);
  const distinctQueries = Number(options.distinctQueries ?? env.BENCH_MODEL_DISTINCT_QUERIES ?? 200);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  if (!(opts.rounds >= 1)) throw new Error('BENCH_MODEL_ROUNDS must be at least 1');
  if (!(count >= 100)) throw new Error('BENCH_MODEL_ARTICLES must be at least 100');
  if (withEmbedded && !(embeddedCount >= 100)) throw new Error('BENCH_MODEL_EMBEDDED_ARTICLES must be at least 100');
  if (!(distinctQueries >= 2)) throw new Error('BENCH_MODEL_DISTINCT_QUERIES must be at least 2');
  checkBuild('model-scale');

  const removeHandlers = installSignalHandlers('model-scale bench');
  let result;
  let embedded;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `model-scale: ${opts.connections} connections, ${opts.serverWarmupSeconds} s of the filtered page first, then ${opts.rounds} rounds (A's four questions, B's) of ${opts.warmupSeconds} s warm-up + ${opts.seconds} s each; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (autocannon on the same machine); ` +
        (withEmbedded
          ? `then the embedded database, ${embeddedCount.toLocaleString('en-US')} articles, 1 connection`
          : 'embedded database: skipped (BENCH_MODEL_EMBEDDED=0)'),
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`model-scale: ${msg}: skipped (the section compares on PostgreSQL; the embedded target is relative to it)`);
      return { result, embedded, invalid };
    }
    result = await runPostgres({ adminUrl, opts, count, distinctQueries });
    if (withEmbedded) embedded = await runEmbedded({ opts, count: embeddedCount, maximal: { ...result.maximal, count: distinctQueries } });
    const targets = report(result, embedded, opts);
    if ([...result.rows[WS_A], ...result.rows[WS_B], ...result.single, ...(embedded?.single ?? [])].some(failed)) invalid = true;
    console.log(`model-scale targets: ${targets.join('; ')}`);
    console.log(`model-scale: section took ${seconds(performance.now() - started)}`);
    if (invalid)
      console.log('model-scale: WARNING: some answers of the four questions were not 2xx (or failed); those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, embedded, invalid };
}

await runStandalone(import.meta, 'model-scale', benchModelScale);
