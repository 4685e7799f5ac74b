// Shutdown: nothing touches the database after the server closes it. The job queue's stop
// (jobs/queue.ts) and the server's close (app.ts) wait for what is in flight. On both engines.
import { openDatabase, type Database, type Prepare } from '../src/db/database';
import { migrate } from '../src/db/migrate';
import { JobQueue } from '../src/jobs/queue';
import { createLogger } from '../src/lib/logger';
import { createTestDatabase, type TestDatabase } from './support/database';
import { setupWorkspace } from './support/fixtures';
import { startTestServer } from './support/server';

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

/** Holds the first statement it is given until `open()`; `reached` resolves when that one arrives. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let arrive!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  let held = false;
  return {
    reached,
    open,
    async hold(): Promise<void> {
      if (held) return;
      held = true;
      arrive();
      await opened;
    },
  };
}

it('stops only once a batch fetched while stopping has run and pg-boss has completed it', async () => {
  // pg-boss's fetch (`... FOR UPDATE SKIP LOCKED`) is held until the stop has begun: pg-boss's own
  // stop does not wait for a fetch, whose jobs then run, and are completed, after it.
  const fetch = gate();
  const slow: Database = {
    ...db,
    async query(text, values, prepare) {
      if (text.includes('SKIP LOCKED')) await fetch.hold();
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
  await fetch.reached;

  const stopped = queue.stop();
  await new Promise((resolve) => setTimeout(resolve, 50));
  fetch.open();
  await stopped;

  expect(handled).toEqual([{ n: 1 }]);
  const { rows } = await db.query<{ state: string }>('SELECT state::text FROM pgboss.job WHERE id = $1', [id]);
  expect(rows).toEqual([{ state: 'completed' }]);
});

it('closes the database only once the handler of a request whose client went away has finished', async () => {
  const s = await startTestServer();
  const { workspace, key } = await setupWorkspace(s.admin);
  // The request's first read (its key, not yet cached) is held until the server has begun to close.
  const { db: appDb } = s.server.app;
  const query = appDb.query.bind(appDb);
  const results: string[] = [];
  const lookup = gate();
  appDb.query = async <T>(text: string, values?: unknown[], prepare?: Prepare) => {
    if (!text.includes('AS key_id')) return query<T>(text, values, prepare);
    await lookup.hold();
    try {
      const res = await query<T>(text, values, prepare);
      results.push('answered');
      return res;
    } catch (err) {
      results.push((err as Error).message);
      throw err;
    }
  };
  const abort = new AbortController();
  const request = fetch(`${s.url}/api/v1/${workspace.name}/objects`, {
    headers: { Authorization: `Bearer ${key.key}` },
    signal: abort.signal,
  }).catch((err: Error) => err.name);
  await lookup.reached;
  abort.abort();
  expect(await request).toBe('AbortError');

  let closed = false;
  const closing = s.close().then(() => (closed = true));
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(closed).toBe(false);
  lookup.open();
  await closing;
  expect(results).toEqual(['answered']);
});
