// A workspace's export and import (issue 39, part 4's targets) on the anchor's workspace, on the
// built server (dist/) with APP_ENV=local (rate limits off) and LOG_LEVEL=error:
//
// Server A on a PostgreSQL server (a throwaway database): the anchor's model and rows
// (anchor.mjs seedRows: `authors`, 1,000 entries, and `articles`, BENCH_ARCHIVE_ARTICLES entries,
// default 100,000, all published; a few through the API, the rest with one INSERT per type as the
// API writes them; the anchor's plain tables beside them, not the workspace's), then VACUUM
// ANALYZE; and BENCH_ARCHIVE_FILES (20) uploads of BENCH_ARCHIVE_FILE_MIB (1) MiB of random bytes
// through POST /api/v1/{ws}/files (the JSON upload body), so that the archive has file parts.
//
// The steps, each timed from sending its request to its end (the export: the archive's last byte
// written to a temp file; an import: its answer), while the server process's RSS (VmRSS of
// /proc/<pid>/status) is sampled every 100 ms; its growth is the largest sample minus the one
// taken just before the request:
//   export A    GET /admin/v1/workspaces/{ws}/export, streamed to a temp file (never held in memory)
//   import B    POST /admin/v1/workspace-imports?name=<new name> of that file (Content-Type
//               application/gzip, streamed from disk) into server B on another throwaway
//               PostgreSQL database (fresh: an import keeps every ID, so it must not go back into A)
//   import B2   the same file into a fresh server on the embedded database (PGlite: no
//               DATABASE_URL, its data in DATA_DIR), at most BENCH_ARCHIVE_EMBEDDED_TIMEOUT_S (300)
//               seconds: past that the request is aborted and the step reported as timed out
//   export B2   (when import B2 answered) the imported workspace exported again from the embedded
//               server, to a temp file, for the other way on the embedded database
// Entries per second count the rows of `entries` the archive's manifest gives (the authors and
// the articles); MB/s the archive's compressed bytes (MB = 10^6 bytes, the RSS too).
// Checks: the manifest's entries are the seeded ones; each import's answer counts as many rows of
// every table as the manifest (rows.entries among them) and the uploaded files; on each imported
// workspace (an API key issued for the imported creator) an article read by id equals A's answer
// and an aggregate count of each type is the seeded one; the embedded export's manifest counts
// the same rows as A's.
// Targets (the issue's): at least 5,000 entries/s each way, the server's RSS growth under 100 MB
// during each step. Without PostgreSQL nothing runs.
//
// Standalone: `node scripts/bench/archive.mjs [--build]` (without --build it runs dist/ as it is).
// Environment:
//   BENCH_ARCHIVE_ARTICLES=100000  articles (at least 1000; authors: 1000)
//   BENCH_ARCHIVE_FILES=20    files uploaded to A (0: none)   BENCH_ARCHIVE_FILE_MIB=1  each file's size
//   BENCH_ARCHIVE_EMBEDDED=1  0 skips the embedded server (import B2, export B2)
//   BENCH_ARCHIVE_EMBEDDED_TIMEOUT_S=300  limit of each embedded step
//   BENCH_ARCHIVE_TIMEOUT_S=1800  limit of each PostgreSQL step
//   BENCH_ARCHIVE_PROFILE=1   run the servers under --cpu-prof and print each step's top functions
//                             by self time (the profile cut to the step)
//   BENCH_PG_URL=postgresql://postgres@127.0.0.1:5432/postgres   where the throwaway databases
//                             (wsbench_<random>) are created and dropped WITH (FORCE)
//   BENCH_REQUIRE_POSTGRES=1  fail instead of skipping when that server is not reachable
//   BENCH_KEEP_DATABASE=1     keep the PostgreSQL databases (their URLs are printed)
//   BENCH_LOG_LEVEL=error     the servers' LOG_LEVEL (their output is shown when a step fails)
//   BENCH_ARCHIVE_SHOW_LOG=1  with BENCH_LOG_LEVEL=info: print import B's phases (rows, reference
//                             checks, typed storage), as the server logs them
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isDeepStrictEqual } from 'node:util';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import { ABILITIES, AUTHORS, BUCKET, PERMISSIONS, entriesPath, queryPath, seedRows } from './anchor.mjs';
import { monotonicUs, readProfile, selfTimes, topSelfTimeLines } from './cpu.mjs';
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
  pct,
  postgresReachable,
  root,
  runStandalone,
  seconds,
  setup,
  startServer,
  stopServer,
  tableLines,
  verdict,
  withServerOutput,
} from './support.mjs';

