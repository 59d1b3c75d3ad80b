import { closeSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, type AgentConfig } from './config.ts';

/** The one folder the installed service may write (its StateDirectory), ProtectSystem=strict making the rest read-only. */
export const SERVICE_STATE_DIR = '/var/lib/hivegate-agent';

/**
 * Creates the state folder (and the outbox's, when it is elsewhere) and checks that a file can be made in it. A folder
 * that cannot be used failed later with the bare "EPERM: operation not permitted, mkdir '/sys/hivegate'", naming no
 * setting, and under the service's sandbox in a restart loop; this names the setting, exit code 2.
 */
export function prepareStateDir(config: Pick<AgentConfig, 'stateDir' | 'outbox'>): void {
  const folders: [string, string][] = [['stateDir', resolve(config.stateDir)]];
  const outboxFolder = dirname(resolve(config.outbox.path));
  if (config.outbox.path !== ':memory:' && outboxFolder !== folders[0]![1]) folders.push(['outbox.path', outboxFolder]);
  for (const [field, folder] of folders) {
    try {
      mkdirSync(folder, { recursive: true });
      const probe = join(folder, `.hivegate-write-check-${process.pid}`);
      closeSync(openSync(probe, 'wx'));
      unlinkSync(probe);
    } catch (error) {
      const { code = (error as Error).message, syscall } = error as NodeJS.ErrnoException;
      // A full disk is no mistake of the config: the outbox holds records in memory then. A probe file left by a killed
      // check is no mistake either; but mkdir's EEXIST is a file where the folder should be.
      if (code === 'ENOSPC' || (code === 'EEXIST' && syscall === 'open')) continue;
      throw new ConfigError(`${field} ${folder} cannot be used (${code}${'path' in (error as object) ? ` at ${(error as NodeJS.ErrnoException).path}` : ''}): ${remedy(code, folder)}`);
    }
  }
}

function remedy(code: string, folder: string): string {
  if (code === 'ENOTDIR') return 'a part of that path is a file, not a folder';
  if (code === 'EEXIST') return 'it is a file, not a folder';
  const service = folder === SERVICE_STATE_DIR || folder.startsWith(`${SERVICE_STATE_DIR}/`);
  if (service) return `the service user (hivegate) must own it; install.sh sets it up`;
  return `choose a folder the agent's user may write; the service may write only ${SERVICE_STATE_DIR} unless ReadWritePaths= adds the folder (systemctl edit hivegate-agent)`;
}

/** For check-config run as root (install.sh runs it so): a folder root may write is not one the service may. */
export function serviceStateNote(config: Pick<AgentConfig, 'stateDir'>): string | undefined {
  const folder = resolve(config.stateDir);
  if (process.getuid?.() !== 0 || folder === SERVICE_STATE_DIR || folder.startsWith(`${SERVICE_STATE_DIR}/`)) return undefined;
  return `checked as root; the service (user hivegate, ProtectSystem=strict) may write only ${SERVICE_STATE_DIR} unless ReadWritePaths= adds ${folder}`;
}
