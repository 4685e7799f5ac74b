// Bounds on the database work of one request (security review "Hardening II", finding 7): the
// pools' statement timeout (DATABASE_STATEMENT_TIMEOUT_MS) and how a stopped statement is
// answered (`422` on `body` for a request whose body shaped the work, `503` otherwise). The
// Entries document allows paths through three relations, multiple ones included: no query shape
// is refused for its fan-out; the time limit is what bounds it.
import { Client } from 'pg';
import { ConfigError, loadConfig } from '../src/config';
import { LOCK_KEY } from '../src/db/migrate';
import { startTestServer, type TestServer } from './support/server';
import { createTestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { createContentType, createEntry, entriesWorkspace, type EntriesWorkspace, type FieldDef } from './support/entries';
import { queryBatchPath, queryOk, queryPath } from './support/entries-query';

/** leaf <- mid (leaves: multiple, leaf: single) <- top (mids: multiple) <- root (tops, mids: multiple; top: single). */
const TYPES: [string, FieldDef[]][] = [
  [
    'leaf',
    [
      { name: 'name', type: 'text' },
      { name: 'weight', type: 'number' },
    ],
  ],
  [
    'mid',
    [
      { name: 'name', type: 'text' },
      { name: 'leaves', type: 'relation', targets: ['leaf'], multiple: true },
      { name: 'leaf', type: 'relation', targets: ['leaf'] },
    ],
  ],
  [
    'top',
    [
      { name: 'name', type: 'text' },
      { name: 'mids', type: 'relation', targets: ['mid'], multiple: true },
    ],
  ],
  [
    'root',
    [
      { name: 'name', type: 'text' },
      { name: 'tops', type: 'relation', targets: ['top'], multiple: true },
      { name: 'top', type: 'relation', targets: ['top'] },
      { name: 'mids', type: 'relation', targets: ['mid'], multiple: true },
    ],
  ],
];

async function workspaceWithTypes(s: TestServer): Promise<EntriesWorkspace> {
  const w = await entriesWorkspace(s);
  for (const [name, fields] of TYPES) await createContentType(s, w.ws, 'general', { name, fields });
  return w;
}

/** The exact `422` of one path. */

describe('DATABASE_STATEMENT_TIMEOUT_MS', () => {
  const load = (env: Record<string, string>) => loadConfig({ ADMIN_TOKEN: 'x', APP_KEY: 'y', ...env });

  it.each([
    [{}, 30_000],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '' }, 30_000],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '250' }, 250],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '0' }, 0],
    [{ DATABASE_STATEMENT_TIMEOUT_MS: '2147483647' }, 2_147_483_647],
  ])('%p gives %i ms', (env, ms) => {
    expect(load(env).databaseStatementTimeoutMs).toBe(ms);
  });

  it.each([
    ['30s', 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer >= 0, got "30s"'],
    ['-1', 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer >= 0, got "-1"'],
    ['1.5', 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer >= 0, got "1.5"'],
    ['2147483648', 'DATABASE_STATEMENT_TIMEOUT_MS must be at most 2147483647, got "2147483648"'],
  ])('%p is a configuration error', (value, message) => {
    expect(() => load({ DATABASE_STATEMENT_TIMEOUT_MS: value })).toThrow(new ConfigError(message));
  });
});

describe('chains of multiple relations', () => {
  let s: TestServer;
  let w: EntriesWorkspace;
  let r1: { id: string };
  beforeAll(async () => {
    s = await startTestServer();
    w = await workspaceWithTypes(s);
    const l1 = await createEntry(w, 'leaf', { fields: { name: 'l1', weight: 2 } });
    const l2 = await createEntry(w, 'leaf', { fields: { name: 'l2', weight: 3 } });
    const m1 = await createEntry(w, 'mid', { fields: { name: 'm1', leaves: [l1.id, l2.id], leaf: l1.id } });
    const t1 = await createEntry(w, 'top', { fields: { name: 't1', mids: [m1.id] } });
    r1 = await createEntry(w, 'root', { fields: { name: 'r1', tops: [t1.id], top: t1.id, mids: [m1.id] } });
    await createEntry(w, 'root', { fields: { name: 'r2' } });
  }, 60_000);
  afterAll(() => s?.close());

  const query = (body: unknown) => w.api.post(queryPath(w.ws), body);
  const names = (filter: unknown) =>
    queryOk(w.api, w.ws, { type: 'root', fields: ['name'], filter }).then((r) => r.data.map((x: { name: string }) => x.name));

  it('answers chains through three multiple relations, as the Entries document allows (the time limit bounds them)', async () => {
    expect(await names({ tops: { some: { mids: { some: { leaves: { some: { name: { eq: 'l1' } } } } } } } })).toEqual(['r1']);
    expect(await names({ 'tops.mids.leaves.name': { eq: 'l1' } })).toEqual(['r1']);
    expect(await names({ $or: [{ name: { eq: 'r2' } }, { tops: { some: { 'mids.leaves.name': { eq: 'l1' } } } }] })).toEqual(['r1', 'r2']);
    const sums = await queryOk(w.api, w.ws, { type: 'root', aggregate: { count: true, sum: ['tops.mids.leaves.weight'] } });
    expect(sums.data).toEqual([{ count: 2, sum: { 'tops.mids.leaves.weight': '5' } }]);
  });

  it('answers chains through two multiple relations and any single ones', async () => {
    expect(await names({ tops: { some: { mids: { some: { 'leaf.name': { eq: 'l1' } } } } } })).toEqual(['r1']);
    expect(await names({ 'mids.leaves.name': { eq: 'l2' } })).toEqual(['r1']);
    expect(await names({ 'top.mids.leaves.name': { eq: 'l2' } })).toEqual(['r1']);
    const sums = await queryOk(w.api, w.ws, {
      type: 'root',
      aggregate: { count: true, sum: ['top.mids.leaves.weight', 'tops.mids.leaf.weight'] },
    });
    expect(sums.data).toEqual([{ count: 2, sum: { 'top.mids.leaves.weight': '5', 'tops.mids.leaf.weight': '2' } }]);
    // A projection is bounded by its reference budget instead.
    const projected = await queryOk(w.api, w.ws, { type: 'root', fields: ['tops.mids.leaves.name'], filter: { '@id': { eq: r1.id } } });
    expect(projected.data).toEqual([{ tops: [{ mids: [{ leaves: [{ name: 'l1' }, { name: 'l2' }] }] }] }]);
  });
});

describeWithPostgres('the statement timeout', () => {
  const TIMEOUT_MS = 300;
  const TOO_LONG = {
    message:
      'The request needed more database time than the server allows and was stopped; nothing was changed. Narrow it: a more selective filter, fewer paths through multiple relations, a smaller page.',
    errors: {
      body: [
        'The request needed more database time than the server allows and was stopped; nothing was changed. Narrow it: a more selective filter, fewer paths through multiple relations, a smaller page.',
      ],
    },
  };
  const BUSY = {
    message: 'The request needed more database time than the server allows and was stopped; nothing was changed. Retry later.',
  };
  let s: TestServer;
  let w: EntriesWorkspace;
  const ROOTS = 8;
  beforeAll(async () => {
    s = await startTestServer({ DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
    w = await workspaceWithTypes(s);
    // Each root reaches one leaf through a million (root, mid, leaf) rows: 1000 references to one
    // mid, which holds 1000 references to one leaf (repeats are stored as given).
    const leaf = await createEntry(w, 'leaf', { fields: { name: 'l', weight: 1 } });
    const mid = await createEntry(w, 'mid', { fields: { name: 'm', leaves: Array(1000).fill(leaf.id) } });
    for (let i = 0; i < ROOTS; i++) await createEntry(w, 'root', { fields: { name: `r${i}`, mids: Array(1000).fill(mid.id) } });
  }, 60_000);
  afterAll(() => s?.close());

  const slow = { type: 'root', aggregate: { sum: ['mids.leaves.weight'] } };
  const count = { type: 'root', aggregate: { count: true } };

  it('stops an aggregate that joins millions of rows with 422 on body, and answers meanwhile and after', async () => {
    const started = Date.now();
    const pending = w.api.post(queryPath(w.ws), slow);
    // Other requests are answered while it runs.
    expect((await queryOk(w.api, w.ws, count)).data).toEqual([{ count: ROOTS }]);
    const res = await pending;
    expect([res.status, res.body]).toEqual([422, TOO_LONG]);
    expect(Date.now() - started).toBeLessThan(10_000);
    // The same in a batch, and the pool's connections still serve requests afterwards.
    const batch = await w.api.post(queryBatchPath(w.ws), { queries: { slow } });
    expect([batch.status, batch.body]).toEqual([422, TOO_LONG]);
    for (let i = 0; i < 6; i++) expect((await queryOk(w.api, w.ws, count)).data).toEqual([{ count: ROOTS }]);
  });

  it('answers a list stopped while it waits on a lock with 503 and Retry-After (a query with 422), then serves it', async () => {
    const locker = new Client({ connectionString: s.db.url });
    await locker.connect();
    const list = () => w.api.get(w.typed('root', '&per_page=5'));
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE entries IN ACCESS EXCLUSIVE MODE');
      const listed = await list();
      expect([listed.status, listed.headers.get('retry-after'), listed.body]).toEqual([503, '5', BUSY]);
      // (A query not asked before: the answer of `count` is kept by the response cache.)
      const queried = await w.api.post(queryPath(w.ws), { ...count, filter: { name: { eq: 'r1' } } });
      expect([queried.status, queried.body]).toEqual([422, TOO_LONG]);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    }
    expect((await list()).status).toBe(200);
    expect((await queryOk(w.api, w.ws, count)).data).toEqual([{ count: ROOTS }]);
  });

  it('does not cut a start that waits longer than the timeout for the migration of another process', async () => {
    const db = await createTestDatabase();
    const migrating = new Client({ connectionString: db.url });
    await migrating.connect();
    await migrating.query('BEGIN');
    await migrating.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    const starting = startTestServer({ DATABASE_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) }, db);
    await new Promise((resolve) => setTimeout(resolve, 4 * TIMEOUT_MS));
    await migrating.query('COMMIT');
    await migrating.end();
    const other = await starting;
    try {
      expect((await other.admin.get('/health')).status).toBe(200);
    } finally {
      await other.close();
      await db.drop();
    }
  });
});
