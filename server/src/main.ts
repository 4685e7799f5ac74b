// `npm start`: configuration from the environment, migrations, then the server until SIGTERM/SIGINT.
import { loadConfig, ConfigError } from './config';
import { startServer } from './app';
import { createLogger } from './lib/logger';

async function main(): Promise<void> {
  const log = createLogger();
  const config = loadConfig();
  const server = await startServer(config, log);
  const database = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PostgreSQL in ${config.dataDir}`;
  console.log(`workspace-api listening on ${config.baseUrl} (${database}); API reference: ${config.baseUrl}/docs`);
  // The token is shown once, when it is generated; later starts only say where it is kept.
  if (config.adminTokenGenerated) console.log(`management API token (ADMIN_TOKEN, kept in ${config.dataDir}): ${config.adminToken}`);
  else if (config.adminTokenFile)
    console.log(`management API token (ADMIN_TOKEN): not shown again; it is kept in ${config.adminTokenFile}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down: finishing in-flight requests', { signal });
    server.close().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { error: String(err) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `configuration error: ${err.message}` : err);
  process.exit(1);
});
