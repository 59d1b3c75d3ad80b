import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db/database.ts';
import type { BlobStore } from '../storage/index.ts';
import { closingDelimiter, JPEG_CONTENT_TYPE, partHead, PART_TAIL, type MjpegFrame } from './jpeg.ts';
import type { LiveSessionsRepository } from './sessions-repository.ts';
import { SESSIONS_CHANNEL } from './signals.ts';

/**
 * The `http-jpeg-push` relay's fan-out. The publisher's frame is stored as `live/{sessionId}/latest.jpg` and
 * announced with NOTIFY (session id + sequence; frames themselves are far over NOTIFY's 8 kB). Every instance keeps,
 * for each session someone watches there, only the latest frame, and streams it to its viewers as MJPEG.
 *
 * Memory stays bounded however slow a viewer is: a viewer is written to only while its socket does not ask to wait
 * (`writableNeedDrain`); frames arriving meanwhile replace each other, and the newest one goes out on 'drain'.
 * So a viewer holds at most one frame beyond the socket's high-water mark, and a stalled one never stalls others.
 */
export const FRAMES_CHANNEL = 'hivegate_live_frames';
export const LATEST_FRAME_FILE = 'latest.jpg';
/** How long an ended stream may take to flush before its connection is cut. */
const END_GRACE_MS = 10_000;

export function latestFrameKey(sessionId: string): string {
  return `live/${sessionId}/${LATEST_FRAME_FILE}`;
}

interface FrameSignal {
  /** Session id, frame sequence, and receive time (ms since the epoch). */
  s: string;
  q: number;
  t: number;
}

/** A frame ready to write: the shared part head is built once for all viewers. */
interface RelayedFrame extends MjpegFrame {
  head: Buffer;
}

function relayed(frame: MjpegFrame): RelayedFrame {
  return { ...frame, head: partHead(frame) };
}

export interface ViewerStats {
  sessionId: string;
  framesWritten: number;
  framesDropped: number;
  /** Bytes written to the response that the socket has not taken yet. */
  bufferedBytes: number;
}

class Viewer {
  framesWritten = 0;
  framesDropped = 0;
  private lastSequence = 0;
  private waitingForDrain = false;
  private pending: RelayedFrame | undefined;
  private ended = false;
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    readonly sessionId: string,
    private readonly response: ServerResponse,
    private readonly onDropped: () => void,
    onGone: (viewer: Viewer) => void,
  ) {
    const gone = () => {
      this.ended = true;
      this.pending = undefined;
      clearTimeout(this.expiry);
      onGone(this);
    };
    response.once('close', gone);
    response.on('error', () => response.destroy());
    response.on('drain', () => {
      this.waitingForDrain = false;
      const next = this.pending;
      this.pending = undefined;
      if (next) this.offer(next);
    });
  }

  /** Ends the stream when its signed URL expires: a link stops granting access once it is out of date. */
  endAt(deadline: number): void {
    this.expiry = setTimeout(() => this.end(), Math.max(0, deadline - Date.now()));
    this.expiry.unref();
  }

  offer(frame: RelayedFrame): void {
    if (this.ended || frame.sequence <= this.lastSequence) return;
    if (this.waitingForDrain) {
      if (this.pending) this.drop();
      this.pending = frame;
      return;
    }
    this.lastSequence = frame.sequence;
    this.response.cork();
    this.response.write(frame.head);
    this.response.write(frame.bytes);
    this.response.write(PART_TAIL);
    this.response.uncork();
    this.framesWritten += 1;
    if (this.response.writableNeedDrain) this.waitingForDrain = true;
  }

  private drop(): void {
    this.framesDropped += 1;
    this.onDropped();
  }

  /**
   * Closes the multipart stream properly (its readers see the final boundary) and the response. A viewer that does
   * not keep up is cut off instead, and one that takes longer than `graceMs` to take the rest is cut then, so an
   * ended stream holds no memory.
   */
  end(graceMs = END_GRACE_MS): void {
    if (this.ended) return;
    this.ended = true;
    if (this.pending) this.drop();
    this.pending = undefined;
    clearTimeout(this.expiry);
    if (this.response.destroyed) return;
    // Still behind with the frames it was sent: it would not read the closing boundary either.
    if (this.response.writableNeedDrain) {
      this.response.destroy();
      return;
    }
    this.response.end(closingDelimiter());
    if (!this.response.writableFinished) setTimeout(() => this.response.destroy(), graceMs).unref();
  }

  stats(): ViewerStats {
    return { sessionId: this.sessionId, framesWritten: this.framesWritten, framesDropped: this.framesDropped, bufferedBytes: this.response.writableLength };
  }
}

