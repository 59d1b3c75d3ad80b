// How evenly a live source's frames are stamped while the agent works. A simulator clip plays as a network camera on
// loopback (real time, as a camera sends), the agent's capture reads it and the shipped detector and tracker work on
// every frame. For each frame it records the stamp the capture gave it (the stream's clock) and when it got it from
// ffmpeg (what the agent stamped before), and prints how far the steps between frames stray from the camera's period
// for each. The ratio compares the two in the same run; the spread of arrivals depends on how busy the machine is.
//   pnpm bench:live-stamps [-- --scenario busy-afternoon --seconds 20 --clip-seconds 60 --cache DIR]
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FileCamera } from '@hivegate/simulator';
import { createCapture, createVision } from '../src/agent.ts';
import { agentConfigFor, cachedClip, DEFAULT_CLIP_CACHE } from './clips.ts';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    scenario: { type: 'string', default: 'busy-afternoon' },
    seconds: { type: 'string', default: '20' },
    // The camera loops the clip; where it starts over, its stream's time jumps a little.
    'clip-seconds': { type: 'string', default: '60' },
    cache: { type: 'string', default: DEFAULT_CLIP_CACHE },
  },
});
const seconds = Number(values.seconds);
if (!(seconds >= 2 && seconds <= 600)) throw new Error(`--seconds must be from 2 to 600, got "${values.seconds}"`);
const clipSeconds = Number(values['clip-seconds']);
if (!(clipSeconds >= 2 && clipSeconds <= 600)) throw new Error(`--clip-seconds must be from 2 to 600, got "${values['clip-seconds']}"`);

/** How far steps between consecutive times stray from `periodMs`. */
function spread(times: readonly number[], periodMs: number) {
  const errors = times.slice(1).map((t, i) => Math.abs(t - times[i]! - periodMs));
  const sorted = [...errors].sort((a, b) => a - b);
  return {
    mean: errors.reduce((sum, e) => sum + e, 0) / errors.length,
    p99: sorted[Math.floor(0.99 * (sorted.length - 1))]!,
    over5: errors.filter((e) => e > 5).length / errors.length,
  };
}

async function main(): Promise<void> {
  const clip = await cachedClip(values.scenario, clipSeconds, resolve(process.env.INIT_CWD ?? process.cwd(), values.cache));
  const camera = new FileCamera({ file: clip.clip, loop: true });
  const url = await camera.start();
  const config = agentConfigFor(clip, { detector: 'onnx' });
  config.source.url = url;
  const capture = createCapture(config);
  const { detector, tracker } = await createVision(config);
  const stamps: number[] = [];
  const arrivals: number[] = [];
  console.error(`${clip.label}: ${config.source.width}x${config.source.height} at ${config.source.fps} fps from ${url}, for ${seconds} s…`);
  // A camera is already streaming when the agent connects: the agent joins it at its next keyframe.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await capture.start();
  const started = Date.now();
  for await (const frame of capture) {
    stamps.push(frame.timestampMs);
    arrivals.push(frame.arrivalMs!);
    tracker.update(frame.timestampMs, await detector.detect(frame), detector.lastLooked?.());
    if (Date.now() - started > seconds * 1000) break;
  }
  await capture.stop();
  await camera.stop();
  await detector.release?.();
  // The first second is ffmpeg starting up and the clock finding the stream's start.
  const settled = Math.round(config.source.fps);
  const periodMs = 1000 / config.source.fps;
  const byClock = spread(stamps.slice(settled), periodMs);
  const byArrival = spread(arrivals.slice(settled), periodMs);
  const row = (label: string, s: ReturnType<typeof spread>) => `| ${label} | ${s.mean.toFixed(2)} | ${s.p99.toFixed(1)} | ${(s.over5 * 100).toFixed(1)} % |`;
  console.log(`${stamps.length} frames (${capture.framesDropped} dropped), the first ${settled} left out; period ${periodMs.toFixed(1)} ms`);
  console.log('| stamped | mean step error, ms | p99, ms | steps off by > 5 ms |');
  console.log('|---|---|---|---|');
  console.log(row("by the stream's clock (the agent)", byClock));
  console.log(row('at arrival (baseline, the agent before)', byArrival));
  console.log(`ratio of mean step errors, clock / arrival: ${(byClock.mean / byArrival.mean).toFixed(3)}`);
  // ffmpeg hands over what it decoded while probing the stream in one burst, which the capture holds until it is over.
  const start = { clock: spread(stamps.slice(0, settled), periodMs), arrival: spread(arrivals.slice(0, settled), periodMs) };
  console.log(`the first ${settled} frames (the connection's start-up burst): mean step error ${start.clock.mean.toFixed(2)} ms by the stream's clock, ${start.arrival.mean.toFixed(2)} ms at arrival`);
}

await main();
