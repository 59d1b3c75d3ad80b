// What the agent tells a user whose source runs at another rate than `source.fps`. The settings counted in frames
// (tracker.minHits, tracker.maxMissedFrames, counting.interactionMinFrames) are made for `source.fps`.

/** A rate as the notes print it: to a hundredth, the way ffmpeg and ffprobe name rates. */
const rate = (fps: number) => String(Math.round(fps * 100) / 100);
/** A measured rate, to a tenth: it is an estimate. */
const about = (fps: number) => String(Math.round(fps * 10) / 10);

/**
 * A file slower than the rate it is read at: ffmpeg then repeats frames, which the pipeline skips
 * (`RepeatedFrameFilter`), and the agent sets the settings counted in frames for the file's rate (`frameCounts`, by
 * name), so the counts do not suffer; but every repeat is still scaled, piped and compared. Nothing when the rates
 * agree within 1 % or the file is the faster one.
 */
export function repeatedFramesNote(sourceFps: number, readFps: number, frameCounts: Readonly<Record<string, number>>): string | undefined {
  if (sourceFps >= readFps * 0.99) return undefined;
  const repeated = Math.round((1 - sourceFps / readFps) * 100);
  return `the source is ${rate(sourceFps)} fps and is read at ${rate(readFps)} (source.fps), so ${repeated} % of the frames repeat the one before; they are skipped, and the settings counted in frames follow its rate (${settingsList(frameCounts)}), but set source.fps (--fps) to ${rate(sourceFps)} to spare the work`;
}

/**
 * A live source that sends fewer frames a second than `source.fps`: it is read at its own rate (the capture caps
 * ffmpeg's rate at the source's), so every frame is a new picture at its own time, and the agent sets the settings
 * counted in frames for that rate (`frameCounts`, by name). Nothing within 1 %.
 */
export function slowSourceNote(readFps: number, configuredFps: number, frameCounts: Readonly<Record<string, number>>): string | undefined {
  if (readFps >= configuredFps * 0.99) return undefined;
  return `the camera sends ${rate(readFps)} fps, fewer than the ${rate(configuredFps)} of source.fps, so its frames are taken as they come, ${rate(readFps)} a second, and the settings counted in frames follow that rate: ${settingsList(frameCounts)}`;
}

/**
 * A live source whose new pictures come at another rate than before (measured over 10 s), with the settings now;
 * `spacing`: this note is said at most every so many minutes, and stands for that many changes (`SpacedNotes`).
 */
export function pictureRateNote(fps: number, frameCounts: Readonly<Record<string, number>>, spacing?: { changes: number; minutes: number }): string {
  const note = `new pictures now come at about ${about(fps)} a second (over the last 10 s), and the settings counted in frames follow: ${settingsList(frameCounts)}`;
  if (!spacing || spacing.changes < 2) return note;
  return `${note} (the rate moved ${spacing.changes} times since this was last said, which is at most every ${spacing.minutes} min: a machine that falls behind its camera, or a camera whose rate varies)`;
}

const settingsList = (settings: Readonly<Record<string, number>>) =>
  Object.entries(settings)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');

/**
 * A camera that said one rate and delivers fewer frames: of the first `seen` frames read at `readFps`, `repeated` were
 * repeats (nothing below 5 %). Names the rate it really delivers, and asks to set it.
 */
export function repeatsNote(repeated: number, seen: number, readFps: number): string | undefined {
  if (seen === 0 || repeated / seen < 0.05) return undefined;
  const share = repeated / seen;
  return (
    `${Math.round(share * 100)} % of the first ${seen} frames repeated the one before and were skipped: the camera ` +
    `delivers about ${about(readFps * (1 - share))} fps, not the ${rate(readFps)} it is read at (or the picture did not ` +
    `change at all). The frames kept are stamped at the slots of ${rate(readFps)} fps, up to half a slot off the moment ` +
    `they show, which costs tracking: set source.fps (--fps) to the camera's rate`
  );
}
