import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, SHUTDOWN_TIMEOUT_MS, type Config } from './config.ts';
import { startAdminSocket } from './admin/socket.ts';
import { startupFailureMessage } from './startup-failure.ts';
import { stillBusy } from './http/drain.ts';

/** A start-up failure the operator can fix says so in one line (the service manager restarts it); others keep their stack. */
function failedToStart(err: unknown, config?: Config): never {
  const message = startupFailureMessage(err, config);
  if (message === undefined) throw err;
  console.error(message);
  process.exit(1);
}

/**
 * Fails as listening would, before the database is touched: a start doomed by a taken port ran the migrations and
 * partition maintenance first. (The port may still be taken in between; listen then says the same.)
 */
async function checkCanListen(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

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
    await checkCanListen(config.port, config.host);
  } catch (err) {
    failedToStart(err, config);
  }
  try {
    app = await buildApp(config);
  } catch (err) {
    failedToStart(err);
  }

  let admin: Server | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      void app.drainState().then((state) => {
        app.log.error(`shutdown did not finish within ${SHUTDOWN_TIMEOUT_MS / 1000} s: ${stillBusy(state)}; exiting anyway`);
        process.exit(1);
      });
    }, SHUTDOWN_TIMEOUT_MS).unref();
    await admin?.close();
    await app.close();
    clearTimeout(force);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  try {
    admin = config.databaseUrl ? undefined : await startAdminSocket(app.ctx);
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // Closing lets go of the data dir's lock and removes the admin socket, which a failed listen left behind.
    await new Promise<void>((resolve) => (admin ? admin.close(() => resolve()) : resolve()));
    await app.close().catch((closeErr: unknown) => app.log.error({ err: closeErr }, 'closing after a failed start failed'));
    failedToStart(err, config);
  }
  const mode = config.databaseUrl ? 'Postgres server' : `embedded database in ${config.dataDir}`;
  app.log.info(`HiveGate cloud on port ${config.port} (${mode})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
