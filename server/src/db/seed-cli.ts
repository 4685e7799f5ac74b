// Build step: writes dist/pglite-seed/, a new embedded database (its pgdata directory) with every
// migration and the job queue's schema applied, closed cleanly. A server started on an empty
// DATA_DIR copies it instead of running initdb (see database.ts `seedDataDir`).
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { openPglite } from './database';
import { migrate } from './migrate';
import { pgliteSeedDir } from '../paths';
import { JobQueue } from '../jobs/queue';
import { createLogger } from '../lib/logger';

async function main(): Promise<void> {
  // Beside the seed (one file system, for the rename), named so that no start takes it for one.
  const dir = mkdtempSync(`${pgliteSeedDir}-build-`);
  rmSync(pgliteSeedDir, { recursive: true, force: true });
  try {
    const db = await openPglite(dir);
    await migrate(db);
    // pg-boss's schema too, so that the first start does not create it.
    const jobs = new JobQueue(db, createLogger('silent'));
    await jobs.start();
    await jobs.stop();
    await db.close();
    renameSync(path.join(dir, 'pgdata'), pgliteSeedDir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
