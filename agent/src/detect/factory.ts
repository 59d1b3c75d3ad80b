import { ConfigError, type AgentConfig } from '../config/config.ts';
import { MotionDetector } from './motion.ts';
import type { OnnxDetectorOptions } from './onnx.ts';
import type { Detector } from './types.ts';

export type ConfiguredDetector = Detector & {
  skippedFrames?: number;
  describe(): string;
  /** Whether any of its models runs onnxruntime's 8-bit kernels. */
  eightBit?: boolean;
};

/**
 * Loads a model the config names; a file that is missing or not a usable model is the config's error, named by its
 * field (exit 2), which `check-config` finds before a service starts with it.
 */
async function loadModel(field: string, path: string, options: OnnxDetectorOptions) {
  const { OnnxDetector } = await import('./onnx.ts');
  try {
    return await OnnxDetector.load(path, options);
  } catch (error) {
    throw new ConfigError(`${field}: ${(error as Error).message}`);
  }
}

/** Builds the detector the config asks for. */
export async function createDetector(config: AgentConfig): Promise<ConfiguredDetector> {
  const motion = new MotionDetector({ ...config.detector.motion });
  if (config.detector.kind === 'motion') {
    return Object.assign(motion, { describe: () => 'motion (background subtraction)' });
  }
  const { MotionGatedDetector } = await import('./gated.ts');
  const model = await loadModel('detector.model', config.detector.model!, {
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
    if (model.layout !== 'centernet') throw new ConfigError('detector.slot needs a CenterNet whole-frame model: the slot model works at a multiple of its scale');
    const { SlotRefinedDetector, slotGeometry } = await import('./slot.ts');
    const { window, edgePx } = slotGeometry({ ...slot, zone: config.counting.zone, beeLengthPx: config.detector.motion.beeLengthPx }, model.inputSize);
    const slotModel = await loadModel('detector.slot.model', slot.model, { scoreThreshold: config.detector.scoreThreshold, region: window, ...(config.detector.threads ? { threads: config.detector.threads } : {}) });
    if (slotModel.layout !== 'centernet') throw new ConfigError(`detector.slot.model: ${slot.model} must be a CenterNet model`);
    detector = new SlotRefinedDetector(model, slotModel, window, edgePx, slot.wholeEvery);
    eightBit ||= slotModel.eightBit;
    description += `, slot pass ×${slot.zoom} (${slot.model})${slot.wholeEvery > 1 ? `, whole frame every ${slot.wholeEvery} frames` : ''}`;
  }
  if (!config.detector.motionGate) return Object.assign(detector, { describe: () => description, eightBit });
  const gated = new MotionGatedDetector(detector, motion, config.detector.minMotionFraction);
  return Object.assign(gated, { describe: () => `${description}, motion-gated`, eightBit });
}
