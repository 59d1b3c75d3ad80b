import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';

/** What a stopping server still waits for. */
export interface DrainState {
  /** Requests received and not yet answered. */
  requests: number;
  /** Open client connections (keep-alive ones included). */
  connections: number;
  /** The listening socket has closed: every connection is gone, services and the database are being stopped. */
  serverClosed: boolean;
}

/**
 * Names what held up a stop, for the line logged when it gives up: "requests or the database still busy" sent an
 * operator looking at the database while an idle keep-alive connection was what held it.
 */
export function stillBusy({ requests, connections, serverClosed }: DrainState): string {
  if (serverClosed) return 'the services and the database connections were still closing';
  if (requests > 0) return `${requests} ${requests === 1 ? 'request was' : 'requests were'} still running`;
  if (connections > 0) return `${connections} client ${connections === 1 ? 'connection was' : 'connections were'} still open with no request running`;
  return 'the server was still closing';
}

/**
 * Lets a stop take as long as the longest running request. fastify's forceCloseConnections: 'idle' closes only the
 * connections idle when the stop begins; a keep-alive connection whose request finished later stayed open, and the
 * stop waited for it until the deadline. From the stop on, every answer says `Connection: close`, and connections
 * that fall idle are closed.
 */
export function installDrain(app: FastifyInstance): () => Promise<DrainState> {
  let draining = false;
  let requests = 0;
  let serverClosed = false;
  app.server.once('close', () => {
    serverClosed = true;
  });
  // Counted on the raw response, whose 'close' comes once for every request, answered or abandoned.
  app.server.on('request', (_request, response: ServerResponse) => {
    requests += 1;
    response.once('close', () => {
      requests -= 1;
      // An answer whose headers left before the stop began said keep-alive: its connection is idle from here.
      if (draining) setImmediate(() => app.server.closeIdleConnections());
    });
  });
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
  app.addHook('preClose', async () => {
    draining = true;
  });
  return () =>
    new Promise<DrainState>((resolve) => {
      app.server.getConnections((err, connections) => resolve({ requests, connections: err ? 0 : connections, serverClosed }));
    });
}
