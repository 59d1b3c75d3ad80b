import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FfmpegCapture, type CaptureStatus } from './capture/capture.ts';
import { ClockStepLog } from './capture/clock-steps.ts';
import { resolveFfmpeg } from './capture/ffmpeg-binary.ts';
import { pictureRateNote, repeatedFramesNote, slowSourceNote } from './capture/rate-notes.ts';
import { isLive, parseSource } from './capture/source.ts';
import { SpacedNotes, type SpacedNote } from './capture/spaced-notes.ts';
import { ConfigError, defaultZone, frameCountsAt, type AgentConfig } from './config/config.ts';
import { prepareStateDir } from './config/state-dir.ts';
import { Controller } from './controller.ts';
import { EntranceCounter } from './count/entrance-counter.ts';
import { hostCpu, int8KernelNote } from './detect/cpu.ts';
import { createDetector, type ConfiguredDetector } from './detect/factory.ts';
import { DeviceClient } from './device/device-client.ts';
import { DeviceLoop, type DeviceSnapshot } from './device/device-loop.ts';
import { hostDiagnostics } from './device/diagnostics.ts';
import { LiveStreamer } from './live/live-streamer.ts';
import { isStorageFull, Outbox, RECORD_KINDS, type RecordKind } from './outbox/outbox.ts';
import { OutboxLock } from './outbox/outbox-lock.ts';
import { Pipeline } from './pipeline.ts';
import { SensorReader } from './sensors/sensor-reader.ts';
import { BeeTracker } from './track/tracker.ts';
import { OutageLog } from './uplink/outage-log.ts';
import { Uplink } from './uplink/uplink.ts';

/** How often a live agent saves the counts of the intervals it has not sent yet: what a power cut can lose at most. */
export const OPEN_INTERVALS_SAVE_MS = 5000;

export interface RunOptions {
  /** Process the source to its end, deliver everything, exit. */
  once?: boolean;
  /** How long `--once` (and shutdown) may spend delivering what is queued. */
  flushTimeoutMs?: number;
  log?: (message: string) => void;
  /** Resolves when the agent should stop (signals); the CLI wires SIGINT/SIGTERM here. */
  stopSignal?: Promise<void>;
  /** Receives controls once the agent runs (the CLI reloads credentials on SIGHUP through them). */
  onReady?: (controls: AgentControls) => void;
}

export interface AgentControls {
  /** New cloud URL/token: lifts a 401/403 stop at once. */
  updateCredentials(cloudUrl: string, token: string): void;
}

export function statusFilePath(config: AgentConfig): string {
  return join(config.stateDir, 'status.json');
}

/** The agent's version as the cloud sees it (status heartbeats, DEVICE_ONLINE). */
export function appVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return `hivegate-agent/${pkg.version ?? '0.0.0'}`;
}

/**
 * The least time between two notes that the picture rate changed (the first is said at once): a machine that falls
 * behind its camera sees the rate move with its load, every 10 s.
 */
const PICTURE_RATE_NOTE_SPACING_MS = 10 * 60_000;

/** A rate new pictures come at, with the frame-counted settings it set, by name. */
interface RateChange {
  fps: number;
  applied: Record<string, number>;
}

/** A cloud link's stop as the status file says it (`status` reads it), or nothing while it runs. */
function linkStop(field: string, stopped: { reason: string; retryAt: number } | undefined): Record<string, { reason: string; nextTryAt: string }> {
  return stopped ? { [field]: { reason: stopped.reason, nextTryAt: new Date(stopped.retryAt).toISOString() } } : {};
}

/** Notes the last upload for `status`; on a full disk the note waits for a later upload rather than failing this one. */
function noteLastUpload(outbox: Outbox, kind: string, count: number): void {
  try {
    outbox.setState('lastUpload', { at: new Date().toISOString(), kind, count });
  } catch (error) {
    if (!isStorageFull(error)) throw error;
  }
}

/**
 * Wires and runs the agent: outbox → uplink → capture → pipeline, stopped in reverse. Returns the process
 * exit code: 0 when done (and, with `once`, everything was delivered), 1 when records remain queued.
 */
