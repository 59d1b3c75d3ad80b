/**
 * GraphQL subscriptions over a WebSocket to /graphql, in the `graphql-transport-ws` protocol (connection_init →
 * connection_ack → subscribe → next… → complete). The browser sends the session cookie with the upgrade request.
 * A caller that gets `onClosed` falls back to re-reading on a timer.
 */
import { errorFromResponse, GRAPHQL_PATH, type ApiError, type GraphQLErrorItem, type Operation } from './graphql.ts';

export interface SubscriptionHandlers<TData> {
  onData: (data: TData) => void;
  /** The stream is over or never opened (no server support, network, error); `error` says why when known. */
  onClosed: (error?: ApiError | Error) => void;
  /** The server acknowledged the subscription: updates will come without polling. */
  onOpen?: () => void;
}

type ServerMessage =
  | { type: 'connection_ack' }
  | { type: 'ping' | 'pong' }
  | { type: 'next'; id: string; payload: { data?: unknown; errors?: GraphQLErrorItem[] } }
  | { type: 'error'; id: string; payload: GraphQLErrorItem[] }
  | { type: 'complete'; id: string };

const ACK_TIMEOUT_MS = 5_000;

export function subscriptionUrl(location: Pick<Location, 'protocol' | 'host'>): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${GRAPHQL_PATH}`;
}

/** Opens one subscription on its own socket; returns the function that ends it. */
export function subscribe<TData, TVariables>(operation: Operation<TData, TVariables>, variables: TVariables, handlers: SubscriptionHandlers<TData>): () => void {
  let closed = false;
  let socket: WebSocket;
  const finish = (error?: ApiError | Error) => {
    if (closed) return;
    closed = true;
    clearTimeout(ackTimer);
    try {
      socket.close(1000);
    } catch {
      // already closing
    }
    handlers.onClosed(error);
  };
  try {
    socket = new WebSocket(subscriptionUrl(window.location), 'graphql-transport-ws');
  } catch (err) {
    queueMicrotask(() => handlers.onClosed(err instanceof Error ? err : new Error(String(err))));
    return () => undefined;
  }
  const ackTimer = setTimeout(() => finish(new Error('the server did not accept the subscription')), ACK_TIMEOUT_MS);
  const send = (message: object) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));

  socket.addEventListener('open', () => send({ type: 'connection_init', payload: {} }));
  socket.addEventListener('message', (event: MessageEvent<string>) => {
    let message: ServerMessage;
    try {
      message = JSON.parse(event.data) as ServerMessage;
    } catch {
      return finish(new Error('the server sent an unreadable subscription message'));
    }
    switch (message.type) {
      case 'connection_ack':
        clearTimeout(ackTimer);
        send({ id: '1', type: 'subscribe', payload: { query: operation.document, operationName: operation.name, variables } });
        handlers.onOpen?.();
        break;
      case 'ping':
        send({ type: 'pong' });
        break;
      case 'next':
        if (message.payload.errors?.length) return finish(errorFromResponse(message.payload.errors));
        if (message.payload.data) handlers.onData(message.payload.data as TData);
        break;
      case 'error':
        return finish(errorFromResponse(message.payload));
      case 'complete':
        return finish();
    }
  });
  socket.addEventListener('error', () => finish(new Error('the subscription connection failed')));
  socket.addEventListener('close', (event) => finish(event.code === 1000 ? undefined : new Error(`the subscription connection closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`)));

  return () => {
    if (closed) return;
    send({ id: '1', type: 'complete' });
    closed = true;
    clearTimeout(ackTimer);
    socket.close(1000);
  };
}
