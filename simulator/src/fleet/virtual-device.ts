import { randomUUID } from 'node:crypto';
import { failureReason, RequestFailure } from './failure-reason.ts';
import type { LatencyStats } from './latency-stats.ts';
import { requestDeadline, sleep } from './abortable.ts';

export interface DeviceTiming {
  statusEverySeconds: number;
  telemetryEverySeconds: number;
  pollWaitSeconds: number;
  /** A request unanswered this long fails as a timeout (a long-poll gets its wait on top). */
  requestTimeoutSeconds: number;
}

export interface VirtualDeviceOptions {
  cloudUrl: string;
  token: string;
  hiveId: string;
  boxId: string;
  timing: DeviceTiming;
  stats: LatencyStats;
  /** Called when a command arrives, with the time it arrived. */
  onCommand?: (command: { id: string; sessionId: string; commandType: string }, receivedAt: number) => void;
}

/**
 * One simulated entrance observer speaking the device REST calls: DEVICE_ONLINE at start, a status heartbeat, a
 * long-poll loop that acknowledges START_STREAM/STOP_STREAM and reports the stream events (no media), and
 * periodic movement, metrics and trajectory uploads.
 */
export class VirtualDevice {
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private readonly deviceId = `virtual-${randomUUID().slice(0, 8)}`;
  private readonly handled = new Set<string>();
  private tick = 0;

  constructor(private readonly options: VirtualDeviceOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loops.push(this.lifecycle(), this.pollLoop(), this.every(this.options.timing.statusEverySeconds, () => this.sendStatus()), this.every(this.options.timing.telemetryEverySeconds, () => this.sendTelemetry()));
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await Promise.allSettled(this.loops);
  }

  private async lifecycle(): Promise<void> {
    await this.call('event', '/api/entrance-live/device/event', { boxId: this.options.boxId, eventType: 'DEVICE_ONLINE', payload: { appVersion: 'fleet-1.0' } }).catch(() => undefined);
  }

  private statusBody() {
    return { boxId: this.options.boxId, deviceId: this.deviceId, appVersion: 'fleet-1.0', cameraStatus: 'ok', publisherState: 'idle', lastErrorCode: null, lastErrorMessage: null, status: { fps: 15 } };
  }

  private sendStatus(): Promise<unknown> {
    return this.call('status', '/api/entrance-live/device/status', this.statusBody());
  }

  private async sendTelemetry(): Promise<void> {
    const t = Math.floor(Date.now() / 1000);
    const i = this.tick++;
    const { hiveId, boxId } = this.options;
    await Promise.allSettled([
      this.call('movement', '/entrance/v1/movement', { hiveId, boxId, beesIn: 10 + (i % 7), beesOut: 9 + (i % 5), avgSpeed: 4.2, p95Speed: 8.1, detectedBees: 30, stationaryBees: 2, beeInteractions: 3, timestamp: t }),
      this.call('metrics', '/iot/v1/metrics', { hiveId, fields: { temperatureCelsius: 34.5, humidityPercent: 60, weightKg: 42.1 }, timestamp: t, dedupeKey: `${this.deviceId}:${t}` }),
      this.call('trajectories', '/api/entrance-heatmaps/trajectories', {
        boxId,
        timestamp: t,
        frameDimensions: { width: 640, height: 480 },
        trackHistory: Object.fromEntries(Array.from({ length: 20 }, (_, k) => [String(k), Array.from({ length: 30 }, (_, j) => [(k * 29 + j * 7) % 640, (j * 13 + k) % 480])])),
        batchId: `${this.deviceId}-${i}`,
      }),
    ]);
  }

  private async pollLoop(): Promise<void> {
    while (this.running) {
      let answer: { commands?: { id: string; sessionId: string; commandType: string }[] } | undefined;
      try {
        answer = (await this.call('poll', '/api/entrance-live/device/poll', { ...this.statusBody(), limit: 10, waitSeconds: this.options.timing.pollWaitSeconds })) as typeof answer;
      } catch {
        if (this.running) await sleep(1000, this.abort.signal);
        continue;
      }
      const receivedAt = performance.now();
      for (const command of answer?.commands ?? []) {
        if (!this.handled.has(command.id)) this.options.onCommand?.(command, receivedAt);
        await this.handle(command).catch(() => undefined);
      }
    }
  }

  private async handle(command: { id: string; sessionId: string; commandType: string }): Promise<void> {
    const { boxId } = this.options;
    const repeat = this.handled.has(command.id);
    this.handled.add(command.id);
    await this.call('ack', '/api/entrance-live/device/command-ack', { boxId, commandId: command.id, status: 'accepted', payload: { sessionId: command.sessionId, relayProtocol: 'hls' } });
    if (repeat) return;
    const events = command.commandType === 'START_STREAM' ? ['STREAM_STARTING', 'STREAM_ACTIVE'] : ['STREAM_STOPPED'];
    for (const eventType of events) await this.call('event', '/api/entrance-live/device/event', { boxId, sessionId: command.sessionId, eventType, payload: {} });
  }

  private async every(seconds: number, action: () => Promise<unknown>): Promise<void> {
    // Spread devices over the period so a fleet does not beat in step.
    await sleep(Math.random() * seconds * 1000, this.abort.signal);
    while (this.running) {
      await action().catch(() => undefined);
      await sleep(seconds * 1000, this.abort.signal);
    }
  }

  /**
   * One request, accounted for whatever happens: it succeeds, fails (by reason) or, when the device stops while it
   * waits, stays unfinished. Long-polls are counted, not timed: they wait for commands on purpose.
   */
  private async call(operation: string, path: string, body: unknown): Promise<unknown> {
    if (!this.running) throw new Error('the device has stopped');
    const { stats, timing } = this.options;
    const deadline = requestDeadline(this.abort.signal, (timing.requestTimeoutSeconds + (operation === 'poll' ? timing.pollWaitSeconds : 0)) * 1000);
    stats.sent(operation);
    const started = performance.now();
    try {
      const response = await fetch(new URL(path, this.options.cloudUrl), {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: deadline.signal,
      });
      const text = await response.text();
      if (!response.ok) throw new RequestFailure(`HTTP ${response.status}`);
      const answer: unknown = text ? JSON.parse(text) : undefined;
      if (operation === 'poll') stats.recordUntimed(operation);
      else stats.record(operation, performance.now() - started);
      return answer;
    } catch (error) {
      // Stopped while waiting: neither a success nor a failure of the cloud, so it stays unfinished.
      if (this.abort.signal.aborted && !deadline.timedOut()) throw error;
      stats.fail(operation, failureReason(error, deadline.timedOut()));
      throw error;
    } finally {
      deadline.release();
    }
  }
}
