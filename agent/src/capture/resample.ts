// The capture reads every source at `source.fps` through ffmpeg's `fps` filter, which drops or repeats frames.
// Scoring the agent against a clip's ground truth at another rate than the clip's needs to know which clip frame
// each captured frame shows. ffmpeg 5.1 (Debian 12's; default `round=near`, the clip starting at 0) gives clip frame i
// the output slot round(i × out / in), halves up, and output frame k shows the last clip frame whose slot is ≤ k:
// at 30 → 15 fps clip frames 0, 2, 4 …, at 30 → 12 fps 1, 3, 6, 8 …, at 25 → 30 fps one frame in five twice.
// `test/capture.test.ts` holds this against the real capture.

/** Frames per second as a whole number or a fraction, so 30 → 15 and 25 → 15 need no floating-point luck. */
function asFraction(fps: number): [number, number] {
  if (!(fps > 0) || !Number.isFinite(fps)) throw new Error(`fps must be a positive number, got ${String(fps)}`);
  for (const denominator of [1, 1001, 1000, 100]) {
    const numerator = Math.round(fps * denominator);
    if (Math.abs(numerator / denominator - fps) < 1e-9) return [numerator, denominator];
  }
  throw new Error(`fps ${String(fps)} is not a whole number, n/1001, or a multiple of 0.001`);
}

/** The clip frame (from 0) that output frame `outputIndex` shows when a `sourceFps` clip is read at `outputFps`. */
export function sourceFrameAt(outputIndex: number, sourceFps: number, outputFps: number): number {
  const [sn, sd] = asFraction(sourceFps);
  const [on, od] = asFraction(outputFps);
  // The last i with round(i × out / in) ≤ k is ceil((k + ½) × in / out) − 1, here in whole numbers:
  // i × on × sd < (k + ½) × sn × od  ⇔  i < (2k + 1) × sn × od / (2 × on × sd).
  const numerator = (2 * outputIndex + 1) * sn * od;
  const denominator = 2 * on * sd;
  return Math.ceil(numerator / denominator) - 1;
}

/**
 * When (ms from the clip's start) the clip frame that output frame k shows was taken, as a function of k; undefined
 * for a rate that is no simple fraction (a variable-rate file's average), whose frames cannot be placed this way.
 */
export function shownFrameTimes(sourceFps: number, outputFps: number): ((outputIndex: number) => number) | undefined {
  try {
    asFraction(sourceFps);
    asFraction(outputFps);
  } catch {
    return undefined;
  }
  return (outputIndex) => (sourceFrameAt(outputIndex, sourceFps, outputFps) * 1000) / sourceFps;
}

/** How many frames the capture delivers from a clip of `sourceFrames` frames: its length at the new rate, rounded. */
export function resampledFrameCount(sourceFrames: number, sourceFps: number, outputFps: number): number {
  const [sn, sd] = asFraction(sourceFps);
  const [on, od] = asFraction(outputFps);
  return Math.round((sourceFrames * on * sd) / (od * sn));
}
