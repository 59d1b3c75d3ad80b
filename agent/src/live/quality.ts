/**
 * What a live stream looks like for a quality profile, given what the camera delivers. Pure.
 *
 * The profile is a box the picture is fitted into (aspect kept, never enlarged: a 320×240 camera stays 320×240 on
 * `medium`), a frame-rate ceiling (never above the camera's) and a bit rate. Sizes are even because H.264 in
 * yuv420p needs even dimensions.
 */
export const QUALITY_PROFILES = ['low', 'medium', 'high'] as const;
export type QualityProfile = (typeof QUALITY_PROFILES)[number];

interface ProfileSpec {
  /** Box the picture is fitted into; undefined keeps the camera's size. */
  box?: { width: number; height: number };
  /** Frame-rate ceiling; undefined keeps the camera's rate. */
  fps?: number;
  bitrateKbps: number;
}

const PROFILES: Record<QualityProfile, ProfileSpec> = {
  low: { box: { width: 320, height: 240 }, fps: 10, bitrateKbps: 300 },
  medium: { box: { width: 640, height: 480 }, fps: 15, bitrateKbps: 800 },
  high: { bitrateKbps: 2000 },
};

export interface CameraFormat {
  width: number;
  height: number;
  fps: number;
}

export interface StreamFormat {
  profile: QualityProfile;
  width: number;
  height: number;
  fps: number;
  bitrateKbps: number;
  /** Rate-control ceiling and buffer for x264's VBV: the uplink sees a bounded rate, not bursts. */
  maxrateKbps: number;
  bufsizeKbits: number;
  /** Frames between keyframes: one per second, so every 1 s HLS segment starts with one. */
  keyframeInterval: number;
}

export type ProfileChoice = { profile: QualityProfile; note?: string };

/**
 * Reads the profile a START_STREAM asks for. Case does not matter; a missing one means `medium`; an unknown one
 * also falls back to `medium` (with a note for the acknowledgement) so a newer web app never leaves a beekeeper
 * without a picture.
 */
export function chooseProfile(requested: unknown): ProfileChoice {
  if (requested === undefined || requested === null || requested === '') return { profile: 'medium' };
  const name = typeof requested === 'string' ? requested.trim().toLowerCase() : '';
  if ((QUALITY_PROFILES as readonly string[]).includes(name)) return { profile: name as QualityProfile };
  return { profile: 'medium', note: `qualityProfile ${JSON.stringify(requested)} is not one of ${QUALITY_PROFILES.join(', ')}: using medium` };
}

export function streamFormat(profile: QualityProfile, camera: CameraFormat): StreamFormat {
  if (!(camera.width > 0 && camera.height > 0 && camera.fps > 0)) throw new Error(`camera format must be positive, got ${camera.width}x${camera.height} @ ${camera.fps}`);
  const spec = PROFILES[profile];
  const scale = spec.box ? Math.min(1, spec.box.width / camera.width, spec.box.height / camera.height) : 1;
  const width = even(camera.width * scale);
  const height = even(camera.height * scale);
  const fps = Math.min(spec.fps ?? camera.fps, camera.fps);
  return {
    profile,
    width,
    height,
    fps,
    bitrateKbps: spec.bitrateKbps,
    maxrateKbps: spec.bitrateKbps,
    bufsizeKbits: spec.bitrateKbps * 2,
    keyframeInterval: Math.max(1, Math.round(fps)),
  };
}

/** Size of the JPEG relay's pictures: the profile's box, at the relay's own (low) frame rate. */
export function jpegFormat(profile: QualityProfile, camera: CameraFormat, fps: number): { width: number; height: number; fps: number; quality: number } {
  const { width, height } = streamFormat(profile, camera);
  // mjpeg -q:v: 2 (best) … 31; the smaller pictures can afford better quality for the same bytes.
  const quality = profile === 'low' ? 5 : profile === 'medium' ? 6 : 7;
  return { width, height, fps: Math.min(fps, camera.fps), quality };
}

function even(value: number): number {
  return Math.max(2, 2 * Math.floor(value / 2));
}
