import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findScenario, renderClip, withOverrides, type GroundTruth } from '@hivegate/simulator';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentConfigFor, type CachedClip } from '../bench/clips.ts';
import { FLOAT_MODEL_PATH, SLOT_MODEL_PATH } from '../src/config/config.ts';
import { quantizeDetector } from '../tools/quantize.ts';
import { agreement, detectEveryFrame } from './helpers/agreement.ts';
import { tempDir } from './helpers/media.ts';

async function render(name: string, seconds: number, dir: string): Promise<CachedClip> {
  const scenario = withOverrides(findScenario(name)!, { durationSeconds: seconds });
  const rendered = await renderClip({ scenario, outDir: join(dir, name), ids: { hiveId: 'h', boxId: 'b' } });
  return { label: name, dir, clip: rendered.clipPath, truth: JSON.parse(readFileSync(rendered.truthPath, 'utf8')) as GroundTruth };
}

// The 8-bit rewrite end to end: calibrated on a training scene through the real capture and onnxruntime, rewritten
// by qdq.py (Debian's python3-onnx), then run beside the float model on a held-out scene.
describe('quantize-detector', () => {
  const dir = tempDir('quantize');
  let calibration: CachedClip;
  let heldOut: CachedClip;

  beforeAll(async () => {
    calibration = await render('busy-afternoon', 1.5, dir.path);
    heldOut = await render('heldout-evening-rush', 2, dir.path);
  }, 60_000);
  afterAll(() => dir.cleanup());

  it('makes an 8-bit model that finds the bees the float model finds, where it finds them', async () => {
    const out = join(dir.path, 'int8.onnx');
    const { tensors, frames } = await quantizeDetector({
      model: FLOAT_MODEL_PATH,
      out,
      clips: [{ label: 'busy-afternoon', config: agentConfigFor(calibration, { detector: 'onnx' }) }],
      saveRanges: join(dir.path, 'ranges.json'),
    });
    expect(tensors).toBeGreaterThan(10);
    expect(frames).toBe(45);
    // int8 weights: a quarter of the float weights' bytes, plus scales.
    expect(statSync(out).size).toBeLessThan(0.4 * statSync(FLOAT_MODEL_PATH).size);
    // It reads the bytes themselves, channels last in 2×2 blocks: no float input to quantize, no transpose.
    const session = await ort.InferenceSession.create(out);
    expect(session.inputMetadata[0]).toMatchObject({ name: 'images', isTensor: true, type: 'uint8', shape: [1, 120, 160, 24] });
    // And gives its planes before their pixel shuffle, as one output.
    expect(session.outputMetadata).toMatchObject([{ name: 'heads', isTensor: true, type: 'float32', shape: [1, 28, 60, 80] }]);
    await session.release();

    const clip = { path: heldOut.clip, ...heldOut.truth };
    const float = await detectEveryFrame(FLOAT_MODEL_PATH, clip);
    const int8 = await detectEveryFrame(out, clip);
    expect(int8).toHaveLength(float.length);
    const { clear, matched, medianDistance } = agreement(float, int8);
    expect(clear).toBeGreaterThan(200);
    expect(matched).toBeGreaterThan(0.97);
    // Frame pixels (two per input pixel).
    expect(medianDistance).toBeLessThan(0.5);
  }, 120_000);

  it('rewrites again from saved ranges, with no clip run: the same file, or one with 7-bit weights', async () => {
    const ranges = join(dir.path, 'ranges.json');
    const again = join(dir.path, 'again.onnx');
    expect(await quantizeDetector({ model: FLOAT_MODEL_PATH, out: again, clips: [], ranges })).toMatchObject({ frames: 0 });
    expect(readFileSync(again).equals(readFileSync(join(dir.path, 'int8.onnx')))).toBe(true);
    const sevenBit = join(dir.path, 'seven-bit.onnx');
    await quantizeDetector({ model: FLOAT_MODEL_PATH, out: sevenBit, clips: [], ranges, weightBits: 7 });
    expect(readFileSync(sevenBit).equals(readFileSync(again))).toBe(false);
    // Ranges that lack one of the model's tensors are refused, naming it.
    const saved = JSON.parse(readFileSync(ranges, 'utf8')) as Record<string, unknown>;
    const [first] = Object.keys(saved);
    delete saved[first!];
    const partial = join(dir.path, 'partial.json');
    writeFileSync(partial, JSON.stringify(saved));
    const refused = quantizeDetector({ model: SLOT_MODEL_PATH, out: join(dir.path, 'refused.onnx'), clips: [], ranges: partial });
    await expect(refused).rejects.toThrow(`${partial} has no range for ${first}: it was calibrated for another model`);
    expect(existsSync(join(dir.path, 'refused.onnx'))).toBe(false);
  }, 60_000);
});
