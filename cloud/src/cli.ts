import { spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { runAdminCommand, USAGE, type CommandInput, type CommandResult } from './admin/commands.ts';
import { sendAdminCommand } from './admin/socket.ts';
import { openDatabase } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { loadSigningSecret, TokenService } from './auth/tokens.ts';
import { TokensRepository } from './auth/tokens-repository.ts';
import { UsersRepository } from './auth/users-repository.ts';
import { startupFailureMessage } from './startup-failure.ts';

/** Runs the command against the database directly (a Postgres server, or an embedded one no cloud holds). */
async function runDirectly(config: Config, argv: string[], input: CommandInput): Promise<CommandResult> {
  const opened = await openDatabase(config);
  try {
    await migrate(opened.db);
    const tokenRecords = new TokensRepository(opened.db);
    const tokens = new TokenService(opened.db, tokenRecords, await loadSigningSecret(opened.db, config.jwtSecret, 'tool'), 0);
    return await runAdminCommand(argv, { db: opened.db, users: new UsersRepository(opened.db), tokenRecords, tokens }, input);
  } finally {
    await opened.close();
  }
}

/** One line from standard input; at a terminal, asked for without echoing it. */
async function readPassword(login: string): Promise<string> {
  const terminal = process.stdin.isTTY;
  if (terminal) {
    process.stderr.write(`New password for ${login}: `);
    spawnSync('stty', ['-echo'], { stdio: 'inherit' });
  }
  try {
    const lines = createInterface({ input: process.stdin, terminal: false });
    for await (const line of lines) {
      lines.close();
      return line;
    }
    return '';
  } finally {
    if (terminal) {
      spawnSync('stty', ['echo'], { stdio: 'inherit' });
      process.stderr.write('\n');
    }
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const config = loadConfig();
  // The password travels beside the arguments, never among them (where the command refuses one).
  const input: CommandInput = argv[0] === 'user' && argv[1] === 'password' && argv.length === 3 ? { password: await readPassword(argv[2]!) } : {};
  let result = config.databaseUrl ? undefined : await sendAdminCommand(config.dataDir, argv, input);
  result ??= await runDirectly(config, argv, input);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  return result.exitCode;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // The same one line as the service's for the same fault: a DatabaseUnavailableError came out as a stack trace.
    const message = err instanceof ConfigError ? err.message : startupFailureMessage(err);
    console.error(message ?? err);
    process.exit(1);
  },
);
