import { mix32, streamFor } from '../random/prng.ts';
import { beeStateAt, type BeeState } from '../scene/bee.ts';
import type { Population } from '../scene/population.ts';
import { drawBackground } from './board.ts';
import { LightModel } from './light.ts';
import { blitSprite, drawShadow, type BgrFrame } from './raster.ts';
import { Sensor } from './sensor.ts';
import { SpriteBank, type WingState } from './sprites.ts';

/** Share of the frame interval the shutter is open; sets the length of motion blur. */
const SHUTTER = 0.6;
/** Light is applied to the background in steps this fine (relative), so it is redone only when it changes. */
const GAIN_STEP = 1 / 100;

/**
 * Draws frames of a population: the lit background, bee shadows, bees (rotated sprites with motion blur,
 * hidden behind the wall when they walk into the slot, darker inside it), then sensor noise.
 */
export class SceneRenderer {
  readonly width: number;
  readonly height: number;
  readonly frameBytes: number;
  private readonly background: BgrFrame;
  private readonly litBackground: Uint8ClampedArray;
  private litGainKey = '';
  private readonly scene: BgrFrame;
  private readonly sprites = new SpriteBank();
  private readonly light: LightModel;
  private readonly sensor: Sensor;

  constructor(private readonly population: Population) {
    const { scenario, layout } = population;
    this.width = layout.width;
    this.height = layout.height;
    this.frameBytes = layout.width * layout.height * 3;
    this.background = drawBackground(layout, streamFor(scenario.seed, 'background'));
    this.litBackground = new Uint8ClampedArray(this.frameBytes);
    this.scene = { width: layout.width, height: layout.height, data: new Uint8ClampedArray(this.frameBytes) };
    this.light = new LightModel(scenario.light, scenario.durationSeconds, streamFor(scenario.seed, 'light'));
    this.sensor = new Sensor(this.frameBytes, scenario.noiseSigma, streamFor(scenario.seed, 'sensor'));
  }

  /**
   * Renders one frame into `out` (BGR, width × height × 3 bytes, 4-byte aligned). Frames must be rendered
   * in increasing order for the sensor noise to be reproducible.
   */
  render(frame: number, states: readonly BeeState[], out: Uint8Array | Uint8ClampedArray): void {
    if (out.length !== this.frameBytes) throw new Error(`output buffer must hold ${this.frameBytes} bytes, got ${out.length}`);
    const { scenario, layout } = this.population;
    const t = frame / scenario.camera.fps;
    const light = this.light.at(t);
    const gain = light.gain.map((g) => Math.round(g / GAIN_STEP) * GAIN_STEP) as [number, number, number];
    this.relight(gain);
    this.scene.data.set(this.litBackground);
    const low = this.sensor.headroom;
    const high = 255 - low;

    const sunAngle = (scenario.light.sunAngleDeg * Math.PI) / 180;
    const shadowStrength = scenario.light.shadowStrength * Math.max(0, light.sun);
    for (const bee of states) {
      const lift = (0.08 + 1.8 * bee.altitude) * layout.beeLength;
      drawShadow(this.scene, {
        x: bee.x + Math.cos(sunAngle) * lift,
        y: bee.y + Math.sin(sunAngle) * lift,
        heading: bee.heading,
        halfLength: bee.length * 0.46,
        halfWidth: bee.length * (bee.mode === 'fly' || bee.mode === 'fan' ? 0.3 : 0.17),
        softness: 0.35 + 0.9 * bee.altitude,
        strength: shadowStrength * (1 - 0.6 * Math.min(1, bee.altitude)),
        clipTop: layout.slotTop,
        low,
      });
    }

    for (const bee of states) {
      const buzzing = bee.mode === 'fly' || bee.mode === 'fan';
      const wings: WingState = buzzing ? ((mix32(bee.plan.seed ^ frame) & 1) === 0 ? 'buzzA' : 'buzzB') : 'folded';
      const sprite = this.sprites.spriteFor(bee.length, wings, bee.plan.palette);
      let blurX = 0;
      let blurY = 0;
      if (bee.mode === 'fly') {
        const half = 0.5 / scenario.camera.fps;
        const before = beeStateAt(layout, bee.plan, t - half) ?? bee;
        const after = beeStateAt(layout, bee.plan, t + half) ?? bee;
        blurX = (after.x - before.x) * SHUTTER;
        blurY = (after.y - before.y) * SHUTTER;
      }
      blitSprite(this.scene, sprite, {
        x: bee.x,
        y: bee.y,
        heading: bee.heading,
        length: bee.length,
        clipTop: bee.occludedByWall ? layout.slotTop : 0,
        darkFrom: layout.slotTop,
        darkTo: bee.occludedByWall ? layout.slotBottom + 0.25 * layout.beeLength : layout.slotTop,
        darkest: 0.3,
        blurX,
        blurY,
        gain,
        low,
        high,
      });
    }
    this.sensor.expose(this.scene.data, out);
  }

