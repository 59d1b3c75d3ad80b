import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { compileValidator, EntranceMovementInput } from '@hivegate/shared';
import type { Frame } from './capture/frame.ts';
import { FrameRate } from './frame-rate.ts';
import { repeatsNote } from './capture/rate-notes.ts';
import { PictureRateMeter } from './capture/picture-rate.ts';
import { RepeatedFrameFilter } from './capture/repeated-frames.ts';
import type { CounterOutput, EntranceCounter } from './count/entrance-counter.ts';
import { describeOpenIntervals, openIntervalKey, openIntervalTotals, readSavedIntervals, savedForm, type OpenInterval } from './count/open-intervals.ts';
import type { Area, Detection, Detector } from './detect/types.ts';
import { identityOf, isStorageFull, type Outbox } from './outbox/outbox.ts';
import { STATUS_REWRITE_MS } from './status/snapshot-age.ts';
import type { BeeTracker, TrackerUpdate } from './track/tracker.ts';

export interface FrameSource extends AsyncIterable<Frame> {
  stop(): Promise<void>;
  readonly framesDropped: number;
  readonly state: string;
  /** Why a live source is reconnecting, or why it failed. */
  readonly problem?: string | undefined;
  /** How often a live source has reconnected. */
  readonly reconnects?: number;
}

export interface PipelineStats {
  framesProcessed: number;
  framesDropped: number;
  /** Frames skipped because they repeated the one before (a source slower than `source.fps`). */
  framesRepeated: number;
  /** Processed frames per second: frames over elapsed time in the last 5 s (0 once stopped). */
  fps: number;
  /** The rate a live source is read at (`source.fps`, or the camera's own where that is lower), once known. */
  readFps?: number;
  captureState: string;
  /** Why the source is reconnecting or failed, as the status file says it. */
  captureProblem?: string;
  captureReconnects: number;
  lastFrameAt: number | null;
  beesIn: number;
  beesOut: number;
  unknownDirection: number;
  intervalsQueued: number;
  trajectoryBatchesQueued: number;
  /** Intervals and batches the outbox already had (queued or sent before): a file processed again. */
  intervalsKnown: number;
  trajectoryBatchesKnown: number;
  /** Frames on which the motion gate skipped model inference. */
  inferenceSkipped: number;
  invalidRecords: number;
  /** Errors thrown by the frame tap (the live stream); counting went on regardless. */
  tapErrors: number;
  /** With `saveOpenIntervals`: the intervals not emitted yet as last saved, for the next start to complete. */
  openIntervalsSaved?: { intervals: number; beesIn: number; beesOut: number; at: string };
  /**
   * With `saveOpenIntervals`, while the last save failed (a full disk): what a stop then loses, the counts of the open
   * intervals beyond what is saved of them.
   */
  openIntervalsNotSaved?: { intervals: number; beesIn: number; beesOut: number };
}

/** Sees what the pipeline sees, for evaluation and debugging; must not keep the frame's pixels. */
export interface PipelineObserver {
  /** `looked`: where the detector looked, when only at part of the frame (`Detector.lastLooked`). */
  frame?(frame: Frame, detections: readonly Detection[], update: TrackerUpdate, looked: Area | undefined): void;
  /** Every counter output (closed intervals, decided crossings), before it is queued. */
  output?(output: CounterOutput): void;
}

export interface PipelineOptions {
  source: FrameSource;
  detector: Detector & { skippedFrames?: number };
  tracker: BeeTracker;
  counter: EntranceCounter;
  outbox: Outbox;
  /** Called after records were queued (wakes the uplink). */
  onRecords?: () => void;
  /** Sees every frame before detection (the live stream's copy); must not block. Its errors never stop counting. */
  onFrame?: (frame: Frame) => void;
  /** JSON file the `status` command reads; written every few seconds. */
  statusFile?: string;
  /** More for the status file, read at each write (the cloud links' stops). */
  extraStatus?: () => Record<string, unknown>;
  log?: (message: string) => void;
  observer?: PipelineObserver;
  /**
   * The rate a live source is read at (the capture's, known once it runs), for a source whose own rate is not known
   * beforehand: after its first 10 s the pipeline says once if many frames were repeats, and what rate it delivers.
   */
  readFps?: () => number | undefined;
  /**
   * For a live source: called with the rate new pictures reach the tracker at whenever it has changed (a camera that
   * sends fewer frames in the dark, an agent that falls behind its camera), so the frame-counted settings can follow.
   */
  onPictureRate?: (fps: number) => void;
  /**
   * For a run the next one goes on from (a live source): the intervals not emitted yet are saved in the outbox's
   * database every `everyMs` and when the pipeline stops, rather than emitted part-counted at the stop, and those
   * the previous run saved are completed by this one. A kill or a power cut then loses at most the last `everyMs`
   * of counts, and a restart within an interval sends that interval once, with the counts of both runs.
   */
  saveOpenIntervals?: { everyMs: number };
}

