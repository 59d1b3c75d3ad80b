// Makes an 8-bit copy of a CenterNet detector model, calibrated on the frames the agent really feeds it: clips of
// the simulator's training scenes (never the held-out ones) through the agent's own capture and input code, at the
// whole-frame scale or, with --slot, over the slot pass's band. See agent/tools/README.md.
// Paths are taken from where pnpm was started (the repository root in these examples).
//   pnpm --filter @hivegate/agent quantize-detector -- --model agent/models/bee-centernet.onnx --out agent/models/bee-centernet-int8.onnx
//   pnpm --filter @hivegate/agent quantize-detector -- --slot --model agent/models/bee-centernet-slot.onnx --out agent/models/bee-centernet-slot-int8.onnx
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SCENARIOS } from '@hivegate/simulator';
import { FLOAT_MODEL_PATH, SLOT_DEFAULTS } from '../src/config/config.ts';
import { OnnxDetector } from '../src/detect/onnx.ts';
import { slotGeometry } from '../src/detect/slot.ts';
import { agentConfigFor, cachedClip, parseSeeds } from '../bench/clips.ts';
import { quantizeDetector, type CalibrationClip } from './quantize.ts';

const USAGE = `usage: quantize-detector --model FILE --out FILE [--slot] [--weight-bits 7|8] [--seeds N] [--seconds S] [--every N] [--percentile P] [--save-ranges FILE | --ranges FILE] [--cache DIR] [--python PATH]
  --model FILE    the float CenterNet model (as train-detector makes it)
  --out FILE      where the 8-bit model goes
  --slot          a slot-pass model: calibrated on the band around the entrance zone, at its scale beside the
                  whole-frame model
  --weight-bits B 8 (default) or 7: 7-bit weights keep onnxruntime's fast integer kernel on x86 CPUs without
                  VNNI, which 8-bit ones would overflow (the agent takes a slower exact one there for them;
                  tools/qdq.py), at some cost in accuracy
  --seeds N       clips of each training scene (default 1: the suite's own)
  --seconds S     length of each clip (default 60: the clips the accuracy benchmarks use, from the same cache)
  --every N       record ranges on every Nth frame (default 5)
  --percentile P  each tensor's range: the Pth percentile of the per-frame extremes (default 99; 100: the extremes)
  --save-ranges FILE  also write the calibrated ranges there
  --ranges FILE   rewrite with the ranges in FILE (from --save-ranges) instead of calibrating again
  --cache DIR     clip cache (default $TMPDIR/hivegate-accuracy-clips)
  --python PATH   Python with onnx and numpy (default: HIVEGATE_PYTHON, else /usr/bin/python3, else python3)`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: {
      model: { type: 'string' },
      out: { type: 'string' },
      slot: { type: 'boolean', default: false },
      seeds: { type: 'string', default: '1' },
      seconds: { type: 'string', default: '60' },
      every: { type: 'string', default: '5' },
      percentile: { type: 'string', default: '99' },
      'weight-bits': { type: 'string', default: '8' },
      'save-ranges': { type: 'string' },
      ranges: { type: 'string' },
      cache: { type: 'string', default: join(tmpdir(), 'hivegate-accuracy-clips') },
      python: { type: 'string' },
    },
  });
  const seconds = Number(values.seconds);
  const every = Number(values.every);
  const percentile = Number(values.percentile);
  const weightBits = Number(values['weight-bits']);
  if (!values.model || !values.out || !(seconds > 0) || !Number.isInteger(every) || every < 1 || !(percentile >= 50 && percentile <= 100)) throw new Error(USAGE);
  if (weightBits !== 7 && weightBits !== 8) throw new Error(`--weight-bits takes 7 or 8, got "${values['weight-bits']}"\n${USAGE}`);
  if (values.ranges && values['save-ranges']) throw new Error(`--ranges and --save-ranges exclude each other\n${USAGE}`);
  const callerDir = process.env.INIT_CWD ?? process.cwd();
  const seeds = parseSeeds(values.seeds);
  // Saved ranges need no clips.
  const clips = values.ranges ? [] : await calibrationClips(values.slot, seeds, seconds, resolve(callerDir, values.cache));
  const out = resolve(callerDir, values.out);
  const { tensors, frames } = await quantizeDetector({
    model: resolve(callerDir, values.model),
    out,
    clips,
    every,
    percentile,
    weightBits: weightBits as 7 | 8,
    ...(values['save-ranges'] ? { saveRanges: resolve(callerDir, values['save-ranges']) } : {}),
    ...(values.ranges ? { ranges: resolve(callerDir, values.ranges) } : {}),
    ...(values.python ? { python: values.python } : {}),
    progress: (line) => console.error(line),
  });
  const source = values.ranges ? `the ranges in ${values.ranges}` : `${frames} frames of ${clips.length} training clips`;
  console.error(`${out}: ${tensors} tensors calibrated on ${source}, ${weightBits}-bit weights`);
}

/** The training clips, through the agent's config; for a slot model, with the band the agent would give it. */
async function calibrationClips(slot: boolean, seeds: number, seconds: number, cacheDir: string): Promise<CalibrationClip[]> {
  // The slot model's band is sized for the whole-frame model's input, as the agent sizes it.
  let base: { width: number; height: number } | undefined;
  if (slot) {
    const wholeFrame = await OnnxDetector.load(FLOAT_MODEL_PATH);
    base = wholeFrame.inputSize;
    await wholeFrame.release();
  }
  const clips: CalibrationClip[] = [];
  for (let variant = 0; variant < seeds; variant++) {
    for (const scene of SCENARIOS.filter((s) => s.split === 'train')) {
      const clip = await cachedClip(scene.name, seconds, cacheDir, variant);
      const config = agentConfigFor(clip, { detector: 'onnx' });
      const settings = { ...SLOT_DEFAULTS, zone: config.counting.zone, beeLengthPx: config.detector.motion.beeLengthPx };
      clips.push({ label: clip.label, config, ...(base ? { region: slotGeometry(settings, base).window } : {}) });
    }
  }
  return clips;
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
