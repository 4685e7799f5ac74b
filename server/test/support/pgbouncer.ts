// Debian's PgBouncer (1.18) in transaction mode in front of the test PostgreSQL, on a port of its
// own: used by the pooler test and by `npm test`'s pooler pass (global-setup.ts).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const PGBOUNCER = '/usr/sbin/pgbouncer';
export const pgbouncerFound = existsSync(PGBOUNCER);

export interface Pgbouncer {
  port: number;
  /** From the admin console: transactions served, and server and client connections open now. */
  stats(): Promise<{ transactions: number; servers: number; clients: number }>;
  stop(): Promise<void>;
}

/**
 * `poolSize` server connections per database; `userConnections`, when given, caps the server
 * connections of all databases together (every test database is the postgres user's);
 * `connectQuery`, when given, runs on each server connection PgBouncer opens.
 */
export async function startPgbouncer(
  port: number,
  { poolSize, userConnections, connectQuery }: { poolSize: number; userConnections?: number; connectQuery?: string },
): Promise<Pgbouncer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'wsapi-pgbouncer-'));
  writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=5432${connectQuery ? ` connect_query='${connectQuery.replaceAll("'", "''")}'` : ''}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      'admin_users = postgres',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      ...(userConnections ? [`max_user_connections = ${userConnections}`] : []),
      'max_client_conn = 1000',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    ].join('\n'),
  );
  // PgBouncer refuses to run as root: then it runs as postgres, which owns its files.
  const root = process.getuid?.() === 0;
  if (root) {
    const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' })));
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) chownSync(path.join(dir, f), uid, gid);
  }
  const child: ChildProcess = root
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER, path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore' })
    : spawn(PGBOUNCER, [path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/postgres` });
    try {
      await c.connect();
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => undefined);
      if (i > 100) throw new Error(`pgbouncer did not start: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    port,
    async stats() {
      const admin = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${port}/pgbouncer` });
      await admin.connect();
      try {
        // The console answers without a row count; SHOW CLIENTS lists this connection too.
        const totals = (await admin.query('SHOW TOTALS')).rows as { name: string; value: string }[];
        const servers = (await admin.query('SHOW SERVERS')).rows.length;
        const clients = (await admin.query('SHOW CLIENTS')).rows.length - 1;
        return { transactions: Number(totals.find((r) => r.name === 'total_xact_count')?.value ?? 0), servers, clients };
      } finally {
        await admin.end();
      }
    },
    async stop() {
      child.kill();
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
