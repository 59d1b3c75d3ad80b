import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helper.ts';

let t: TestApp;
const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 256));

beforeAll(async () => {
  t = await buildTestApp();
  await t.app.ctx.blobs.put('videos/v1/segment_00000.ts', content);
  await t.app.ctx.blobs.put('videos/v1/index.m3u8', Buffer.from('#EXTM3U\n'));
  await t.app.ctx.blobs.put('videos/v1/original.mp4', content);
  await t.app.ctx.blobs.put('videos/v1/detections.json', Buffer.from('{}'));
});
afterAll(() => t.close());

const url = (file: string, expiresAt = new Date(Date.now() + 60_000)) => t.app.ctx.media.url('videos', 'v1', file, expiresAt);

describe('GET /media', () => {
  it('serves a segment whole, with a long cache lifetime', async () => {
    const response = await t.app.inject({ method: 'GET', url: url('segment_00000.ts') });
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.equals(content)).toBe(true);
    expect(response.headers).toMatchObject({ 'content-type': 'video/mp2t', 'accept-ranges': 'bytes', 'content-length': '1000', 'cache-control': 'private, max-age=31536000, immutable' });
  });

  it('serves byte ranges, suffix ranges and refuses unsatisfiable ones', async () => {
    const part = await t.app.inject({ method: 'GET', url: url('segment_00000.ts'), headers: { range: 'bytes=10-19' } });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe('bytes 10-19/1000');
    expect(part.rawPayload.equals(content.subarray(10, 20))).toBe(true);
    const tail = await t.app.inject({ method: 'GET', url: url('segment_00000.ts'), headers: { range: 'bytes=-100' } });
    expect(tail.headers['content-range']).toBe('bytes 900-999/1000');
    const past = await t.app.inject({ method: 'GET', url: url('segment_00000.ts'), headers: { range: 'bytes=5000-' } });
    expect(past.statusCode).toBe(416);
    expect(past.headers['content-range']).toBe('bytes */1000');
  });

  it('serves playlists uncached', async () => {
    const response = await t.app.inject({ method: 'GET', url: url('index.m3u8') });
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['content-type']).toMatch(/mpegurl/);
  });

  it('refuses expired, forged and missing media with JSON errors', async () => {
    expect((await t.app.inject({ method: 'GET', url: url('index.m3u8', new Date(Date.now() - 1000)) })).statusCode).toBe(403);
    const forged = url('index.m3u8').replace('/videos/v1/', '/videos/v2/');
    expect((await t.app.inject({ method: 'GET', url: forged })).json()).toEqual({ error: 'media link is not valid' });
    expect((await t.app.inject({ method: 'GET', url: url('segment_99999.ts') })).statusCode).toBe(404);
  });

  // A NUL in the path reached the store, whose InvalidBlobKeyError came out as a 500.
  it('answers a path no store can hold as missing media', async () => {
    for (const [kind, id, file] of [['videos', 'v1', 'segment_00000.ts'], ['live', 's1', 'index.m3u8'], ['heatmaps', 'h1', 'day.png']] as const) {
      const link = t.app.ctx.media.url(kind, id, file, new Date(Date.now() + 60_000));
      for (const suffix of ['%00', '%01', '%7F']) {
        const response = await t.app.inject({ method: 'GET', url: `${link}${suffix}` });
        expect({ status: response.statusCode, body: response.json() }).toEqual({ status: 404, body: { error: 'no such media' } });
      }
    }
  });

  // The playlist's grant covered all of videos/{id}/, so its link also served the raw upload.
  it("serves a clip's original upload and detections to no playback link", async () => {
    const playlist = url('index.m3u8');
    for (const file of ['original.mp4', 'detections.json']) {
      const response = await t.app.inject({ method: 'GET', url: playlist.replace(/index\.m3u8$/, file) });
      expect({ status: response.statusCode, body: response.json() }).toEqual({ status: 403, body: { error: 'media link is not valid' } });
    }
  });
});
