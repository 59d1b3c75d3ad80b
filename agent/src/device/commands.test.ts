import { describe, expect, it } from 'vitest';
import { CommandBook, parseStartStream, type IncomingCommand } from './commands.ts';

const startPayload = { relayProtocol: 'hls', publisherUrl: 'https://cloud.example/live/publish/s1/', publishToken: 'pt', qualityProfile: 'low', recordingMode: 'none', clipHandoffEnabled: false };
const start = (id: string, sessionId = 's1', payload: Record<string, unknown> = startPayload): IncomingCommand => ({ id, sessionId, commandType: 'START_STREAM', payload: { sessionId, ...payload } });
const stop = (id: string, sessionId = 's1'): IncomingCommand => ({ id, sessionId, commandType: 'STOP_STREAM', payload: { sessionId, reason: 'stopped' } });

describe('CommandBook', () => {
  it('starts a stream and acknowledges it with the relay protocol', () => {
    const decision = new CommandBook().decide(start('c1'), undefined);
    expect(decision.action).toBe('start');
    expect(decision.ack).toEqual({ commandId: 'c1', status: 'accepted', payload: { sessionId: 's1', relayProtocol: 'hls', qualityProfile: 'low' } });
    if (decision.action === 'start') expect(decision.start).toMatchObject({ sessionId: 's1', publisherUrl: 'https://cloud.example/live/publish/s1', publishToken: 'pt' });
  });

  it('answers a redelivered command the same way without acting again', () => {
    const book = new CommandBook();
    const first = book.decide(start('c1'), undefined);
    const again = book.decide(start('c1'), { sessionId: 's1', relayProtocol: 'hls' });
    expect(again).toEqual({ action: 'repeat', ack: first.ack });
    // Even when the stream has failed meanwhile, a redelivery does not start a second publisher.
    expect(book.decide(start('c1'), undefined).action).toBe('repeat');
  });

  it('keeps the running stream when another START names the same session', () => {
    const decision = new CommandBook().decide(start('c2'), { sessionId: 's1', relayProtocol: 'hls' });
    expect(decision.action).toBe('none');
    expect(decision.ack).toMatchObject({ status: 'accepted', payload: { sessionId: 's1', note: 'already streaming this session' } });
  });

  it('replaces the stream of another session', () => {
    const decision = new CommandBook().decide(start('c3', 's2'), { sessionId: 's1', relayProtocol: 'hls' });
    expect(decision).toMatchObject({ action: 'start', replaces: 's1', ack: { status: 'accepted' } });
  });

  it('stops the current session and ignores a STOP for an unknown one', () => {
    const book = new CommandBook();
    expect(book.decide(stop('c4'), { sessionId: 's1', relayProtocol: 'hls' })).toEqual({
      action: 'stop', sessionId: 's1', ack: { commandId: 'c4', status: 'accepted', payload: { sessionId: 's1', relayProtocol: 'hls' } },
    });
    expect(book.decide(stop('c5', 's9'), undefined)).toEqual({ action: 'none', ack: { commandId: 'c5', status: 'ignored', payload: { sessionId: 's9', reason: 'not streaming session s9' } } });
    expect(book.decide(stop('c6', 's9'), { sessionId: 's1', relayProtocol: 'hls' }).ack.payload.reason).toBe('not streaming session s9 (streaming s1)');
  });

  it('ignores unknown commands and invalid starts with a reason naming the field', () => {
    const book = new CommandBook();
    expect(book.decide({ id: 7, sessionId: 's1', commandType: 'REBOOT' }, undefined).ack).toEqual({ commandId: '7', status: 'ignored', payload: { sessionId: 's1', reason: 'unknown commandType "REBOOT"' } });
    expect(book.decide(start('c8', 's1', { ...startPayload, publisherUrl: 'ftp://x' }), undefined).ack.payload.reason).toBe('invalid START_STREAM: payload.publisherUrl must be an http(s) URL');
  });

  it('forgets the oldest ids beyond its capacity', () => {
    const book = new CommandBook(2);
    book.decide(stop('a'), undefined);
    book.decide(stop('b'), undefined);
    book.decide(stop('c'), undefined);
    expect(book.size).toBe(2);
    expect(book.decide(stop('a'), undefined).action).toBe('none'); // decided afresh
    expect(book.decide(stop('c'), undefined).action).toBe('repeat');
  });
});

describe('parseStartStream', () => {
  it('accepts a publisher URL that is the folder or the playlist itself', () => {
    const folder = parseStartStream(start('c', 's', { ...startPayload, publisherUrl: 'https://cloud.example/api/entrance-live/publish/s/' }));
    expect(folder.ok && [folder.value.publisherUrl, folder.value.playlistName]).toEqual(['https://cloud.example/api/entrance-live/publish/s', 'index.m3u8']);
    const playlist = parseStartStream(start('c', 's', { ...startPayload, publisherUrl: 'https://cloud.example:8443/api/entrance-live/publish/s/live.m3u8?x=1' }));
    expect(playlist.ok && [playlist.value.publisherUrl, playlist.value.playlistName]).toEqual(['https://cloud.example:8443/api/entrance-live/publish/s?x=1', 'live.m3u8']);
  });

  it('accepts the JPEG push relay and defaults the relay to hls', () => {
    const jpeg = parseStartStream(start('c', 's', { ...startPayload, relayProtocol: 'http-jpeg-push' }));
    expect(jpeg.ok && jpeg.value.relayProtocol).toBe('http-jpeg-push');
    const { relayProtocol: _r, ...withoutRelay } = startPayload;
    const hls = parseStartStream(start('c', 's', withoutRelay));
    expect(hls.ok && hls.value.relayProtocol).toBe('hls');
  });

  it('names the bad field', () => {
    const bad = (payload: Record<string, unknown>) => {
      const result = parseStartStream(start('c', 's', { ...startPayload, ...payload }));
      return result.ok ? 'ok' : result.error;
    };
    expect(bad({ relayProtocol: 'webrtc' })).toBe('payload.relayProtocol must be one of "hls", "http-jpeg-push", got "webrtc"');
    expect(bad({ publishToken: '' })).toBe('payload.publishToken must be a non-empty string');
    expect(bad({ publishToken: 'a\r\nX-Evil: 1' })).toBe('payload.publishToken must not contain line breaks');
    expect(bad({ clipHandoffEnabled: 'yes' })).toBe('payload.clipHandoffEnabled must be a boolean');
    expect(parseStartStream({ id: 'c', commandType: 'START_STREAM', payload: startPayload })).toEqual({ ok: false, error: 'sessionId is required' });
  });

  it('uses medium for an unknown quality profile and says so', () => {
    const result = parseStartStream(start('c', 's', { ...startPayload, qualityProfile: '4k' }));
    expect(result.ok && result.value).toMatchObject({ qualityProfile: 'medium', profileNote: 'qualityProfile "4k" is not one of low, medium, high: using medium' });
  });
});
