import { CommandLedger } from './command-ledger.ts';
import { failureReason, RequestFailure } from './failure-reason.ts';
import { LatencyStats, type OperationReport, type RequestTotals } from './latency-stats.ts';
import { requestDeadline, sleep } from './abortable.ts';
import { VirtualDevice, type DeviceTiming } from './virtual-device.ts';

export interface FleetOptions {
  cloudUrl: string;
  /** An owner's token with the ingest, device and control scopes (the driver starts live sessions with it). */
  token: string;
  devices: number;
  seconds: number;
  timing?: Partial<DeviceTiming>;
  /** Devices come online spread over this many seconds (0: all at once, as after a cloud outage without jitter). */
  rampSeconds?: number;
  /** Live sessions to start (and stop) through GraphQL while the fleet runs, to time command delivery. */
  commands?: number;
  boxPrefix?: string;
  log?: (line: string) => void;
  /** Ends the run early (Ctrl-C): the devices stop and the report so far comes back, marked as interrupted. */
  signal?: AbortSignal;
}

export interface FleetReport {
  devices: number;
  /** How long the run was asked to last. */
  seconds: number;
  /** How long it took, from the first device's start to the last one's stop: what rates are to be divided by. */
  wallSeconds: number;
  /** The run was stopped before `seconds` were up (`signal`): the report covers `wallSeconds` only. */
  interrupted: boolean;
  /** Every device request: sent = succeeded + failed + unfinished (still waiting when the run stopped). */
  requests: RequestTotals;
  /** Per operation; `poll` is counted without latencies (a long-poll waits for commands by design). */
  operations: Record<string, OperationReport>;
  /**
   * Live-session commands: sent (mutations sent), count (delivered: the device's long-poll returned the command;
   * latencies from the mutation being sent), errors (the mutation failed), unfinished (not delivered by the end).
   */
  commandDelivery: OperationReport;
  errors: number;
}

export const DEFAULT_TIMING: DeviceTiming = { statusEverySeconds: 30, telemetryEverySeconds: 60, pollWaitSeconds: 20, requestTimeoutSeconds: 15 };
/** What `sim fleet` runs without options (besides DEFAULT_TIMING). */
export const FLEET_DEFAULTS = { devices: 10, seconds: 60, rampSeconds: 0, commands: 0 } as const;

/**
 * Runs N virtual entrance observers against a cloud for `seconds` and reports errors and latencies. The run ends
 * on time whatever the cloud does: at the end the live-session driver and the devices are stopped, and what they
 * still waited for is reported as unfinished.
 */
export async function runFleet(options: FleetOptions): Promise<FleetReport> {
  const stats = new LatencyStats();
  const commands = new CommandLedger();
  const prefix = options.boxPrefix ?? 'fleet-box-';
  const timing: DeviceTiming = { ...DEFAULT_TIMING, ...definedOnly(options.timing ?? {}) };
  const devices = Array.from({ length: options.devices }, (_, i) => {
    const boxId = `${prefix}${i}`;
    return new VirtualDevice({
      cloudUrl: options.cloudUrl,
      token: options.token,
      hiveId: `fleet-hive-${Math.floor(i / 4)}`,
      boxId,
      timing,
      stats,
      onCommand: (command, receivedAt) => commands.delivered(boxId, command.commandType, command.sessionId, receivedAt),
    });
  });
  const rampMs = Math.min(options.rampSeconds ?? 0, options.seconds) * 1000;
  options.log?.(`starting ${devices.length} virtual devices against ${options.cloudUrl} for ${options.seconds} s${rampMs ? ` (coming online over ${rampMs / 1000} s)` : ''}`);
  const startedAt = performance.now();
  const starts = devices.map((device, i) => setTimeout(() => device.start(), (i / devices.length) * rampMs));

  const end = new AbortController();
  const interrupt = (): void => end.abort();
  options.signal?.addEventListener('abort', interrupt, { once: true });
  if (options.signal?.aborted) end.abort();
  const driver = options.commands ? driveLiveSessions(options, timing, end.signal, commands) : Promise.resolve();
  await sleep(options.seconds * 1000, end.signal);
  const interrupted = end.signal.aborted;
  options.signal?.removeEventListener('abort', interrupt);
  if (interrupted) options.log?.(`interrupted after ${((performance.now() - startedAt) / 1000).toFixed(1)} s: stopping the devices`);
  end.abort();
  for (const start of starts) clearTimeout(start);
  await Promise.all([driver, ...devices.map((d) => d.stop())]);
  const wallSeconds = Math.round((performance.now() - startedAt) / 10) / 100;
  const commandDelivery = commands.report();
  return {
    devices: options.devices,
    seconds: options.seconds,
    wallSeconds,
    interrupted,
    requests: stats.totals(),
    operations: stats.report(),
    commandDelivery,
    errors: stats.totalErrors() + commandDelivery.errors,
  };
}

async function graphql(options: FleetOptions, timing: DeviceTiming, stop: AbortSignal, query: string, variables: Record<string, unknown>) {
  const deadline = requestDeadline(stop, timing.requestTimeoutSeconds * 1000);
  try {
    const response = await fetch(new URL('/graphql', options.cloudUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
      signal: deadline.signal,
    });
    if (!response.ok) throw new RequestFailure(`HTTP ${response.status}`);
    const body = (await response.json()) as { data?: Record<string, { id: string } | null>; errors?: { message: string }[] };
    if (body.errors?.length) throw new RequestFailure(`GraphQL: ${body.errors[0]!.message}`);
    return body.data!;
  } catch (error) {
    throw deadline.timedOut() ? new RequestFailure('timeout') : error;
  } finally {
    deadline.release();
  }
}

/**
 * Starts and stops live sessions on boxes spread over the fleet until `stop`, timing how fast each command reaches
 * its device. A mutation cut off by `stop` is no failure of the cloud.
 */
async function driveLiveSessions(options: FleetOptions, timing: DeviceTiming, stop: AbortSignal, commands: CommandLedger): Promise<void> {
  const count = options.commands!;
  const spacingMs = (options.seconds * 1000 * 0.8) / count;
  const start = async (boxId: string): Promise<string> => {
    const ticket = commands.sending(boxId, 'START_STREAM', performance.now());
    try {
      const answer = await graphql(options, timing, stop, 'mutation($boxId: ID!) { startEntranceLiveStream(boxId: $boxId) { id } }', { boxId });
      const sessionId = answer.startEntranceLiveStream!.id;
      commands.answered(ticket, sessionId);
      return sessionId;
    } catch (error) {
      if (!stop.aborted) commands.failed(ticket, failureReason(error, false));
      throw error;
    }
  };
  const stopSession = async (boxId: string, sessionId: string): Promise<void> => {
    const ticket = commands.sending(boxId, 'STOP_STREAM', performance.now(), sessionId);
    try {
      await graphql(options, timing, stop, 'mutation($id: ID!) { stopEntranceLiveStream(sessionId: $id) }', { id: sessionId });
    } catch (error) {
      if (!stop.aborted) commands.failed(ticket, failureReason(error, false));
      throw error;
    }
  };
  await sleep(Math.min(3000, spacingMs), stop); // let the first polls arrive
  for (let i = 0; i < count && !stop.aborted; i++) {
    const boxId = `${options.boxPrefix ?? 'fleet-box-'}${(i * 7) % options.devices}`;
    try {
      const sessionId = await start(boxId);
      await sleep(spacingMs / 2, stop);
      if (stop.aborted) break;
      await stopSession(boxId, sessionId);
    } catch {
      if (stop.aborted) break;
    }
    await sleep(spacingMs / 2, stop);
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
