// `npm run db:migrate`: applies pending migrations to DATABASE_URL, or to the embedded database in DATA_DIR.
import { openDatabase } from './database';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: process.env.DATA_DIR || './data' });
  try {
    const ran = await migrate(db);
    console.log(ran.length ? `applied: ${ran.join(', ')}` : 'database is up to date');
  } finally {
    await db.close();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
