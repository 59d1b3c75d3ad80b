import type { Identifier, LiveCommandAckBody, LiveDeviceEventBody, LiveDevicePollBody, LiveDeviceStatusBody } from '@hivegate/shared';
import type { StreamEvent } from '../live/live-streamer.ts';
import { backoffDelay, classifyStatus, type BackoffOptions } from '../uplink/retry-policy.ts';
import { CommandBook, type Ack, type CurrentStream, type IncomingCommand, type StartStream } from './commands.ts';
import { answerText, DEVICE_PATHS, NetworkError, type DeviceClient, type DevicePath, type DeviceResponse } from './device-client.ts';

/** What the device reports about itself on every status heartbeat and poll. */
export interface DeviceSnapshot {
  cameraStatus: string;
  publisherState: string;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  /** Diagnostics: fps, outbox depth, uptime, CPU temperature… */
  status: Record<string, unknown>;
}

/** The stream side the loop drives (the LiveStreamer). */
export interface StreamControl {
  readonly current: CurrentStream | undefined;
  start(start: StartStream): Promise<void>;
  stop(sessionId: string, reason: string): Promise<boolean>;
  stopAll(reason: string): Promise<void>;
}

export type DeviceLoopEvent =
  | { type: 'blocked'; path: DevicePath; status: number; reason: string; retryAt: number }
  | { type: 'unsupported'; path: DevicePath; status: number; retryAt: number }
  | { type: 'command'; commandId: string; commandType: string; ack: Ack; repeated: boolean }
  | { type: 'error'; path: DevicePath; reason: string }
  /** The cloud answered again after errors. */
  | { type: 'reconnected'; path: DevicePath };

export interface DeviceLoopOptions {
  client: DeviceClient;
  boxId: Identifier;
  deviceId: string;
  appVersion: string;
  streams: StreamControl;
  snapshot: () => DeviceSnapshot;
  statusIntervalMs?: number;
  /** How long the gateway may hold a poll open (it caps this at 25 s). */
  pollWaitSeconds?: number;
  pollLimit?: number;
  backoff?: BackoffOptions;
  /** After a 401/403 nothing is sent until the credentials change or this passes. */
  blockedBackoffMs?: number;
  /** After a 404 (a cloud without the live gateway) the loop asks again only this rarely. */
  unsupportedBackoffMs?: number;
  /** Events that cannot be delivered within this are given up (the session has moved on by then). */
  eventMaxAgeMs?: number;
  onEvent?: (event: DeviceLoopEvent) => void;
  log?: (message: string) => void;
  random?: () => number;
}

type EventBody = LiveDeviceEventBody;

interface QueuedEvent {
  body: EventBody;
  queuedAt: number;
}

type Outcome = 'ok' | 'retry' | 'blocked' | 'unsupported' | 'bad-request';

/**
 * The device's conversation with the live gateway: a DEVICE_ONLINE event at start, a status heartbeat, a long-poll
 * for START_STREAM/STOP_STREAM commands (each acknowledged, redeliveries answered the same way without acting
 * twice), and an ordered, retried queue of stream events. Network trouble backs off with jitter; a 401/403 stops
 * everything loudly until the credentials change.
 */
export class DeviceLoop {
  private readonly book = new CommandBook();
  private readonly events: QueuedEvent[] = [];
  private controlAbort = new AbortController();
  private eventAbort = new AbortController();
  private loops: Promise<void>[] = [];
  private eventLoop: Promise<void> | undefined;
  /** Sleepers by loop: queueing an event wakes the event loop only, new credentials or stop wake everything. */
  private readonly wakers = { control: new Set<() => void>(), events: new Set<() => void>() };
  private blockedUntil = 0;
  /** Why the cloud refused the device, with what to check, while that stops the loop. */
  private blockedReason = '';
  private unsupportedUntil = 0;
  private running = false;
  lastContactAt: number | undefined;
  lastError: string | undefined;
  commandsHandled = 0;

  constructor(private readonly options: DeviceLoopOptions) {}

  get blocked(): boolean {
    return Date.now() < this.blockedUntil;
  }

  /** While a 401/403 stops live control: why, and when the loop tries again by itself. */
  get stopped(): { reason: string; retryAt: number } | undefined {
    return this.blocked ? { reason: this.blockedReason, retryAt: this.blockedUntil } : undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.controlAbort = new AbortController();
    this.eventAbort = new AbortController();
    this.queueEvent({ eventType: 'DEVICE_ONLINE', payload: { deviceId: this.options.deviceId, appVersion: this.options.appVersion } });
    this.eventLoop = this.runEvents();
    this.loops = [this.runHeartbeat(), this.runPoll()];
  }