const TARGETS = { entriesPerSecond: 5000, rssGrowthMB: 100 };
const RSS_EVERY_MS = 100;
const MB = 1e6;
const IMPORTED = 'bench-imported'; // the imported workspace's name (?name=)

const variantEnv = () => ({ APP_ENV: 'local', LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'error' });
const mb = (bytes) => (Number.isFinite(bytes) ? (bytes / MB).toFixed(1) : '-');
const fmt = (x, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-';

// ---------------------------------------------------------------------------------------------
// Measuring a step

/** VmRSS of process `pid` in bytes (NaN when it is gone). */
function rssBytes(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  } catch {
    return NaN;
  }
}

/** Samples the RSS of `pid` every RSS_EVERY_MS from now until `stop()`, which answers start, max, end and growth (max - start). */
function sampleRss(pid) {
  const start = rssBytes(pid);
  let max = start;
  let samples = 1;
  const timer = setInterval(() => {
    const v = rssBytes(pid);
    samples++;
    if (v > max) max = v;
  }, RSS_EVERY_MS);
  return {
    stop() {
      clearInterval(timer);
      const end = rssBytes(pid);
      if (end > max) max = end;
      return { start, max, end, growth: max - start, samples: samples + 1 };
    },
  };
}

/**
 * GET .../export of `ws` streamed into `file`; answers `{ok, ms, bytes, firstByteMs, rss, window}`
 * or `{ok: false, error}` (timeout included: `timedOut`).
 */
/** With BENCH_ARCHIVE_SHOW_LOG (and BENCH_LOG_LEVEL=info): the import's phases and memory, as its server logged them. */
function showPhases(step, server) {
  if (!process.env.BENCH_ARCHIVE_SHOW_LOG) return;
  for (const line of server.child
    .output()
    .split('\n')
    .filter((l) => l.includes('"workspace import"'))) {
    const { rows_ms, references_ms, typed_storage_ms, rss_mb, heap_total_mb, external_mb } = JSON.parse(line);
    console.log(
      `archive: ${step} phases: rows ${seconds(rows_ms)}, reference checks ${seconds(references_ms)}, typed storage ${seconds(typed_storage_ms)}; at its end RSS ${rss_mb} MB (V8 heap ${heap_total_mb} MB, external ${external_mb} MB)`,
    );
  }
}

const text = async (stream) => {
  let out = '';
  for await (const chunk of stream) out += chunk;
  return out;
};

