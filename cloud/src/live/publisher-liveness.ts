/**
 * When the gateway stops believing a session is being published. Pure: the service feeds it what the device
 * reported; the sweeps (no media for too long, device offline, start timed out) are SQL in the sessions repository.
 */

/** The code a session gets when its publisher is gone without saying so (crash, restart, lost uplink). */
export const PUBLISHER_LOST_ERROR_CODE = 'PUBLISHER_LOST';
/** The code a session gets when the device accepted START_STREAM and nothing playable came in time. */
export const START_TIMEOUT_ERROR_CODE = 'START_TIMEOUT';

/**
 * A heartbeat built before the device acted on START_STREAM can arrive after its acknowledgement and still say
 * "idle": reports that soon after the start was handed over are not believed.
 */
export const NOT_PUBLISHING_GRACE_SECONDS = 10;
/**
 * An "idle" report ends an ACTIVE session only once its media has also been silent this long (a few HLS target
 * durations, a dozen JPEG frames): the existing entrance observer's periodic status says "idle" even while it
 * streams (only its polls say "active"), and a session whose media keeps arriving is published, whatever it says.
 */
export const NOT_PUBLISHING_SILENCE_SECONDS = 5;

/** publisherState values (any case) with which a device says it runs no stream: the agent's, and the existing observer's. */
const NOT_PUBLISHING_STATES = new Set(['idle', 'stopped']);

/** Whether a heartbeat's publisherState says the device publishes nothing. Other values and shapes (objects) say nothing. */
export function reportsNoStream(publisherState: unknown): boolean {
  return typeof publisherState === 'string' && NOT_PUBLISHING_STATES.has(publisherState.trim().toLowerCase());
}

export function notPublishingMessage(publisherState: string): string {
  return `the camera reports that it runs no stream (publisherState "${publisherState}"): it restarted or lost the stream`;
}

export function silenceMessage(silenceSeconds: number): string {
  return `no video reached the gateway for ${silenceSeconds} s: the camera stopped publishing (crashed, restarted or lost its connection)`;
}

export function offlineMessage(onlineSeconds: number): string {
  return `the camera has not been in touch for ${onlineSeconds} s while streaming: it went offline`;
}

export function startTimeoutMessage(timeoutSeconds: number): string {
  return `the camera accepted the start but no video arrived within ${timeoutSeconds} s`;
}
