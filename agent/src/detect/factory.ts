import type { AgentConfig } from '../config/config.ts';
import { MotionDetector } from './motion.ts';
import type { Detector } from './types.ts';

export type ConfiguredDetector = Detector & { skippedFrames?: number; describe(): string };

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
  const description = `onnx ${model.layout} (${config.detector.model})`;
  if (!config.detector.motionGate) return Object.assign(model, { describe: () => description });
  const gated = new MotionGatedDetector(model, motion, config.detector.minMotionFraction);
  return Object.assign(gated, { describe: () => `${description}, motion-gated` });
}