  /** Applies the light to the background (with a soft shoulder near white), only when it changed. */
  private relight(gain: readonly [number, number, number]): void {
    const key = gain.join(',');
    if (key === this.litGainKey) return;
    this.litGainKey = key;
    const low = this.sensor.headroom;
    const high = 255 - low;
    const luts = gain.map((g) => {
      const lut = new Uint8ClampedArray(256);
      for (let v = 0; v < 256; v++) lut[v] = Math.min(high, Math.max(low, shoulder(v * g)));
      return lut;
    }) as [Uint8ClampedArray, Uint8ClampedArray, Uint8ClampedArray];
    applyLuts(this.background.data, this.litBackground, luts);
  }
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** The table's value for the byte of `word` at bit `shift`, put back at the same place. */
function lookUp(lut: Uint8ClampedArray, word: number, shift: number): number {
  return (lut[(word >>> shift) & 255] as number) << shift;
}

/**
 * Writes `target` = `source` through a lookup table per channel (bytes blue, green, red). A function of its own
 * because inside `relight`, which runs only when the light changes, V8 threw away the loop's optimised code after
 * nearly every call (`--trace-deopt`: "insufficient type feedback") and ran it unoptimised again.
 */
function applyLuts(source: Uint8ClampedArray, target: Uint8ClampedArray, luts: readonly Uint8ClampedArray[]): void {
  const [lutR, lutG, lutB] = luts;
  if (!lutR || !lutG || !lutB) throw new Error('one lookup table per channel');
  // Four pixels (three words) at a time: a word read and written whole costs a quarter of four bytes.
  const words = LITTLE_ENDIAN ? source.length >> 2 : 0;
  const whole = words - (words % 3);
  const sourceWords = new Int32Array(source.buffer, source.byteOffset, whole);
  const targetWords = new Int32Array(target.buffer, target.byteOffset, whole);
  for (let w = 0; w < whole; w += 3) {
    const a = sourceWords[w] as number;
    const b = sourceWords[w + 1] as number;
    const c = sourceWords[w + 2] as number;
    targetWords[w] = lookUp(lutB, a, 0) | lookUp(lutG, a, 8) | lookUp(lutR, a, 16) | lookUp(lutB, a, 24);
    targetWords[w + 1] = lookUp(lutG, b, 0) | lookUp(lutR, b, 8) | lookUp(lutB, b, 16) | lookUp(lutG, b, 24);
    targetWords[w + 2] = lookUp(lutR, c, 0) | lookUp(lutB, c, 8) | lookUp(lutG, c, 16) | lookUp(lutR, c, 24);
  }
  if (whole * 4 < source.length) applyLutsByByte(source, target, lutR, lutG, lutB, whole * 4);
}

/** The pixels from byte `from` on, one byte at a time (a frame whose size is no multiple of 12 bytes). */
function applyLutsByByte(source: Uint8ClampedArray, target: Uint8ClampedArray, lutR: Uint8ClampedArray, lutG: Uint8ClampedArray, lutB: Uint8ClampedArray, from: number): void {
  for (let i = from; i < source.length; i += 3) {
    target[i] = lutB[source[i] as number] as number;
    target[i + 1] = lutG[source[i + 1] as number] as number;
    target[i + 2] = lutR[source[i + 2] as number] as number;
  }
}

function shoulder(value: number): number {
  if (value <= 200) return value;
  return 200 + 55 * Math.tanh((value - 200) / 55);
}
