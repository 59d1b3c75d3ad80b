import { readFileSync } from 'node:fs';
import { ConfigError } from './config.ts';

/**
 * Reads a file of `NAME=value` lines, as systemd's EnvironmentFile takes them: blank lines and `#` comments are
 * skipped, `export ` before a name is allowed, and a value may be wrapped in single or double quotes. The agent
 * reads it itself (`--secrets-file`), at start and on every SIGHUP, because systemd reads an EnvironmentFile only when
 * it starts the service: a token fixed in it was never seen by `systemctl reload`.
 */
export function parseEnvFile(text: string, path: string): Record<string, string> {
  const values: Record<string, string> = {};
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) throw new ConfigError(`${path} line ${index + 1}: expected NAME=value, got ${JSON.stringify(line)}`);
    const [, name, value] = match as unknown as [string, string, string];
    const quoted = /^(["'])(.*)\1$/.exec(value);
    values[name] = quoted ? quoted[2]! : value;
  });
  return values;
}

export function readEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`--secrets-file ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return parseEnvFile(text, path);
}
