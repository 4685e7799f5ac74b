#!/usr/bin/env node
// `npm test`: builds, picks the database, runs jest.
//   - PostgreSQL when one answers (TEST_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres):
//     every test server gets a fresh database of this run; all are dropped at the end.
//   - Otherwise the embedded PostgreSQL (PGlite); tests that need several server processes, a
//     browser or a PostgreSQL server are skipped, with the reason printed.
//   - REQUIRE_POSTGRES=1 (set by .ci/run) fails instead of falling back.
//   - TEST_EMBEDDED=1 runs the embedded mode even when PostgreSQL answers.
//   - On PostgreSQL a whole run ends with a pooler pass: the multi-process tests and a slice of the
//     entry suites, in 4 jest workers at once, every test server reaching its database through one
//     PgBouncer in transaction mode (fewer server connections than the servers' pools) and LISTENing
//     on it directly. Skipped without Debian's pgbouncer unless REQUIRE_POOLER=1.
//     TEST_POOLER=1 runs the chosen tests that way.
//   - It then ends with an embedded pass: the write paths' suites again on the embedded database,
//     whose single connection a unit of work holds (a read that goes around the unit there waits
//     forever, where PostgreSQL would only read older data), and the largest model and the kept
//     texts' bounds, which must hold on both databases.
// Extra arguments go to jest (e.g. `npm test -- server/test/auth.test.ts`).
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '..');
const adminUrl = process.env.TEST_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const runId = `r${Date.now().toString(36)}`;

async function reachable(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (err) {
    return err.message;
  } finally {
    await client.end().catch(() => {});
  }
}

const ok = process.env.TEST_EMBEDDED === '1' ? 'TEST_EMBEDDED=1' : await reachable(adminUrl);
const safeUrl = adminUrl.replace(/:\/\/([^:@]+):[^@]*@/, '://$1:***@');
let mode;
if (ok === true) {
  mode = 'postgres';
  console.log(`Test database: PostgreSQL at ${safeUrl} (a fresh database per test server, prefix wsapi_${runId}_)`);
} else if (process.env.REQUIRE_POSTGRES === '1') {
  console.error(`Test database: PostgreSQL required (REQUIRE_POSTGRES=1) but ${safeUrl} does not answer: ${ok}`);
  process.exit(1);
} else {
  mode = 'pglite';
  console.log(
    `Test database: embedded PGlite (no PostgreSQL at ${safeUrl}: ${ok}). Multi-process, browser and PostgreSQL-only tests are skipped.`,
  );
}

execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit', cwd: root });

// PGlite loads its WebAssembly through a dynamic import, which jest's module sandbox runs only
// with --experimental-vm-modules.
const jestArgs = ['--experimental-vm-modules', '--no-warnings=ExperimentalWarning', path.join(root, 'node_modules/jest/bin/jest.js')];
const resultsFile = (pass) => path.join(root, '.cache', `jest-results${pass}.json`);
mkdirSync(path.join(root, '.cache'), { recursive: true });
const runJest = (pass, args, env = {}) => {
  rmSync(resultsFile(pass), { force: true });
  return spawnSync(process.execPath, [...jestArgs, '--json', `--outputFile=${resultsFile(pass)}`, ...args], {
    stdio: 'inherit',
    cwd: root,
    env: { ...process.env, WSAPI_TEST_MODE: mode, WSAPI_TEST_ADMIN_URL: adminUrl, WSAPI_TEST_RUN_ID: runId, ...env },
  }).status;
};
// A whole run keeps the fuzz test (CPU-heavy) apart: it runs after the rest, so that it does not
// starve the timing-sensitive tests of the other jest worker, as two files side by side (its
// operations dealt between them, support/fuzz-suite.ts) so that it keeps both cores busy. (Run
// beside the pooler pass it starved both: fuzz 454 s instead of 243, and timeouts in each.)
const own = process.argv.slice(2);
const pooler = mode === 'postgres' && existsSync('/usr/sbin/pgbouncer');
if (mode === 'postgres' && !pooler) {
  if (process.env.REQUIRE_POOLER === '1') {
    console.error('Pooler pass: REQUIRE_POOLER=1 but /usr/sbin/pgbouncer is missing (apt-get install pgbouncer)');
    process.exit(1);
  }
  if (!own.length) console.log('Pooler pass skipped: /usr/sbin/pgbouncer is missing (apt-get install pgbouncer)');
}
const poolerEnv = { WSAPI_TEST_POOLER: '1' };
const slice = (names) => names.map((name) => `server/test/${name}\\.test\\.ts$`);
const embeddedSlice = [
  'entries-batch',
  'objects',
  'pipelines',
  'unit-of-work',
  'typed-storage',
  'database',
  'model-scale',
  'kept-texts',
  'content-type-changes',
  'workspace-deletion',
  'model-as-code',
];
// What a transaction-mode pooler can break: sessions (LISTEN, across processes), prepared and
// shaped statements, transactions, locks and DDL. entries-rules (field rules, refused before
// the database; 242 s behind the pooler, the pass's longest) proves nothing more there.
const poolerSlice = [
  'multi-process',
  'entries',
  'entries-batch',
  'entries-query',
  'objects-concurrency',
  'lookup-cache',
  'typed-storage',
  'content-type-changes',
  'model-as-code',
];
const passes = own.length
  ? [['', own, process.env.TEST_POOLER === '1' ? poolerEnv : {}]]
  : [
      ['', ['--testPathIgnorePatterns', 'fuzz-\\d\\.test\\.ts']],
      ['-fuzz', ['server/test/fuzz-\\d\\.test\\.ts$']],
      ...(pooler ? [['-pooler', ['--maxWorkers=4', ...slice(poolerSlice)], poolerEnv]] : []),
      ...(mode === 'postgres' ? [['-embedded', slice(embeddedSlice), { WSAPI_TEST_MODE: 'pglite' }]] : []),
    ];
// Wall time of each pass, reported with the closing line.
const seconds = [];
const statuses = passes.map(([pass, args, env]) => {
  const started = Date.now();
  const status = runJest(pass, args, env);
  seconds.push(`${pass === '' ? 'main' : pass.slice(1)} ${Math.round((Date.now() - started) / 1000)} s`);
  return status;
});
const result = { status: statuses.every((x) => x === 0) ? 0 : (statuses.find((x) => x !== 0) ?? 1) };

if (mode === 'postgres') {
  // Drop whatever a crashed test left behind.
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [`wsapi_${runId}_%`]);
  for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  await client.end();
}
// One plain closing line over every pass, whatever reads the log.
const read = (pass) => (existsSync(resultsFile(pass)) ? JSON.parse(readFileSync(resultsFile(pass), 'utf8')) : undefined);
const results = passes.map(([pass]) => read(pass)).filter(Boolean);
if (results.length) {
  const sum = (k, of = results) => of.reduce((n, r) => n + r[k], 0);
  const skipped = (of) => sum('numPendingTests', of) + sum('numTodoTests', of);
  // The embedded pass skips, by design, what needs a PostgreSQL server (several processes, ...).
  const embedded = passes.some(([pass]) => pass === '-embedded') && read('-embedded');
  const note = embedded ? ` (${skipped([embedded])} of them PostgreSQL-only, in the embedded pass)` : '';
  console.log(
    `tests: ${sum('numPassedTests')} passed, ${sum('numFailedTests')} failed, ${skipped(results)} skipped${note}; wall time by pass: ${seconds.join(', ')}`,
  );
}
process.exit(result.status ?? 1);
