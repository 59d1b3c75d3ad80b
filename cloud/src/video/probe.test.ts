import { describe, expect, it } from 'vitest';
import { assessProbe, needsPacketCount } from './probe.ts';

const video = { codec_type: 'video', codec_name: 'h264', width: 320, height: 240 };

describe('assessProbe', () => {
  it('accepts a video and reports its size, duration and audio', () => {
    expect(assessProbe({ format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '6.000000' }, streams: [video, { codec_type: 'audio' }] })).toEqual({
      ok: true,
      info: { formatName: 'mov,mp4,m4a,3gp,3g2,mj2', durationSeconds: 6, width: 320, height: 240, videoCodec: 'h264', hasAudio: true },
    });
  });

  // A Pi camera's raw .h264 and Motion JPEG were refused: "it has no duration", "it is a still image (jpeg)".
  it('times a raw stream by its frames and rate, and takes many JPEGs back to back as Motion JPEG', () => {
    const raw = { format: { format_name: 'h264' }, streams: [{ ...video, r_frame_rate: '30/1' }] };
    expect(needsPacketCount(raw)).toBe(true);
    expect(assessProbe({ ...raw, streams: [{ ...raw.streams[0]!, nb_read_packets: '120' }] })).toMatchObject({ ok: true, info: { durationSeconds: 4, formatName: 'h264' } });
    const mjpeg = (packets: string) => ({ format: { format_name: 'jpeg_pipe' }, streams: [{ ...video, codec_name: 'mjpeg', r_frame_rate: '25/1', nb_read_packets: packets }] });
    expect(needsPacketCount({ format: { format_name: 'jpeg_pipe' }, streams: [video] })).toBe(true);
    expect(assessProbe(mjpeg('30'))).toMatchObject({ ok: true, info: { durationSeconds: 1.2, videoCodec: 'mjpeg' } });
    expect(assessProbe(mjpeg('1'))).toEqual({ ok: false, reason: 'file is not a video: it is a still image (jpeg)' });
    expect(needsPacketCount({ format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '6' }, streams: [video] })).toBe(false);
  });

  // A clip uploaded without startTime was filed at the upload's time though its file said when it was recorded, and
  // a phone clip held upright was listed as 1920x1080 while it played as 1080x1920.
  it("takes the recording's start from the file and the picture's size as it plays", () => {
    const verdict = assessProbe({
      format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '11.999999999999998', tags: { creation_time: '2024-06-15T14:00:00.000000Z' } },
      streams: [{ ...video, width: 1920, height: 1080, side_data_list: [{ rotation: -90 }] }],
    });
    expect(verdict).toMatchObject({ ok: true, info: { durationSeconds: 12, width: 1080, height: 1920, recordedAt: new Date('2024-06-15T14:00:00Z') } });
    const zeroDate = assessProbe({ format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '2', tags: { creation_time: '1970-01-01T00:00:00.000000Z' } }, streams: [{ ...video, tags: { rotate: '180' } }] });
    expect(zeroDate.ok && zeroDate.info.recordedAt).toBeUndefined();
    expect(zeroDate).toMatchObject({ info: { width: 320, height: 240 } });
  });

  it.each([
    [null, 'file is not a video: no video format was recognised in it'],
    [{ format: { format_name: 'png_pipe' }, streams: [video] }, 'file is not a video: it is a still image (png)'],
    [{ format: { format_name: 'image2', duration: '0.04' }, streams: [video] }, 'it is a still image (image2)'],
    [{ format: { format_name: 'tty', duration: '3' }, streams: [video] }, 'file is not a video: it is text'],
    [{ format: { format_name: 'mp3', duration: '3' }, streams: [{ codec_type: 'audio' }, { ...video, disposition: { attached_pic: 1 } }] }, 'no video stream'],
    [{ format: { format_name: 'matroska,webm', duration: 'N/A' }, streams: [video] }, 'no duration'],
    [{ format: { format_name: 'matroska,webm', duration: '2' }, streams: [{ codec_type: 'video' }] }, 'no picture size'],
  ])('refuses %j', (output, reason) => {
    const verdict = assessProbe(output);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(reason);
  });
});
