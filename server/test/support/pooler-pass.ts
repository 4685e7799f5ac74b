// `npm test`'s pooler pass (WSAPI_TEST_POOLER=1, scripts/test.mjs): one PgBouncer in transaction
// mode that every test server of the run reaches its database through (support/server.ts), its
// connections sampled while the tests run (four times a second), and a closing check that the run
// went through it with no more server connections than it allows.
import { DEFAULT_STATEMENT_TIMEOUT_MS } from '../../src/config';
import { sessionConnectQuery } from '../../src/db/database';
import { startPgbouncer, type Pgbouncer } from './pgbouncer';
import { freePort } from './ports';

/**
 * Server connections per test database, and for all of them together; on each, the session
 * settings docs/operations.md asks of a pooler (its start-up log names them), the statement timeout the
 * test servers' default.
 */
const POOL = { poolSize: 3, userConnections: 10, connectQuery: sessionConnectQuery(DEFAULT_STATEMENT_TIMEOUT_MS) };

interface PoolerPass {
  bouncer: Pgbouncer;
  timer: NodeJS.Timeout;
  peak: { servers: number; clients: number };
}
const state = globalThis as { wsapiPoolerPass?: PoolerPass };

export async function startPoolerPass(): Promise<void> {
  const bouncer = await startPgbouncer(await freePort(), POOL);
  const peak = { servers: 0, clients: 0 };
  const timer = setInterval(() => {
    bouncer.stats().then(
      (now) => ((peak.servers = Math.max(peak.servers, now.servers)), (peak.clients = Math.max(peak.clients, now.clients))),
      () => undefined,
    );
  }, 250);
  timer.unref();
  state.wsapiPoolerPass = { bouncer, timer, peak };
  process.env.WSAPI_TEST_POOLER_PORT = String(bouncer.port);
}

export async function finishPoolerPass(): Promise<void> {
  const pass = state.wsapiPoolerPass;
  if (!pass) return;
  clearInterval(pass.timer);
  const { transactions } = await pass.bouncer.stats();
  await pass.bouncer.stop();
  const { servers, clients } = pass.peak;
  console.log(
    `pooler pass: ${transactions} transactions through PgBouncer; at most ${servers} server connections (limit ${POOL.userConnections}) for up to ${clients} client connections`,
  );
  if (transactions === 0 || servers > POOL.userConnections) {
    throw new Error(
      'pooler pass: the tests did not run through the pooler as intended (no transaction, or more server connections than it allows)',
    );
  }
}