/** Where the open intervals are kept among the outbox's agent state. */
export const OPEN_INTERVALS_STATE_KEY = 'openIntervals';

const checkMovement = compileValidator(EntranceMovementInput);

/** Frames → detections → tracks → counts → outbox. Runs until the source ends or `stop()`. */
export class Pipeline {
  private running: Promise<void> | undefined;
  /** Why the status file could not be written last time (said once, until it can be again). */
  private statusWriteError: string | undefined;
  private lastStatusWrite = 0;
  private readonly frameRate = new FrameRate();
  /** Set once the source has ended: the last status written says no frames come. */
  private stopped = false;
  private readonly repeats = new RepeatedFrameFilter();
  private readonly pictureRate = new PictureRateMeter();
  private repeatsNoted = false;
  private lastSaveAt = Number.NEGATIVE_INFINITY;
  /** What was saved last (JSON), so that a quiet night writes nothing new to the SD card. */
  private lastSaved: string | undefined;
  /** Why the open intervals could not be saved last time (said once, until they can be again). */
  private saveError: string | undefined;
  /** The intervals as the save that counts has them, by identity (empty when none counts). */
  private savedIntervals = new Map<string, OpenInterval>();
  /** An interval of the save that counts was sent on: the save is out of date, and is replaced at once. */
  private saveDue = false;
  readonly stats: PipelineStats = {
    framesProcessed: 0,
    framesDropped: 0,
    framesRepeated: 0,
    fps: 0,
    captureState: 'starting',
    captureReconnects: 0,
    lastFrameAt: null,
    beesIn: 0,
    beesOut: 0,
    unknownDirection: 0,
    intervalsQueued: 0,
    trajectoryBatchesQueued: 0,
    intervalsKnown: 0,
    trajectoryBatchesKnown: 0,
    inferenceSkipped: 0,
    invalidRecords: 0,
    tapErrors: 0,
  };

  constructor(private readonly options: PipelineOptions) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Resolves when the source has ended and every record is queued. */
  get done(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    await this.options.source.stop();
    await this.running;
  }

  private async run(): Promise<void> {
    const { source, detector, tracker, counter } = this.options;
    // Written between frames as well: while a camera is away no frame comes, and `status` showed the last one's
    // "capture running" for as long as the outage lasted.
    const statusTimer = setInterval(() => this.writeStatus(false), STATUS_REWRITE_MS / 2);
    statusTimer.unref();
    this.restoreOpenIntervals();
    try {
      for await (const frame of source) {
        this.tap(frame);
        const repeat = this.repeats.isRepeat(frame);
        this.noteRepeats();
        if (repeat) continue;
        this.measurePictureRate(frame);
        const detections = await detector.detect(frame);
        const looked = detector.lastLooked?.();
        const update = tracker.update(frame.timestampMs, detections, looked);
        this.options.observer?.frame?.(frame, detections, update, looked);
        this.queue(counter.onFrame(frame.timestampMs, update.tracks, update.ended));
        this.saveOpenIntervals(false);
        this.tick(frame);
      }
    } catch (error) {
      this.options.log?.(`pipeline stopped on an error: ${(error as Error).message}`);
    } finally {
      clearInterval(statusTimer);
      this.stopped = true;
      if (this.options.saveOpenIntervals) {
        this.queue(counter.suspend(tracker.flush()));
        this.saveOpenIntervals(true);
      } else {
        this.queue(counter.flush(tracker.flush()));
      }
      this.writeStatus(true);
    }
  }

