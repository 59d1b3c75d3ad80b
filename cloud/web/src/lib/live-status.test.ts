import { describe, expect, it } from 'vitest';
import { describeLiveSession, isSessionOver, LIVE_STATUSES, playlistIsPlayable } from './live-status.ts';

describe('live session view', () => {
  it('offers Start without a session', () => {
    const view = describeLiveSession(undefined);
    expect(view).toMatchObject({ canStart: true, canStop: false, running: false, wantsPlayer: false });
  });

  it('wants the player only when ACTIVE with a playback URL', () => {
    for (const status of LIVE_STATUSES) {
      const view = describeLiveSession({ status, playbackUrl: 'https://h/media/x/live/1/index.m3u8' });
      expect(view.wantsPlayer, status).toBe(status === 'ACTIVE');
    }
    expect(describeLiveSession({ status: 'ACTIVE', playbackUrl: null }).wantsPlayer).toBe(false);
  });

  it('keeps running sessions alive and lets over ones start again', () => {
    for (const status of LIVE_STATUSES) {
      const view = describeLiveSession({ status });
      expect(view.running, status).toBe(!isSessionOver(status));
      expect(view.canStart, status).toBe(isSessionOver(status));
    }
  });

  it('explains an offline camera and a failure with the server message', () => {
    const offline = describeLiveSession({ status: 'DEVICE_OFFLINE' });
    expect(offline.tone).toBe('warn');
    expect(offline.headline).toMatch(/offline/);
    expect(offline.canStop).toBe(true);
    const failed = describeLiveSession({ status: 'FAILED', lastErrorCode: 'CAMERA_BUSY', lastErrorMessage: 'camera is used by another process' });
    expect(failed.tone).toBe('error');
    expect(failed.detail).toBe('camera is used by another process (CAMERA_BUSY)');
    expect(describeLiveSession({ status: 'FAILED' }).detail).toMatch(/without details/);
  });

  it('shows an unknown status as the server named it and allows stopping it', () => {
    const view = describeLiveSession({ status: 'PAUSED' });
    expect(view.headline).toContain('PAUSED');
    expect(view.canStop).toBe(true);
  });

  it('recognises a playlist a player can start on', () => {
    expect(playlistIsPlayable('#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nseg0.ts\n')).toBe(true);
    expect(playlistIsPlayable('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nlow.m3u8\n')).toBe(true);
    expect(playlistIsPlayable('#EXTM3U\n#EXT-X-TARGETDURATION:1\n')).toBe(false);
    expect(playlistIsPlayable('{"error":"not found"}')).toBe(false);
  });

  // A stop the camera began read the same as the viewer pressing Stop.
  it('shows why a session the camera stopped by itself ended, and nothing more for the viewer\'s own stop', () => {
    const byCamera = describeLiveSession({ status: 'STOPPED', lastErrorCode: 'DEVICE_STOPPED', lastErrorMessage: 'the camera stopped streaming (agent shutting down)' });
    expect(byCamera).toMatchObject({ tone: 'warn', detail: 'the camera stopped streaming (agent shutting down) (DEVICE_STOPPED)', canStart: true });
    expect(describeLiveSession({ status: 'STOPPED' })).toMatchObject({ tone: 'info', headline: 'The live stream has stopped.' });
    expect(describeLiveSession({ status: 'STOPPED' }).detail).toBeUndefined();
  });

  // The camera's note that it streams medium instead of the "ultra" asked for was never shown.
  it('adds the camera\'s notice to the starting and live texts', () => {
    const notice = 'qualityProfile "ultra" is not one of low, medium, high: using medium';
    expect(describeLiveSession({ status: 'ACTIVE', notice }).detail).toBe(`The stream stays on while this page is open. The camera says: ${notice}.`);
    expect(describeLiveSession({ status: 'STARTING', notice }).detail).toBe(`Video appears here in a few seconds. The camera says: ${notice}.`);
    expect(describeLiveSession({ status: 'ACTIVE', notice: null }).detail).toBe('The stream stays on while this page is open.');
  });
});
