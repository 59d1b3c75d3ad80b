import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  isLiveRelayProtocol,
  UNSUPPORTED_RELAY_ERROR_CODE,
  type LiveDeviceEventBody,
  type LiveFrameAccepted,
  type LiveRelayProtocol,
  type LiveStartStreamPayload,
  type LiveStopStreamPayload,
} from '@hivegate/shared';
import type { LiveConfig } from '../config.ts';
import type { Database, Queryable } from '../db/database.ts';
import { HttpError } from '../http/errors.ts';
import type { MediaSigner } from '../media/signed-paths.ts';
import type { BlobStore } from '../storage/index.ts';
import { assembleClipFromSegments, type LiveClipHandoff } from './clip.ts';
import { LiveCommandsRepository, type CommandRecord } from './commands-repository.ts';
import { LiveDevicesRepository, pickStatusFields, type DeviceStatusFields } from './devices-repository.ts';
import { resolveFfmpeg } from './ffmpeg-binary.ts';
import { FrameRelay } from './frame-relay.ts';
import { parseMediaPlaylist, PlaylistError, publishedFileKind, segmentsToPrune, trimToStored, MAX_PLAYLIST_BYTES } from './playlist.ts';
import { PublishTokens } from './publish-tokens.ts';
import {
  NOT_PUBLISHING_GRACE_SECONDS,
  NOT_PUBLISHING_SILENCE_SECONDS,
  notPublishingMessage,
  offlineMessage,
  PUBLISHER_LOST_ERROR_CODE,
  reportsNoStream,
  silenceMessage,
  START_TIMEOUT_ERROR_CODE,
  startTimeoutMessage,
} from './publisher-liveness.ts';
import { chooseRelay, rankRelays } from './relay-choice.ts';
import { initialTransition, isEnded, transition, type SessionEffect, type SessionEvent, type Transition } from './session-machine.ts';
import { LiveSessionsRepository, type SessionRecord, type SessionChange } from './sessions-repository.ts';
import { ShownChanges } from './shown-change.ts';
import { LiveSignals, notifyCommandQueued, notifySessionChanged } from './signals.ts';

/** The playlist the publisher URL names; it alone drives the session (first playlist → ACTIVE) and the window. */
export const MAIN_PLAYLIST = 'index.m3u8';
export const PUBLISH_PATH = '/api/entrance-live/publish';
/** Where an http-jpeg-push publisher POSTs each frame, under the session's publish folder. */
export const FRAME_FILE = 'frame';
/** The MJPEG stream of an http-jpeg-push session, under its signed media grant. */
export const MJPEG_FILE = 'stream.mjpeg';
/** Segments kept per session when no clip is wanted: ffmpeg's window plus slack; older ones are dropped on arrival of new ones. */
const WINDOW_SEGMENT_CAP = 64;
const SWEEP_BATCH = 50;
/** A media release claimed this long ago by an instance that did not finish it may be taken over. */
const RELEASE_RECLAIM_SECONDS = 600;
/** How often an instance prunes old sessions and commands (each instance; the work is idempotent). */
const PRUNE_INTERVAL_MS = 3600_000;
const PRUNE_BATCH = 500;
const POLL_HOLD_JITTER = 0.2;
/** A command still pending this long after its session ended is withdrawn. */
const COMMAND_AFTER_END_MS = 3600_000;

export interface LiveServiceOptions {
  db: Database;
  config: LiveConfig;
  log: FastifyBaseLogger;
  blobs: BlobStore;
  media: MediaSigner;
  /** The deployment secret, from which publish tokens are derived. */
  secret: Uint8Array;
  /** Where finished "clip" sessions go (the stored-video upload path); see clip.ts. */
  clipHandoff?: LiveClipHandoff;
  /** Registry for the gateway's Prometheus metrics. */
  metrics?: Registry;
}

export interface StartOptions {
  qualityProfile: string;
  recordingMode: string;
  /** The relay the browser asked for; left out, the gateway chooses one for the device (relay-choice.ts). */
  relayProtocol?: LiveRelayProtocol;
}

export interface EventOutcome {
  sessionId: string | null;
  sessionStatus: string | null;
  applied: boolean;
}

export interface AckOutcome {
  commandId: string;
  alreadyAcknowledged: boolean;
  sessionStatus: string | null;
}

/** The recording mode that asks for the stream to be handed to stored video when it ends. */
export const CLIP_RECORDING_MODE = 'clip';

/** Quality profile names as the browser may give them (and as a device's acknowledgement must name one to be taken). */
const QUALITY_PROFILE_NAME = /^[A-Za-z0-9_-]{1,32}$/;

export function isQualityProfileName(value: string): boolean {
  return QUALITY_PROFILE_NAME.test(value);
}

/**
 * The live gateway: sessions started from the browser, commands long-polled by the device, the device's events,
 * the HLS publisher's uploads, and the sweeps (keep-alive expiry, stop grace, media clean-up) every instance runs.
 * Every state change goes through the transition table in session-machine.ts under a row lock.
 */
