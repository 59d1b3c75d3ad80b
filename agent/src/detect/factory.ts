import type { AgentConfig } from '../config/config.ts';
import { MotionDetector } from './motion.ts';
import type { Detector } from './types.ts';

export type ConfiguredDetector = Detector & {
  skippedFrames?: number;
  describe(): string;
  /** Whether any of its models runs onnxruntime's 8-bit kernels. */
  eightBit?: boolean;
};

/** Builds the detector the config asks for. */
export async function createDetector(config: AgentConfig): Promise<ConfiguredDetector> {
  const motion = new MotionDetector({ ...config.detector.motion });
  if (config.detector.kind === 'motion') {
    return Object.assign(motion, { describe: () => 'motion (background subtraction)' });
  }
  const { OnnxDetector } = await import('./onnx.ts');
  const { MotionGatedDetector } = await import('./gated.ts');
  const model = await OnnxDetector.load(config.detector.model!, {
    scoreThreshold: config.detector.scoreThreshold,
    iouThreshold: config.detector.iouThreshold,
    ...(config.detector.classes ? { classes: config.detector.classes } : {}),
    ...(config.detector.threads ? { threads: config.detector.threads } : {}),
  });
  let detector: Detector = model;
  let description = `onnx ${model.layout} (${config.detector.model})`;
  let eightBit = model.eightBit;
  const { slot } = config.detector;
  if (slot) {
    if (model.layout !== 'centernet') throw new Error('detector.slot needs a CenterNet whole-frame model: the slot model works at a multiple of its scale');
    const { SlotRefinedDetector, slotGeometry } = await import('./slot.ts');
    const { window, edgePx } = slotGeometry({ ...slot, zone: config.counting.zone, beeLengthPx: config.detector.motion.beeLengthPx }, model.inputSize);
    const slotModel = await OnnxDetector.load(slot.model, { scoreThreshold: config.detector.scoreThreshold, region: window, ...(config.detector.threads ? { threads: config.detector.threads } : {}) });
    if (slotModel.layout !== 'centernet') throw new Error(`detector.slot.model ${slot.model} must be a CenterNet model`);
    detector = new SlotRefinedDetector(model, slotModel, window, edgePx, slot.wholeEvery);
    eightBit ||= slotModel.eightBit;
    description += `, slot pass ×${slot.zoom} (${slot.model})${slot.wholeEvery > 1 ? `, whole frame every ${slot.wholeEvery} frames` : ''}`;
  }
  if (!config.detector.motionGate) return Object.assign(detector, { describe: () => description, eightBit });
  const gated = new MotionGatedDetector(detector, motion, config.detector.minMotionFraction);
  return Object.assign(gated, { describe: () => `${description}, motion-gated`, eightBit });
}