export async function runAgent(config: AgentConfig, options: RunOptions = {}): Promise<number> {
  prepareStateDir(config);
  // First of all, before the models load or the camera opens: a second agent on this outbox stops at once.
  const outboxLock = new OutboxLock(config.outbox.path);
  outboxLock.start();
  try {
    return await runWithOutbox(config, options);
  } finally {
    outboxLock.stop();
  }
}

async function runWithOutbox(config: AgentConfig, options: RunOptions): Promise<number> {
  const log = options.log ?? ((message: string) => console.error(message));
  const source = parseSource(config.source.url, config.source);
  // Before the models load and "agent running" is said: a missing file was otherwise reported after that line.
  if (source.kind === 'file') checkSourceFile(source.path);
  const liveSource = isLive(source);
  if (config.detector.kind === 'onnx' && config.source.pixelFormat === 'gray') {
    log('note: the ONNX model gets gray frames (source.pixelFormat: gray); set rgb24 if it was trained on colour');
  }
  if (options.once && liveSource) log(`--once with a live source (${config.source.url}) runs until stopped`);
  const startedAt = Date.now();

  const outbox = new Outbox({
    path: config.outbox.path,
    maxRecords: config.outbox.maxRecords,
    maxBytes: config.outbox.maxBytes,
    maxAgeSeconds: config.outbox.maxAgeDays * 86_400,
    log,
  });
  const outage = new OutageLog(log);
  /** The cloud refused the token and nothing was delivered since. */
  let uplinkRefused = false;
  const uplink = new Uplink({
    outbox,
    cloudUrl: config.cloud.url,
    token: config.cloud.token,
    batchSize: config.cloud.batchSize,
    requestTimeoutMs: config.cloud.requestTimeoutMs,
    onEvent: (event) => {
      if (event.type === 'blocked') {
        uplinkRefused = true;
        log(`UPLINK STOPPED: ${event.reason} (next try ${new Date(event.retryAt).toISOString()})`);
      }
      else if (event.type === 'quarantined') log(`uplink quarantined a ${event.kind} record (${event.dedupeKey}): ${event.reason}`);
      else if (event.type === 'retrying') outage.failed(event.kind, event.attempt, event.reason, `uplink retry ${event.attempt} for ${event.kind} in ${event.delayMs} ms: ${event.reason}`);
      else if (event.type === 'sent') {
        // After a stop for a refused token (fixed, and SIGHUP): said plainly, not left to be read from its silence.
        if (uplinkRefused) log(`uplink: sending has resumed: the cloud accepted the token (${event.count} ${event.kind} delivered)`);
        uplinkRefused = false;
        noteLastUpload(outbox, event.kind, event.count);
        outage.succeeded(event.kind, (failures) => `uplink: ${event.kind} delivered again after ${failures} failed attempts`);
      }
    },
  });
  let rateNoted: string | undefined;
  /** The frame-counted settings in force, by name (as `followPictureRate` returns them). */
  let appliedCounts = '';
  const rateNotes = new SpacedNotes<RateChange>(PICTURE_RATE_NOTE_SPACING_MS);
  let heldRateNote: NodeJS.Timeout | undefined;
  const capture = createCapture(config, (status) => {
    if (status.state === 'failed') log(`capture failed: ${status.message ?? ''}`);
    // A camera that stays away is retried for as long as it takes: said as an outage, not at every attempt.
    if (status.state === 'reconnecting') {
      outage.failed('capture', status.attempt ?? 1, status.message ?? '', `capture reconnecting (attempt ${status.attempt ?? 1}): ${status.message ?? ''}${status.retryInMs ? ` (retry in ${status.retryInMs} ms)` : ''}`);
    }
    if (status.state === 'running') {
      outage.succeeded('capture', (failures) => `capture: the source is back, after ${failures} failed attempt${failures === 1 ? '' : 's'}`);
      // The rate new pictures come at is known once the source runs, before its first frame is handed on.
      followStartRate();
    }
  });
  const { detector, tracker, counter } = await createVision(config);
  /**
   * Sets the frame-counted settings for the rate new pictures come at when the source starts: a camera's, read at its
   * own rate where that is below source.fps, or a slower file's, whose repeats are skipped. Says so once, and again
   * if a reconnect changes it.
   */
  const followStartRate = () => {
    const fps = liveSource ? capture.readFps : Math.min(capture.sourceFps ?? config.source.fps, config.source.fps);
    if (fps === undefined) return;
    const applied = followPictureRate(config, fps, { tracker, counter });
    appliedCounts = JSON.stringify(applied);
    rateNotes.settled(appliedCounts);
    pipeline.followingPictureRate(fps);
    const note = liveSource ? slowSourceNote(fps, config.source.fps, applied) : capture.sourceFps === undefined ? undefined : repeatedFramesNote(capture.sourceFps, config.source.fps, applied);
    if (note && note !== rateNoted) log(`source: ${note}`);
    rateNoted = note;
  };
  const sayRateNote = (note: SpacedNote<RateChange> | undefined) => {
    if (note) log(`source: ${pictureRateNote(note.detail.fps, note.detail.applied, { changes: note.changes, minutes: PICTURE_RATE_NOTE_SPACING_MS / 60_000 })}`);
  };
  /**
   * A live source whose new pictures now come at another rate than before: the settings follow at once; the log says
   * so at once the first time, and then at most every PICTURE_RATE_NOTE_SPACING_MS.
   */
  const followMeasuredRate = (fps: number) => {
    const applied = followPictureRate(config, fps, { tracker, counter });
    const before = appliedCounts;
    appliedCounts = JSON.stringify(applied);
    if (appliedCounts === before) return;
    sayRateNote(rateNotes.changed(appliedCounts, { fps, applied }, Date.now()));
    sayHeldRateNoteWhenDue();
  };
  /** A change held back is said when its time comes, though the rate then stays as it is. */
  const sayHeldRateNoteWhenDue = () => {
    const dueAt = rateNotes.dueAt;
    if (dueAt === undefined || heldRateNote !== undefined) return;
    heldRateNote = setTimeout(() => {
      heldRateNote = undefined;
      sayRateNote(rateNotes.due(Date.now()));
      sayHeldRateNoteWhenDue(); // a timer may fire a millisecond early
    }, dueAt - Date.now());
    heldRateNote.unref();
  };
  // Live streaming and the device conversation belong to a running observer, not to a one-shot file run.
  const live = config.live.enabled && !options.once;
  let device: DeviceLoop | undefined;
  const streamer = live
    ? new LiveStreamer({
        ffmpegPath: resolveFfmpeg(),
        camera: {
          width: config.source.width,
          height: config.source.height,
          // Read when a stream starts: a camera slower than source.fps is read, and streamed, at its own rate.
          get fps() {
            return capture.readFps ?? config.source.fps;
          },
          pixelFormat: config.source.pixelFormat,
        },
        jpegFps: config.live.jpegFps,
        startTimeoutMs: config.live.startTimeoutSeconds * 1000,
        onEvent: (event) => device?.reportStream(event),
        log,
      })
    : undefined;
  const pipeline = new Pipeline({
    source: capture,
    detector,
    tracker,
    counter,
    outbox,
    onRecords: () => uplink.notify(),
    ...(streamer ? { onFrame: (frame: Parameters<LiveStreamer['offer']>[0]) => streamer.offer(frame) } : {}),
    statusFile: statusFilePath(config),
    // A stop the cloud caused shows in `status`: the log said it once, and "last upload" only grew older.
    extraStatus: () => {
      // A stream running while counting goes on showed nowhere but the cloud.
      const liveStream = streamer?.stats();
      return { ...linkStop('uplinkStopped', uplink.stopped), ...linkStop('liveControlStopped', device?.stopped), ...(liveStream ? { liveStream } : {}) };
    },
    log,
    // A file's rate is known at start; a camera's shows in what it delivers.
    ...(liveSource ? { readFps: () => capture.readFps, onPictureRate: followMeasuredRate } : {}),
    // A camera's next run goes on where this one stops (a restart, an upgrade, a power cut); a file's run ends with it.
    ...(liveSource ? { saveOpenIntervals: { everyMs: OPEN_INTERVALS_SAVE_MS } } : {}),
  });
  const snapshot = (): DeviceSnapshot => {
    const stats = pipeline.stats;
    const queued = outbox.stats();
    const cameraTrouble = capture.state === 'failed' || capture.state === 'reconnecting';
    const error = streamer?.lastError ?? (cameraTrouble ? { code: `CAMERA_${capture.state.toUpperCase()}`, message: capture.problem ?? capture.state } : undefined);
    return {
      cameraStatus: capture.state,
      publisherState: streamer?.state ?? 'idle',
      lastErrorCode: error?.code ?? null,
      lastErrorMessage: error?.message.slice(0, 2000) ?? null,
      status: {
        fps: Math.round(stats.fps * 10) / 10,
        framesProcessed: stats.framesProcessed,
        framesDropped: capture.framesDropped,
        framesRepeated: stats.framesRepeated,
        beesIn: stats.beesIn,
        beesOut: stats.beesOut,
        outboxPending: queued.pending.metrics + queued.pending.movement + queued.pending.trajectories,
        outboxHeldInMemory: queued.held,
        outboxQuarantined: queued.quarantined,
        uplinkBlocked: uplink.blocked,
        ...hostDiagnostics(startedAt),
        ...(streamer?.stats() ? { stream: streamer.stats() } : {}),
      },
    };
  };
  if (streamer) {
    // Failed requests of the device loop in a row, for the outage log.
    let liveFailures = 0;
    device = new DeviceLoop({
      client: new DeviceClient(config.cloud.url, config.cloud.token, config.cloud.requestTimeoutMs),
      boxId: config.boxId,
      deviceId: config.deviceId,
      appVersion: appVersion(),
      streams: streamer,
      snapshot,
      statusIntervalMs: config.live.statusIntervalSeconds * 1000,
      pollWaitSeconds: config.live.pollWaitSeconds,
      log,
      onEvent: (event) => {
        if (event.type === 'blocked') log(`LIVE CONTROL STOPPED: ${event.reason} (next try ${new Date(event.retryAt).toISOString()})`);
        else if (event.type === 'unsupported') log(`live: the cloud has no live gateway (${event.status} from ${event.path}); asking again at ${new Date(event.retryAt).toISOString()}`);
        else if (event.type === 'command') log(`live: ${event.repeated ? 'redelivered ' : ''}${event.commandType} ${event.commandId} → ${event.ack.status}`);
        else if (event.type === 'error') {
          liveFailures++;
          // The same refusal from each of the three endpoints in turn is one outage, said once.
          const cause = event.reason.startsWith(event.path) ? event.reason.slice(event.path.length).replace(/^:\s*/, '') : event.reason;
          outage.failed('live', liveFailures, cause, `live: ${event.reason} (will retry)`);
        } else if (event.type === 'reconnected') {
          outage.succeeded('live', (failures) => `live: the cloud answers again, after ${failures} failed requests`);
          liveFailures = 0;
          // Records queued through the outage go now, not when the uplink's backoff (up to 5 min) runs out.
          uplink.cloudAnswers();
        }
      },
    });
  }
  const sensors = config.sensors
    ? new SensorReader({
        outbox,
        deviceId: config.deviceId,
        hiveId: config.hiveId,
        ...(config.sensors.command ? { command: config.sensors.command } : {}),
        ...(config.sensors.file ? { file: config.sensors.file } : {}),
        intervalSeconds: config.sensors.intervalSeconds,
        timeoutSeconds: config.sensors.timeoutSeconds,
        onQueued: () => uplink.notify(),
        log,
      })
    : undefined;
  const flushTimeoutMs = options.flushTimeoutMs ?? 30_000;
  // Live frames are stamped by this machine's clock: when it is set (NTP after a boot without a real-time clock), the
  // counts move between minutes, and the log says why.
  const clockSteps = liveSource ? new ClockStepLog({ log }) : undefined;

  const controller = new Controller(
    [
      { name: 'outbox', start: () => outbox.start(), stop: () => outbox.stop() },
      {
        name: 'uplink',
        start: () => uplink.start(),
        stop: async () => {
          await uplink.drain(options.once ? flushTimeoutMs : Math.min(flushTimeoutMs, 5000));
          await uplink.stop();
        },
      },
      ...(sensors ? [{ name: 'sensors', start: () => sensors.start(), stop: () => sensors.stop() }] : []),
      ...(clockSteps ? [{ name: 'clock watch', start: () => clockSteps.start(), stop: () => clockSteps.stop() }] : []),
      { name: 'capture', start: () => capture.start(), stop: () => capture.stop() },
      { name: 'pipeline', start: () => pipeline.start(), stop: () => pipeline.stop() },
      // Last to start, first to stop: the stream ends (STREAM_STOPPED reported) while frames still flow.
      ...(device ? [{ name: 'device', start: () => device.start(), stop: () => device.stop() }] : []),
    ],
    log,
  );
  await controller.start();
  if (JSON.stringify(config.counting.zone) === JSON.stringify(defaultZone(config.source.width, config.source.height))) {
    log('counting zone: none configured, so the lower half of the frame is used; set counting.zone (--zone) to the polygon around your hive entrance');
  }
  log(`agent running: source ${config.source.url} (${config.source.width}x${config.source.height} @ ${config.source.fps} fps), detector ${detector.describe()}, cloud ${config.cloud.url}`);
  const kernelNote = detector.eightBit ? int8KernelNote(hostCpu()) : undefined;
  if (kernelNote) log(`detector: ${kernelNote}`);

  options.onReady?.({
    updateCredentials: (url, token) => {
      uplink.updateCredentials(url, token);
      device?.updateCredentials(url, token);
    },
  });

  void options.stopSignal?.then(() => capture.stopComing());
  await Promise.race([pipeline.done, options.stopSignal ?? new Promise<void>(() => {})]);
  await controller.stop();
  clearTimeout(heldRateNote);
  const stats = pipeline.stats;
  const remaining = pendingAfterStop(config);
  const saved = stats.openIntervalsSaved;
  const savedNote = saved && saved.intervals > 0 ? `; ${saved.intervals} open interval${saved.intervals === 1 ? '' : 's'} saved for the next start to complete (in ${saved.beesIn}, out ${saved.beesOut})` : '';
  log(`agent stopped: ${stats.framesProcessed} frames${stats.framesRepeated > 0 ? ` (and ${stats.framesRepeated} repeats skipped)` : ''}, in ${stats.beesIn}, out ${stats.beesOut}, ${queuedNote(stats)}; ${remaining} records still queued${savedNote}${lostNote(stats.openIntervalsNotSaved, outbox.lostAtStop)}`);
  if (capture.state === 'failed') return 1;
  // A daemon leaves undelivered records for its next start; a one-shot run promised to deliver them.
  if (options.once) return remaining === 0 ? 0 : 1;
  return 0;
}

