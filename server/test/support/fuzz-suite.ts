// Property-based fuzz test of every operation in the bundled spec (fast-check), with no code per
// operation: generators come from each operation's parameters and JSON body schema, so a new
// operation is fuzzed as soon as it is in the spec. Inputs: bodies mutated from a minimal valid
// instance (missing required properties, wrong types, unknown and prototype-named properties,
// each bound plus and minus one, huge strings, deep nesting, NUL, numbers beyond 64 bits), whole
// bodies that are not JSON, truncated JSON or other JSON types, sizes around `x-body-limit`, wrong
// content types, bodies at the size limit (the largest arrays of valid and of invalid items, the
// longest string, the most keys that fit: each answered within a bound while `/health` is asked); path and query parameters (wrong types, bounds, overflow, NUL, broken encodings,
// prototype names, resources of another workspace); each with the right credential, none or a
// wrong one. Every answer must be below 500 and documented for the operation with a body that
// matches its schema; input the spec refuses (or a missing or wrong credential) must not succeed;
// a refused write must leave the database as it was; an answer must not leave its keep-alive
// connection dead. See support/fuzz.ts and support/fuzz/.
//
// Seeded and bounded: each operation runs its fixed cases (every category, every bound and
// required property, ...) and DEFAULT_RUNS random ones, with seed DEFAULT_SEED (support/fuzz.ts):
// a fixed number of requests (about 6,000, printed at the end with the run's memory and CPU). The
// operations are dealt, in the spec's order, to SHARDS test files (fuzz-1.test.ts, fuzz-2.test.ts)
// that jest runs side by side, one per core, each with a server of its own. Other runs:
//   FUZZ_RUNS=500 npm test -- server/test/fuzz        long run: 500 random cases per operation
//   FUZZ_SEED=123 npm test -- server/test/fuzz        another seed
//   FUZZ_OPS=createUserFile,getFile npm test -- server/test/fuzz   these operations only (all in the first file)
//   FUZZ_FAIL_FAST=1 ...        stop an operation at its first failure and let fast-check shrink it
//   FUZZ_REPORT=/tmp/fuzz.json ...   also write every failure there as JSON
//   FUZZ_VERBOSE=1 ...          print every case and its answer
//   TEST_EMBEDDED=1 ...         on the embedded database (fewer random cases by default)
// A failing operation lists each distinct problem (kind, case, request, answer) with the seed.
import { writeFileSync } from 'node:fs';
import { startTestServer, type TestServer } from './server';
import { startReceiver, type Receiver } from './receiver';
import { distinctFailures, formatFailure, fuzzOperations, fuzzSettings, FuzzHarness, operationSeed, type Failure } from './fuzz';
import type { OperationSpec } from '../../src/http/spec';

/** How many test files share the operations: one per core of the 2-core machines. */
export const SHARDS = 2;

/**
 * The operations whose fuzzing takes longest (20 to 40 s each on a 2-core machine, their setup and
 * their bodies at the size limit), dealt first so that each file gets its share of them.
 */
const HEAVIEST = ['planModel', 'replaceContract', 'createContract', 'applyModel', 'deleteWorkspace', 'updateWorkspace'];

/** Every SHARDS-th operation from the heaviest on, then in the spec's order. */
function dealt(operations: OperationSpec[], shard: number): OperationSpec[] {
  const weight = (op: OperationSpec) => {
    const i = HEAVIEST.indexOf(op.operationId);
    return i < 0 ? HEAVIEST.length : i;
  };
  const ordered = [...operations].sort((a, b) => weight(a) - weight(b));
  return ordered.filter((_, i) => i % SHARDS === shard - 1);
}

/** The fuzz test of shard `shard` (1..SHARDS): every SHARDS-th operation, or all FUZZ_OPS in the first. */
export function fuzzSuite(shard: number): void {
  const settings = fuzzSettings();
  const operations = settings.only.length ? (shard === 1 ? fuzzOperations(settings.only) : []) : dealt(fuzzOperations(), shard);

  let s: TestServer;
  let receiver: Receiver;
  let harness: FuzzHarness;
  const started = Date.now();
  const cpuAtStart = process.cpuUsage();
  const rssAtStart = process.memoryUsage().rss;
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const allFailures: Failure[] = [];

  beforeAll(async () => {
    receiver = await startReceiver(() => 200);
    // The test clock is on so that its routes are fuzzed too (a clock moved by a case is reset).
    s = await startTestServer({ TEST_CLOCK: '1' });
    harness = await FuzzHarness.start(s, receiver);
  }, 60_000);

  afterAll(async () => {
    const statuses = harness
      ? [...harness.statuses]
          .sort(([a], [b]) => a - b)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')
      : '';
    console.log(
      `fuzz: ${harness?.requests ?? 0} requests (+${harness?.setupRequests ?? 0} setup, +${harness?.connectionChecks ?? 0} connection checks) on ${operations.length} operations in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `FUZZ_SEED=${settings.seed} FUZZ_RUNS=${settings.runs}; statuses {${statuses}}`,
    );
    if (harness) {
      // Server and test share this process: its memory and CPU over the run are the server's upper bound.
      const r = harness.resource;
      const cpu = process.cpuUsage(cpuAtStart);
      console.log(
        `fuzz: ${r.cases} bodies at their size limit; slowest answer ${r.slowest.ms} ms (${r.slowest.what}); slowest /health meanwhile ${r.slowestHealth.ms} ms (${r.slowestHealth.what}); ` +
          `process RSS ${mb(rssAtStart)} MB at start, ${mb(r.peakRss)} MB at its peak after such a body, ${mb(process.memoryUsage().rss)} MB at the end; CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s`,
      );
    }
    if (settings.report)
      writeFileSync(
        SHARDS > 1 ? settings.report.replace(/(\.json)?$/, `-${shard}$1`) : settings.report,
        JSON.stringify({ seed: settings.seed, runs: settings.runs, failures: allFailures }, null, 2),
      );
    await harness?.close();
    await s?.close();
    await receiver?.close();
  });

  describe(`fuzz: every operation of the spec, driven by its schemas (${shard} of ${SHARDS})`, () => {
    if (!operations.length) it.skip('no operation of FUZZ_OPS falls to this file', () => undefined);
    else
      it.each(operations.map((op) => [op.operationId, op] as const))(
        '%s',
        async (_id, op) => {
          const seed = operationSeed(settings.seed, op.operationId);
          const failures = await harness.fuzzOperation(op, { seed, numRuns: settings.runs, failFast: settings.failFast });
          allFailures.push(...failures);
          if (failures.length) {
            const distinct = distinctFailures(failures);
            throw new Error(
              `${failures.length} failing case(s), ${distinct.length} distinct, on ${op.operationId} ` +
                `(FUZZ_SEED=${settings.seed}, operation seed ${seed}; rerun with FUZZ_SEED=${settings.seed} FUZZ_OPS=${op.operationId}):\n\n` +
                distinct
                  .map(({ failure, count }) => `${formatFailure(failure)}${count > 1 ? `\n  (${count} cases like this one)` : ''}`)
                  .join('\n\n'),
            );
          }
        },
        120_000 + settings.runs * 2_000,
      );
  });
}
