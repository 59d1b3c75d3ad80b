import { spawnSync } from 'node:child_process';

/**
 * Finds the ffmpeg tools: FFMPEG_PATH / FFPROBE_PATH when set, otherwise the ones on PATH. The simulator
 * needs the system build (libx264, HTTP server output), so there is no bundled fallback.
 */
export function resolveTool(tool: 'ffmpeg' | 'ffprobe'): string {
  const variable = tool === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH';
  const candidate = process.env[variable] || tool;
  const probe = spawnSync(candidate, ['-version'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) {
    throw new Error(`${tool} not found (tried ${candidate}); install it (apt-get install -y ffmpeg) or set ${variable}`);
  }
  return candidate;
}

/** Keeps the last few kilobytes of a child's stderr for error messages. */
export class StderrTail {
  private text = '';

  constructor(private readonly limit = 4000) {}

  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-this.limit);
  }

  toString(): string {
    return this.text.trim();
  }
}