async function timedExport(server, ws, file, timeoutMs) {
  const rss = sampleRss(server.child.pid);
  const fromUs = monotonicUs();
  const sent = performance.now();
  let firstByteMs;
  try {
    // node:http, not fetch: reading a 1 GB body through fetch's web stream took the bench a core
    // and 1.3 GB, and limited the export to 2.3 MB/s.
    const res = await new Promise((resolve, reject) => {
      const req = http.get(
        `${server.base}/admin/v1/workspaces/${ws}/export`,
        { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` }, signal: AbortSignal.timeout(timeoutMs) },
        resolve,
      );
      req.on('error', reject);
    });
    firstByteMs = performance.now() - sent;
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode} ${(await text(res)).slice(0, 1000)}`);
    if (!/gzip/.test(res.headers['content-type'] ?? ''))
      throw new Error(`Content-Type ${res.headers['content-type']}, expected application/gzip`);
    await pipeline(res, createWriteStream(file));
    const ms = performance.now() - sent;
    return { ok: true, ms, bytes: statSync(file).size, firstByteMs, rss: rss.stop(), window: { fromUs, toUs: monotonicUs() } };
  } catch (err) {
    const ms = performance.now() - sent;
    const timedOut = err?.name === 'TimeoutError';
    return {
      ok: false,
      ms,
      timedOut,
      error: timedOut ? `no complete archive within ${seconds(timeoutMs)}` : String(err?.cause?.message ?? err?.message ?? err),
      rss: rss.stop(),
      window: { fromUs, toUs: monotonicUs() },
    };
  }
}

/** The archive `file`'s chunks, counting the bytes handed to fetch in `counter.bytes`. */
async function* fileChunks(file, counter) {
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    counter.bytes += chunk.length;
    yield chunk;
  }
}

/**
 * POST /admin/v1/workspace-imports?name=`name` of `file`, streamed from disk; answers `{ok, ms,
 * status, body, rss, window, sentBytes}` (`ok`: 201), `timedOut` when aborted after `timeoutMs`.
 */
async function timedImport(server, file, name, timeoutMs) {
  const counter = { bytes: 0 };
  const rss = sampleRss(server.child.pid);
  const fromUs = monotonicUs();
  const sent = performance.now();
  try {
    const res = await fetch(`${server.base}/admin/v1/workspace-imports?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/gzip' },
      body: fileChunks(file, counter),
      duplex: 'half',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const ms = performance.now() - sent;
    const out = {
      ms,
      status: res.status,
      rss: rss.stop(),
      window: { fromUs, toUs: monotonicUs() },
      sentBytes: counter.bytes,
      bytes: statSync(file).size,
    };
    if (res.status !== 201) return { ...out, ok: false, error: `HTTP ${res.status} ${text.slice(0, 1000)}` };
    return { ...out, ok: true, body: JSON.parse(text) };
  } catch (err) {
    const ms = performance.now() - sent;
    const timedOut = err?.name === 'TimeoutError';
    return {
      ok: false,
      ms,
      timedOut,
      error: timedOut
        ? `no answer within ${seconds(timeoutMs)} (aborted; ${mb(counter.bytes)} of ${mb(statSync(file).size)} MB of the archive handed to the request by then)`
        : String(err?.cause?.message ?? err?.message ?? err),
      rss: rss.stop(),
      window: { fromUs, toUs: monotonicUs() },
      sentBytes: counter.bytes,
      bytes: statSync(file).size,
    };
  }
}

/** The archive's manifest.json (its first tar entry), read from the start of the gzip stream only. */
async function readManifest(file) {
  const source = createReadStream(file);
  const gunzip = createGunzip();
  source.pipe(gunzip);
  let buf = Buffer.alloc(0);
  try {
    for await (const chunk of gunzip) {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 512) continue;
      const text = (from, to) => buf.subarray(from, to).toString('latin1').replace(/\0.*$/s, '').trim();
      const name = text(0, 100);
      if (name !== 'manifest.json') throw new Error(`the archive's first entry is ${JSON.stringify(name)}, not manifest.json`);
      const size = parseInt(text(124, 136), 8);
      if (buf.length >= 512 + size) return JSON.parse(buf.subarray(512, 512 + size).toString('utf8'));
      if (buf.length > 64 * MB) break;
    }
    throw new Error('the archive ends before its manifest.json does');
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

const tableRows = (manifest, table) => manifest.tables.find((t) => t.name === table)?.rows;

// ---------------------------------------------------------------------------------------------
// The imported workspace: what must hold

/** The count of a type's entries through the query route. */
async function countOf(base, ws, key, type) {
  const body = await getJson(`${base}${queryPath(ws)}`, key, {
    method: 'POST',
    body: JSON.stringify({ type, aggregate: { count: true } }),
  });
  return body.data?.[0]?.count;
}

/**
 * An import's answer against the manifest, and the imported workspace on `server`: a key for the
 * imported creator, the sample article read by id equal to A's answer, each type's count. Returns
 * the problems found.
 */
async function checkImport({ server, answer, manifest, files, userId, sample, count }) {
  const problems = [];
  if (answer.workspace?.name !== IMPORTED)
    problems.push(`the answer's workspace is ${JSON.stringify(answer.workspace)}, expected ${IMPORTED}`);
  for (const t of manifest.tables) {
    if ((answer.rows?.[t.name] ?? 0) !== t.rows) problems.push(`rows.${t.name} ${answer.rows?.[t.name]}, the manifest says ${t.rows}`);
  }
  if (answer.files?.count !== files.count || answer.files?.bytes !== files.bytes)
    problems.push(`files ${JSON.stringify(answer.files)}, uploaded ${JSON.stringify(files)}`);
  try {
    const { key } = await call(server.base, 'POST', `/admin/v1/workspaces/${IMPORTED}/api-keys`, ADMIN_TOKEN, {
      name: 'bench',
      user_id: userId,
      abilities: ['*'],
    });
    const read = await getJson(`${server.base}${entriesPath(IMPORTED)}/${sample.id}`, key);
    // The rendered author's URLs name the workspace; compare what the entry holds.
    const strip = (a) => ({
      id: a.id,
      status: a.status,
      fields: { ...a.fields, author: a.fields?.author?.id },
      author: a.fields?.author?.fields,
    });
    if (!isDeepStrictEqual(strip(read), strip(sample)))
      problems.push(`article ${sample.id} read by id: ${JSON.stringify(strip(read))}, on A ${JSON.stringify(strip(sample))}`);
    const counts = {
      authors: await countOf(server.base, IMPORTED, key, 'authors'),
      articles: await countOf(server.base, IMPORTED, key, 'articles'),
    };
    if (counts.authors !== AUTHORS || counts.articles !== count)
      problems.push(`aggregate counts ${JSON.stringify(counts)}, seeded ${AUTHORS} authors and ${count} articles`);
  } catch (err) {
    problems.push(`reading the imported workspace: ${err.message}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// The run

/** Stops a server (gracefully: a --cpu-prof server writes its profile) and answers its steps' top functions. */
async function stopAndProfile(server, profileDir, windows) {
  const stopped = await stopServer(server.child);
  if (!profileDir) return [];
  if (!stopped.graceful)
    return windows.map(([label]) => ({ label, error: 'the server did not stop within 20 s of SIGTERM (killed): no profile' }));
  try {
    const profile = readProfile(profileDir);
    return windows.map(([label, window]) => ({ label, times: selfTimes(profile, window) }));
  } catch (err) {
    return windows.map(([label]) => ({ label, error: err.message }));
  }
}

async function run({ adminUrl, count, fileCount, fileMiB, embedded, pgTimeoutMs, embeddedTimeoutMs, profile }) {
  const out = { steps: [], problems: [], profiles: [] };
  const keep = process.env.BENCH_KEEP_DATABASE === '1';
  const tmp = makeTempDir('wsapi-bench-archive-');
  const profileDir = (name) => (profile ? makeTempDir(`wsapi-bench-archive-profile-${name}-`) : undefined);
  const archive = path.join(tmp, 'a.tar.gz');

  // --- Server A: seeded, then exported
  const dbA = await createDatabase(adminUrl);
  if (keep) {
    keepDatabase(dbA.name);
    console.log(`archive: keeping the database of A: ${dbA.url}`);
  }
  const profileA = profileDir('a');
  const a = await startServer({
    databaseUrl: dbA.url,
    dataDir: makeTempDir('wsapi-bench-archive-a-'),
    variantEnv: variantEnv(),
    profileDir: profileA,
  });
  const client = new pg.Client({ connectionString: dbA.url, options: SERVER_SESSION_OPTIONS });
  await client.connect();
  let seeded;
  try {
    seeded = await (async () => {
      const { ws, key, userId } = await setup(a.base, {
        permissions: [...PERMISSIONS, 'create-file', 'view-file'],
        abilities: [...ABILITIES, 'files:write', 'files:read'],
      });
      const seed = await seedRows({ serve: async () => a.base, ws, key, client, count, maintain: 'VACUUM (ANALYZE)' });
      const t = performance.now();
      const files = { count: 0, bytes: 0 };
      for (let i = 1; i <= fileCount; i++) {
        const content = randomBytes(fileMiB * 1024 * 1024);
        await call(a.base, 'POST', `/api/v1/${ws}/files`, key, {
          file: { name: `random-${i}.bin`, type: 'application/octet-stream', content: content.toString('base64') },
        });
        files.count++;
        files.bytes += content.length;
      }
      const uploadMs = performance.now() - t;
      const g = Math.ceil(count / 2); // a bulk-inserted article, read on each imported workspace
      const sample = await getJson(`${a.base}${entriesPath(ws)}/${seed.articles[g - 1]}`, key);
      return { ws, userId, seed, files, uploadMs, sample };
    })().catch((err) => {
      throw withServerOutput(a, err);
    });
  } finally {
    await client.end().catch(() => {});
  }
  console.log(
    `archive: A seeded with ${count.toLocaleString('en-US')} published articles and ${AUTHORS.toLocaleString('en-US')} authors in ${seconds(seeded.seed.totalMs)} ` +
      `(the bulk inserts ${seconds(seeded.seed.insertMs)}; VACUUM ANALYZE ${seconds(seeded.seed.analyzeMs)}), ${seeded.files.count} files of ${fileMiB} MiB uploaded in ${seconds(seeded.uploadMs)}; server up in ${seconds(a.startMs)}`,
  );
  const busy = await cpuBusy();
  if (busy > 0.2) console.log(`archive: WARNING: the CPUs are ${pct(busy)} busy with other work: the figures will be low and noisy`);

  const exportA = await timedExport(a, seeded.ws, archive, pgTimeoutMs);
  if (!exportA.ok) {
    out.steps.push({ step: 'export A (PostgreSQL)', ...exportA });
    throw withServerOutput(a, new Error(`export from A failed after ${seconds(exportA.ms)}: ${exportA.error}`));
  }
  const manifest = await readManifest(archive);
  const entries = tableRows(manifest, 'entries');
  const totalRows = manifest.tables.reduce((n, t) => n + t.rows, 0);
  out.manifest = manifest;
  out.steps.push({ step: 'export A (PostgreSQL)', entries, ...exportA });
  if (entries !== AUTHORS + count) out.problems.push(`the manifest of A's archive counts ${entries} entries, seeded ${AUTHORS + count}`);
  if (manifest.files?.count !== seeded.files.count || manifest.files?.bytes !== seeded.files.bytes)
    out.problems.push(`the manifest's files ${JSON.stringify(manifest.files)}, uploaded ${JSON.stringify(seeded.files)}`);
  console.log(
    `archive: export A: ${mb(exportA.bytes)} MB in ${seconds(exportA.ms)} (first byte after ${seconds(exportA.firstByteMs)}); manifest: ${entries.toLocaleString('en-US')} entries, ` +
      `${totalRows.toLocaleString('en-US')} rows in all (${manifest.tables
        .filter((t) => t.rows)
        .map((t) => `${t.name} ${t.rows}`)
        .join(', ')}), files ${JSON.stringify(manifest.files)}`,
  );
  out.profiles.push(...(await stopAndProfile(a, profileA, [['export A', exportA.window]])));

  // --- Server B: a fresh PostgreSQL database, the archive imported
  const dbB = await createDatabase(adminUrl);
  if (keep) {
    keepDatabase(dbB.name);
    console.log(`archive: keeping the database of B: ${dbB.url}`);
  }
  const profileB = profileDir('b');
  const b = await startServer({
    databaseUrl: dbB.url,
    dataDir: makeTempDir('wsapi-bench-archive-b-'),
    variantEnv: variantEnv(),
    profileDir: profileB,
  });
  const importB = await timedImport(b, archive, IMPORTED, pgTimeoutMs);
  out.steps.push({ step: 'import B (PostgreSQL)', entries: importB.ok ? importB.body.rows?.entries : entries, ...importB });
  if (importB.ok) {
    const problems = await checkImport({
      server: b,
      answer: importB.body,
      manifest,
      files: seeded.files,
      userId: seeded.userId,
      sample: seeded.sample,
      count,
    });
    out.problems.push(...problems.map((p) => `import B: ${p}`));
    console.log(
      `archive: import B: ${mb(importB.bytes)} MB in ${seconds(importB.ms)}; answer rows.entries ${importB.body.rows?.entries}, files ${JSON.stringify(importB.body.files)}; checks ${problems.length ? 'FAILED' : 'passed'}`,
    );
    showPhases('import B', b);
  } else {
    out.problems.push(`import B failed after ${seconds(importB.ms)}: ${importB.error}`);
    console.log(
      `archive: import B FAILED after ${seconds(importB.ms)}: ${importB.error}\nserver output (tail):\n${b.child.output().trim() || '(empty)'}`,
    );
  }
  out.profiles.push(...(await stopAndProfile(b, profileB, [['import B', importB.window]])));

  // --- Server B2: a fresh embedded database, the archive imported, then exported again
  if (embedded) {
    const profileB2 = profileDir('b2');
    const b2 = await startServer({ dataDir: makeTempDir('wsapi-bench-archive-b2-'), variantEnv: variantEnv(), profileDir: profileB2 });
    console.log(`archive: embedded server B2 up in ${seconds(b2.startMs)}`);
    const importB2 = await timedImport(b2, archive, IMPORTED, embeddedTimeoutMs);
    out.steps.push({ step: 'import B2 (embedded)', entries: importB2.ok ? importB2.body.rows?.entries : entries, ...importB2 });
    const windows = [['import B2', importB2.window]];
    if (importB2.ok) {
      const problems = await checkImport({
        server: b2,
        answer: importB2.body,
        manifest,
        files: seeded.files,
        userId: seeded.userId,
        sample: seeded.sample,
        count,
      });
      out.problems.push(...problems.map((p) => `import B2: ${p}`));
      console.log(
        `archive: import B2: ${mb(importB2.bytes)} MB in ${seconds(importB2.ms)}; answer rows.entries ${importB2.body.rows?.entries}, files ${JSON.stringify(importB2.body.files)}; checks ${problems.length ? 'FAILED' : 'passed'}`,
      );
      showPhases('import B2', b2);
      const again = path.join(tmp, 'b2.tar.gz');
      const exportB2 = await timedExport(b2, IMPORTED, again, embeddedTimeoutMs);
      windows.push(['export B2', exportB2.window]);
      if (exportB2.ok) {
        const m2 = await readManifest(again);
        out.steps.push({ step: 'export B2 (embedded)', entries: tableRows(m2, 'entries'), ...exportB2 });
        const differ = manifest.tables
          .filter((t) => tableRows(m2, t.name) !== t.rows)
          .map((t) => `${t.name} ${tableRows(m2, t.name)} (A ${t.rows})`);
        if (differ.length) out.problems.push(`export B2: the manifest counts other rows than A's: ${differ.join(', ')}`);
        if (!isDeepStrictEqual(m2.files, manifest.files))
          out.problems.push(`export B2: files ${JSON.stringify(m2.files)}, A's ${JSON.stringify(manifest.files)}`);
        console.log(
          `archive: export B2: ${mb(exportB2.bytes)} MB in ${seconds(exportB2.ms)} (first byte after ${seconds(exportB2.firstByteMs)}); its manifest ${differ.length ? 'DIFFERS from' : 'counts the same rows and files as'} A's`,
        );
      } else {
        out.steps.push({ step: 'export B2 (embedded)', entries, ...exportB2 });
        out.problems.push(`export B2 ${exportB2.timedOut ? 'timed out' : 'failed'} after ${seconds(exportB2.ms)}: ${exportB2.error}`);
        console.log(`archive: export B2 ${exportB2.timedOut ? 'TIMED OUT' : 'FAILED'} after ${seconds(exportB2.ms)}: ${exportB2.error}`);
      }
    } else {
      out.problems.push(`import B2 ${importB2.timedOut ? 'timed out' : 'failed'} after ${seconds(importB2.ms)}: ${importB2.error}`);
      console.log(
        `archive: import B2 ${importB2.timedOut ? 'TIMED OUT' : 'FAILED'} after ${seconds(importB2.ms)}: ${importB2.error}\nserver output (tail):\n${b2.child.output().trim() || '(empty)'}`,
      );
    }
    const stopping = performance.now();
    out.profiles.push(...(await stopAndProfile(b2, profileB2, windows)));
    const stopMs = performance.now() - stopping;
    if (stopMs > 5000) console.log(`archive: stopping B2 took ${seconds(stopMs)}`);
  }
  return out;
}

function report(r, count) {
  const rows = r.steps.map((s) => {
    const secondsTaken = s.ms / 1000;
    const eps = s.ok ? s.entries / secondsTaken : NaN;
    const mbps = s.ok ? s.bytes / MB / secondsTaken : NaN;
    const growth = s.rss?.growth;
    return {
      ...s,
      eps,
      mbps,
      growth,
      epsOk: s.ok && eps >= TARGETS.entriesPerSecond,
      rssOk: Number.isFinite(growth) && growth < TARGETS.rssGrowthMB * MB,
    };
  });
  const entries = tableRows(r.manifest, 'entries');
  console.log(
    `archive on the anchor workspace, ${count.toLocaleString('en-US')} articles + ${AUTHORS.toLocaleString('en-US')} authors = ${entries?.toLocaleString('en-US')} entries, archive ${mb(r.steps[0]?.bytes)} MB ` +
      `(RSS of the server process sampled every ${RSS_EVERY_MS} ms; growth = max - the sample just before the request; MB = 10^6 bytes):`,
  );
  const table = tableLines(
    [
      { title: 'step', width: 24, align: 'left', value: (x) => x.step },
      {
        title: 'seconds',
        width: 9,
        value: (x) => (x.ok ? (x.ms / 1000).toFixed(1) : x.timedOut ? `>${(x.ms / 1000).toFixed(0)}` : 'failed'),
      },
      { title: 'entries/s', width: 11, value: (x) => fmt(x.eps) },
      { title: 'MB/s', width: 8, value: (x) => fmt(x.mbps, 1) },
      { title: 'RSS growth MB', width: 15, value: (x) => mb(x.growth) },
      { title: 'RSS before → max MB', width: 21, value: (x) => `${mb(x.rss?.start)} → ${mb(x.rss?.max)}` },
      { title: `>= ${fmt(TARGETS.entriesPerSecond)}/s`, width: 13, value: (x) => verdict(x.epsOk) },
      { title: `RSS < ${TARGETS.rssGrowthMB} MB`, width: 14, value: (x) => verdict(x.rssOk) },
    ],
    rows,
  );
  for (const line of table) console.log(line);
  for (const x of rows.filter((s) => !s.ok)) console.log(`  ${x.step}: ${x.timedOut ? 'TIMED OUT' : 'FAILED'}: ${x.error}`);
  for (const p of r.problems) console.log(`  PROBLEM: ${p}`);
  if (!r.problems.length)
    console.log(
      "  checks passed: the manifest counts the seeded entries and files; each import answered as many rows of every table as the manifest and the files; on each imported workspace an article read by id equals A's and each type counts its seeded entries; the embedded export counts the same rows as A's",
    );
  for (const p of r.profiles) {
    console.log(`  top functions of the server by self time during ${p.label}${p.error ? `: ${p.error}` : ':'}`);
    if (p.times) for (const line of topSelfTimeLines(p.times, { top: 15, root })) console.log(line);
  }
  const eachWay = rows.map((x) => `${x.step} ${fmt(x.eps)}`).join(', ');
  const memory = rows.map((x) => `${x.step} ${mb(x.growth)} MB`).join(', ');
  const targets = [
    `at least ${fmt(TARGETS.entriesPerSecond)} entries/s each way (${eachWay}): ${verdict(rows.every((x) => x.epsOk))}`,
    `RSS growth under ${TARGETS.rssGrowthMB} MB (${memory}): ${verdict(rows.every((x) => x.rssOk))}`,
  ];
  const byDatabase = (tag) => rows.filter((x) => x.step.includes(tag));
  for (const [tag, name] of [
    ['PostgreSQL', 'PostgreSQL'],
    ['embedded', 'embedded'],
  ]) {
    const rs = byDatabase(tag);
    if (rs.length) targets.push(`${name}: ${verdict(rs.every((x) => x.epsOk && x.rssOk))}`);
  }
  console.log(`archive targets (${count.toLocaleString('en-US')} articles): ${targets.join('; ')}`);
}

export async function benchArchive(options = {}) {
  const env = process.env;
  const count = Number(options.articles ?? env.BENCH_ARCHIVE_ARTICLES ?? 100_000);
  const fileCount = Number(options.files ?? env.BENCH_ARCHIVE_FILES ?? 20);
  const fileMiB = Number(options.fileMiB ?? env.BENCH_ARCHIVE_FILE_MIB ?? 1);
  const embedded = options.embedded ?? env.BENCH_ARCHIVE_EMBEDDED !== '0';
  const embeddedTimeoutMs = 1000 * Number(options.embeddedTimeoutSeconds ?? env.BENCH_ARCHIVE_EMBEDDED_TIMEOUT_S ?? 300);
  const pgTimeoutMs = 1000 * Number(options.timeoutSeconds ?? env.BENCH_ARCHIVE_TIMEOUT_S ?? 1800);
  const profile = options.profile ?? env.BENCH_ARCHIVE_PROFILE === '1';
  const adminUrl = options.pgUrl ?? env.BENCH_PG_URL ?? DEFAULT_PG_URL;
  if (!(count >= 1000)) throw new Error('BENCH_ARCHIVE_ARTICLES must be at least 1000');
  if (!(fileCount >= 0) || !(fileMiB > 0)) throw new Error('BENCH_ARCHIVE_FILES must be at least 0 and BENCH_ARCHIVE_FILE_MIB more than 0');
  if (!(embeddedTimeoutMs > 0) || !(pgTimeoutMs > 0))
    throw new Error('BENCH_ARCHIVE_EMBEDDED_TIMEOUT_S and BENCH_ARCHIVE_TIMEOUT_S must be more than 0');
  checkBuild('archive');

  const removeHandlers = installSignalHandlers('archive bench');
  let result;
  let invalid = false;
  const started = performance.now();
  try {
    console.log(
      `archive: ${count.toLocaleString('en-US')} articles, ${fileCount} files of ${fileMiB} MiB; export from PostgreSQL, import into a fresh PostgreSQL database` +
        `${embedded ? ` and a fresh embedded server (at most ${seconds(embeddedTimeoutMs)} a step)` : ' (embedded: skipped, BENCH_ARCHIVE_EMBEDDED=0)'}${profile ? '; servers under --cpu-prof' : ''}; ` +
        `node ${process.version}, ${os.cpus().length} CPUs`,
    );
    const reachable = await postgresReachable(adminUrl);
    if (reachable !== true) {
      const msg = `PostgreSQL at ${adminUrl} not reachable (${reachable.message})`;
      if (env.BENCH_REQUIRE_POSTGRES === '1') throw new Error(msg);
      console.log(`archive: ${msg}: skipped (the section exports from PostgreSQL)`);
      return { result, invalid };
    }
    result = await run({ adminUrl, count, fileCount, fileMiB, embedded, pgTimeoutMs, embeddedTimeoutMs, profile });
    report(result, count);
    // A step that failed (not one that took too long) or a check that did not hold: the figures are not valid.
    if (result.steps.some((s) => !s.ok && !s.timedOut) || result.problems.some((p) => !/timed out/.test(p))) invalid = true;
    console.log(`archive: section took ${seconds(performance.now() - started)}`);
    if (invalid) console.log('archive: WARNING: a step failed or a check did not hold; those figures are not valid');
  } finally {
    await cleanupAsync();
    removeHandlers();
  }
  return { result, invalid };
}

await runStandalone(import.meta, 'archive', benchArchive);
