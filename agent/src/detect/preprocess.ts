import { channelsOf, type Frame } from '../capture/frame.ts';

/** How a frame maps into the model input: input = frame · scale + pad. */
export interface InputMapping {
  scaleX: number;
  scaleY: number;
  padX: number;
  padY: number;
}

/** YOLO's letterbox: keep the aspect ratio, centre, pad the rest. */
export function letterbox(frameWidth: number, frameHeight: number, inputWidth: number, inputHeight: number): InputMapping {
  const scale = Math.min(inputWidth / frameWidth, inputHeight / frameHeight);
  return { scaleX: scale, scaleY: scale, padX: (inputWidth - frameWidth * scale) / 2, padY: (inputHeight - frameHeight * scale) / 2 };
}

/** Plain resize to the input size (the project's own model is trained on whole resized frames). */
export function stretch(frameWidth: number, frameHeight: number, inputWidth: number, inputHeight: number): InputMapping {
  return { scaleX: inputWidth / frameWidth, scaleY: inputHeight / frameHeight, padX: 0, padY: 0 };
}

/** Maps a centre-based box from model-input pixels back to frame pixels. */
export function toFramePixels(box: { x: number; y: number; w: number; h: number }, mapping: InputMapping) {
  return {
    x: (box.x - mapping.padX) / mapping.scaleX,
    y: (box.y - mapping.padY) / mapping.scaleY,
    w: box.w / mapping.scaleX,
    h: box.h / mapping.scaleY,
  };
}

/**
 * Fills a `[1,3,H,W]` float32 RGB tensor in 0..1 (planar) from a gray or RGB frame, bilinear sampling, padding
 * with YOLO's gray (114/255). Reuses `out` when given.
 */
export function toInputTensor(frame: Frame, inputWidth: number, inputHeight: number, mapping: InputMapping, out?: Float32Array): Float32Array {
  const plane = inputWidth * inputHeight;
  const tensor = out ?? new Float32Array(plane * 3);
  tensor.fill(114 / 255);
  const channels = channelsOf(frame.format);
  const { width, height, data } = frame;
  const x0 = Math.max(0, Math.ceil(mapping.padX - 1e-9));
  const x1 = Math.min(inputWidth, Math.floor(mapping.padX + width * mapping.scaleX + 1e-9));
  const y0 = Math.max(0, Math.ceil(mapping.padY - 1e-9));
  const y1 = Math.min(inputHeight, Math.floor(mapping.padY + height * mapping.scaleY + 1e-9));
  const inv = 1 / 255;
  for (let y = y0; y < y1; y++) {
    const sy = Math.min(height - 1, Math.max(0, (y + 0.5 - mapping.padY) / mapping.scaleY - 0.5));
    const ya = Math.floor(sy);
    const yb = Math.min(height - 1, ya + 1);
    const fy = sy - ya;
    for (let x = x0; x < x1; x++) {
      const sx = Math.min(width - 1, Math.max(0, (x + 0.5 - mapping.padX) / mapping.scaleX - 0.5));
      const xa = Math.floor(sx);
      const xb = Math.min(width - 1, xa + 1);
      const fx = sx - xa;
      const w00 = (1 - fx) * (1 - fy);
      const w10 = fx * (1 - fy);
      const w01 = (1 - fx) * fy;
      const w11 = fx * fy;
      const p00 = (ya * width + xa) * channels;
      const p10 = (ya * width + xb) * channels;
      const p01 = (yb * width + xa) * channels;
      const p11 = (yb * width + xb) * channels;
      const o = y * inputWidth + x;
      for (let c = 0; c < 3; c++) {
        const k = channels === 1 ? 0 : c;
        tensor[c * plane + o] = (data[p00 + k]! * w00 + data[p10 + k]! * w10 + data[p01 + k]! * w01 + data[p11 + k]! * w11) * inv;
      }
    }
  }
  return tensor;
}
