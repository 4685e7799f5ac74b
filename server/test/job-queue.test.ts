// The job queue's shutdown (jobs/queue.ts): a stop waits for everything of the queue in flight, so
// that nothing of it touches the database after the server closes it. On both engines.
import { openDatabase, type Database } from '../src/db/database';
import { migrate } from '../src/db/migrate';
import { JobQueue } from '../src/jobs/queue';
import { createLogger } from '../src/lib/logger';
import { createTestDatabase, type TestDatabase } from './support/database';

let test: TestDatabase;
let db: Database;
beforeAll(async () => {
  test = await createTestDatabase();
  db = await openDatabase({ databaseUrl: test.url, dataDir: test.dataDir });
  await migrate(db);
});
afterAll(async () => {
  await db.close();
  await test.drop();
});

it('stops only once a batch fetched while stopping has run and pg-boss has completed it', async () => {
  // pg-boss's fetch (`... FOR UPDATE SKIP LOCKED`) is held until the stop has begun: pg-boss's own
  // stop does not wait for a fetch, whose jobs then run, and are completed, after it.
  let held = false;
  let release!: () => void;
  const releasing = new Promise<void>((resolve) => (release = resolve));
  let fetching!: () => void;
  const fetched = new Promise<void>((resolve) => (fetching = resolve));
  const slow: Database = {
    ...db,
    async query(text, values, prepare) {
      if (!held && text.includes('SKIP LOCKED')) {
        held = true;
        fetching();
        await releasing;
      }
      return db.query(text, values, prepare);
    },
  };
  const queue = new JobQueue(slow, createLogger('silent'));
  const handled: unknown[] = [];
  queue.define<{ n: number }>('probe', async (data) => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    handled.push(data);
  });
  await queue.start();
  const id = await queue.send('probe', { n: 1 });
  await queue.startWorkers();
  await fetched;

  const stopped = queue.stop();
  await new Promise((resolve) => setTimeout(resolve, 50));
  release();
  await stopped;

  expect(handled).toEqual([{ n: 1 }]);
  const { rows } = await db.query<{ state: string }>('SELECT state::text FROM pgboss.job WHERE id = $1', [id]);
  expect(rows).toEqual([{ state: 'completed' }]);
});