  /** Stops polling, ends a running stream (reporting STREAM_STOPPED), delivers what events it can, then stops. */
  async stop(flushMs = 3000): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.controlAbort.abort();
    this.wakeAll();
    await Promise.all(this.loops);
    await this.options.streams.stopAll('agent shutting down');
    const deadline = Date.now() + flushMs;
    while (this.events.length > 0 && Date.now() < deadline && !this.blocked) await delay(50);
    this.eventAbort.abort();
    this.wakeAll();
    await this.eventLoop;
  }

  /** New credentials lift a 401/403 stop at once. */
  updateCredentials(cloudUrl: string, token: string): void {
    this.options.client.updateCredentials(cloudUrl, token);
    this.blockedUntil = 0;
    this.unsupportedUntil = 0;
    this.wakeAll();
  }

  /** Queues a stream event for the gateway (delivered in order, retried). */
  reportStream(event: StreamEvent): void {
    this.queueEvent({ sessionId: event.sessionId, eventType: event.eventType, payload: event.payload });
  }

  private queueEvent(event: Omit<EventBody, 'boxId'>): void {
    this.events.push({ body: { boxId: this.options.boxId, ...event }, queuedAt: Date.now() });
    for (const wake of [...this.wakers.events]) wake();
  }

  private statusBody(): LiveDeviceStatusBody {
    const snapshot = this.options.snapshot();
    return {
      boxId: this.options.boxId,
      deviceId: this.options.deviceId,
      appVersion: this.options.appVersion,
      cameraStatus: snapshot.cameraStatus,
      publisherState: snapshot.publisherState,
      lastErrorCode: snapshot.lastErrorCode,
      lastErrorMessage: snapshot.lastErrorMessage,
      status: snapshot.status,
    };
  }

  private async runHeartbeat(): Promise<void> {
    const signal = this.controlAbort.signal;
    let attempt = 0;
    while (!signal.aborted) {
      let waitMs = this.options.statusIntervalMs ?? 30_000;
      const hold = this.holdMs();
      if (hold > 0) {
        await this.sleep(hold, signal, 'control');
        continue;
      }
      const outcome = await this.call(DEVICE_PATHS.status, this.statusBody(), signal);
      if (outcome === 'retry') waitMs = Math.min(waitMs, this.backoff(++attempt));
      else attempt = 0;
      await this.sleep(waitMs, signal, 'control');
    }
  }

  private async runPoll(): Promise<void> {
    const signal = this.controlAbort.signal;
    const waitSeconds = this.options.pollWaitSeconds ?? 20;
    let attempt = 0;
    while (!signal.aborted) {
      const hold = this.holdMs();
      if (hold > 0) {
        await this.sleep(hold, signal, 'control');
        continue;
      }
      const started = Date.now();
      let response: DeviceResponse | undefined;
      const body: LiveDevicePollBody = { ...this.statusBody(), limit: this.options.pollLimit ?? 10, waitSeconds };
      const outcome = await this.call(DEVICE_PATHS.poll, body, signal, {
        timeoutMs: waitSeconds * 1000 + 15_000,
        onResponse: (r) => (response = r),
      });
      if (signal.aborted) break;
      if (outcome === 'retry') {
        await this.sleep(this.backoff(++attempt), signal, 'control');
        continue;
      }
      attempt = 0;
      if (outcome === 'bad-request') await this.sleep(60_000, signal, 'control');
      if (outcome !== 'ok') continue; // blocked and unsupported hold at the top of the loop
      const commands = readCommands(response?.data);
      for (const command of commands) {
        if (signal.aborted) break;
        await this.handle(command);
      }
      // A gateway that answers at once instead of holding the poll must not be hammered.
      if (commands.length === 0 && Date.now() - started < 1000) await this.sleep(2000, signal, 'control');
    }
  }

  private async handle(command: IncomingCommand): Promise<void> {
    const decision = this.book.decide(command, this.options.streams.current);
    this.commandsHandled++;
    this.options.onEvent?.({ type: 'command', commandId: decision.ack.commandId, commandType: String(command.commandType), ack: decision.ack, repeated: decision.action === 'repeat' });
    if (decision.action !== 'repeat' && decision.ack.status === 'ignored') {
      this.options.log?.(`live: ${String(command.commandType)} ${decision.ack.commandId} ignored: ${String(decision.ack.payload.reason)}`);
    }
    // Acknowledge before acting: the gateway moves the session on, and our stream events follow the ack.
    if (decision.ack.commandId !== '') await this.acknowledge(decision.ack);
    if (decision.action === 'start') {
      if (decision.replaces) await this.options.streams.stop(decision.replaces, `replaced by session ${decision.start.sessionId}`);
      await this.options.streams.start(decision.start);
    } else if (decision.action === 'stop') {
      await this.options.streams.stop(decision.sessionId, 'STOP_STREAM');
    }
  }

  /** A few quick tries; a lost acknowledgement brings the command back, which the book answers again. */
  private async acknowledge(ack: Ack): Promise<void> {
    const body: LiveCommandAckBody = { boxId: this.options.boxId, commandId: ack.commandId, status: ack.status, payload: ack.payload };
    for (let attempt = 1; attempt <= 3; attempt++) {
      const outcome = await this.call(DEVICE_PATHS.ack, body, this.eventAbort.signal);
      if (outcome !== 'retry') return;
      if (attempt < 3) await this.sleep(this.backoff(attempt), this.eventAbort.signal, 'control');
    }
  }

  private async runEvents(): Promise<void> {
    const signal = this.eventAbort.signal;
    let attempt = 0;
    const maxAge = this.options.eventMaxAgeMs ?? 5 * 60_000;
    while (!signal.aborted) {
      const event = this.events[0];
      const hold = this.holdMs();
      if (!event || hold > 0) {
        await this.sleep(event ? hold : 60_000, signal, 'events');
        continue;
      }
      if (Date.now() - event.queuedAt > maxAge) {
        this.options.log?.(`live: giving up on event ${event.body.eventType} (undeliverable for ${Math.round(maxAge / 1000)} s)`);
        this.events.shift();
        continue;
      }
      const outcome = await this.call(DEVICE_PATHS.event, event.body, signal);
      if (outcome === 'retry') {
        await this.sleep(this.backoff(++attempt), signal, 'events');
        continue;
      }
      attempt = 0;
      // ok, or refused as malformed (retrying would not help); blocked/unsupported keep it for later.
      if (outcome === 'ok' || outcome === 'bad-request') this.events.shift();
    }
  }

  /** How long to wait before talking to the gateway again (blocked or unsupported), 0 when free. */
  private holdMs(): number {
    const now = Date.now();
    return Math.max(0, this.blockedUntil - now, this.unsupportedUntil - now);
  }

  private async call(
    path: DevicePath,
    body: unknown,
    signal: AbortSignal,
    extra: { timeoutMs?: number; onResponse?: (response: DeviceResponse) => void } = {},
  ): Promise<Outcome> {
    let response: DeviceResponse;
    try {
      response = await this.options.client.post(path, body, { signal, ...(extra.timeoutMs ? { timeoutMs: extra.timeoutMs } : {}) });
    } catch (error) {
      if (signal.aborted) return 'retry';
      this.lastError = error instanceof NetworkError ? error.message : String(error);
      this.options.onEvent?.({ type: 'error', path, reason: this.lastError });
      return 'retry';
    }
    extra.onResponse?.(response);
    const reason = `${response.status} from ${path}${answerText(response.data) ? `: ${answerText(response.data)}` : ''}`;
    switch (classifyStatus(response.status)) {
      case 'ok':
        this.lastContactAt = Date.now();
        if (this.unsupportedUntil > 0) this.unsupportedUntil = 0;
        if (this.lastError !== undefined) this.options.onEvent?.({ type: 'reconnected', path });
        this.lastError = undefined;
        return 'ok';
      case 'retry':
        this.lastError = reason;
        this.options.onEvent?.({ type: 'error', path, reason });
        return 'retry';
      case 'auth': {
        const retryAt = Date.now() + (this.options.blockedBackoffMs ?? 15 * 60_000);
        const wasBlocked = this.blocked;
        this.blockedUntil = retryAt;
        this.lastError = reason;
        const hint = response.status === 401 ? 'the cloud refused the token: check cloud.token / HIVEGATE_TOKEN' : 'the token may lack the "device" scope or this box';
        this.blockedReason = `${reason}; ${hint}`;
        if (!wasBlocked) this.options.onEvent?.({ type: 'blocked', path, status: response.status, reason: this.blockedReason, retryAt });
        return 'blocked';
      }
      case 'reject': {
        this.lastError = reason;
        // A cloud without the live gateway answers 404 everywhere ("no route …"). Status and poll have nothing else
        // to be missing; for an ack or an event, a 404 with another message means the command or session is gone,
        // which is final for that request only.
        const text = answerText(response.data);
        const aboutOneThing = (path === DEVICE_PATHS.ack || path === DEVICE_PATHS.event) && text !== '' && !text.startsWith('no route');
        const missingRoute = response.status === 405 || response.status === 501 || (response.status === 404 && !aboutOneThing);
        if (missingRoute) {
          const retryAt = Date.now() + (this.options.unsupportedBackoffMs ?? 5 * 60_000);
          const first = this.unsupportedUntil === 0;
          this.unsupportedUntil = retryAt;
          if (first) this.options.onEvent?.({ type: 'unsupported', path, status: response.status, retryAt });
          return 'unsupported';
        }
        this.options.onEvent?.({ type: 'error', path, reason });
        return 'bad-request';
      }
      case 'split':
        // The gateway refused our body: a version mismatch. Say so; retrying the same body would not help.
        this.lastError = reason;
        this.options.onEvent?.({ type: 'error', path, reason });
        return 'bad-request';
    }
  }

  private backoff(attempt: number): number {
    return backoffDelay(attempt, this.options.backoff ?? { initialMs: 1000, maxMs: 60_000 }, this.options.random);
  }

  private sleep(ms: number, signal: AbortSignal, group: keyof DeviceLoop['wakers']): Promise<void> {
    const wakers = this.wakers[group];
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener('abort', done, { once: true });
      wakers.add(done);
    });
  }

  private wakeAll(): void {
    for (const wake of [...this.wakers.control, ...this.wakers.events]) wake();
  }
}

function readCommands(data: unknown): IncomingCommand[] {
  if (!data || typeof data !== 'object' || !('commands' in data) || !Array.isArray(data.commands)) return [];
  return data.commands.filter((c): c is IncomingCommand => c !== null && typeof c === 'object' && 'commandType' in c);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
