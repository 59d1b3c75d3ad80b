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
});
