// Changes of a content type under load (issue 38, part 2's targets): on the anchor's articles, a
// field added, renamed and removed through PATCH /admin/v1/workspaces/{ws}/buckets/{bucket}/
// content-types/{type} while reads and queries of the type run, on the built server (dist/) with
// APP_ENV=local (rate limits off), the response cache off (RESPONSE_CACHE_MB=0: the API computes
// every answer) and LOG_LEVEL=error, on a PostgreSQL server (a throwaway database):
//
// The anchor's model and rows (anchor.mjs seedRows: `authors`, 1,000 entries, and `articles`,
// title text, amount number, published_at date (datetime), state text, author single relation ->
// authors; BENCH_CHANGE_ARTICLES entries, default 100,000, all published; a few through the API,
// the rest with one INSERT per type as the API writes them; the anchor's plain tables beside
// them, unused here), then VACUUM ANALYZE.
//
// The read load, for the whole section: BENCH_CHANGE_CLIENTS (8) workers, each alternating
//   GET  /api/v1/{ws}/entries/{random article ULID}  (the article rendered, its author too)
//   POST /api/v1/{ws}/general/entries/query  {type articles, filter {amount gt 100}, sort
//        published_at desc, limit 20, fields [@id, amount, author.name]}
// through fetch (undici, keep-alive), each request's start, duration and status recorded; the
// load names no field the changes touch, so any answer but 200 is a failure (counted, the first
// body printed). A GET answered 200 is also checked against the model of the moment (a request
// sent after a change's answer must see it: `headline` and no `title` after the rename, `title`
// and no `headline` after the rename back, no `state` after its removal, however far the
// documents' cleanup is).
//
// 2 s of load not counted (the server's pool connections prepare their statements), 3 s of
// baseline, then, 2 s of load between them, each PATCH timed from sending it to its answer:
//   a. add      `fields`: the type's fields as GET answers them, sent back as definitions, plus
//               {name subtitle, type text}
//   b. rename   `rename_fields` {title: headline}; then (outside the timing) an article read by id
//               shows fields.headline = its old title and no title
//   c. add      like a. with {name rank, type number} (an indexed field: its sort indexes are
//               built over every article's row of typed storage)
//   d. remove   `remove_fields` [state] (a value in every document); then the cleanup the server
//               queued itself (the `entries:field-cleanup` task, not called here): polled every
//               200 ms until field_removals' rows of the type are all finished (at most 300 s),
//               then no document of the type may hold `state`
//   e. rename   `rename_fields` {headline: title}; then an article shows title again
// Per change: the PATCH's answer time, and the load's requests in flight at any moment of its
// window (from sending the PATCH to its answer; for the removal also of the cleanup, apart): count,
// p50, p99 and max, GET and query apart; the baseline's beside them.
// Targets (the issue's): an add answers within 1 s, a rename within 1 s, the removal within 5 s
// (its documents cleaned up in the background); no read or query of the type takes more than
// 200 ms in any change's window (the cleanup's included); no failed request; every read
// consistent with the model of the moment. The cleanup's duration is printed (no target).
// Without PostgreSQL nothing runs.
//
// Standalone: `node scripts/bench/model-changes.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_CHANGE_ARTICLES=100000  articles (at least 1000; authors: 1000)
//   BENCH_CHANGE_CLIENTS=8    concurrent workers of the read load
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where the throwaway database
//                             (wsbench_<random>) is created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL database (its URL is printed)
//   BENCH_LOG_LEVEL=error     the server's LOG_LEVEL (its output is shown when a step fails)
import os from 'node:os';
import pg from 'pg';
import { ABILITIES, AUTHORS, BUCKET, PERMISSIONS, entriesPath, queryPath, seedRows } from './anchor.mjs';
import {
  ADMIN_TOKEN,
  DEFAULT_PG_URL,
  SERVER_SESSION_OPTIONS,
  call,
  checkBuild,
  cleanupAsync,
  cpuBusy,
  createDatabase,
  getJson,
  installSignalHandlers,
  keepDatabase,
  makeTempDir,
  ms,
  pct,
  percentile,
  postgresReachable,
  runStandalone,
  seconds,
  setup,
  startServer,
  tableLines,
  verdict,
  withServerOutput,
} from './support.mjs';

