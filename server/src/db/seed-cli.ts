// Build step: writes dist/pglite-seed.tar, a new embedded database with every migration (and the
// job queue's schema) applied.
// A server started on an empty DATA_DIR loads it instead of running initdb (see database.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openPgliteWithHandle } from './database';
import { migrate } from './migrate';
import { pgliteSeedPath } from '../paths';
import { JobQueue } from '../jobs/queue';
import { createLogger } from '../lib/logger';

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wsapi-seed-'));
  rmSync(pgliteSeedPath, { force: true });
  try {
    const { db, pglite } = await openPgliteWithHandle(dir);
    await migrate(db);
    // pg-boss's schema too, so that the first start does not create it.
    const jobs = new JobQueue(db, createLogger('silent'));
    await jobs.start();
    await jobs.stop();
    const dump = await pglite.dumpDataDir('none');
    await db.close();
    writeFileSync(pgliteSeedPath, Buffer.from(await dump.arrayBuffer()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