/** One watched session on this instance. */
interface Watch {
  sessionId: string;
  viewers: Set<Viewer>;
  latest: RelayedFrame | undefined;
  /** Newest sequence known to exist (from a NOTIFY or a check) and when it arrived. */
  wanted: { sequence: number; receivedAt: Date };
  fetching: Promise<void> | undefined;
}

export interface FrameRelayOptions {
  db: Database;
  blobs: BlobStore;
  sessions: LiveSessionsRepository;
  log: FastifyBaseLogger;
  /** Largest frame accepted; a stored frame larger than this is not read. */
  maxFrameBytes: number;
  /** How often watched sessions are checked for their end and for frames a lost notification did not announce. */
  checkIntervalMs: number;
  metrics?: Registry;
}

export class FrameRelay {
  private readonly watches = new Map<string, Watch>();
  private readonly unlisteners: (() => Promise<void>)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private closed = false;
  private readonly received?: Counter;
  private readonly dropped?: Counter;

  constructor(private readonly options: FrameRelayOptions) {
    if (options.metrics) {
      const registers = [options.metrics];
      const watches = this.watches;
      new Gauge({
        name: 'hivegate_live_mjpeg_viewers',
        help: 'MJPEG viewers connected to this instance.',
        registers,
        collect() {
          let n = 0;
          for (const watch of watches.values()) n += watch.viewers.size;
          this.set(n);
        },
      });
      this.received = new Counter({ name: 'hivegate_live_frames_received_total', help: 'JPEG frames accepted from publishers by this instance.', registers });
      this.dropped = new Counter({ name: 'hivegate_live_frames_dropped_total', help: 'Frames skipped for MJPEG viewers that read slower than frames arrive.', registers });
    }
  }

  async start(): Promise<void> {
    this.closed = false;
    this.unlisteners.push(await this.options.db.listen(FRAMES_CHANNEL, (payload) => this.onFrameSignal(payload)));
    this.unlisteners.push(await this.options.db.listen(SESSIONS_CHANNEL, (payload) => this.onSessionSignal(payload)));
    this.timer = setInterval(() => this.checkInBackground([...this.watches.keys()]), this.options.checkIntervalMs);
    this.timer.unref();
  }

  /** Ends every viewer's stream (cleanly, with the closing boundary) and refuses new ones: shutdown is not held up. */
  closeViewers(): void {
    this.closed = true;
    for (const watch of [...this.watches.values()]) for (const viewer of [...watch.viewers]) viewer.end(1000);
  }

  async stop(): Promise<void> {
    this.closeViewers();
    clearInterval(this.timer);
    while (this.unlisteners.length > 0) await this.unlisteners.pop()!().catch(() => undefined);
    await this.checking;
    await Promise.all([...this.watches.values()].map((w) => w.fetching));
  }

  get accepting(): boolean {
    return !this.closed;
  }

  // ---- publisher side ----

  /**
   * Stores the frame as the session's latest, counts it, hands it to viewers here and announces it to the other
   * instances. Undefined when the session ended meanwhile (its media may already be released, so the stored frame
   * is removed again). Devices send one frame at a time; were two to race, viewers might see one of them twice.
   */
  async publish(sessionId: string, bytes: Buffer) {
    const key = latestFrameKey(sessionId);
    await this.options.blobs.put(key, bytes, { contentType: JPEG_CONTENT_TYPE });
    const recorded = await this.options.sessions.recordFrame(sessionId);
    if (!recorded) {
      await this.options.blobs.delete(key);
      return undefined;
    }
    this.received?.inc();
    const watch = this.watches.get(sessionId);
    if (watch) this.deliver(watch, relayed({ sequence: recorded.sequence, receivedAt: recorded.receivedAt, bytes }));
    const signal: FrameSignal = { s: sessionId, q: recorded.sequence, t: recorded.receivedAt.getTime() };
    await this.options.db.notify(FRAMES_CHANNEL, JSON.stringify(signal));
    return recorded;
  }

  // ---- viewer side ----

