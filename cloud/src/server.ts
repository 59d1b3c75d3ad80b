import { buildApp } from './app.ts';
import { ConfigError, loadConfig, SHUTDOWN_TIMEOUT_MS } from './config.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { DatabaseUnavailableError } from './db/database.ts';
import { startAdminSocket } from './admin/socket.ts';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }

  let app;
  try {
    app = await buildApp(config);
  } catch (err) {
    if (err instanceof DataDirInUseError) {
      console.error(err.message);
      process.exit(1);
    }
    // One line that says what to fix, not a stack trace (the service manager restarts it).
    if (err instanceof DatabaseUnavailableError) {
      console.error(`cannot start: ${err.message}; is the database server running and DATABASE_URL right?`);
      process.exit(1);
    }
    throw err;
  }
  const admin = config.databaseUrl ? undefined : await startAdminSocket(app.ctx);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error(`shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS / 1000} s (requests or the database still busy); exiting anyway`);
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    await admin?.close();
    await app.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  await app.listen({ port: config.port, host: config.host });
  const mode = config.databaseUrl ? 'Postgres server' : `embedded database in ${config.dataDir}`;
  app.log.info(`HiveGate cloud on port ${config.port} (${mode})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
