// The unit of work (core/transaction.ts): a write started inside another joins it, so the outer one
// commits, rolls back and retries everything; reads through `openRunner` see the unit's own
// writes; work a unit leaves running after it ends gets a transaction of its own. On the real
// server's database (both modes), with a scratch table.
import { openRunner, transaction } from '../src/core/transaction';
import type { AppContext } from '../src/context';
import { startTestServer, type TestServer } from './support/server';
import { testMode } from './support/env';

let s: TestServer;
let app: AppContext;
const names = async () => (await app.db.query<{ name: string }>('SELECT name FROM uow_probe ORDER BY name')).rows.map((r) => r.name);
const insert = (name: string) => transaction(app, async (tx) => void (await tx.query('INSERT INTO uow_probe (name) VALUES ($1)', [name])));

beforeAll(async () => {
  s = await startTestServer();
  app = s.server.app;
  await app.db.exec('CREATE TABLE uow_probe (name text PRIMARY KEY)');
});
afterAll(() => s.close());
beforeEach(() => app.db.exec('TRUNCATE uow_probe'));

it('joins the open unit: inner writes commit with the outer one, on its connection', async () => {
  await transaction(app, async (tx) => {
    await insert('inner');
    // The outer transaction sees the inner write before anything commits; another connection of
    // the pool does not (the embedded database has one connection, held by this transaction).
    expect((await tx.query('SELECT name FROM uow_probe')).rows).toEqual([{ name: 'inner' }]);
    expect((await openRunner(app).query('SELECT name FROM uow_probe')).rows).toEqual([{ name: 'inner' }]);
    if (testMode === 'postgres') expect(await names()).toEqual([]);
  });
  expect(await names()).toEqual(['inner']);
});

it('rolls the inner writes back with the outer unit', async () => {
  await expect(
    transaction(app, async () => {
      await insert('a');
      await insert('b');
      throw new Error('refused after the inner writes');
    }),
  ).rejects.toThrow('refused after the inner writes');
  expect(await names()).toEqual([]);
});

it('retries the whole unit, inner writes included, on a serialization failure', async () => {
  let attempts = 0;
  await transaction(app, async () => {
    attempts++;
    await insert(`try${attempts}`);
    if (attempts === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
  });
  expect(attempts).toBe(2);
  expect(await names()).toEqual(['try2']);
});

it('gives work that outlives its unit a transaction of its own, and reads outside a unit go to the pool', async () => {
  let late: Promise<void> | undefined;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  await transaction(app, async () => {
    await insert('in-unit');
    // Started inside the unit, written after it committed.
    late = gate.then(() => insert('after-unit'));
  });
  release();
  await late;
  expect(await names()).toEqual(['after-unit', 'in-unit']);
  expect(openRunner(app)).toBe(app.db);
});
