import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** ffmpeg for clip assembly: `FFMPEG_PATH`, else `ffmpeg` on PATH, else a clear error saying how to get one. */
export function resolveFfmpeg(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.FFMPEG_PATH;
  if (configured) {
    if (!isExecutable(configured)) throw new Error(`FFMPEG_PATH points to ${configured}, which is not an executable file`);
    return configured;
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'ffmpeg'))) return join(dir, 'ffmpeg');
  }
  throw new Error('ffmpeg not found: install it (Debian: apt-get install ffmpeg) or set FFMPEG_PATH to the binary');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
