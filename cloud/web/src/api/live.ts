/** On-demand live view of an entrance: start, keep alive, read, stop, and the status subscription. */
import { defineOperation } from './graphql.ts';

export interface LiveSession {
  id: string;
  boxId: string;
  status: string;
  /** Absolute signed HLS URL; the player needs no headers to fetch it. */
  playbackUrl: string | null;
  expiresAt: string | null;
  qualityProfile: string | null;
  recordingMode: string | null;
  /** What the camera said when it took the session up (e.g. it streams another quality than asked). */
  notice?: string | null;
  relayProtocol: string | null;
  clipHandoffEnabled: boolean | null;
  lastKeepaliveAt: string | null;
  lastDeviceSeenAt: string | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
}

const SESSION = `id boxId status playbackUrl expiresAt qualityProfile recordingMode notice relayProtocol clipHandoffEnabled
  lastKeepaliveAt lastDeviceSeenAt lastErrorCode lastErrorMessage`;

/** null once the session is over. */
export const LiveSessionQuery = defineOperation<{ entranceLiveStreamSession: LiveSession | null }, { boxId: string }>(
  `query LiveSession($boxId: ID!) { entranceLiveStreamSession(boxId: $boxId) { ${SESSION} } }`,
);

/** Idempotent per box: a second start returns the running session. */
export const StartLiveMutation = defineOperation<
  { startEntranceLiveStream: LiveSession | null },
  { boxId: string; qualityProfile: string | null; recordingMode: string | null }
>(
  `mutation StartLive($boxId: ID!, $qualityProfile: String, $recordingMode: String) {
    startEntranceLiveStream(boxId: $boxId, qualityProfile: $qualityProfile, recordingMode: $recordingMode) { ${SESSION} }
  }`,
);

export const KeepLiveAliveMutation = defineOperation<{ keepEntranceLiveStreamAlive: LiveSession | null }, { sessionId: string }>(
  `mutation KeepLiveAlive($sessionId: ID!) { keepEntranceLiveStreamAlive(sessionId: $sessionId) { ${SESSION} } }`,
);

export const StopLiveMutation = defineOperation<{ stopEntranceLiveStream: boolean }, { sessionId: string }>(
  `mutation StopLive($sessionId: ID!) { stopEntranceLiveStream(sessionId: $sessionId) }`,
);

export const LiveSessionChangedSubscription = defineOperation<{ entranceLiveStreamSessionChanged: LiveSession | null }, { boxId: string }>(
  `subscription LiveSessionChanged($boxId: ID!) { entranceLiveStreamSessionChanged(boxId: $boxId) { ${SESSION} } }`,
);

/** How often the page tells the server someone is still watching, and re-reads when no subscription is open. */
export const KEEPALIVE_INTERVAL_MS = 30_000;
export const STATUS_POLL_INTERVAL_MS = 5_000;
