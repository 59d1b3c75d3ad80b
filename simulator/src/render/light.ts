import { smoothNoise, type Prng } from '../random/prng.ts';
import type { LightSettings } from '../scenario/scenario.ts';

/**
 * Light over time: a base level and colour, a slow drift (haze), and clouds that dim the scene within a
 * second and weaken the shadows while they cover the sun.
 */

export interface LightSample {
  /** Per-channel gain applied to the scene (R, G, B). */
  gain: [number, number, number];
  /** Share of direct sunlight left (1 clear, lower under a cloud): scales bee shadows. */
  sun: number;
}

interface Cloud {
  start: number;
  end: number;
  depth: number;
}

const CLOUD_FADE_SECONDS = 0.8;

export class LightModel {
  private readonly clouds: Cloud[] = [];
  private readonly driftSeed: number;

  constructor(
    private readonly settings: LightSettings,
    durationSeconds: number,
    rng: Prng,
  ) {
    this.driftSeed = rng.nextUint32();
    const count = Math.round((settings.cloudsPerMinute * durationSeconds) / 60);
    for (let i = 0; i < count; i++) {
      const start = rng.range(-3, durationSeconds);
      this.clouds.push({ start, end: start + rng.range(2, 9), depth: rng.range(0.22, 0.45) });
    }
  }

  at(t: number): LightSample {
    const { level, warmth, drift } = this.settings;
    let shade = 0;
    for (const cloud of this.clouds) {
      const fadeIn = Math.min(1, Math.max(0, (t - cloud.start) / CLOUD_FADE_SECONDS));
      const fadeOut = Math.min(1, Math.max(0, (cloud.end - t) / CLOUD_FADE_SECONDS));
      shade = Math.max(shade, cloud.depth * Math.min(fadeIn, fadeOut));
    }
    const brightness = level * (1 + drift * smoothNoise(this.driftSeed, t / 5)) * (1 - shade);
    // Warm light lifts red and cuts blue; cold light the reverse.
    const gain: [number, number, number] = [
      brightness * (1 + 0.22 * warmth),
      brightness * (1 + 0.03 * warmth),
      brightness * (1 - 0.3 * warmth),
    ];
    return { gain, sun: 1 - shade * 1.6 };
  }
}
