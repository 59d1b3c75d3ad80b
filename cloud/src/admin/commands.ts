import { parseArgs } from 'node:util';
import { ALL_SCOPES, SCOPES } from '@hivegate/shared';
import type { Queryable } from '../db/database.ts';
import type { TokenService } from '../auth/tokens.ts';
import type { TokensRepository } from '../auth/tokens-repository.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../auth/accounts.ts';
import { boxIdsProblem } from '../auth/box-ids.ts';
import { hashPassword } from '../auth/passwords.ts';
import { LoginTakenError, type UsersRepository } from '../auth/users-repository.ts';

const DEVICE_TOKEN_SCOPES = ['ingest', 'device'];

export interface AdminServices {
  db: Queryable;
  users: UsersRepository;
  tokenRecords: TokensRepository;
  tokens: TokenService;
}

/** What a command reads besides its arguments: the new password of `user password`, from the CLI's standard input. */
export interface CommandInput {
  password?: string;
}

export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export const USAGE = `usage:
  cli user add <login>
  cli user password <login>        (reads the new password from standard input, never from the command line; signs the user's sessions out)
  cli user list
  cli token create --user <login> [--name NAME] [--scope SCOPE]... [--box BOX_ID]... [--expires-days N]
  cli token list [--user <login>]
  cli token revoke <token-id>
scopes: ${[ALL_SCOPES, ...SCOPES].join(', ')} (default ${DEVICE_TOKEN_SCOPES.join(' and ')}, as for a device; ${ALL_SCOPES} only when asked for, as it can also
  manage tokens); --box limits a device token to its boxes
Run it with the same DATA_DIR, DATABASE_URL and JWT_SECRET as the service (in its environment, e.g. docker compose exec
cloud …): elsewhere its users and tokens go to another database, one the service never reads.`;

class UsageError extends Error {}

/** Revoked, expired (a token past its expiry was listed as active), or active until when. */
function tokenStatus(token: { revokedAt: Date | null; expiresAt: Date | null }, now = Date.now()): string {
  if (token.revokedAt) return `revoked ${token.revokedAt.toISOString()}`;
  if (token.expiresAt && token.expiresAt.getTime() <= now) return `expired ${token.expiresAt.toISOString()}`;
  return token.expiresAt ? `active until ${token.expiresAt.toISOString()}` : 'active';
}

const ok = (stdout: string): CommandResult => ({ stdout: stdout.endsWith('\n') || stdout === '' ? stdout : `${stdout}\n`, stderr: '', exitCode: 0 });
const fail = (message: string, exitCode = 1): CommandResult => ({ stdout: '', stderr: `${message}\n`, exitCode });

/** The admin commands, run either in the CLI's own process or inside the running cloud via its admin socket. */
export async function runAdminCommand(argv: string[], services: AdminServices, input: CommandInput = {}): Promise<CommandResult> {
  try {
    return await dispatch(argv, services, input);
  } catch (err) {
    if (err instanceof UsageError) return fail(`${err.message}\n${USAGE}`, 2);
    if (err instanceof LoginTakenError) return fail(err.message);
    if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) return fail(`${err.message}\n${USAGE}`, 2);
    throw err;
  }
}