export class LiveService {
  readonly sessions: LiveSessionsRepository;
  readonly commands: LiveCommandsRepository;
  readonly devices: LiveDevicesRepository;
  readonly signals: LiveSignals;
  /** The http-jpeg-push relay's frames and MJPEG viewers. */
  readonly frames: FrameRelay;
  private readonly tokens: PublishTokens;
  private sweepTimer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private releaseTimer?: NodeJS.Timeout;
  private lastPrune = 0;
  private releasing?: Promise<void>;
  private stopped = false;
  /** Emits a session id whenever one of its segments was stored here, for playlists waiting on it. */
  private readonly segmentArrivals = new EventEmitter().setMaxListeners(0);
  private readonly transitions?: Counter<'from' | 'to'>;
  private readonly delivered?: Counter<'command'>;

  constructor(private readonly options: LiveServiceOptions) {
    this.sessions = new LiveSessionsRepository(options.db);
    this.commands = new LiveCommandsRepository(options.db);
    this.devices = new LiveDevicesRepository(options.db);
    this.signals = new LiveSignals(options.db, options.log);
    this.tokens = new PublishTokens(options.secret);
    this.frames = new FrameRelay({
      db: options.db,
      blobs: options.blobs,
      sessions: this.sessions,
      log: options.log,
      maxFrameBytes: options.config.maxFrameBytes,
      checkIntervalMs: Math.max(500, options.config.sweepIntervalMs),
      metrics: options.metrics,
    });
    if (options.metrics) {
      const signals = this.signals;
      const registers = [options.metrics];
      new Gauge({
        name: 'hivegate_live_waiting_polls',
        help: 'Device long-polls waiting on this instance.',
        registers,
        collect() {
          this.set(signals.waitingPolls);
        },
      });
      this.transitions = new Counter({ name: 'hivegate_live_session_transitions_total', help: 'Live session state changes made by this instance.', labelNames: ['from', 'to'] as const, registers });
      this.delivered = new Counter({ name: 'hivegate_live_commands_delivered_total', help: 'Commands handed to devices (redeliveries included).', labelNames: ['command'] as const, registers });
    }
  }

  private get config(): LiveConfig {
    return this.options.config;
  }

