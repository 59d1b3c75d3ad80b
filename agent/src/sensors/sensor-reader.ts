import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { compileValidator, MetricInput, type Identifier } from '@hivegate/shared';
import type { Outbox } from '../outbox/outbox.ts';
import { parseSensorOutput, sensorMetric } from './reading.ts';

export interface SensorReaderOptions {
  outbox: Outbox;
  deviceId: string;
  hiveId: Identifier;
  /** A program that prints a reading: a string runs through `/bin/sh -c`, an array runs as it is. */
  command?: string | string[];
  /** A file another program keeps up to date with the latest reading. */
  file?: string;
  intervalSeconds: number;
  timeoutSeconds?: number;
  /** Called after a reading was queued (wakes the uplink). */
  onQueued?: () => void;
  log?: (message: string) => void;
  now?: () => number;
}

export type SensorOutcome = { ok: true; queued: boolean; fields: Record<string, number> } | { ok: false; error: string };

const checkMetric = compileValidator(MetricInput);

/**
 * Reads the optional hive sensors (temperature, humidity, weight) every interval and queues each reading as a metric
 * in the outbox, from where the uplink delivers it like everything else.
 */
export class SensorReader {
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<SensorOutcome> | undefined;
  private warnedKeys = new Set<string>();
  private lastError: string | undefined;
  readingsQueued = 0;
  readingsFailed = 0;

  constructor(private readonly options: SensorReaderOptions) {
    if (!options.command === !options.file) throw new Error('sensors need exactly one of command or file');
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  start(): void {
    if (this.timer) return;
    void this.readOnce();
    this.timer = setInterval(() => void this.readOnce(), this.options.intervalSeconds * 1000);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.reading;
  }

  /** One reading now (also what the timer does); a reading still running is not started twice. */
  readOnce(): Promise<SensorOutcome> {
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<SensorOutcome> {
    const readAtMs = this.now;
    let text: string;
    try {
      text = this.options.command ? await this.runCommand(this.options.command) : await this.readFileReading(this.options.file!, readAtMs);
    } catch (error) {
      return this.failed((error as Error).message);
    }
    const parsed = parseSensorOutput(text);
    if (!parsed.ok) return this.failed(parsed.error);
    for (const key of parsed.ignoredKeys) {
      if (this.warnedKeys.has(key)) continue;
      this.warnedKeys.add(key);
      this.options.log?.(`sensors: ignoring "${key}" (not one of temperatureCelsius, humidityPercent, weightKg)`);
    }
    const metric = sensorMetric({ deviceId: this.options.deviceId, hiveId: this.options.hiveId, fields: parsed.fields, readAtMs, intervalSeconds: this.options.intervalSeconds });
    const valid = checkMetric(metric);
    if (!valid.ok) return this.failed(`the reading does not make a valid metric: ${valid.error}`);
    const queued = this.options.outbox.enqueue('metrics', metric.dedupeKey!, metric);
    if (queued) {
      this.readingsQueued++;
      this.options.onQueued?.();
    }
    if (this.lastError) this.options.log?.('sensors: reading again');
    this.lastError = undefined;
    return { ok: true, queued, fields: parsed.fields as Record<string, number> };
  }

  private failed(error: string): SensorOutcome {
    this.readingsFailed++;
    // Say it once per kind of trouble, not every interval.
    if (error !== this.lastError) this.options.log?.(`sensors: no reading: ${error}`);
    this.lastError = error;
    return { ok: false, error };
  }

  private runCommand(command: string | string[]): Promise<string> {
    const [file, ...args] = typeof command === 'string' ? ['/bin/sh', '-c', command] : command;
    const timeoutMs = (this.options.timeoutSeconds ?? 10) * 1000;
    return new Promise((resolve, reject) => {
      execFile(file!, args, { timeout: timeoutMs, maxBuffer: 64 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const detail = String(stderr).trim().split('\n').slice(-2).join(' | ');
        if ((error as NodeJS.ErrnoException & { killed?: boolean }).killed) return reject(new Error(`sensor command timed out after ${timeoutMs / 1000} s`));
        reject(new Error(`sensor command failed (${error.message.split('\n')[0]})${detail ? `: ${detail}` : ''}`));
      });
    });
  }

  /** A reading older than three intervals is stale (its writer stopped): reporting it again would invent data. */
  private async readFileReading(path: string, nowMs: number): Promise<string> {
    const info = await stat(path).catch((error: Error) => {
      throw new Error(`cannot read sensor file ${path}: ${error.message}`);
    });
    const ageSeconds = (nowMs - info.mtimeMs) / 1000;
    if (ageSeconds > 3 * this.options.intervalSeconds) throw new Error(`sensor file ${path} is stale (last written ${Math.round(ageSeconds)} s ago)`);
    return readFile(path, 'utf8');
  }
}