  /**
   * Streams the session's frames to `response` (its head already written) from the latest one on, until the
   * session ends, `until` passes, the viewer goes away or the instance stops.
   */
  attach(session: { id: string; frameSequence: number; lastFrameAt: Date | null }, response: ServerResponse, until: number): void {
    if (this.closed) {
      response.end(closingDelimiter());
      return;
    }
    let watch = this.watches.get(session.id);
    if (!watch) {
      watch = { sessionId: session.id, viewers: new Set(), latest: undefined, wanted: { sequence: 0, receivedAt: new Date(0) }, fetching: undefined };
      this.watches.set(session.id, watch);
    }
    const viewer = new Viewer(session.id, response, () => this.dropped?.inc(), (gone) => this.detach(gone));
    watch.viewers.add(viewer);
    viewer.endAt(until);
    // The picture there is now goes out at once; a viewer that reconnects sees no gap.
    if (watch.latest) viewer.offer(watch.latest);
    this.want(watch, session.frameSequence, session.lastFrameAt ?? new Date());
  }

  private detach(viewer: Viewer): void {
    const watch = this.watches.get(viewer.sessionId);
    if (!watch) return;
    watch.viewers.delete(viewer);
    // Nobody watches here any more: the frame is not kept.
    if (watch.viewers.size === 0) this.watches.delete(viewer.sessionId);
  }

  viewerStats(): ViewerStats[] {
    return [...this.watches.values()].flatMap((w) => [...w.viewers].map((v) => v.stats()));
  }

  /** Frame bytes held for viewers on this instance: at most one frame per watched session. */
  get heldFrameBytes(): number {
    let bytes = 0;
    for (const watch of this.watches.values()) bytes += watch.latest?.bytes.length ?? 0;
    return bytes;
  }

  private deliver(watch: Watch, frame: RelayedFrame): void {
    if (frame.sequence <= (watch.latest?.sequence ?? 0)) return;
    watch.latest = frame;
    for (const viewer of [...watch.viewers]) viewer.offer(frame);
  }

  // ---- other instances ----

  private onFrameSignal(payload: string): void {
    let signal: FrameSignal;
    try {
      signal = JSON.parse(payload) as FrameSignal;
    } catch {
      this.options.log.warn({ payload }, 'live: unreadable frame notification');
      return;
    }
    const watch = this.watches.get(signal.s);
    if (watch) this.want(watch, signal.q, new Date(signal.t));
  }

  /** A newer frame exists: fetch it unless it is here already. One fetch per session at a time, for the newest. */
  private want(watch: Watch, sequence: number, receivedAt: Date): void {
    if (sequence <= (watch.latest?.sequence ?? 0)) return;
    if (sequence > watch.wanted.sequence) watch.wanted = { sequence, receivedAt };
    if (watch.fetching) return;
    watch.fetching = this.fetchWanted(watch)
      .catch((err: unknown) => this.options.log.warn({ err, sessionId: watch.sessionId }, 'live: could not read the latest frame'))
      .finally(() => (watch.fetching = undefined));
  }

  private async fetchWanted(watch: Watch): Promise<void> {
    while (this.watches.get(watch.sessionId) === watch && watch.wanted.sequence > (watch.latest?.sequence ?? 0)) {
      const target = watch.wanted;
      const bytes = await this.readFrame(watch.sessionId);
      // Gone: the session ended and its media was released (the end reaches viewers through the session signal).
      if (!bytes) return;
      this.deliver(watch, relayed({ sequence: target.sequence, receivedAt: target.receivedAt, bytes }));
    }
  }

  private async readFrame(sessionId: string): Promise<Buffer | undefined> {
    const blob = await this.options.blobs.get(latestFrameKey(sessionId));
    if (!blob) return undefined;
    if (blob.size > this.options.maxFrameBytes) {
      blob.body.destroy();
      throw new Error(`stored frame of ${blob.size} bytes is over the ${this.options.maxFrameBytes} byte limit`);
    }
    return readAll(blob.body);
  }

  private onSessionSignal(payload: string): void {
    let sessionId: string | undefined;
    try {
      sessionId = (JSON.parse(payload) as { s?: string }).s;
    } catch {
      return;
    }
    if (sessionId && this.watches.has(sessionId)) this.checkInBackground([sessionId]);
  }

  private checkInBackground(ids: string[]): void {
    if (ids.length === 0 || this.closed) return;
    const run = async () => {
      for (const state of await this.options.sessions.frameStates(ids)) {
        const watch = this.watches.get(state.id);
        if (!watch) continue;
        if (state.ended) {
          for (const viewer of [...watch.viewers]) viewer.end();
          continue;
        }
        this.want(watch, state.frameSequence, state.lastFrameAt ?? new Date());
      }
    };
    const previous = this.checking ?? Promise.resolve();
    this.checking = previous
      .then(run)
      .catch((err: unknown) => this.options.log.warn({ err }, 'live: checking watched sessions failed'))
      .finally(() => undefined);
  }
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
