import { describe, expect, it } from 'vitest';
import { PublishHealth, uploadKind, type UploadResult } from './publish-health.ts';
import { fileUrl } from './upload-relay.ts';

const put = (name: string, status: number | undefined, atMs = 1000, extra: Partial<UploadResult> = {}): UploadResult => ({
  kind: uploadKind(name), method: 'PUT', name, atMs, ...(status !== undefined ? { status } : { error: 'ECONNREFUSED' }), ...extra,
});

function hls(): PublishHealth {
  return new PublishHealth({ mode: 'hls', startedAtMs: 0, startTimeoutMs: 20_000, unreachableAfterMs: 15_000 });
}

describe('PublishHealth', () => {
  it('calls an HLS stream active once a playlist is accepted after a segment, once', () => {
    const health = hls();
    expect(health.record(put('index.m3u8', 201))).toBeUndefined(); // a playlist with nothing stored yet is not playable
    expect(health.record(put('index0.ts', 201))).toBeUndefined();
    expect(health.record(put('index.m3u8', 201))).toEqual({ type: 'active' });
    expect(health.record(put('index1.ts', 201))).toBeUndefined();
    expect(health.record(put('index.m3u8', 200))).toBeUndefined();
    expect(health.isActive).toBe(true);
  });

  it('calls a JPEG stream active on its first accepted frame', () => {
    const health = new PublishHealth({ mode: 'jpeg', startedAtMs: 0, startTimeoutMs: 1000, unreachableAfterMs: 1000 });
    expect(health.record({ kind: 'frame', method: 'POST', name: 'frame', status: 200, atMs: 5 })).toEqual({ type: 'active' });
  });

  it('fails at once on refusals, naming the cause', () => {
    expect(hls().record(put('index0.ts', 401, 1, { error: 'invalid publish token' }))).toEqual({
      type: 'failed', errorCode: 'PUBLISH_REFUSED', errorMessage: 'the live gateway refused the publish token (PUT index0.ts answered 401: invalid publish token)',
    });
    expect(hls().record(put('index0.ts', 403))).toMatchObject({ errorCode: 'PUBLISH_REFUSED' });
    expect(hls().record(put('index0.ts', 404))).toMatchObject({ errorCode: 'PUBLISH_GONE' });
    expect(hls().record(put('index0.ts', 413))).toMatchObject({ errorCode: 'PUBLISH_TOO_LARGE' });
    expect(hls().record(put('index.m3u8', 400))).toMatchObject({ errorCode: 'PUBLISH_REJECTED' });
  });

  // A keep-alive expiry left the box showing PUBLISH_GONE: the 410 for a session the gateway ended is a normal end.
  it('calls a 410, or a 404 once uploads were accepted, the end of the session rather than a failure', () => {
    expect(hls().record(put('index0.ts', 410, 1, { error: 'live session is over' }))).toEqual({
      type: 'ended', reason: 'the live gateway ended the session (PUT index0.ts answered 410: live session is over)',
    });
    const accepted = hls();
    accepted.record(put('index0.ts', 201));
    expect(accepted.record(put('index1.ts', 404))).toMatchObject({ type: 'ended' });
    expect(accepted.record(put('index2.ts', 410))).toBeUndefined();
  });

  it('reports one verdict only', () => {
    const health = hls();
    expect(health.record(put('index0.ts', 401))).toBeDefined();
    expect(health.record(put('index1.ts', 401))).toBeUndefined();
    expect(health.check(60_000)).toBeUndefined();
  });

  it('ignores failed DELETEs of old segments', () => {
    const health = hls();
    expect(health.record({ kind: 'segment', method: 'DELETE', name: 'index0.ts', status: 404, atMs: 1 })).toBeUndefined();
    expect(health.uploadsFailed).toBe(0);
  });

  it('tolerates network errors and 5xx until the start time-out', () => {
    const health = hls();
    expect(health.record(put('index0.ts', undefined, 1000))).toBeUndefined();
    expect(health.record(put('index0.ts', 503, 2000))).toBeUndefined();
    expect(health.check(19_999)).toBeUndefined();
    expect(health.check(20_000)).toEqual({
      type: 'failed', errorCode: 'STREAM_START_TIMEOUT', errorMessage: 'no playable playlist was accepted within 20 s; last upload error: PUT index0.ts answered 503',
    });
  });

  it('once active, fails only after failures alone for the unreachable window', () => {
    const health = hls();
    health.record(put('index0.ts', 201, 1000));
    health.record(put('index.m3u8', 201, 1000));
    expect(health.check(50_000)).toBeUndefined(); // quiet (the camera may be reconnecting) is not a failure
    health.record(put('index1.ts', undefined, 50_000));
    expect(health.check(15_999)).toBeUndefined();
    expect(health.check(60_000)).toMatchObject({ errorCode: 'PUBLISH_UNREACHABLE' });
  });
});

describe('fileUrl', () => {
  it('puts the file below the base, keeping its query', () => {
    expect(fileUrl('https://c.example/publish/s1', 'index0.ts')).toBe('https://c.example/publish/s1/index0.ts');
    expect(fileUrl('https://c.example/publish/s1/?sig=a', 'frame')).toBe('https://c.example/publish/s1/frame?sig=a');
  });
});

// The agent used to append /frame to the gateway's frame URL, posting to …/frame/frame.
describe('frameUrl', () => {
  it('posts to the frame URL as given, and appends /frame to a session URL', async () => {
    const { frameUrl } = await import('./jpeg-publisher.ts');
    expect(frameUrl('https://c.example/api/entrance-live/publish/s1/frame')).toBe('https://c.example/api/entrance-live/publish/s1/frame');
    expect(frameUrl('https://c.example/api/entrance-live/publish/s1/')).toBe('https://c.example/api/entrance-live/publish/s1/frame');
  });
});
