import type { Config } from './config.ts';
import { SigningSecretMismatchError } from './auth/tokens.ts';
import { DataDirError, DataDirInUseError } from './db/data-dir-lock.ts';
import { DatabaseRefusedError, DatabaseUnavailableError } from './db/database.ts';
import { BlobStoreUnreachableError } from './storage/index.ts';
import { UnsharedFileStorageError } from './storage/instances.ts';

/**
 * Why the service or the admin CLI cannot start, as one line naming the setting to look at, or undefined for a
 * failure nobody foresaw (which keeps its stack trace). Stack traces here buried the one fact that mattered, and a
 * service manager restarting the service repeated them in its log every few seconds.
 */
export function startupFailureMessage(err: unknown, config?: Pick<Config, 'port' | 'host'>): string | undefined {
  if (err instanceof DataDirInUseError || err instanceof DataDirError || err instanceof SigningSecretMismatchError || err instanceof UnsharedFileStorageError) return err.message;
  if (err instanceof DatabaseRefusedError) return `cannot start: ${err.message}; check the user name, password and database name in DATABASE_URL`;
  if (err instanceof DatabaseUnavailableError) return `cannot start: ${err.message}; is the database server running and DATABASE_URL right?`;
  if (err instanceof BlobStoreUnreachableError) return `cannot start: ${err.message}; is the S3 server running and S3_ENDPOINT right?`;
  if (config) return listenFailure(err, config);
  return undefined;
}

/** The errors of listening on HOST:PORT, which came out as "Error: listen EADDRINUSE" with a stack. */
function listenFailure(err: unknown, { port, host }: Pick<Config, 'port' | 'host'>): string | undefined {
  const { code, syscall } = err as NodeJS.ErrnoException;
  if (syscall !== 'listen' && syscall !== 'getaddrinfo') return undefined;
  switch (code) {
    case 'EADDRINUSE':
      return `cannot start: port ${port} on ${host} is already in use (EADDRINUSE); stop what listens there or set PORT to another port`;
    case 'EACCES':
      return `cannot start: not allowed to listen on port ${port} (EACCES); ports below 1024 need privileges, set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `cannot start: HOST ${host} is not an address of this machine (EADDRNOTAVAIL); set HOST to one of its addresses, or 0.0.0.0 for all`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot start: HOST ${host} cannot be resolved (${code}); set HOST to an address of this machine, or 0.0.0.0 for all`;
    default:
      return undefined;
  }
}