const TYPE = 'articles';
const LOAD_WARMUP_MS = 2000; // load before the baseline, not counted
const BASELINE_MS = 3000;
const PAUSE_MS = 2000; // load between two changes
const POLL_MS = 200;
const CLEANUP_LIMIT_MS = 300_000;
const TARGETS = { addMs: 1000, renameMs: 1000, removeMs: 5000, blockedMs: 200 };

/** The load's query: no field a change touches (title, state, subtitle, rank). */
const LOAD_QUERY = {
  type: TYPE,
  filter: { amount: { gt: 100 } },
  sort: [{ field: 'published_at', direction: 'desc' }],
  limit: 20,
  fields: ['@id', 'amount', 'author.name'],
};
/** The fields whose presence in a GET's answer is recorded (the model of the moment decides them). */
const WATCHED = ['title', 'headline', 'state'];

const sleep = (msValue) => new Promise((r) => setTimeout(r, msValue));
const typePath = (ws) => `/admin/v1/workspaces/${ws}/buckets/${BUCKET}/content-types/${TYPE}`;

// ---------------------------------------------------------------------------------------------
// The read load

/**
 * `clients` workers alternating a read by id of a random article and the load's query until
 * `stop()`; every request as `{kind, start, end, status, shown?}` (performance.now() times;
 * `shown`: the WATCHED fields a GET's answer holds).
 */