  /** Hands the counter the intervals the previous run saved; a save it cannot read is said and left out. */
  private restoreOpenIntervals(): void {
    if (!this.options.saveOpenIntervals) return;
    const saved = this.options.outbox.readGuarded<unknown>(OPEN_INTERVALS_STATE_KEY);
    if (saved === undefined) return;
    if ('stale' in saved) {
      this.options.log?.('the open intervals the last run saved are out of date (it sent some of them, and could not save them again on a full disk); they are left out');
      return;
    }
    let intervals: OpenInterval[];
    try {
      intervals = readSavedIntervals(saved.value);
    } catch (error) {
      this.options.log?.(`the open intervals the last run saved cannot be read (${(error as Error).message}); they are left out`);
      return;
    }
    if (intervals.length === 0) return;
    this.options.counter.restore(intervals);
    this.lastSaved = JSON.stringify(savedForm(intervals));
    this.savedIntervals = new Map(intervals.map((interval) => [openIntervalKey(interval), interval]));
    this.options.log?.(`going on with ${describeOpenIntervals(intervals)} the last run had counted and not sent`);
  }

  /**
   * Saves the counter's open intervals, at most every `everyMs` unless `now` (or the save is out of date); a full
   * disk is said once, and counting goes on.
   */
  private saveOpenIntervals(now: boolean): void {
    const every = this.options.saveOpenIntervals?.everyMs;
    if (every === undefined) return;
    const at = performance.now();
    if (!now && !this.saveDue && at - this.lastSaveAt < every) return;
    this.lastSaveAt = at;
    this.saveDue = false;
    const intervals = this.options.counter.openIntervals();
    const form = savedForm(intervals);
    const json = JSON.stringify(form);
    if (json !== this.lastSaved) {
      try {
        this.options.outbox.saveGuarded(OPEN_INTERVALS_STATE_KEY, form);
      } catch (error) {
        if (!isStorageFull(error)) throw error;
        this.saveFailed(intervals, (error as Error).message);
        return;
      }
      if (this.saveError) this.options.log?.('the open intervals are saved again');
      this.saveError = undefined;
      this.lastSaved = json;
      this.savedIntervals = new Map(intervals.map((interval) => [openIntervalKey(interval), interval]));
    }
    delete this.stats.openIntervalsNotSaved;
    this.stats.openIntervalsSaved = { intervals: intervals.length, ...openIntervalTotals(intervals), at: new Date().toISOString() };
  }

  /**
   * The save before stays while it is only behind: the next start completes its intervals, less what was counted
   * since. Once one of its intervals was sent it would be sent again, with the next run's counts added to a record
   * the cloud already has (it keeps the first): it is discarded, and then everything the open intervals counted is
   * what a stop loses.
   */
  private saveFailed(intervals: readonly OpenInterval[], message: string): void {
    const open = new Set(intervals.map(openIntervalKey));
    if ([...this.savedIntervals.keys()].some((key) => !open.has(key))) {
      this.options.outbox.discardGuarded(OPEN_INTERVALS_STATE_KEY);
      this.savedIntervals = new Map();
      this.lastSaved = undefined;
      delete this.stats.openIntervalsSaved;
    }
    const notSaved = { intervals: 0, beesIn: 0, beesOut: 0 };
    for (const interval of intervals) {
      const saved = this.savedIntervals.get(openIntervalKey(interval))?.summary;
      if (saved && JSON.stringify(saved) === JSON.stringify(interval.summary)) continue;
      notSaved.intervals++;
      notSaved.beesIn += interval.summary.beesIn - (saved?.beesIn ?? 0);
      notSaved.beesOut += interval.summary.beesOut - (saved?.beesOut ?? 0);
    }
    this.stats.openIntervalsNotSaved = notSaved;
    if (message !== this.saveError) this.options.log?.(`cannot save the open intervals (${message}): a stop now loses what they counted since the last save`);
    this.saveError = message;
  }

  private tap(frame: Frame): void {
    if (!this.options.onFrame) return;
    try {
      this.options.onFrame(frame);
    } catch (error) {
      this.stats.tapErrors++;
      if (this.stats.tapErrors === 1) this.options.log?.(`frame tap failed (counting goes on): ${(error as Error).message}`);
    }
  }

  /** The rate the frame-counted settings follow already (set when a connection starts), for the measurements to come. */
  followingPictureRate(fps: number): void {
    this.pictureRate.following(fps);
  }

  private measurePictureRate(frame: Frame): void {
    if (!this.options.onPictureRate) return;
    const rate = this.pictureRate.add(frame.timestampMs);
    if (rate !== undefined) this.options.onPictureRate(rate);
  }

