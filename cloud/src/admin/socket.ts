import { createServer, request as httpRequest, type Server } from 'node:http';
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../context.ts';
import { runAdminCommand, type CommandInput, type CommandResult } from './commands.ts';

/** The embedded database belongs to the running cloud, so the CLI asks the cloud through this socket. */
export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'admin.sock');
}

/** A local-only endpoint (a Unix socket readable by this user alone) that runs admin commands. */
export async function startAdminSocket(ctx: AppContext): Promise<Server> {
  const socketPath = adminSocketPath(ctx.config.dataDir);
  rmSync(socketPath, { force: true });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        let result: CommandResult;
        try {
          const { argv, input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { argv: string[]; input?: CommandInput };
          result = await runAdminCommand(argv, ctx, input);
        } catch (err) {
          ctx.log.error({ err }, 'admin command failed');
          result = { stdout: '', stderr: `command failed: ${(err as Error).message}\n`, exitCode: 1 };
        }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(result));
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  server.on('close', () => rmSync(socketPath, { force: true }));
  return server;
}

/** Sends a command to a running cloud; undefined when none listens on the socket. */
export function sendAdminCommand(dataDir: string, argv: string[], input: CommandInput = {}): Promise<CommandResult | undefined> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: adminSocketPath(dataDir), method: 'POST', path: '/run' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as CommandResult));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') resolve(undefined);
      else reject(err);
    });
    req.end(JSON.stringify({ argv, input }));
  });
}
