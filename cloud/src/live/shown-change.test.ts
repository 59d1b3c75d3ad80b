import { describe, expect, it } from 'vitest';
import { ShownChanges } from './shown-change.ts';
import type { SessionRecord } from './sessions-repository.ts';

const session = (changes: Partial<SessionRecord> = {}) =>
  ({
    id: 'a0000000-0000-4000-8000-000000000000', status: 'ACTIVE', relayProtocol: 'hls', firstPlaylistAt: null, lastErrorCode: null, lastErrorMessage: null,
    handoffStreamId: null, clipHandoffEnabled: false, qualityProfile: 'medium', recordingMode: 'none', keepaliveDeadline: new Date(1000), lastKeepaliveAt: null,
    ...changes,
  }) as SessionRecord;

describe('ShownChanges', () => {
  // EXPIRED reached a subscriber twice, and every keep-alive pushed the same STARTING/ACTIVE session again.
  it('calls a read news only when the state or a shown field changed, per session', () => {
    const changes = new ShownChanges();
    expect(changes.isNews(session())).toBe(true);
    expect(changes.isNews(session({ keepaliveDeadline: new Date(99_000), lastKeepaliveAt: new Date(5000) }))).toBe(false);
    expect(changes.isNews(session({ firstPlaylistAt: new Date(2000) }))).toBe(true);
    expect(changes.isNews(session({ firstPlaylistAt: new Date(2000), status: 'EXPIRED' }))).toBe(true);
    expect(changes.isNews(session({ firstPlaylistAt: new Date(2000), status: 'EXPIRED' }))).toBe(false);
    expect(changes.isNews(session({ id: 'b0000000-0000-4000-8000-000000000000' }))).toBe(true);
  });
});