async function dispatch(argv: string[], { db, users, tokenRecords, tokens }: AdminServices, input: CommandInput): Promise<CommandResult> {
  const [noun, verb, ...rest] = argv;
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  switch (command) {
    case 'user add': {
      const { positionals } = parseArgs({ args: rest, allowPositionals: true, strict: true });
      const login = positionals[0];
      if (!login || positionals.length > 1) throw new UsageError('user add takes exactly one login');
      if (!/^[\w.@+-]{1,100}$/.test(login)) throw new UsageError('a login is 1-100 letters, digits or . _ @ + -');
      const user = await users.create(login);
      return ok(`created user ${user.login} (id ${user.id})`);
    }
    case 'user password': {
      // The password comes from the CLI's standard input (cli.ts), never from its command line, which `ps` and the
      // shell's history show: `--password-from-stdin=PW`, how cli.ts once passed it on, was taken from anyone.
      if (rest.some((arg) => arg.startsWith('-'))) {
        throw new UsageError('user password takes no options and no password on the command line (ps and the shell history would show it): type or pipe it in');
      }
      const { positionals } = parseArgs({ args: rest, allowPositionals: true, strict: true });
      const login = positionals[0];
      if (!login || positionals.length > 1) throw new UsageError('user password takes exactly one login');
      const password = input.password;
      if (password === undefined) throw new UsageError('user password reads the new password from standard input');
      if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
        return fail(`the password must be ${MIN_PASSWORD_LENGTH}-${MAX_PASSWORD_LENGTH} characters long`, 2);
      }
      const user = await users.findByLogin(login);
      if (!user || !(await users.setPasswordHash(login, await hashPassword(password)))) return fail(`no user "${login}"`);
      const signedOut = await tokenRecords.revokeSessions(user.id);
      for (const id of signedOut) await tokens.forget(id);
      return ok(`password set for ${login}: they can sign in to the web app${signedOut.length > 0 ? ` (${signedOut.length} session${signedOut.length === 1 ? '' : 's'} signed out)` : ''}`);
    }
    case 'user list': {
      const rows = await users.list();
      return ok(rows.map((u) => `${u.id}\t${u.login}\t${u.createdAt.toISOString()}`).join('\n'));
    }
    case 'token create': {
      const { values, positionals } = parseArgs({
        args: rest,
        strict: true,
        allowPositionals: true,
        options: {
          user: { type: 'string' },
          name: { type: 'string' },
          scope: { type: 'string', multiple: true },
          box: { type: 'string', multiple: true },
          'expires-days': { type: 'string' },
        },
      });
      if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
      if (!values.user) throw new UsageError('token create needs --user <login>');
      const user = await users.findByLogin(values.user);
      if (!user) return fail(`no user "${values.user}"`);
      // By default a device's token: it sends and streams, and cannot read or steer the account. The default was
      // "*" without --box, so a script's token could mint more tokens; that takes asking for it.
      const scopes = (values.scope ?? DEVICE_TOKEN_SCOPES).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
      const unknown = scopes.filter((s) => s !== ALL_SCOPES && !(SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}`);
      const boxProblem = boxIdsProblem(values.box ?? [], '--box');
      if (boxProblem) throw new UsageError(boxProblem);
      let expiresAt: Date | undefined;
      if (values['expires-days'] !== undefined) {
        const days = Number(values['expires-days']);
        if (!(days > 0)) throw new UsageError('--expires-days must be a positive number');
        expiresAt = new Date(Date.now() + days * 86_400_000);
      }
      const { token } = await tokens.issue({ userId: user.id, name: values.name ?? 'cli', scopes, boxIds: values.box ?? null, expiresAt });
      // Not refused: a device maker issues the token before the box first reports. But a typo would make a token
      // that never acts for anything, so say so (on stderr: stdout stays the token alone, for scripts).
      const unseen = await unseenBoxes(db, user.id, values.box ?? []);
      const stderr = unseen.length === 0 ? '' : `warning: ${values.user} has no box ${unseen.map((b) => JSON.stringify(b)).join(', ')} yet; the token acts for it once it reports (check the spelling)\n`;
      return { ...ok(token), stderr };
    }
    case 'token list': {
      const { values } = parseArgs({ args: rest, strict: true, options: { user: { type: 'string' } } });
      const rows = (await tokenRecords.listAll()).filter((t) => !values.user || t.login === values.user);
      const lines = rows.map((t) =>
        [t.id, t.login, t.name, t.scopes.join(','), t.boxIds?.join(',') ?? '-', t.createdAt.toISOString(), t.lastUsedAt?.toISOString() ?? 'never', tokenStatus(t)].join('\t'),
      );
      return ok(['id\tuser\tname\tscopes\tboxes\tcreated\tlast used\tstatus', ...lines].join('\n'));
    }
    case 'token revoke': {
      const { positionals } = parseArgs({ args: rest, allowPositionals: true, strict: true });
      const id = positionals[0];
      if (!id || positionals.length > 1) throw new UsageError('token revoke takes exactly one token id');
      const outcome = await tokenRecords.revoke(id);
      if (outcome === 'missing') return fail(`no token ${id}`);
      await tokens.forget(id);
      return ok(outcome === 'revoked' ? `revoked ${id}` : `${id} was already revoked`);
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** The boxes of `boxIds` the user has never been seen with: no telemetry, live device record or video. */
async function unseenBoxes(db: Queryable, ownerId: number, boxIds: string[]): Promise<string[]> {
  if (boxIds.length === 0) return [];
  const { rows } = await db.query<{ box_id: string }>(
    `SELECT box_id FROM boxes WHERE owner_id = $1 AND box_id = ANY($2::text[])
     UNION SELECT box_id FROM live_devices WHERE owner_id = $1 AND box_id = ANY($2::text[])
     UNION SELECT box_id FROM gate_videos WHERE owner_id = $1 AND box_id = ANY($2::text[])`,
    [ownerId, boxIds],
  );
  const seen = new Set(rows.map((r) => r.box_id));
  return [...new Set(boxIds)].filter((b) => !seen.has(b));
}
