import { describe, expect, it } from 'vitest';
import { liveStreamLines } from './live-stream-lines.ts';

describe('liveStreamLines', () => {
  it('says which stream runs, since when, and how it fares', () => {
    const stream = { sessionId: 's-1', relayProtocol: 'hls', state: 'active', framesSent: 300, framesDropped: 2, uploadsFailed: 1, startedAt: Date.UTC(2026, 4, 1, 10) };
    expect(liveStreamLines(stream)).toEqual(['live view:     active (session s-1, hls) since 2026-05-01T10:00:00.000Z: 300 frames sent, 2 dropped, 1 uploads refused']);
  });

  it('says nothing without a stream', () => {
    expect(liveStreamLines(undefined)).toEqual([]);
    expect(liveStreamLines({ state: 'idle' })).toEqual([]);
  });
});
