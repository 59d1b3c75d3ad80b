import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findPython } from '../src/io/python.ts';
import { buildDataset } from './dataset.ts';
import { trainingPlan } from './plan.ts';

/**
 * One command from nothing to a trained model:
 *   pnpm --filter @hivegate/simulator train-detector --seed 1 --out agent/models/bee-centernet.onnx
 * renders the training scenarios (cached), exports model-input frames with their boxes, and runs the PyTorch
 * trainer (Debian's python3-torch and python3-onnx), which writes the ONNX model.
 */

const USAGE = `usage: train-detector --out FILE [--seed N] [--steps N] [--widths A,B,C,D] [--stride 1|2] [--zoom 1|2] [--slot-share F] [--variants N] [--seconds S] [--cache DIR] [--python PATH]
  --out FILE      ONNX model to write (relative paths are taken from where the command was started)
  --seed N        seed of the whole run: clip variants, crops, augmentation, weights (default 1)
  --steps N       training steps of 16 crops each (default 16000)
  --widths LIST   the network's channels at strides 2, 4, 8 and 16 (default: the trainer's, 16,16,48,64)
  --stride 1|2    input pixels per output cell (default 2)
  --zoom 1|2      scale of the model's input: 1 sees whole frames at 320x240 (the agent's default model), 2 sees
                  bees twice as large, at 640x480 for a whole frame, for the agent's pass over the entrance slot
  --slot-share F  share of training crops taken from the band around the entrance zone, where the agent's slot pass
                  runs, from 0 to 1 (default 0: crops anywhere in the frame)
  --variants N    clips per training scenario (default 5; the last of each is kept for validation)
  --seconds S     length of each training clip (default 24)
  --cache DIR     rendered clips and the exported dataset (default: $TMPDIR/hivegate-detector-data)
  --python PATH   Python with torch and onnx (default: HIVEGATE_PYTHON, else /usr/bin/python3, else python3)`;

/** The model input at zoom 1; a zoom-2 model sees the same picture at twice the size. */
const INPUT_WIDTH = 320;
const INPUT_HEIGHT = 240;

class UsageError extends Error {}

function share(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^(0(\.\d+)?|1(\.0+)?)$/.test(value)) throw new UsageError(`--${name} must be a number from 0 to 1, got "${value}"`);
  return Number(value);
}

function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return Number(value);
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      out: { type: 'string' },
      seed: { type: 'string' },
      steps: { type: 'string' },
      widths: { type: 'string' },
      stride: { type: 'string' },
      zoom: { type: 'string' },
      'slot-share': { type: 'string' },
      variants: { type: 'string' },
      seconds: { type: 'string' },
      cache: { type: 'string' },
      python: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (!values.out) throw new UsageError('--out is required');
  // pnpm --filter runs scripts inside the package; paths on the command line mean the caller's directory.
  const callerDir = process.env.INIT_CWD ?? process.cwd();
  const out = resolve(callerDir, values.out);
  const seed = integer('seed', values.seed, 1, 0, 0xffffffff);
  const steps = integer('steps', values.steps, 16000, 1, 1_000_000);
  const variants = integer('variants', values.variants, 5, 1, 50);
  const seconds = integer('seconds', values.seconds, 24, 1, 600);
  const stride = integer('stride', values.stride, 2, 1, 2);
  const zoom = integer('zoom', values.zoom, 1, 1, 2);
  const slotShare = share('slot-share', values['slot-share'], 0);
  if (values.widths !== undefined && !/^\d{1,3}(,\d{1,3}){3}$/.test(values.widths)) throw new UsageError(`--widths must be four channel counts like 16,16,48,64, got "${values.widths}"`);
  const cacheDir = resolve(callerDir, values.cache ?? join(tmpdir(), 'hivegate-detector-data'));
  const python = findPython(['torch', 'onnx', 'numpy'], values.python);
  const started = performance.now();

  const clips = trainingPlan({ seed, variants, seconds });
  console.error(`rendering and exporting ${clips.length} training clips (${seconds} s each) into ${cacheDir}`);
  const dataset = await buildDataset({ clips, cacheDir, inputWidth: INPUT_WIDTH * zoom, inputHeight: INPUT_HEIGHT * zoom, log: (line) => console.error(line) });
  const validation = variants > 1 ? clips.flatMap((clip, index) => (clip.scenario.name.endsWith(`-v${variants - 1}`) ? [index] : [])) : [];
  console.error(`data ready: ${dataset.count} frames in ${((performance.now() - started) / 1000).toFixed(0)} s; training…`);

  await mkdir(dirname(out), { recursive: true });
  const script = join(import.meta.dirname, 'centernet.py');
  const args = [script, '--data', dirname(dataset.framesPath), '--out', out, '--seed', String(seed), '--steps', String(steps), '--stride', String(stride), '--zoom', String(zoom), '--slot-share', String(slotShare), '--val-clips', validation.join(','), ...(values.widths ? ['--widths', values.widths] : [])];
  const child = spawn(python, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((done, fail) => {
    child.on('error', fail);
    child.on('close', done);
  });
  if (code !== 0) throw new Error(`the trainer (${python} ${script}) exited with code ${code}`);
  if (!existsSync(out)) throw new Error(`the trainer finished but wrote no ${out}`);
  const minutes = (performance.now() - started) / 60_000;
  console.log(JSON.stringify({ model: out, bytes: statSync(out).size, seed, steps, frames: dataset.count, minutes: Number(minutes.toFixed(1)) }));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`train-detector: ${error instanceof Error ? error.message : String(error)}`);
  if (error instanceof UsageError) {
    console.error(USAGE);
    process.exit(2);
  }
  process.exit(1);
});