function startLoad({ base, ws, key, ids, clients }) {
  const records = [];
  const failures = { count: 0, first: undefined };
  const headers = { Authorization: `Bearer ${key}` };
  const queryInit = { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(LOAD_QUERY) };
  let running = true;
  const one = async (kind) => {
    const start = performance.now();
    let status = 0;
    let text;
    try {
      const res =
        kind === 'get'
          ? await fetch(`${base}${entriesPath(ws)}/${ids[Math.floor(Math.random() * ids.length)]}`, { headers })
          : await fetch(`${base}${queryPath(ws)}`, queryInit);
      status = res.status;
      text = await res.text();
    } catch (err) {
      text = `fetch failed: ${err.cause?.message ?? err.message}`;
    }
    const record = { kind, start, end: performance.now(), status };
    if (status === 200 && kind === 'get') {
      const fields = JSON.parse(text).fields ?? {};
      record.shown = WATCHED.filter((f) => f in fields);
    }
    if (status !== 200) {
      failures.count++;
      failures.first ??= `${kind === 'get' ? 'GET read by id' : 'POST query'}: ${status || 'no answer'} ${text.slice(0, 500)}`;
    }
    records.push(record);
  };
  const workers = Array.from({ length: clients }, async (_, i) => {
    let kind = i % 2 ? 'query' : 'get';
    while (running) {
      await one(kind);
      kind = kind === 'get' ? 'query' : 'get';
    }
  });
  return {
    records,
    failures,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** The requests in flight at any moment of [from, to], GET and query apart: count, p50, p99, max (ms). */
function windowStats(records, from, to) {
  const inWindow = records.filter((r) => r.start < to && r.end > from);
  const of = (kind) => {
    const rs = inWindow.filter((r) => r.kind === kind).sort((a, b) => a.end - a.start - (b.end - b.start));
    const d = rs.map((r) => r.end - r.start);
    return {
      n: d.length,
      p50: percentile(d, 50),
      p99: percentile(d, 99),
      max: d.length ? d[d.length - 1] : NaN,
      slowest: rs[rs.length - 1],
    };
  };
  return { from, to, get: of('get'), query: of('query') };
}

// ---------------------------------------------------------------------------------------------
// The changes

/** A field of the content type's answer as a definition to send back (FieldDefinition). */
function definition(f) {
  const d = {
    name: f.name,
    type: f.type,
    multiple: f.multiple,
    required: f.required,
    unique: f.unique,
    cascade_on_delete: f.cascade_on_delete,
  };
  if (f.indexed !== undefined) d.indexed = f.indexed;
  if (f.type === 'date') d.format = f.format;
  if (f.type === 'relation') d.targets = f.targets;
  return d;
}

/** PATCH of the type, timed from sending it to its answer (the body serialized before). */
async function timedPatch(base, ws, body) {
  const payload = JSON.stringify(body);
  const sent = performance.now();
  let status = 0;
  let text;
  try {
    const res = await fetch(`${base}${typePath(ws)}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: payload,
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    text = `fetch failed: ${err.cause?.message ?? err.message}`;
  }
  const answered = performance.now();
  return { sent, answered, ms: answered - sent, status, text };
}

/** The fields an article read by id shows of WATCHED, and its title or headline. */
async function readArticle(base, ws, key, id) {
  const a = await getJson(`${base}${entriesPath(ws)}/${id}`, key);
  return { shown: WATCHED.filter((f) => f in (a.fields ?? {})), fields: a.fields ?? {} };
}

/**
 * The five changes with the load running (PAUSE_MS of load after each); each answers
 * `{id, label, kind, patch, problems}`, the removal also its cleanup.
 */
async function runChanges({ base, ws, key, client, typeId, articleId, g, log }) {
  const out = [];
  const withField = async (field) => ({ fields: [...(await call(base, 'GET', typePath(ws), ADMIN_TOKEN)).fields.map(definition), field] });
  const change = async (id, label, kind, body, after) => {
    const patch = await timedPatch(base, ws, body);
    const c = { id, label, kind, patch, problems: [] };
    if (patch.status !== 200) c.problems.push(`PATCH answered ${patch.status || 'nothing'}: ${patch.text.slice(0, 1000)}`);
    log(`model-changes: ${id}. ${label}: PATCH ${patch.status || 'failed'} in ${ms(patch.ms)} ms`);
    if (patch.status === 200 && after) await after(c);
    for (const p of c.problems) log(`model-changes: ${id}. PROBLEM: ${p}`);
    out.push(c);
    await sleep(PAUSE_MS);
  };
  const expectTitle = (name, gone) => async (c) => {
    const a = await readArticle(base, ws, key, articleId);
    if (a.fields[name] !== `title ${g}` || gone in a.fields)
      c.problems.push(`article ${g} read after the rename: ${JSON.stringify(a.fields)} (expected ${name} "title ${g}" and no ${gone})`);
    else c.check = `article ${g} read by id shows ${name} "title ${g}" and no ${gone}`;
  };

  await change('a', 'add field subtitle (text)', 'add', await withField({ name: 'subtitle', type: 'text' }));
  await change('b', 'rename title -> headline', 'rename', { rename_fields: { title: 'headline' } }, expectTitle('headline', 'title'));
  await change('c', 'add field rank (number, indexed)', 'add', await withField({ name: 'rank', type: 'number' }));
  await change('d', 'remove field state', 'remove', { remove_fields: ['state'] }, async (c) => {
    // The cleanup the server queued itself, polled until finished.
    const started = c.patch.answered;
    let done = false;
    for (;;) {
      const { rows } = await client.query('SELECT bool_and(finished) AS done FROM field_removals WHERE content_type_id = $1', [typeId]);
      done = rows[0].done === true;
      if (done || performance.now() - started > CLEANUP_LIMIT_MS) break;
      await sleep(POLL_MS);
    }
    const ended = performance.now();
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM entry_contents WHERE content_type_id = $1 AND data ? 'state'`, [
      typeId,
    ]);
    c.cleanup = { started, ended, ms: ended - started, done, remaining: rows[0].n };
    if (!done) {
      const progress = (await client.query('SELECT key, after_pk, finished FROM field_removals WHERE content_type_id = $1', [typeId])).rows;
      c.problems.push(
        `the cleanup had not finished after ${seconds(CLEANUP_LIMIT_MS)} (field_removals ${JSON.stringify(progress)}; ${rows[0].n} documents still hold state)`,
      );
    } else if (rows[0].n !== 0) c.problems.push(`the cleanup finished but ${rows[0].n} documents of the type still hold state`);
    log(
      `model-changes: d. cleanup of the documents ${done ? 'finished' : 'NOT finished'} ${seconds(c.cleanup.ms)} after the PATCH's answer (polled every ${POLL_MS} ms); documents still holding state: ${rows[0].n}`,
    );
  });
  await change('e', 'rename headline -> title', 'rename', { rename_fields: { headline: 'title' } }, expectTitle('title', 'headline'));
  return out;
}

/**
 * The load's GETs that did not show the model of the moment: sent after a change's answer (and
 * answered before the next change was sent, for the renames), the fields each must show or not.
 */
function readConsistency(records, changes) {
  const by = Object.fromEntries(changes.map((c) => [c.id, c]));
  const rules = [];
  const ok = (c) => c?.patch.status === 200;
  if (ok(by.b))
    rules.push({
      what: 'headline and no title after the rename',
      from: by.b.patch.answered,
      to: by.e?.patch.sent ?? Infinity,
      must: ['headline'],
      mustNot: ['title'],
    });
  if (ok(by.e))
    rules.push({
      what: 'title and no headline after the rename back',
      from: by.e.patch.answered,
      to: Infinity,
      must: ['title'],
      mustNot: ['headline'],
    });
  if (ok(by.d)) rules.push({ what: 'no state after its removal', from: by.d.patch.answered, to: Infinity, must: [], mustNot: ['state'] });
  return rules.map((rule) => {
    const reads = records.filter((r) => r.shown && r.start > rule.from && r.end < rule.to);
    const wrong = reads.filter((r) => rule.must.some((f) => !r.shown.includes(f)) || rule.mustNot.some((f) => r.shown.includes(f)));
    return { ...rule, checked: reads.length, wrong: wrong.length, example: wrong[0]?.shown };
  });
}

// ---------------------------------------------------------------------------------------------

async function runPostgres({ adminUrl, count, clients }) {
  const dataDir = makeTempDir('wsapi-bench-changes-');
  const db = await createDatabase(adminUrl);
  if (process.env.BENCH_KEEP_DATABASE === '1') {
    keepDatabase(db.name);
    console.log(`model-changes: keeping the database ${db.url}`);
  }
  const client = new pg.Client({ connectionString: db.url, options: SERVER_SESSION_OPTIONS });
  const variantEnv = { APP_ENV: 'local', RESPONSE_CACHE_MB: '0', LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error' };
  const server = await startServer({ databaseUrl: db.url, dataDir, variantEnv });
  await client.connect();
  let load;
  try {
    const { ws, key, seed } = await (async () => {
      const { ws, key } = await setup(server.base, { permissions: PERMISSIONS, abilities: ABILITIES });
      const seed = await seedRows({ serve: async () => server.base, ws, key, client, count, maintain: 'VACUUM (ANALYZE)' });
      // Both load requests answer 200 before the load.
      await getJson(`${server.base}${entriesPath(ws)}/${seed.articles[0]}`, key);
      await getJson(`${server.base}${queryPath(ws)}`, key, { method: 'POST', body: JSON.stringify(LOAD_QUERY) });
      return { ws, key, seed };
    })().catch((err) => {
      throw withServerOutput(server, err);
    });
    console.log(
      `model-changes: seeded ${count.toLocaleString('en-US')} published articles and ${AUTHORS.toLocaleString('en-US')} authors in ${seconds(seed.totalMs)} ` +
        `(the bulk inserts ${seconds(seed.insertMs)}; VACUUM ANALYZE ${seconds(seed.analyzeMs)}); server up in ${seconds(server.startMs)}`,
    );
    const typeId = seed.types.get(TYPE).id;
    const g = Math.ceil(count / 2); // a bulk-inserted article, read after each rename
    const busy = await cpuBusy();
    if (busy > 0.2)
      console.log(`model-changes: WARNING: the CPUs are ${pct(busy)} busy with other work: the latencies will be high and noisy`);

    load = startLoad({ base: server.base, ws, key, ids: seed.articles, clients });
    const loadStarted = performance.now();
    await sleep(LOAD_WARMUP_MS);
    const baselineFrom = performance.now();
    await sleep(BASELINE_MS);
    const baselineTo = performance.now();
    const changes = await runChanges({
      base: server.base,
      ws,
      key,
      client,
      typeId,
      articleId: seed.articles[g - 1],
      g,
      log: (line) => console.log(line),
    }).catch((err) => {
      throw withServerOutput(server, err);
    });
    await load.stop();
    const loadEnded = performance.now();
    if (changes.some((c) => c.patch.status !== 200))
      console.log(`model-changes: the server's output (tail):\n${server.child.output().trim() || '(empty)'}`);
    return {
      records: load.records,
      failures: load.failures,
      loadMs: loadEnded - loadStarted,
      baseline: windowStats(load.records, baselineFrom, baselineTo),
      changes: changes.map((c) => ({
        ...c,
        during: windowStats(load.records, c.patch.sent, c.patch.answered),
        duringCleanup: c.cleanup && windowStats(load.records, c.cleanup.started, c.cleanup.ended),
      })),
      consistency: readConsistency(load.records, changes),
    };
  } finally {
    await load?.stop();
    await client.end().catch(() => {});
  }
}

function report(r, count, clients) {
  const rows = [
    { what: 'baseline (3 s before the first change)', patch: '', w: r.baseline },
    ...r.changes.flatMap((c) => [
      { what: `${c.id}. ${c.label}`, patch: c.patch.status === 200 ? ms(c.patch.ms) : `HTTP ${c.patch.status}`, w: c.during },
      ...(c.cleanup ? [{ what: `${c.id}. its cleanup of the documents (background)`, patch: '', w: c.duringCleanup }] : []),
    ]),
  ];
  const stat = (kind, k) => (x) => (k === 'n' ? String(x.w[kind].n) : ms(x.w[kind][k]));
  console.log(
    `model-changes on PostgreSQL, ${count.toLocaleString('en-US')} articles, ${clients} load workers (read by id and query alternately; ${r.records.length.toLocaleString('en-US')} requests in ${seconds(r.loadMs)}); ` +
      "latencies in ms of the requests in flight at any moment of each window (a change's: from sending its PATCH to its answer):",
  );
  const table = tableLines(
    [
      { title: 'window', width: Math.max(44, ...rows.map((x) => x.what.length + 2)), align: 'left', value: (x) => x.what },
      { title: 'PATCH ms', width: 10, value: (x) => x.patch },
      { title: 'length', width: 9, value: (x) => seconds(x.w.to - x.w.from) },
      { title: 'GET n', width: 8, value: stat('get', 'n') },
      { title: 'p50', width: 8, value: stat('get', 'p50') },
      { title: 'p99', width: 8, value: stat('get', 'p99') },
      { title: 'max', width: 8, value: stat('get', 'max') },
      { title: 'query n', width: 9, value: stat('query', 'n') },
      { title: 'p50', width: 8, value: stat('query', 'p50') },
      { title: 'p99', width: 8, value: stat('query', 'p99') },
      { title: 'max', width: 8, value: stat('query', 'max') },
    ],
    rows,
  );
  for (const line of table) console.log(line);
  // The requests over the target, placed against their window.
  for (const x of rows.slice(1)) {
    for (const kind of ['get', 'query']) {
      const s = x.w[kind].slowest;
      if (!s || s.end - s.start <= TARGETS.blockedMs) continue;
      const over = r.records.filter(
        (q) => q.kind === kind && q.start < x.w.to && q.end > x.w.from && q.end - q.start > TARGETS.blockedMs,
      ).length;
      const at = (t, ref) => `${ms(Math.abs(t - ref))} ms ${t < ref ? 'before' : 'after'}`;
      console.log(
        `  ${x.what}: ${over} ${kind === 'get' ? 'GET' : 'query'} request(s) over ${TARGETS.blockedMs} ms; the slowest (${ms(s.end - s.start)} ms) sent ${at(s.start, x.w.from)} the window opened, answered ${at(s.end, x.w.to)} it closed`,
      );
    }
  }
  for (const c of r.changes) if (c.check) console.log(`  ${c.id}. checked after the answer: ${c.check}`);
  const removal = r.changes.find((c) => c.cleanup);
  if (removal) {
    console.log(
      `  cleanup of state from the documents (the server's entries:field-cleanup task, queued by the removal): ${removal.cleanup.done ? 'finished' : 'NOT finished'} ` +
        `${seconds(removal.cleanup.ms)} after the PATCH's answer; documents of the type still holding state: ${removal.cleanup.remaining} (no target: it runs in the background)`,
    );
  }
  for (const x of r.consistency) {
    console.log(
      `  the load's reads sent after the change answered showing ${x.what}: ${x.checked - x.wrong} of ${x.checked}${x.wrong ? ` (WRONG: ${x.wrong}, e.g. fields ${JSON.stringify(x.example)})` : ''}`,
    );
  }
  console.log(
    `  failed requests of the load: ${r.failures.count} of ${r.records.length}${r.failures.first ? `; the first: ${r.failures.first}` : ''}`,
  );
  for (const c of r.changes) for (const p of c.problems) console.log(`  PROBLEM: ${c.id}. ${c.label}: ${p}`);

  // Targets
  const answered = (kind, limit) => {
    const cs = r.changes.filter((c) => c.kind === kind);
    return {
      ok: cs.every((c) => c.patch.status === 200 && c.patch.ms <= limit),
      text: cs.map((c) => `${c.id} ${c.patch.status === 200 ? `${ms(c.patch.ms)} ms` : `HTTP ${c.patch.status}`}`).join(', '),
    };
  };
  const add = answered('add', TARGETS.addMs);
  const rename = answered('rename', TARGETS.renameMs);
  const remove = answered('remove', TARGETS.removeMs);
  const windows = r.changes.flatMap((c) => [c.during, ...(c.duringCleanup ? [c.duringCleanup] : [])]);
  const worst = Math.max(...windows.flatMap((w) => [w.get.max, w.query.max]).filter(Number.isFinite));
  const blockedOk = worst <= TARGETS.blockedMs;
  const cleanupOk = r.changes.every((c) => !c.cleanup || (c.cleanup.done && c.cleanup.remaining === 0));
  const wrongReads = r.consistency.reduce((n, x) => n + x.wrong, 0);
  const checksOk = r.changes.every((c) => c.problems.length === 0);
  const targets = [
    `add answers <= ${TARGETS.addMs} ms (${add.text}): ${verdict(add.ok)}`,
    `rename answers <= ${TARGETS.renameMs} ms (${rename.text}): ${verdict(rename.ok)}`,
    `remove answers <= ${TARGETS.removeMs} ms (${remove.text}), documents cleaned up in the background (${removal?.cleanup ? seconds(removal.cleanup.ms) : '-'}): ${verdict(remove.ok && cleanupOk)}`,
    `reads and queries never blocked > ${TARGETS.blockedMs} ms during a change or the cleanup (max ${ms(worst)} ms): ${verdict(blockedOk)}`,
    `no failed request (${r.failures.count} of ${r.records.length}): ${verdict(r.failures.count === 0)}`,
    `reads correct meanwhile (${wrongReads} wrong; checks after each change ${checksOk ? 'passed' : 'FAILED'}): ${verdict(wrongReads === 0 && checksOk)}`,
  ];
  console.log(
    `model-changes targets (PostgreSQL, ${count.toLocaleString('en-US')} articles, ${clients} load workers): ${targets.join('; ')}`,
  );
}

export async function benchModelChanges(options = {}) {
  const env = process.env;
  const count = Number(options.articles ?? env.BENCH_CHANGE_ARTICLES ?? 100_000);
  const clients = Number(options.clients ?? env.BENCH_CHANGE_CLIENTS ?? 8);
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  if (!(count >= 1000)) throw new Error('BENCH_CHANGE_ARTICLES must be at least 1000');
  if (!(clients >= 1)) throw new Error('BENCH_CHANGE_CLIENTS must be at least 1');
  checkBuild('model-changes');

  const removeHandlers = installSignalHandlers('model-changes bench');
  let result;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `model-changes: ${count.toLocaleString('en-US')} articles, ${clients} load workers; ${LOAD_WARMUP_MS / 1000} s of load not counted, ${BASELINE_MS / 1000} s of baseline, then five changes ${PAUSE_MS / 1000} s apart; ` +
        `node ${process.version}, ${os.cpus().length} CPUs (the load runs on the same machine)`,
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`model-changes: ${msg}: skipped (the section runs on PostgreSQL)`);
      return { result, invalid };
    }
    result = await runPostgres({ adminUrl, count, clients });
    report(result, count, clients);
    if (result.failures.count > 0 || result.changes.some((c) => c.patch.status !== 200)) invalid = true;
    console.log(`model-changes: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('model-changes: WARNING: some requests or changes did not answer 200; those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, invalid };
}

await runStandalone(import.meta, 'model-changes', benchModelChanges);