/** "2 intervals and 1 trajectory batch queued", and what the outbox had already (a file processed again). */
export function queuedNote(stats: { intervalsQueued: number; trajectoryBatchesQueued: number; intervalsKnown: number; trajectoryBatchesKnown: number }): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const queued = `${plural(stats.intervalsQueued, 'interval', 'intervals')} and ${plural(stats.trajectoryBatchesQueued, 'trajectory batch', 'trajectory batches')} queued`;
  if (stats.intervalsKnown + stats.trajectoryBatchesKnown === 0) return queued;
  return `${queued} (${plural(stats.intervalsKnown, 'interval', 'intervals')} and ${plural(stats.trajectoryBatchesKnown, 'batch', 'batches')} already queued or sent before, not again)`;
}

/**
 * What a stop on a full disk could not keep, for the stop line: the counts of open intervals beyond their last save,
 * and the records held in memory. Nothing when all was kept.
 */
export function lostNote(openNotSaved: { intervals: number; beesIn: number; beesOut: number } | undefined, held: Record<RecordKind, number>): string {
  const parts: string[] = [];
  if (openNotSaved && openNotSaved.intervals > 0) {
    parts.push(`the counts of ${openNotSaved.intervals} open interval${openNotSaved.intervals === 1 ? '' : 's'} not saved (in ${openNotSaved.beesIn}, out ${openNotSaved.beesOut}), which were never sent`);
  }
  const heldKinds = RECORD_KINDS.filter((kind) => held[kind] > 0);
  const heldTotal = heldKinds.reduce((total, kind) => total + held[kind], 0);
  if (heldTotal > 0) {
    parts.push(`${heldTotal} record${heldTotal === 1 ? '' : 's'} held in memory (${heldKinds.map((kind) => `${kind} ${held[kind]}`).join(', ')}), never written or sent`);
  }
  return parts.length === 0 ? '' : `; LOST, the disk being full: ${parts.join('; ')}`;
}

