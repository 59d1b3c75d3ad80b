import { describe, expect, it } from 'vitest';
import { chooseRelay, declaredRelays, rankRelays } from './relay-choice.ts';

describe('declaredRelays', () => {
  it('reads status.relayProtocols or status.supportedRelays, as a list or a comma-separated string', () => {
    expect(declaredRelays({ relayProtocols: ['http-jpeg-push', 'hls'] })).toEqual(['http-jpeg-push', 'hls']);
    expect(declaredRelays({ supportedRelays: 'HLS, http-jpeg-push' })).toEqual(['hls', 'http-jpeg-push']);
    expect(declaredRelays({ relayProtocols: ['webrtc', 'http-jpeg-push', 'http-jpeg-push'] })).toEqual(['http-jpeg-push']);
  });

  it('is undefined when the device declares nothing, and empty when it declares only unknown relays', () => {
    expect(declaredRelays({ cpuTemp: 50 })).toBeUndefined();
    expect(declaredRelays(null)).toBeUndefined();
    expect(declaredRelays(['hls'])).toBeUndefined();
    expect(declaredRelays({ relayProtocols: ['webrtc'] })).toEqual([]);
  });
});

describe('chooseRelay', () => {
  it('offers the preferred relay to a device that declares nothing (or is unknown)', () => {
    expect(chooseRelay(undefined, 'hls')).toBe('hls');
    expect(chooseRelay({ diagnostics: {}, refusedRelays: [] }, 'hls')).toBe('hls');
    expect(chooseRelay({ diagnostics: {}, refusedRelays: [] }, 'http-jpeg-push')).toBe('http-jpeg-push');
  });

  it('follows what the device declares, preferring the deployment default among them', () => {
    expect(chooseRelay({ diagnostics: { relayProtocols: ['http-jpeg-push'] }, refusedRelays: [] }, 'hls')).toBe('http-jpeg-push');
    expect(chooseRelay({ diagnostics: { relayProtocols: ['http-jpeg-push', 'hls'] }, refusedRelays: [] }, 'hls')).toBe('hls');
  });

  it('leaves out relays the device refused, and falls back to the preferred one when nothing is left', () => {
    expect(chooseRelay({ diagnostics: {}, refusedRelays: ['hls'] }, 'hls')).toBe('http-jpeg-push');
    expect(rankRelays({ diagnostics: {}, refusedRelays: ['hls', 'http-jpeg-push'] }, 'hls')).toEqual([]);
    expect(chooseRelay({ diagnostics: {}, refusedRelays: ['hls', 'http-jpeg-push'] }, 'hls')).toBe('hls');
    expect(rankRelays({ diagnostics: { relayProtocols: ['hls'] }, refusedRelays: ['hls'] }, 'hls')).toEqual([]);
  });
});
