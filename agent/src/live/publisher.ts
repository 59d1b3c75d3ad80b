import type { Frame } from '../capture/frame.ts';
import type { RelayProtocol } from '../device/commands.ts';

export type PublisherState = 'idle' | 'starting' | 'active' | 'stopping' | 'stopped' | 'failed';

export type PublisherEvent =
  | { type: 'starting'; details: Record<string, unknown> }
  | { type: 'active'; details: Record<string, unknown> }
  | { type: 'failed'; errorCode: string; errorMessage: string }
  | { type: 'stopped'; details: Record<string, unknown> };

export interface PublisherStats {
  relayProtocol: RelayProtocol;
  state: PublisherState;
  framesOffered: number;
  framesSent: number;
  framesDropped: number;
  uploadsAccepted: number;
  uploadsFailed: number;
  startedAt: number;
}

/** One live stream of one session: fed the capture's frames, it encodes and uploads them. */
export interface Publisher {
  readonly state: PublisherState;
  start(): Promise<void>;
  /** Graceful end (STOP_STREAM, shutdown): emits `stopped` unless it already failed. */
  stop(reason: string): Promise<void>;
  /** Never blocks and never throws: a frame the publisher cannot take now is dropped. */
  offer(frame: Frame): void;
  stats(): PublisherStats;
}