/** A file source the agent can read, or a ConfigError naming source.url and why not. */
export function checkSourceFile(path: string): void {
  try {
    accessSync(path, constants.R_OK);
    if (statSync(path).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'not readable by this user' : code;
    throw new ConfigError(`source.url ${path} cannot be read (${why})`);
  }
}

/** The camera reader the config describes. */
export function createCapture(config: AgentConfig, onStatus?: (status: CaptureStatus) => void): FfmpegCapture {
  return new FfmpegCapture({
    source: config.source.url,
    width: config.source.width,
    height: config.source.height,
    fps: config.source.fps,
    pixelFormat: config.source.pixelFormat,
    realtime: config.source.realtime,
    ...(config.source.startTime ? { startTime: new Date(config.source.startTime) } : {}),
    ...(onStatus ? { onStatus } : {}),
  });
}

/** Detector, tracker and counter as the config describes them (the accuracy benchmark builds the very same). */
export async function createVision(config: AgentConfig): Promise<{ detector: ConfiguredDetector; tracker: BeeTracker; counter: EntranceCounter }> {
  return { detector: await createDetector(config), ...createTracking(config) };
}

/** The detector-independent half of the vision pipeline: tracker and counter (also replayed on cached detections). */
export function createTracking(config: AgentConfig): { tracker: BeeTracker; counter: EntranceCounter } {
  const { zone, maxLatenessSeconds, ...counting } = config.counting;
  const counter = new EntranceCounter({
    counting: { ...counting, zone: zone.map(([x, y]) => [x!, y!] as const), fps: config.source.fps },
    hiveId: config.hiveId,
    boxId: config.boxId,
    frameWidth: config.source.width,
    frameHeight: config.source.height,
    maxLatenessSeconds,
    trajectories: config.trajectories,
  });
  const tracker = new BeeTracker({ ...config.tracker, beeLengthPx: config.detector.motion.beeLengthPx });
  return { tracker, counter };
}

/**
 * Sets the tracker's and the counter's frame-counted settings for new pictures that come at `fps` rather than
 * `source.fps` (a slower camera or file; `frameCountsAt`), and returns them by setting name.
 */
export function followPictureRate(config: AgentConfig, fps: number, vision: { tracker: BeeTracker; counter: EntranceCounter }): Record<string, number> {
  const counts = frameCountsAt(config, fps);
  vision.tracker.setFrameCounts(counts);
  vision.counter.setInteractionMinFrames(counts.interactionMinFrames);
  const { minHits, maxMissedFrames } = vision.tracker.frameCounts;
  return { 'tracker.minHits': minHits, 'tracker.maxMissedFrames': maxMissedFrames, 'counting.interactionMinFrames': counts.interactionMinFrames };
}

function pendingAfterStop(config: AgentConfig): number {
  const outbox = new Outbox({ path: config.outbox.path });
  outbox.start();
  try {
    const pending = outbox.stats().pending;
    return pending.metrics + pending.movement + pending.trajectories;
  } finally {
    outbox.stop();
  }
}
