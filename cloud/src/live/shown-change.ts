import type { SessionRecord } from './sessions-repository.ts';

/**
 * What a subscriber is shown of a session, less what moves on every read (the keep-alive deadline, the signed URL's
 * expiry, last-seen times): two notifications with the same key carry no news. Pure.
 */
export function shownKey(session: SessionRecord): string {
  return JSON.stringify([
    session.status,
    session.relayProtocol,
    // The playback URL appears with the first playable HLS playlist.
    session.firstPlaylistAt !== null,
    session.lastErrorCode,
    session.lastErrorMessage,
    session.handoffStreamId,
    session.clipHandoffEnabled,
    session.qualityProfile,
    session.recordingMode,
    session.deviceNotice,
  ]);
}

/** Remembers what each subscriber last saw per session, and says whether a fresh read is news to it. */
export class ShownChanges {
  private readonly shown = new Map<string, string>();

  isNews(session: SessionRecord): boolean {
    const key = shownKey(session);
    if (this.shown.get(session.id) === key) return false;
    this.shown.set(session.id, key);
    return true;
  }
}
