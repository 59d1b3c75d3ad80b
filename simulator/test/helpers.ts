import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const packageDir = fileURLToPath(new URL('..', import.meta.url));

export interface Run {
  code: number | null;
  stdout: string;
  /** stdout as bytes, for binary output. */
  output: Buffer;
  stderr: string;
}

/** Runs a command to completion and collects its output. */
export async function run(command: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<Run> {
  const child = spawn(command, args, { cwd: options.cwd ?? packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  const output = Buffer.concat(chunks);
  return { code, stdout: output.toString(), output, stderr };
}

/** ffprobe's view of a video's first stream and container tags. */
export async function probe(file: string): Promise<{ codec: string; width: number; height: number; frames: number; rate: string; creationTime?: string }> {
  const result = await run('ffprobe', [
    '-v', 'error', '-count_frames', '-select_streams', 'v:0',
    '-show_entries', 'stream=codec_name,width,height,nb_read_frames,r_frame_rate:format_tags=creation_time', '-of', 'json', file,
  ]);
  if (result.code !== 0) throw new Error(`ffprobe failed: ${result.stderr}`);
  const json = JSON.parse(result.stdout) as {
    streams: Array<{ codec_name: string; width: number; height: number; nb_read_frames: string; r_frame_rate: string }>;
    format: { tags?: { creation_time?: string } };
  };
  const stream = json.streams[0];
  if (!stream) throw new Error(`no video stream in ${file}`);
  return {
    codec: stream.codec_name,
    width: stream.width,
    height: stream.height,
    frames: Number(stream.nb_read_frames),
    rate: stream.r_frame_rate,
    creationTime: json.format.tags?.creation_time,
  };
}
