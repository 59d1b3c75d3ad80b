import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/config.ts';
import { createPacing, inferenceThreads } from './factory.ts';

const configWith = (detector: object, fps = 30) =>
  resolveConfig({ file: { hiveId: 'h', boxId: 'b', source: { url: 'rtsp://camera/stream', fps }, cloud: { url: 'http://127.0.0.1:8600', token: 't' }, detector } as never, env: {} });

describe('createPacing', () => {
  it('paces the shipped pair on a live camera, from the configured spacing up to wholeEveryWhenBehind', () => {
    const pacing = createPacing(configWith({}, 25), true);
    expect(pacing?.level).toBe(1);
    const wider = createPacing(configWith({ slot: { wholeEvery: 2, wholeEveryWhenBehind: 4 } }), true);
    expect(wider?.level).toBe(2);
  });

  it('leaves a file alone: it waits for the agent, and its accuracy must not depend on the CPU', () => {
    expect(createPacing(configWith({}), false)).toBeUndefined();
  });

  it('does nothing without a whole-frame model to space out, or without room above the configured spacing', () => {
    expect(createPacing(configWith({ slot: false }), true)).toBeUndefined();
    expect(createPacing(configWith({ kind: 'motion' }), true)).toBeUndefined();
    expect(createPacing(configWith({ slot: { wholeEvery: 2, wholeEveryWhenBehind: 2 } }), true)).toBeUndefined();
    expect(createPacing(configWith({ slot: { wholeEveryWhenBehind: 1 } }), true)).toBeUndefined();
  });
});

describe('inferenceThreads', () => {
  it('leaves a core to ffmpeg where there is one to leave', () => {
    expect([1, 2, 4, 8].map((cores) => inferenceThreads(cores))).toEqual([1, 1, 3, 7]);
  });
});
