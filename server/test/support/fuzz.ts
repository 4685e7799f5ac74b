// The spec-driven fuzz test's support: settings from the environment, the operations to fuzz,
// and the harness (generators in fuzz/body.ts and fuzz/params.ts, the spec oracle in
// fuzz/schema.ts, fixtures in fuzz/world.ts, database snapshots in fuzz/state.ts).
import { loadDocument, readOperations, type OperationSpec } from '../../src/http/spec';
import { testMode } from './env';

export { FuzzHarness, distinctFailures, formatFailure, operationSeed, type Failure, type FuzzCase } from './fuzz/harness';
export { StateProbe, VOLATILE_TABLES } from './fuzz/state';

function integerEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw)) throw new Error(`${name} must be an integer, got "${raw}"`);
  return Number(raw);
}

export const DEFAULT_SEED = 20_261_122;
/**
 * Random cases per operation by default, on top of the fixed ones that always run (one or more
 * per category and location: every bound plus and minus one, every required property, ...).
 */
export const DEFAULT_RUNS = testMode === 'pglite' ? 4 : 16;

export interface FuzzSettings {
  seed: number;
  runs: number;
  failFast: boolean;
  /** Operation ids to fuzz (FUZZ_OPS), all when empty. */
  only: string[];
  /** A file to write every failure to as JSON (FUZZ_REPORT). */
  report?: string;
}

/**
 * FUZZ_SEED (default DEFAULT_SEED): the run's seed; every operation derives its own from it.
 * FUZZ_RUNS (default DEFAULT_RUNS): random cases per operation; e.g. FUZZ_RUNS=5000 for a long run.
 * FUZZ_FAIL_FAST=1: stop an operation at its first failure and let fast-check shrink it.
 * FUZZ_OPS=createUserFile,getFile: only these operations.
 * FUZZ_REPORT=/tmp/fuzz.json: write every failure there as JSON.
 * FUZZ_VERBOSE=1: print every case and its answer (read by fuzz/harness.ts).
 */
export function fuzzSettings(): FuzzSettings {
  return {
    seed: integerEnv('FUZZ_SEED', DEFAULT_SEED),
    runs: integerEnv('FUZZ_RUNS', DEFAULT_RUNS),
    failFast: process.env.FUZZ_FAIL_FAST === '1',
    only: (process.env.FUZZ_OPS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    report: process.env.FUZZ_REPORT || undefined,
  };
}

/** Every operation of the bundled spec: a new one is fuzzed with no new code. */
export function fuzzOperations(only: string[] = []): OperationSpec[] {
  const ops = readOperations(loadDocument());
  return only.length ? ops.filter((op) => only.includes(op.operationId)) : ops;
}