  private noteRepeats(): void {
    this.stats.framesRepeated = this.repeats.repeated;
    const readFps = this.options.readFps?.();
    if (readFps !== undefined) this.stats.readFps = Math.round(readFps * 100) / 100;
    if (readFps === undefined || this.repeatsNoted || this.repeats.seen < 10 * readFps) return;
    this.repeatsNoted = true;
    const note = repeatsNote(this.repeats.repeated, this.repeats.seen, readFps);
    if (note) this.options.log?.(`source: ${note}`);
  }

  private queue(output: CounterOutput): void {
    const { outbox } = this.options;
    this.options.observer?.output?.(output);
    const items: Parameters<Outbox['enqueueMany']>[0] = [];
    for (const movement of output.movements) {
      const result = checkMovement(movement);
      if (!result.ok) {
        this.stats.invalidRecords++;
        this.options.log?.(`dropping an invalid movement record: ${result.error}`);
        continue;
      }
      items.push({ kind: 'movement', dedupeKey: identityOf('movement', movement), payload: movement });
    }
    for (const batch of output.trajectories) items.push({ kind: 'trajectories', dedupeKey: batch.batchId, payload: batch });
    for (const crossing of output.crossings) {
      if (crossing.direction === 'in') this.stats.beesIn++;
      else this.stats.beesOut++;
    }
    for (const summary of output.summaries) this.stats.unknownDirection += summary.unknownDirection;
    // An interval the save holds is on its way to the cloud now: a next start must not send it again.
    if (output.movements.length > 0 && this.savedIntervals.size > 0) this.saveDue = true;
    if (items.length === 0) return;
    const added = outbox.enqueueEach(items);
    const movements = items.filter((item) => item.kind === 'movement').length;
    this.stats.intervalsQueued += added.movement;
    this.stats.trajectoryBatchesQueued += added.trajectories;
    // A file run again: the outbox has these already (queued or sent), and counting them as queued misled.
    this.stats.intervalsKnown += movements - added.movement;
    this.stats.trajectoryBatchesKnown += output.trajectories.length - added.trajectories;
    this.options.onRecords?.();
  }

  private tick(frame: Frame): void {
    const now = performance.now();
    this.frameRate.add(now);
    this.stats.fps = this.frameRate.rate(now);
    this.stats.framesProcessed++;
    this.stats.lastFrameAt = frame.timestampMs;
    this.writeStatus(false);
  }

  private writeStatus(force: boolean): void {
    const { statusFile, source, detector } = this.options;
    this.stats.framesDropped = source.framesDropped;
    this.stats.captureState = source.state;
    if (source.problem) this.stats.captureProblem = source.problem;
    else delete this.stats.captureProblem;
    this.stats.captureReconnects = source.reconnects ?? 0;
    this.stats.inferenceSkipped = detector.skippedFrames ?? 0;
    // Between frames too the rate is as of now (it falls while none come); a stopped pipeline has none.
    this.stats.fps = this.stopped ? 0 : this.frameRate.rate(performance.now());
    if (!statusFile) return;
    const now = Date.now();
    if (!force && now - this.lastStatusWrite < STATUS_REWRITE_MS) return;
    this.lastStatusWrite = now;
    try {
      mkdirSync(dirname(statusFile), { recursive: true });
      const temp = `${statusFile}.tmp`;
      // The process's resident memory beside the counts: a slow leak shows as this growing over days.
      const memoryRssMb = Math.round(process.memoryUsage.rss() / 1024 / 1024);
      const outboxHeldInMemory = this.options.outbox.heldRecords;
      const fps = Math.round(this.stats.fps * 10) / 10;
      const extra = this.options.extraStatus?.() ?? {};
      writeFileSync(temp, JSON.stringify({ updatedAt: new Date(now).toISOString(), pid: process.pid, ...this.stats, fps, memoryRssMb, outboxHeldInMemory, ...extra }, null, 2));
      renameSync(temp, statusFile);
      if (this.statusWriteError) this.options.log?.(`${statusFile} is written again`);
      this.statusWriteError = undefined;
    } catch (error) {
      // Once per kind of trouble: on a full disk a line every 2 s would only fill it further.
      const message = (error as Error).message;
      if (message !== this.statusWriteError) this.options.log?.(`cannot write ${statusFile}: ${message}`);
      this.statusWriteError = message;
    }
  }
}
