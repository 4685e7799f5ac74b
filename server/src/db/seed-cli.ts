// Build step: writes dist/pglite-seed.tar, a new embedded database with every migration applied.
// A server started on an empty DATA_DIR loads it instead of running initdb (see database.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openPgliteWithHandle } from './database';
import { migrate } from './migrate';
import { pgliteSeedPath } from '../paths';

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wsapi-seed-'));
  rmSync(pgliteSeedPath, { force: true });
  try {
    const { db, pglite } = await openPgliteWithHandle(dir);
    await migrate(db);
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
