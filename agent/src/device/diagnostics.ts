import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/** Where Linux (and Raspberry Pi OS) reports the SoC temperature, in millidegrees Celsius. */
export const CPU_TEMPERATURE_FILE = '/sys/class/thermal/thermal_zone0/temp';

/** `"48312\n"` → 48.3; undefined for anything that is not a plausible reading. */
export function parseMillidegrees(text: string): number | undefined {
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value)) return undefined;
  const celsius = value / 1000;
  return celsius > -60 && celsius < 150 ? Math.round(celsius * 10) / 10 : undefined;
}

/** The CPU temperature when the system exposes one (a Pi does; many VMs and containers do not). */
export function readCpuTemperature(file = CPU_TEMPERATURE_FILE): number | undefined {
  try {
    return parseMillidegrees(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Host figures for the status heartbeat. */
export function hostDiagnostics(startedAtMs: number, nowMs: number = Date.now()): Record<string, number> {
  const temperature = readCpuTemperature();
  const memory = process.memoryUsage();
  return {
    uptimeSeconds: Math.round((nowMs - startedAtMs) / 1000),
    loadAverage1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    memoryRssMb: Math.round(memory.rss / 1024 / 1024),
    ...(temperature !== undefined ? { cpuTemperatureCelsius: temperature } : {}),
  };
}
