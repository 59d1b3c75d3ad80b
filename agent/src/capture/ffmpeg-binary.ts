import { accessSync, constants } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

/**
 * Finds ffmpeg (and its ffprobe): `FFMPEG_PATH`, then `ffmpeg` on PATH. There is no npm fallback on purpose:
 * the packaged binaries either download at install time (fails offline) or lack ffprobe.
 */
export function resolveFfmpeg(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.FFMPEG_PATH;
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`FFMPEG_PATH points to ${configured}, which is not an executable file`);
    return configured;
  }
  const found = findOnPath('ffmpeg', env.PATH ?? '');
  if (found) return found;
  throw new Error('ffmpeg not found: install it (Debian: apt-get install ffmpeg) or set FFMPEG_PATH to the binary');
}

/** ffprobe next to the resolved ffmpeg, else `FFPROBE_PATH`, else on PATH. */
export function resolveFfprobe(env: NodeJS.ProcessEnv = process.env): string {
  if (env.FFPROBE_PATH) {
    if (!isExecutable(env.FFPROBE_PATH)) throw new Error(`FFPROBE_PATH points to ${env.FFPROBE_PATH}, which is not an executable file`);
    return env.FFPROBE_PATH;
  }
  const sibling = join(dirname(resolveFfmpeg(env)), 'ffprobe');
  if (isExecutable(sibling)) return sibling;
  const found = findOnPath('ffprobe', env.PATH ?? '');
  if (found) return found;
  throw new Error('ffprobe not found next to ffmpeg or on PATH: set FFPROBE_PATH');
}

export function findOnPath(name: string, pathVariable: string): string | undefined {
  for (const dir of pathVariable.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
