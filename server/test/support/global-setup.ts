// Embedded mode: initialise one PGlite data dir (initdb plus migrations, about 3 s) that every
// test server copies, instead of initialising one per test file.
// Pooler pass (WSAPI_TEST_POOLER=1, scripts/test.mjs): starts the PgBouncer every test server goes
// through (support/pooler-pass.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database';
import { migrate } from '../../src/db/migrate';
import { startPoolerPass } from './pooler-pass';

export default async function globalSetup(): Promise<void> {
  if (process.env.WSAPI_TEST_POOLER === '1' && !process.env.WSAPI_TEST_POOLER_PORT) await startPoolerPass();
  if (process.env.WSAPI_TEST_MODE !== 'pglite' || process.env.WSAPI_TEST_PGLITE_TEMPLATE) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'wsapi-pglite-template-'));
  const db = await openDatabase({ dataDir: dir });
  await migrate(db);
  await db.close();
  process.env.WSAPI_TEST_PGLITE_TEMPLATE = dir;
}