  private get log(): FastifyBaseLogger {
    return this.options.log;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.signals.start();
    await this.frames.start();
    this.sweepTimer = setInterval(() => this.sweepInBackground(), this.config.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    clearTimeout(this.releaseTimer);
    await this.frames.stop();
    await this.signals.stop();
    await this.sweeping;
    await this.releasing;
  }

  /** Whether a session in "clip" mode will really be handed over (a hand-off hook is connected). */
  get clipHandoffAvailable(): boolean {
    return this.options.clipHandoff !== undefined;
  }

  /** Only HLS segments make a clip: JPEG push keeps the latest frame alone. Clients differ in case ("Clip"). */
  private clipHandoffFor(recordingMode: string, relay: LiveRelayProtocol): boolean {
    return recordingMode.toLowerCase() === CLIP_RECORDING_MODE && relay === 'hls' && this.clipHandoffAvailable;
  }

  // ---- browser (GraphQL) ----

  /** Opens the box's session, or returns the open one: one open session per box, enforced by a unique index. */
  async startSession(ownerId: number, boxId: string, options: StartOptions): Promise<SessionRecord> {
    const session = await this.options.db.transaction(async (tx) => {
      const existing = await this.sessions.openForBox(ownerId, boxId, tx);
      if (existing) return existing;
      const online = await this.devices.isOnline(tx, ownerId, boxId, this.config.deviceOnlineSeconds);
      const initial = initialTransition(online);
      // A first choice, so that a session waiting for its device already says which relay it will likely use;
      // made again with what the device reported by the time START_STREAM is queued.
      const relayProtocol = options.relayProtocol ?? (await this.relayForDevice(tx, ownerId, boxId));
      const id = randomUUID();
      const salt = this.tokens.newSalt();
      const inserted = await this.sessions.insert(tx, {
        id,
        ownerId,
        boxId,
        status: initial.state,
        relayProtocol,
        relayProtocolExplicit: options.relayProtocol !== undefined,
        qualityProfile: options.qualityProfile,
        recordingMode: options.recordingMode,
        clipHandoffEnabled: this.clipHandoffFor(options.recordingMode, relayProtocol),
        publishSalt: salt,
        publishTokenHash: this.tokens.hash(this.tokens.tokenFor(id, salt)),
      });
      // Another start for this box committed first: that session is the answer.
      if (!inserted) return (await this.sessions.openForBox(ownerId, boxId, tx))!;
      const created = (await this.sessions.findForOwner(ownerId, id, tx, true))!;
      await this.carryOut(tx, created, initial.state, initial.effects, false);
      return (await this.sessions.findForOwner(ownerId, id, tx))!;
    });
    this.log.info({ sessionId: session.id, boxId, status: session.status }, 'live: session requested');
    return session;
  }

  async keepAlive(ownerId: number, sessionId: string): Promise<SessionRecord | undefined> {
    return this.applyToOwnedSession(ownerId, sessionId, { type: 'KEEPALIVE' });
  }

  async stopSession(ownerId: number, sessionId: string): Promise<SessionRecord | undefined> {
    return this.applyToOwnedSession(ownerId, sessionId, { type: 'STOP_REQUESTED' });
  }

  /** The box's session until it is over (open or still stopping). */
  currentSession(ownerId: number, boxId: string): Promise<SessionRecord | undefined> {
    return this.sessions.currentForBox(ownerId, boxId);
  }

  findSession(ownerId: number, sessionId: string): Promise<SessionRecord | undefined> {
    return this.sessions.findForOwner(ownerId, sessionId);
  }

  /**
   * The box's sessions as they change, for one subscriber: a notification that brings it nothing new (a keep-alive,
   * two notifications read after the same change) is skipped, so each state reaches it once.
   */
  sessionChanges(ownerId: number, boxId: string): AsyncIterableIterator<string> {
    const source = this.signals.sessionChanges(ownerId, boxId);
    const changes = new ShownChanges();
    const iterator: AsyncIterableIterator<string> = {
      next: async () => {
        for (;;) {
          const result = await source.next();
          if (result.done) return result;
          const session = await this.sessions.findForOwner(ownerId, result.value);
          // A session gone altogether is passed on: the subscriber reads null for it.
          if (!session || changes.isNews(session)) return result;
        }
      },
      return: () => source.return?.() ?? Promise.resolve({ value: undefined, done: true }),
      [Symbol.asyncIterator]: () => iterator,
    };
    return iterator;
  }

  private async applyToOwnedSession(ownerId: number, sessionId: string, event: SessionEvent): Promise<SessionRecord | undefined> {
    let release = false;
    const session = await this.options.db.transaction(async (tx) => {
      const locked = await this.sessions.findForOwner(ownerId, sessionId, tx, true);
      if (!locked) return undefined;
      release = await this.runTransition(tx, locked, event);
      return this.sessions.findForOwner(ownerId, sessionId, tx);
    });
    if (release) this.releaseSoon();
    return session;
  }

  // ---- device (REST) ----

  /**
   * Any device request records presence and the status fields it carries. Heartbeats (status, poll) also bring
   * sessions that waited in DEVICE_OFFLINE forward to REQUESTED; events and acks only record presence, so
   * DEVICE_ONLINE never moves a session by itself (spec §3 rule 1): the device's next poll does.
   */
  async recordDeviceSighting(ownerId: number, boxId: string, fields: DeviceStatusFields = {}, heartbeat = false): Promise<void> {
    const waiting = await this.devices.recordSighting(ownerId, boxId, fields);
    if (!heartbeat) return;
    for (const sessionId of waiting) await this.applyToOwnedSession(ownerId, sessionId, { type: 'DEVICE_SEEN' });
    // A device that crashed or restarted mid-stream says so in its next heartbeat: it runs no stream. With its media
    // silent too, the session is over at once instead of after LIVE_PUBLISHER_SILENCE_SECONDS. (A STARTING session
    // is left to the start time-out: a device may say "idle" while its publisher is still coming up.)
    if (reportsNoStream(fields.publisherState)) {
      const message = notPublishingMessage(String(fields.publisherState));
      for (const sessionId of await this.sessions.activeAndSilent(ownerId, boxId, NOT_PUBLISHING_GRACE_SECONDS, NOT_PUBLISHING_SILENCE_SECONDS)) {
        await this.applyToOwnedSession(ownerId, sessionId, { type: 'PUBLISHER_LOST', errorCode: PUBLISHER_LOST_ERROR_CODE, errorMessage: message });
      }
    }
  }

  pendingCommandCount(ownerId: number, boxId: string): Promise<number> {
    return this.commands.pendingCount(ownerId, boxId);
  }

  /**
   * Hands out the box's due commands; with `waitMs` holds on until one is queued (on any instance) or the wait
   * ends. The wake-up is armed before each look, so a command queued in between is never slept through.
   */
  async pollCommands(ownerId: number, boxId: string, limit: number, waitMs: number, abort?: AbortSignal): Promise<CommandRecord[]> {
    // An empty poll ends somewhere in the last fifth of its wait: devices that started together (after an outage,
    // a power cut) would otherwise poll in lockstep for ever, all at once every wait.
    const deadline = Date.now() + waitMs * (1 - POLL_HOLD_JITTER * Math.random());
    for (;;) {
      const wakeUp = this.signals.armCommandWait(ownerId, boxId);
      const onAbort = () => wakeUp.cancel();
      try {
        const commands = await this.commands.deliver(ownerId, boxId, limit, this.config.commandRedeliverySeconds);
        if (commands.length > 0) {
          for (const command of commands) this.delivered?.inc({ command: command.commandType });
          return commands;
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0 || this.stopped || this.signals.closed || abort?.aborted) return [];
        // A handed-out but unacknowledged command becomes due again within the wait: wake for it too.
        const due = await this.commands.secondsUntilRedelivery(ownerId, boxId, this.config.commandRedeliverySeconds);
        abort?.addEventListener('abort', onAbort, { once: true });
        // Woken or timed out, the loop reads the commands once more before it answers empty: a notification lost
        // with a dead listening connection left a queued command waiting for the device's next poll.
        await wakeUp.wait(due === undefined ? remaining : Math.min(remaining, Math.ceil(due * 1000) + 10));
        if (this.stopped || this.signals.closed || abort?.aborted) return [];
      } finally {
        abort?.removeEventListener('abort', onAbort);
        wakeUp.cancel();
      }
    }
  }

  /** The command as the device receives it: START_STREAM gains its publisher URL, publish token and playback URL. */
  commandForDevice(command: CommandRecord, origin: string) {
    let payload: Record<string, unknown> = command.payload;
    if (command.commandType === 'START_STREAM') {
      const stored = command.payload as Omit<LiveStartStreamPayload, 'publisherUrl' | 'publishToken' | 'playbackUrl'>;
      // The relay is fixed in the command when it is queued; a fallback queues a new command.
      const relay = isLiveRelayProtocol(stored.relayProtocol) ? stored.relayProtocol : 'hls';
      const start: LiveStartStreamPayload = {
        ...stored,
        relayProtocol: relay,
        publisherUrl: this.publisherUrl(origin, command.sessionId, relay),
        publishToken: this.tokens.tokenFor(command.sessionId, command.publishSalt),
        playbackUrl: this.playbackUrl(origin, command.sessionId, relay),
      };
      payload = { ...start };
    }
    return {
      id: command.id,
      sessionId: command.sessionId,
      commandType: command.commandType,
      payload,
      createdAt: command.createdAt.toISOString(),
      deliveredAt: command.deliveredAt ? command.deliveredAt.toISOString() : null,
    };
  }

  /**
   * Idempotent: a second ack answers alreadyAcknowledged. The START_STREAM ack moves the session (accepted → STARTING,
   * else FAILED); a STOP_STREAM ack other than accepted ends a STOPPING session at once.
   */
  async acknowledgeCommand(ownerId: number, boxId: string, commandId: string, status: string, payload: Record<string, unknown> | null | undefined): Promise<AckOutcome> {
    await this.recordDeviceSighting(ownerId, boxId);
    let release = false;
    const outcome = await this.options.db.transaction(async (tx): Promise<AckOutcome> => {
      const found = await this.commands.findForBox(tx, ownerId, boxId, commandId);
      if (!found) throw new HttpError(404, `no command "${commandId}" for box "${boxId}"`);
      // Session first, then command: the same lock order as every transition, so the two never deadlock.
      const session = await this.sessions.findForOwner(ownerId, found.sessionId, tx, true);
      const command = (await this.commands.findForBox(tx, ownerId, boxId, commandId, true))!;
      if (command.ackedAt) return { commandId: command.id, alreadyAcknowledged: true, sessionStatus: session?.status ?? null };
      await this.commands.acknowledge(tx, command.id, status, payload ?? null);
      if (session && command.commandType === 'START_STREAM') {
        // What the device streams is what the session says, not what was asked (it replaces profiles it lacks; the
        // ack's note, shown as the session's notice, says so).
        const used = status.toLowerCase() === 'accepted' ? textOf(payload?.qualityProfile) : undefined;
        if (used !== undefined && isQualityProfileName(used) && used !== session.qualityProfile && !isEnded(session.status)) {
          await this.sessions.setQualityProfile(tx, session.id, used);
        }
        let event: SessionEvent =
          status.toLowerCase() === 'accepted'
            ? { type: 'START_ACCEPTED' }
            : { type: 'START_REFUSED', errorCode: textOf(payload?.errorCode) ?? `START_${status.toUpperCase()}`, errorMessage: textOf(payload?.reason) ?? textOf(payload?.errorMessage) ?? null };
        if (event.type === 'START_REFUSED' && event.errorCode.toUpperCase() === UNSUPPORTED_RELAY_ERROR_CODE) {
          // Without a relay named in the ack, the refusal is of the relay this command offered.
          const refusal = { relayProtocol: command.payload.relayProtocol, ...payload };
          const decided = await this.relayRefusal(tx, session, refusal, event);
          if (decided === null) return { commandId: command.id, alreadyAcknowledged: false, sessionStatus: session.status };
          event = decided;
        }
        release = await this.runTransition(tx, session, event);
      } else if (session && command.commandType === 'STOP_STREAM' && status.toLowerCase() !== 'accepted') {
        // The device runs no stream for this session ("ignored"): no STREAM_STOPPED will come, so the stop is done.
        release = await this.runTransition(tx, session, { type: 'STOP_IGNORED' });
      }
      const after = session ? await this.sessions.findForOwner(ownerId, session.id, tx) : undefined;
      return { commandId: command.id, alreadyAcknowledged: false, sessionStatus: after?.status ?? null };
    });
    if (release) this.releaseSoon();
    return outcome;
  }

  /**
   * A device lifecycle report. DEVICE_ONLINE updates presence and the stored status only (spec §3 rule 1); the
   * STREAM_* kinds apply to the named session, or to the box's current one when none is named.
   */
  async reportEvent(ownerId: number, boxId: string, body: LiveDeviceEventBody): Promise<EventOutcome> {
    const payload = body.payload ?? {};
    await this.recordDeviceSighting(ownerId, boxId, body.eventType === 'DEVICE_ONLINE' ? pickStatusFields(payload) : {});
    const sessionId = body.sessionId === undefined || body.sessionId === null ? undefined : String(body.sessionId);
    if (body.eventType === 'DEVICE_ONLINE') {
      const current = await this.sessions.currentForBox(ownerId, boxId);
      return { sessionId: current?.id ?? null, sessionStatus: current?.status ?? null, applied: false };
    }
    // The existing entrance observer names its error text `message`.
    const event: SessionEvent =
      body.eventType === 'STREAM_FAILED'
        ? { type: 'STREAM_FAILED', errorCode: textOf(payload.errorCode) ?? 'STREAM_FAILED', errorMessage: textOf(payload.errorMessage) ?? textOf(payload.message) ?? null }
        : body.eventType === 'STREAM_STOPPED'
          ? { type: 'STREAM_STOPPED', reason: textOf(payload.reason) ?? null }
          : { type: body.eventType };
    let release = false;
    const outcome = await this.options.db.transaction(async (tx): Promise<EventOutcome> => {
      const session = sessionId ? await this.sessions.findForOwner(ownerId, sessionId, tx, true) : await this.sessions.currentForBox(ownerId, boxId, tx, true);
      if (!session || session.boxId !== boxId) {
        throw new HttpError(404, sessionId ? `no live session "${sessionId}" for box "${boxId}"` : `box "${boxId}" has no live session`);
      }
      const before = session.status;
      const applied = event.type === 'STREAM_FAILED' && event.errorCode.toUpperCase() === UNSUPPORTED_RELAY_ERROR_CODE ? await this.relayRefusal(tx, session, payload, event) : event;
      // A refusal of a relay the session no longer uses (it already moved on) changes nothing.
      if (applied === null) return { sessionId: session.id, sessionStatus: session.status, applied: false };
      release = await this.runTransition(tx, session, applied);
      const after = (await this.sessions.findForOwner(ownerId, session.id, tx))!;
      return { sessionId: session.id, sessionStatus: after.status, applied: after.status !== before || after.lastErrorCode !== session.lastErrorCode || applied.type === 'RELAY_REFUSED' };
    });
    if (release) this.releaseSoon();
    return outcome;
  }

  // ---- publisher (HLS over HTTP PUT) ----

  /** The session a publish request may write to: the token must match, and the session must not be over. */
  async authorizePublisher(sessionId: string, token: string | undefined): Promise<SessionRecord> {
    // Said apart: a missing token is a publisher set up without its header, a wrong one a token of another session.
    if (!token) throw new HttpError(401, 'missing publish token: send the START_STREAM publishToken as "X-Publish-Token" or "Authorization: Bearer"');
    const session = await this.sessions.findById(sessionId);
    // An unknown session is answered as a wrong token: a 404 told anyone without a token which session ids exist.
    if (!session || !this.tokens.matches(token, Buffer.from(session.publishTokenHash))) throw new HttpError(401, 'publish token is not valid for this session');
    if (isEnded(session.status)) throw new HttpError(410, `live session is over (${session.status}); publishing is closed`);
    return session;
  }

  /** Stores a segment or playlist under live/{sessionId}/ (a stale playlist is taken and dropped). */
  async publishFile(session: SessionRecord, file: string, body: Buffer): Promise<void> {
    const kind = publishedFileKind(file);
    if (!kind) throw new HttpError(400, `file "${file}" is not accepted: publish *.m3u8 playlists and *.ts / *.m4s / init.mp4 segments`);
    const key = `live/${session.id}/${file}`;
    if (kind === 'segment') {
      if (body.length === 0) throw new HttpError(400, 'segment body is empty');
      await this.options.blobs.put(key, body);
      const cap = session.clipHandoffEnabled ? this.config.clipMaxSegments : WINDOW_SEGMENT_CAP;
      const result = await this.sessions.addSegment(session.id, file, cap);
      if (result.outcome === 'ended') {
        await this.options.blobs.delete(key);
        throw new HttpError(410, 'live session is over; publishing is closed');
      }
      this.segmentArrivals.emit(session.id);
      await this.dropSegments(session.id, result.overflow);
      return;
    }
    if (body.length > MAX_PLAYLIST_BYTES) throw new HttpError(413, `playlist is larger than ${MAX_PLAYLIST_BYTES} bytes`);
    let playlist;
    try {
      playlist = parseMediaPlaylist(body.toString('utf8'));
    } catch (err) {
      if (err instanceof PlaylistError) throw new HttpError(400, `playlist ${file}: ${err.message}`);
      throw err;
    }
    if (file !== MAIN_PLAYLIST) {
      await this.options.blobs.put(key, body);
      return;
    }
    // ffmpeg writes playlists and segments over separate connections and does not wait for answers, so a playlist
    // can overtake its newest segment by a few milliseconds: wait for it briefly rather than hold it back a whole
    // segment duration.
    const listed = playlist.segments;
    await this.awaitSegments(session.id, listed, Math.min(3000, Math.max(1000, 1500 * (playlist.targetDuration ?? 1))));
    // Under the row lock: a playlist older than the stored one is not stored over it, and
    // a playlist is cut before any segment not stored yet, so players never ask for a missing one.
    let release = false;
    const stored = await this.options.db.transaction(async (tx) => {
      const locked = await this.sessions.findForOwner(session.ownerId, session.id, tx, true);
      if (!locked || isEnded(locked.status)) throw new HttpError(410, 'live session is over; publishing is closed');
      const have = new Set(locked.segments);
      const ready = trimToStored(body.toString('utf8'), (name) => have.has(name));
      if (ready.segments === 0 && playlist.segments.length > 0) return false;
      const position = playlist.mediaSequence + ready.segments;
      if (position < (await this.sessions.playlistPosition(tx, session.id))) return false;
      await this.options.blobs.put(key, ready.trimmed ? Buffer.from(ready.text) : body);
      const playable = ready.segments > 0;
      await this.sessions.recordPlaylist(tx, session.id, position, playable);
      // Playable now, whether or not the device's STREAM_ACTIVE has arrived yet.
      if (playable) release = await this.runTransition(tx, locked, { type: 'PLAYLIST_PUBLISHED' });
      // The first playable playlist gives the session its playbackUrl: subscribers must hear of it even when the
      // session was ACTIVE already (STREAM_ACTIVE came first) and the transition changed nothing. Postgres
      // delivers identical notifications of one transaction once, so a transition that notified too costs nothing.
      if (playable && locked.firstPlaylistAt === null) await notifySessionChanged(tx, locked.ownerId, locked.boxId, locked.id);
      return true;
    });
    if (release) this.releaseSoon();
    if (stored && !session.clipHandoffEnabled) await this.dropSegments(session.id, segmentsToPrune(session.segments, playlist.segments));
  }

  private async awaitSegments(sessionId: string, names: string[], maxWaitMs: number): Promise<void> {
    if (names.length === 0) return;
    const deadline = Date.now() + maxWaitMs;
    for (;;) {
      const stored = new Set(await this.sessions.storedSegments(sessionId));
      if (names.every((n) => stored.has(n)) || Date.now() >= deadline || this.stopped) return;
      // Stored here: woken at once; stored by another instance: seen on the next look.
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.segmentArrivals.off(sessionId, done);
          resolve();
        };
        const timer = setTimeout(done, 50);
        this.segmentArrivals.once(sessionId, done);
      });
    }
  }

  /** ffmpeg DELETEs segments that left its window; a clip session keeps them for the hand-off. */
  async deletePublished(session: SessionRecord, file: string): Promise<void> {
    const kind = publishedFileKind(file);
    if (!kind) throw new HttpError(400, `file "${file}" is not accepted`);
    if (kind === 'segment' && session.clipHandoffEnabled) return;
    await this.options.blobs.delete(`live/${session.id}/${file}`);
    if (kind === 'segment') await this.sessions.removeSegments(session.id, [file]);
  }

  private async dropSegments(sessionId: string, names: string[]): Promise<void> {
    if (names.length === 0) return;
    for (const name of names) await this.options.blobs.delete(`live/${sessionId}/${name}`);
    await this.sessions.removeSegments(sessionId, names);
  }

  // ---- publisher (http-jpeg-push) ----

  /** Takes one JPEG frame (already checked to be one) for an http-jpeg-push session. The first one makes it ACTIVE. */
  async publishFrame(session: SessionRecord, bytes: Buffer): Promise<LiveFrameAccepted> {
    const recorded = await this.frames.publish(session.id, bytes);
    if (!recorded) throw new HttpError(410, 'live session is over; publishing is closed');
    // Watchable now, whether or not the device's STREAM_ACTIVE has arrived yet.
    if (recorded.status === 'REQUESTED' || recorded.status === 'STARTING') await this.applyToOwnedSession(session.ownerId, session.id, { type: 'FRAME_PUBLISHED' });
    return { ok: true, sessionId: session.id, frameSequence: recorded.sequence, frameTimestamp: recorded.receivedAt.toISOString(), bytes: bytes.length };
  }

  // ---- relay choice ----

  private async relayForDevice(tx: Queryable, ownerId: number, boxId: string): Promise<LiveRelayProtocol> {
    const device = await this.devices.find(ownerId, boxId, tx);
    return chooseRelay(device && { diagnostics: device.diagnostics, refusedRelays: device.refusedRelays }, this.config.defaultRelayProtocol);
  }

  /**
   * The device says it cannot publish with a relay. Remembered for the device; and when the gateway chose the
   * relay (not the browser), the session is still starting and another relay is left, START_STREAM is offered
   * again with that one instead of failing the session. Otherwise the refusal stands as `failure`; null when the
   * refused relay is not the session's any more (a late report about an earlier offer).
   */
  private async relayRefusal(tx: Queryable, session: SessionRecord, payload: Record<string, unknown> | null | undefined, failure: SessionEvent): Promise<SessionEvent | null> {
    const refused = isLiveRelayProtocol(payload?.relayProtocol) ? payload.relayProtocol : session.relayProtocol;
    await this.devices.recordRelayRefusal(tx, session.ownerId, session.boxId, refused);
    if (refused !== session.relayProtocol) return null;
    if (session.relayProtocolExplicit || (session.status !== 'REQUESTED' && session.status !== 'STARTING')) return failure;
    const device = await this.devices.find(session.ownerId, session.boxId, tx);
    const next = rankRelays(device && { diagnostics: device.diagnostics, refusedRelays: device.refusedRelays }, this.config.defaultRelayProtocol)[0];
    if (!next || next === refused) return failure;
    this.log.info({ sessionId: session.id, boxId: session.boxId, refused, next }, 'live: device cannot publish with this relay; offering another');
    return { type: 'RELAY_REFUSED' };
  }

  // ---- URLs ----

  /** Where the device publishes: the HLS playlist it PUTs (segments go next to it), or the frame endpoint it POSTs to. */
  publisherUrl(origin: string, sessionId: string, relay: LiveRelayProtocol = 'hls'): string {
    return `${origin}${PUBLISH_PATH}/${sessionId}/${relay === 'http-jpeg-push' ? FRAME_FILE : MAIN_PLAYLIST}`;
  }

  /**
   * A signed playlist URL. The expiry is rounded up to the minute so repeated reads within a minute return the
   * same URL (a player is not restarted for nothing); every read or keep-alive hands out one valid for the full TTL.
   */
  playbackUrl(origin: string, sessionId: string, relay: LiveRelayProtocol = 'hls', now = Date.now()): string {
    const expires = Math.ceil((now + this.config.playbackUrlTtlSeconds * 1000) / 60_000) * 60_000;
    return `${origin}${this.options.media.url('live', sessionId, relay === 'http-jpeg-push' ? MJPEG_FILE : MAIN_PLAYLIST, new Date(expires))}`;
  }

  // ---- clip hand-off ----

  /** The session's kept segments as one MP4 (ffmpeg, no re-encoding). */
  async assembleLiveClip(sessionId: string): Promise<Readable> {
    const session = await this.sessions.findById(sessionId);
    if (!session) throw new Error(`no live session ${sessionId}`);
    const names = [...session.segments].sort((a, b) => Number(b.endsWith('.mp4')) - Number(a.endsWith('.mp4')));
    return assembleClipFromSegments(this.options.blobs, names.map((n) => `live/${sessionId}/${n}`), resolveFfmpeg());
  }

  // ---- sweeps ----

  /** One pass of every sweep; safe on many instances at once (rows are locked, others' rows skipped). */
  async sweepOnce(): Promise<{ expired: number; stopped: number; failed: number; released: number }> {
    let expired = 0;
    let stopped = 0;
    let failed = 0;
    const { startTimeoutSeconds, publisherSilenceSeconds, deviceOnlineSeconds } = this.config;
    await this.options.db.transaction(async (tx) => {
      // Each row is looked at under its lock by one pass only: a session another check just ended is skipped by the
      // next one's status filter (the same transaction sees its own changes).
      for (const session of await this.sessions.lockStartTimedOut(tx, startTimeoutSeconds, SWEEP_BATCH)) {
        await this.runTransition(tx, session, { type: 'START_TIMED_OUT', errorCode: START_TIMEOUT_ERROR_CODE, errorMessage: startTimeoutMessage(startTimeoutSeconds) });
        failed += 1;
      }
      for (const session of await this.sessions.lockDeviceGone(tx, deviceOnlineSeconds, SWEEP_BATCH)) {
        await this.runTransition(tx, session, { type: 'PUBLISHER_LOST', errorCode: PUBLISHER_LOST_ERROR_CODE, errorMessage: offlineMessage(deviceOnlineSeconds) });
        failed += 1;
      }
      for (const session of await this.sessions.lockPublisherSilent(tx, publisherSilenceSeconds, SWEEP_BATCH)) {
        await this.runTransition(tx, session, { type: 'PUBLISHER_LOST', errorCode: PUBLISHER_LOST_ERROR_CODE, errorMessage: silenceMessage(publisherSilenceSeconds) });
        failed += 1;
      }
      for (const session of await this.sessions.lockExpired(tx, SWEEP_BATCH)) {
        await this.runTransition(tx, session, { type: 'KEEPALIVE_TIMEOUT' });
        expired += 1;
      }
      for (const session of await this.sessions.lockStopGraceElapsed(tx, this.config.stopGraceSeconds, SWEEP_BATCH)) {
        await this.runTransition(tx, session, { type: 'STOP_GRACE_ELAPSED' });
        stopped += 1;
      }
    });
    const released = await this.releaseEndedMedia();
    if (Date.now() - this.lastPrune >= PRUNE_INTERVAL_MS) {
      this.lastPrune = Date.now();
      await this.pruneHistory();
    }
    return { expired, stopped, failed, released };
  }

  /**
   * Old history goes: commands a device never picked up for sessions over for an hour are withdrawn, and sessions
   * ended longer ago than the history period are deleted with their commands (in batches, oldest first).
   */
  async pruneHistory(now = new Date()): Promise<{ withdrawn: number; deleted: number }> {
    const withdrawn = await this.commands.withdrawForEndedSessions(new Date(now.getTime() - COMMAND_AFTER_END_MS));
    const cutoff = new Date(now.getTime() - this.config.historyDays * 86_400_000);
    let deleted = 0;
    for (;;) {
      const batch = await this.sessions.deleteEndedBefore(cutoff, PRUNE_BATCH);
      deleted += batch;
      if (batch < PRUNE_BATCH || this.stopped) break;
    }
    if (withdrawn + deleted > 0) this.log.info({ withdrawn, deleted }, 'live: pruned history');
    return { withdrawn, deleted };
  }

  private sweepInBackground(): void {
    if (this.sweeping || this.stopped) return;
    this.sweeping = this.sweepOnce()
      .then((report) => {
        if (report.expired + report.stopped + report.failed + report.released > 0) this.log.info({ report }, 'live: sweep');
      })
      .catch((err: unknown) => this.log.error({ err }, 'live: sweep failed'))
      .finally(() => (this.sweeping = undefined));
  }

  /** Media of a session that just ended goes now rather than at the next sweep. */
  private releaseSoon(): void {
    if (this.stopped || this.releaseTimer) return;
    this.releaseTimer = setTimeout(() => {
      this.releaseTimer = undefined;
      this.releasing = this.releaseEndedMedia()
        .then(() => undefined)
        .catch((err: unknown) => this.log.error({ err }, 'live: media release failed'))
        .finally(() => (this.releasing = undefined));
    }, 0);
    this.releaseTimer.unref();
  }

  private async releaseEndedMedia(): Promise<number> {
    const claimed = await this.sessions.claimMediaToRelease(SWEEP_BATCH, RELEASE_RECLAIM_SECONDS);
    for (const session of claimed) {
      let streamId: string | null = null;
      const handoff = this.options.clipHandoff;
      if (session.clipHandoffEnabled && handoff && session.segments.length > 0) {
        try {
          const result = await handoff({
            sessionId: session.id,
            ownerId: session.ownerId,
            boxId: session.boxId,
            startedAt: session.activeAt ?? session.createdAt,
            endedAt: session.endedAt ?? new Date(),
            segmentCount: session.segments.length,
            open: () => this.assembleLiveClip(session.id),
          });
          streamId = result?.streamId ?? null;
        } catch (err) {
          // The clip is lost, but the segments must not outlive the session; say so loudly.
          this.log.error({ err, sessionId: session.id }, 'live: clip hand-off failed');
        }
      }
      await this.options.blobs.deletePrefix(`live/${session.id}/`);
      await this.sessions.markMediaReleased(session.id, streamId);
      if (streamId) await notifySessionChanged(this.options.db, session.ownerId, session.boxId, session.id);
    }
    return claimed.length;
  }

  // ---- transitions ----

  /** Asks the table and carries out its answer inside `tx` (the session row is locked). True when media must be released. */
  private async runTransition(tx: Queryable, session: SessionRecord, event: SessionEvent): Promise<boolean> {
    const result: Transition = transition(session.status, event, { startDelivered: session.startDelivered });
    if (result.verdict === 'ignored') {
      this.log.info({ sessionId: session.id, boxId: session.boxId, event: event.type, status: session.status }, `live: ${result.reason}; ignored`);
      return false;
    }
    const next = result.verdict === 'moved' ? result.to : result.state;
    if (result.verdict === 'moved') {
      this.log.info({ sessionId: session.id, boxId: session.boxId, event: event.type, from: result.from, to: result.to }, 'live: session transition');
      this.transitions?.inc({ from: result.from, to: result.to });
    }
    return this.carryOut(tx, session, next, result.effects, result.verdict === 'moved');
  }

  private async carryOut(tx: Queryable, session: SessionRecord, next: SessionRecord['status'], effects: SessionEffect[], moved: boolean): Promise<boolean> {
    const change: SessionChange = { status: next };
    let queued = false;
    let release = false;
    let publish = false;
    for (const effect of effects) {
      switch (effect.type) {
        case 'QUEUE_START_STREAM': {
          // Chosen now, with the device's latest status and refusals, unless the browser asked for one.
          const relayProtocol = session.relayProtocolExplicit ? session.relayProtocol : await this.relayForDevice(tx, session.ownerId, session.boxId);
          const clipHandoffEnabled = this.clipHandoffFor(session.recordingMode, relayProtocol);
          if (relayProtocol !== session.relayProtocol) {
            await this.sessions.setRelayProtocol(tx, session.id, relayProtocol, clipHandoffEnabled);
            publish = true;
          }
          const payload: Omit<LiveStartStreamPayload, 'publisherUrl' | 'publishToken' | 'playbackUrl'> = {
            sessionId: session.id,
            relayProtocol,
            qualityProfile: session.qualityProfile,
            recordingMode: session.recordingMode,
            clipHandoffEnabled,
          };
          await this.commands.queue(tx, { ownerId: session.ownerId, boxId: session.boxId, sessionId: session.id, commandType: 'START_STREAM', payload });
          queued = true;
          break;
        }
        case 'QUEUE_STOP_STREAM': {
          const payload: LiveStopStreamPayload = { sessionId: session.id, reason: effect.reason };
          await this.commands.queue(tx, { ownerId: session.ownerId, boxId: session.boxId, sessionId: session.id, commandType: 'STOP_STREAM', payload: { ...payload } });
          queued = true;
          break;
        }
        case 'CANCEL_START_STREAM':
          await this.commands.cancelStart(tx, session.id);
          break;
        case 'SET_ERROR':
          change.error = { code: effect.code, message: effect.message };
          break;
        case 'EXTEND_KEEPALIVE':
          change.extendKeepaliveSeconds = this.config.keepaliveTimeoutSeconds;
          break;
        case 'RELEASE_MEDIA':
          release = true;
          break;
        case 'PUBLISH_CHANGE':
          publish = true;
          break;
      }
    }
    if (moved || change.error || change.extendKeepaliveSeconds !== undefined) await this.sessions.applyChange(tx, session.id, change);
    // Delivered on commit, to every instance: polls for this box wake, subscriptions re-read the session.
    if (queued) await notifyCommandQueued(tx, session.ownerId, session.boxId);
    if (publish) await notifySessionChanged(tx, session.ownerId, session.boxId, session.id);
    return release;
  }
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, 2000) : undefined;
}
