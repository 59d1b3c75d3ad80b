import { describe, expect, it } from 'vitest';
import { MediaSigner } from './signed-paths.ts';

const signer = new MediaSigner(new TextEncoder().encode('a-deployment-secret-of-enough-length'));
const inAnHour = new Date(Date.now() + 3600_000);

function split(url: string) {
  const [, , grant, ...rest] = url.split('/');
  return { grant: grant!, rest: rest.join('/') };
}

describe('MediaSigner', () => {
  it('grants the playback files under the signed scope', () => {
    const { grant } = split(signer.url('videos', '42', 'index.m3u8', inAnHour));
    expect(signer.verify(grant, 'videos/42/index.m3u8')).toMatchObject({ ok: true, key: 'videos/42/index.m3u8', kind: 'videos', id: '42' });
    expect(signer.verify(grant, 'videos/42/segment_00003.ts')).toMatchObject({ ok: true });
    expect(signer.verify(grant, 'videos/42/poster.jpg')).toMatchObject({ ok: true });
  });

  // The playlist link of a clip served videos/{id}/original.* (the raw upload) as well.
  it('serves a clip\'s playback files only, not its original upload or detections', () => {
    const { grant } = split(signer.url('videos', '42', 'index.m3u8', inAnHour));
    for (const file of ['original.mp4', 'original.ts', 'detections.json']) {
      expect(signer.verify(grant, `videos/42/${file}`)).toEqual({ ok: false, status: 403, error: 'media link is not valid' });
    }
  });

  it('refuses another scope, a tampered signature, an expired link and path tricks', () => {
    const { grant } = split(signer.url('videos', '42', 'index.m3u8', inAnHour));
    expect(signer.verify(grant, 'videos/43/index.m3u8')).toMatchObject({ ok: false, status: 403 });
    expect(signer.verify(grant, 'live/42/index.m3u8')).toMatchObject({ ok: false, status: 403 });
    expect(signer.verify(grant.slice(0, -2) + 'xx', 'videos/42/index.m3u8')).toMatchObject({ ok: false, status: 403 });
    expect(signer.verify(grant, 'videos/42/../43/index.m3u8')).toMatchObject({ ok: false, status: 404 });
    expect(signer.verify(grant, 'secrets/42/x')).toMatchObject({ ok: false, status: 404 });
    const old = split(signer.url('videos', '42', 'a.ts', new Date(Date.now() - 1000)));
    expect(signer.verify(old.grant, old.rest)).toEqual({ ok: false, status: 403, error: 'media link has expired' });
  });

  it('signs differently under another secret', () => {
    const other = new MediaSigner(new TextEncoder().encode('another-deployment-secret-of-length'));
    const { grant, rest } = split(signer.url('heatmaps', 'box-1', '2026-05-01.png', inAnHour));
    expect(other.verify(grant, rest)).toMatchObject({ ok: false, status: 403 });
  });
});
