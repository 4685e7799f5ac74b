// Test servers: the real server on a real port and a fresh database, in this process
// (`startTestServer`) or as separate processes of the built server (`spawnServer`).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { startServer, type RunningServer } from '../../src/app';
import { createLogger } from '../../src/lib/logger';
import { projectRoot } from '../../src/paths';
import { createTestDatabase, type TestDatabase } from './database';
import { client } from './http';
import { freePort } from './ports';
import { typedStorageDifferences } from './typed-storage';

export { freePort };

export const ADMIN_TOKEN = 'test-admin-token';

export interface TestServer {
  url: string;
  db: TestDatabase;
  server: RunningServer;
  admin: ReturnType<typeof client>;
  close(): Promise<void>;
}

/** The pooler pass (global-setup.ts): the database through PgBouncer, LISTEN on it directly. */
function databaseEnv(db: TestDatabase): Record<string, string> {
  if (!db.url) return {};
  const port = process.env.WSAPI_TEST_POOLER_PORT;
  if (!port) return { DATABASE_URL: db.url };
  const pooled = new URL(db.url);
  pooled.port = port;
  return { DATABASE_URL: pooled.toString(), DATABASE_DIRECT_URL: db.url, DATABASE_POOLER: 'transaction' };
}

function serverEnv(db: TestDatabase, env: Record<string, string>): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    APP_ENV: 'test',
    DATA_DIR: db.dataDir,
    ADMIN_TOKEN,
    APP_KEY: 'test-app-key',
    // Many test servers share one PostgreSQL (max_connections 100): small pools keep them under it.
    DATABASE_POOL_SIZE: '4',
    ...databaseEnv(db),
    ...env,
  };
}

/**
 * Starts the server on a free port. A port found free may be taken before the server binds it (an
 * outgoing connection's ephemeral port): then another port is tried.
 */
async function startOnFreePort(database: TestDatabase, env: Record<string, string>): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const config = loadConfig({ ...serverEnv(database, env), PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env });
    try {
      return await startServer(config, createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'));
    } catch (err) {
      if ((err as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
}

export async function startTestServer(env: Record<string, string> = {}, db?: TestDatabase): Promise<TestServer> {
  const database = db ?? (await createTestDatabase());
  // A server that fails to start leaves no database behind (the suite's afterAll has no server to close).
  const server = await startOnFreePort(database, env).catch(async (err: unknown) => {
    if (!db) await database.drop().catch(() => undefined);
    throw err;
  });
  const url = server.url;
  const started: TestServer = {
    url,
    db: database,
    server,
    admin: client(url, ADMIN_TOKEN),
    async close() {
      // Typed storage is checked against its documents after every suite (support/typed-storage.ts);
      // a database a test took away cannot be read, and fails nothing here.
      const differences = await typedStorageDifferences(started).catch(() => []);
      await server.close();
      if (!db) await database.drop();
      if (differences.length)
        throw new Error(`typed storage differs from the documents (${differences.length}):\n  ${differences.slice(0, 50).join('\n  ')}`);
    },
  };
  return started;
}

export interface SpawnedServer {
  url: string;
  process: ChildProcess;
  output: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `node dist/server/src/main.js` (the built server, as `npm start` runs it). */
export async function spawnServer(db: TestDatabase, env: Record<string, string> = {}, port?: number): Promise<SpawnedServer> {
  const listenPort = port ?? (await freePort());
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/server/src/main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'silent',
      ...serverEnv(db, env),
      PORT: String(listenPort),
      BASE_URL: `http://127.0.0.1:${listenPort}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${listenPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    process: child,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
