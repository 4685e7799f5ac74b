// A fresh database for each test server: a new PostgreSQL database in postgres mode, a copy of
// the migrated template data dir in embedded mode.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { adminDatabaseUrl, pgliteTemplate, runId, testMode, type TestMode } from './env';

export interface TestDatabase {
  /** DATABASE_URL for the server, undefined in embedded mode. */
  url: string | undefined;
  /** DATA_DIR for the server (files, secrets; the embedded database in embedded mode). */
  dataDir: string;
  drop(): Promise<void>;
}

let counter = 0;

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminDatabaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh database of the run's kind, or of `mode` (a test that moves data between the two). */
export async function createTestDatabase(mode: TestMode = testMode): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wsapi-test-'));
  if (mode === 'pglite') {
    // Without the embedded pass's template (a PostgreSQL run), the server starts one of its own.
    if (pgliteTemplate) cpSync(pgliteTemplate, dataDir, { recursive: true });
    return { url: undefined, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  // Jest loads this module again for each test file of a worker: the counter alone repeats there.
  const name = `wsapi_${runId}_${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
