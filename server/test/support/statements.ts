// Database round trips of a request, counted in the server's own process: the statements on
// entries, their documents, files and content types that run while `fn` runs (background work,
// the job queue and the outbox, touches none of these tables; the request log is flushed first).
import type { TestServer } from './server';

const CONTENT = /\b(entries|entry_contents|files|content_types)\b/;

export async function contentStatements(s: TestServer, fn: () => Promise<unknown>): Promise<number> {
  await s.server.app.requestLogs.flush();
  const db = s.server.app.db;
  const original = db.query;
  let n = 0;
  db.query = ((...args: Parameters<typeof original>) => {
    if (CONTENT.test(args[0])) n++;
    return original.apply(db, args);
  }) as typeof db.query;
  try {
    await fn();
  } finally {
    db.query = original;
  }
  return n;
}

/**
 * The fewest statements of three runs of `fn`: a scheduled task may run in the same process
 * meanwhile (publication touches entries), so the fewest is the request's own count. `before`
 * runs ahead of each, uncounted.
 */
export async function fewestStatements(
  s: TestServer,
  fn: () => Promise<unknown>,
  before: () => unknown = () => undefined,
): Promise<number> {
  const counts: number[] = [];
  for (let i = 0; i < 3; i++) {
    await before();
    counts.push(await contentStatements(s, fn));
  }
  return Math.min(...counts);
}
