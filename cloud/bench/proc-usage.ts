import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Linux /proc readings of one process; null once it is gone or when /proc does not show it. */
export interface ProcSample {
  cpuSeconds: number;
  rssMb: number;
  /** The kernel's high-water mark of the resident set since the process started. */
  peakRssMb: number;
  openFds: number | null;
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return ticksPerSecond;
}

/** User + system CPU seconds a process has used so far. */
export function cpuSecondsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

export function sampleProcess(pid: number): ProcSample | null {
  const cpuSeconds = cpuSecondsOf(pid);
  if (cpuSeconds === null) return null;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    let openFds: number | null = null;
    try {
      openFds = readdirSync(`/proc/${pid}/fd`).length;
    } catch {
      // another user's process: the fd table is private
    }
    return { cpuSeconds, rssMb: Math.round(kb('VmRSS') / 1024), peakRssMb: Math.round(kb('VmHWM') / 1024), openFds };
  } catch {
    return null;
  }
}

/** The 1-minute load average. */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/**
 * Seconds the process's threads have spent runnable but waiting for a CPU (the scheduler's run-queue delay):
 * on a shared machine, how much of a request's time was someone else's work.
 */
export function runQueueWaitSecondsOf(pid: number): number | null {
  try {
    let nanoseconds = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').trim().split(' ');
      nanoseconds += Number(fields[1]);
    }
    return nanoseconds / 1e9;
  } catch {
    return null;
  }
}
