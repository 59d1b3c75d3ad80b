import { describe, expect, it } from 'vitest';
import { redactUrl, requestForLog } from './log-redaction.ts';

describe('request logs', () => {
  // Every request was logged with its URL, so signed media links, valid for an hour, sat in the logs.
  it('leave the grant of a signed media link out, and every other URL as it is', () => {
    expect(redactUrl('/media/1800000000.AbC-_9xyz/videos/12/segment_00001.ts')).toBe('/media/(grant)/videos/12/segment_00001.ts');
    expect(redactUrl('/iot/v1/metrics?x=1')).toBe('/iot/v1/metrics?x=1');
    expect(requestForLog({ method: 'GET', url: '/media/1.sig/heatmaps/1-b/2026-11-28.png', hostname: 'h', ip: '10.0.0.1' })).toEqual({
      method: 'GET',
      url: '/media/(grant)/heatmaps/1-b/2026-11-28.png',
      hostname: 'h',
      remoteAddress: '10.0.0.1',
      remotePort: undefined,
    });
  });
  // redactUrl matched only "^/media/": a grant in //media/…, /./media/… or percent-encoded was logged in clear.
  it('leave a grant out wherever it appears in the URL, encoded or not', () => {
    const grant = '1800000000.AbCdEfGhIjKlMnOpQrStUvWx';
    const cases: [string, string][] = [
      [`//media/${grant}/videos/1/segment_00000.ts`, '//media/(grant)/videos/1/segment_00000.ts'],
      [`/./media/${grant}/videos/1/index.m3u8`, '/./media/(grant)/videos/1/index.m3u8'],
      [`/x/../media/${grant}/live/s/index.m3u8?a=1`, '/x/../media/(grant)/live/s/index.m3u8?a=1'],
      [`/%6Dedia/${grant}/videos/1/index.m3u8`, '/%6Dedia/(grant)/videos/1/index.m3u8'],
      [`/media/1800000000%2EAbCdEfGhIjKlMnOpQrStUvWx/videos/1/index.m3u8`, '/media/(grant)/videos/1/index.m3u8'],
      [`/elsewhere?next=${encodeURIComponent(`/media/${grant}/videos/1/index.m3u8`)}`, '/elsewhere?next=(grant)'],
      [`/media/${grant}/videos/1/segment_00000.ts%00`, '/media/(grant)/videos/1/segment_00000.ts%00'],
    ];
    for (const [url, logged] of cases) expect(redactUrl(url)).toBe(logged);
    expect(redactUrl('/graphql?query=%7B%20boxes%20%7B%20id%20%7D%20%7D')).toBe('/graphql?query=%7B%20boxes%20%7B%20id%20%7D%20%7D');
    expect(redactUrl('/media/%E0%A4%A/x')).toBe('/media/(grant)/x');
  });
});
