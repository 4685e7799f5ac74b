// Which database the run uses, decided once by scripts/test.mjs and passed in the environment.
export type TestMode = 'postgres' | 'pglite';

export const testMode: TestMode = process.env.WSAPI_TEST_MODE === 'pglite' ? 'pglite' : 'postgres';
/** A PostgreSQL URL with rights to create databases (postgres mode only). */
export const adminDatabaseUrl = process.env.WSAPI_TEST_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
/** Prefix of every database this run creates (dropped by global teardown). */
export const runId = process.env.WSAPI_TEST_RUN_ID ?? `local${process.pid}`;
/** Embedded mode: an initialised, migrated PGlite data dir copied for each server. */
export const pgliteTemplate = process.env.WSAPI_TEST_PGLITE_TEMPLATE ?? '';

/** `describe` for tests that need several server processes, a browser or a PostgreSQL server. */
export const describeWithPostgres = testMode === 'postgres' ? describe : describe.skip;
