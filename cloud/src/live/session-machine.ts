import type { LiveSessionStatus, LiveStopStreamPayload } from '@hivegate/shared';

type LiveStopReason = LiveStopStreamPayload['reason'];

/** The error a session that the device itself stopped carries, so it is not shown as the viewer's own stop. */
export const DEVICE_STOPPED_ERROR_CODE = 'DEVICE_STOPPED';

/**
 * The live session's transition table: state × event → next state + effects. Pure: the service reads the row
 * under a lock, asks this table, and carries out the effects in the same transaction. Events a state does not
 * expect are answered with `ignored` (the caller logs them) instead of throwing, because devices retry, events
 * arrive late and several instances sweep at once.
 */

/** States that hold the box's single open slot (a second start returns this session). */
export const OPEN_STATES = ['REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE'] as const satisfies readonly LiveSessionStatus[];
/** Final states: the session is over, its media is cleaned up, publishing is refused. */
export const ENDED_STATES = ['STOPPED', 'FAILED', 'EXPIRED'] as const satisfies readonly LiveSessionStatus[];

export function isOpen(status: LiveSessionStatus): boolean {
  return (OPEN_STATES as readonly string[]).includes(status);
}

export function isEnded(status: LiveSessionStatus): boolean {
  return (ENDED_STATES as readonly string[]).includes(status);
}

export type SessionEvent =
  /** A heartbeat from the device (status or poll). DEVICE_ONLINE events only record presence and never send this. */
  | { type: 'DEVICE_SEEN' }
  /** The device acknowledged START_STREAM with "accepted". */
  | { type: 'START_ACCEPTED' }
  /** The device acknowledged START_STREAM with anything else ("ignored", "failed"…). */
  | { type: 'START_REFUSED'; errorCode: string; errorMessage: string | null }
  | { type: 'STREAM_STARTING' }
  | { type: 'STREAM_ACTIVE' }
  /** The publisher's first playlist with a segment arrived: the stream is playable even if STREAM_ACTIVE is late. */
  | { type: 'PLAYLIST_PUBLISHED' }
  /** A JPEG frame arrived (http-jpeg-push relay): as PLAYLIST_PUBLISHED, the stream is watchable. */
  | { type: 'FRAME_PUBLISHED' }
  /**
   * The device cannot publish with the session's relay but the gateway has another one for it: START_STREAM is
   * offered again (the service re-chooses the relay when it queues it). Otherwise the service reports STREAM_FAILED.
   */
  | { type: 'RELAY_REFUSED' }
  | { type: 'STREAM_FAILED'; errorCode: string; errorMessage: string | null }
  /** The device ended the stream; `reason` is what it said (shutting down, restarting…), null when it said nothing. */
  | { type: 'STREAM_STOPPED'; reason: string | null }
  /**
   * The gateway concluded that nobody publishes the session any more (sweep or heartbeat): no media for too long,
   * the device offline, or the device reporting that it runs no stream (it crashed or restarted).
   */
  | { type: 'PUBLISHER_LOST'; errorCode: string; errorMessage: string }
  /** The device accepted START_STREAM but nothing playable came within the start time-out (sweep). */
  | { type: 'START_TIMED_OUT'; errorCode: string; errorMessage: string }
  /** The device acknowledged STOP_STREAM with anything but "accepted": it is not streaming that session. */
  | { type: 'STOP_IGNORED' }
  /** The browser asked to keep the session alive. */
  | { type: 'KEEPALIVE' }
  /** The browser asked to stop. */
  | { type: 'STOP_REQUESTED' }
  /** Nobody kept the session alive in time (sweep). */
  | { type: 'KEEPALIVE_TIMEOUT' }
  /** A STOPPING session waited its grace period for the device (sweep). */
  | { type: 'STOP_GRACE_ELAPSED' };

export type SessionEventType = SessionEvent['type'];

export const SESSION_EVENT_TYPES: readonly SessionEventType[] = [
  'DEVICE_SEEN',
  'START_ACCEPTED',
  'START_REFUSED',
  'STREAM_STARTING',
  'STREAM_ACTIVE',
  'PLAYLIST_PUBLISHED',
  'FRAME_PUBLISHED',
  'RELAY_REFUSED',
  'STREAM_FAILED',
  'STREAM_STOPPED',
  'PUBLISHER_LOST',
  'START_TIMED_OUT',
  'STOP_IGNORED',
  'KEEPALIVE',
  'STOP_REQUESTED',
  'KEEPALIVE_TIMEOUT',
  'STOP_GRACE_ELAPSED',
];

export type SessionEffect =
  | { type: 'QUEUE_START_STREAM' }
  | { type: 'QUEUE_STOP_STREAM'; reason: LiveStopReason }
  /** Withdraw a START_STREAM the device has not acknowledged, so it never starts a session that is over. */
  | { type: 'CANCEL_START_STREAM' }
  | { type: 'SET_ERROR'; code: string; message: string | null }
  | { type: 'EXTEND_KEEPALIVE' }
  /** The session is over: hand off the clip if asked, then delete its media. */
  | { type: 'RELEASE_MEDIA' }
  /** Tell subscribers (every instance) that the session changed. */
  | { type: 'PUBLISH_CHANGE' };

/** What is known besides the state: whether START_STREAM already reached the device (then a STOP must follow it). */
export interface SessionFacts {
  startDelivered: boolean;
}

export type Transition =
  | { verdict: 'moved'; from: LiveSessionStatus; to: LiveSessionStatus; effects: SessionEffect[] }
  /** Legal but changes no state (duplicates, keep-alives, late but harmless reports). */
  | { verdict: 'unchanged'; state: LiveSessionStatus; effects: SessionEffect[] }
  /** Not allowed in this state: nothing happens, the caller logs it. */
  | { verdict: 'ignored'; state: LiveSessionStatus; reason: string };

/** A new session: REQUESTED (and START_STREAM queued) when the device is online, else DEVICE_OFFLINE until it shows up. */
export function initialTransition(deviceOnline: boolean): { state: LiveSessionStatus; effects: SessionEffect[] } {
  return deviceOnline
    ? { state: 'REQUESTED', effects: [{ type: 'QUEUE_START_STREAM' }, { type: 'EXTEND_KEEPALIVE' }, { type: 'PUBLISH_CHANGE' }] }
    : { state: 'DEVICE_OFFLINE', effects: [{ type: 'EXTEND_KEEPALIVE' }, { type: 'PUBLISH_CHANGE' }] };
}

const publish: SessionEffect = { type: 'PUBLISH_CHANGE' };
const release: SessionEffect = { type: 'RELEASE_MEDIA' };
const cancelStart: SessionEffect = { type: 'CANCEL_START_STREAM' };

function moved(from: LiveSessionStatus, to: LiveSessionStatus, ...effects: SessionEffect[]): Transition {
  return { verdict: 'moved', from, to, effects: [...effects, publish] };
}
function unchanged(state: LiveSessionStatus, ...effects: SessionEffect[]): Transition {
  return { verdict: 'unchanged', state, effects };
}
function ignored(state: LiveSessionStatus, event: SessionEvent): Transition {
  return { verdict: 'ignored', state, reason: `${event.type} is not expected in ${state}` };
}
function errorOf(event: { errorCode: string; errorMessage: string | null }): SessionEffect {
  return { type: 'SET_ERROR', code: event.errorCode, message: event.errorMessage };
}

/**
 * Ending a session the device may be streaming for: withdraw an unacknowledged START_STREAM and, when the device
 * already received it (or reported progress), queue STOP_STREAM.
 */
function endForDevice(from: LiveSessionStatus, to: 'STOPPING' | 'EXPIRED', reason: LiveStopReason, deviceHasStart: boolean): Transition {
  const effects: SessionEffect[] = [cancelStart];
  if (deviceHasStart) effects.push({ type: 'QUEUE_STOP_STREAM', reason });
  if (to === 'EXPIRED') effects.push(release);
  return moved(from, to, ...effects);
}

export function transition(state: LiveSessionStatus, event: SessionEvent, facts: SessionFacts): Transition {
  switch (state) {
    case 'DEVICE_OFFLINE':
      switch (event.type) {
        case 'DEVICE_SEEN':
          return moved(state, 'REQUESTED', { type: 'QUEUE_START_STREAM' });
        case 'KEEPALIVE':
          // The keep-alive's caller reads the new deadline in its answer; subscribers are not told of each one.
          return unchanged(state, { type: 'EXTEND_KEEPALIVE' });
        case 'STOP_REQUESTED':
          return moved(state, 'STOPPED', release);
        case 'KEEPALIVE_TIMEOUT':
          return moved(state, 'EXPIRED', release);
        default:
          // The device never received this session's START_STREAM, so it cannot report on it.
          return ignored(state, event);
      }

    case 'REQUESTED':
    case 'STARTING':
    case 'ACTIVE': {
      // In STARTING and ACTIVE the device has the command (it reported progress or published).
      const deviceHasStart = state !== 'REQUESTED' || facts.startDelivered;
      switch (event.type) {
        case 'DEVICE_SEEN':
          return unchanged(state);
        case 'START_ACCEPTED':
          return state === 'REQUESTED' ? moved(state, 'STARTING') : unchanged(state);
        case 'START_REFUSED':
          return state === 'ACTIVE' ? ignored(state, event) : moved(state, 'FAILED', errorOf(event), cancelStart, release);
        case 'STREAM_STARTING':
          return state === 'REQUESTED' ? moved(state, 'STARTING') : unchanged(state);
        case 'STREAM_ACTIVE':
        case 'PLAYLIST_PUBLISHED':
        case 'FRAME_PUBLISHED':
          return state === 'ACTIVE' ? unchanged(state) : moved(state, 'ACTIVE');
        case 'RELAY_REFUSED':
          // A device publishing already has a relay that works; a late refusal changes nothing.
          if (state === 'ACTIVE') return ignored(state, event);
          return state === 'REQUESTED' ? unchanged(state, cancelStart, { type: 'QUEUE_START_STREAM' }, publish) : moved(state, 'REQUESTED', cancelStart, { type: 'QUEUE_START_STREAM' });
        case 'STREAM_FAILED':
          return moved(state, 'FAILED', errorOf(event), cancelStart, release);
        case 'STREAM_STOPPED': {
          // Nobody asked for this stop: say the camera ended it, so it does not read as the viewer's own Stop.
          const message = event.reason ? `the camera stopped streaming (${event.reason})` : 'the camera stopped streaming';
          return moved(state, 'STOPPED', { type: 'SET_ERROR', code: DEVICE_STOPPED_ERROR_CODE, message }, cancelStart, release);
        }
        case 'PUBLISHER_LOST':
          // REQUESTED: the device has not taken the session up yet, so there is no publisher to lose.
          if (state === 'REQUESTED') return ignored(state, event);
          return moved(state, 'FAILED', errorOf(event), cancelStart, { type: 'QUEUE_STOP_STREAM', reason: 'failed' }, release);
        case 'START_TIMED_OUT':
          if (state !== 'STARTING') return ignored(state, event);
          return moved(state, 'FAILED', errorOf(event), cancelStart, { type: 'QUEUE_STOP_STREAM', reason: 'failed' }, release);
        case 'STOP_IGNORED':
          return ignored(state, event);
        case 'KEEPALIVE':
          return unchanged(state, { type: 'EXTEND_KEEPALIVE' });
        case 'STOP_REQUESTED':
          // Nothing reached the device yet: withdraw the start and be done without waiting for it.
          return deviceHasStart ? endForDevice(state, 'STOPPING', 'stopped', true) : moved(state, 'STOPPED', cancelStart, release);
        case 'KEEPALIVE_TIMEOUT':
          return endForDevice(state, 'EXPIRED', 'expired', deviceHasStart);
        case 'STOP_GRACE_ELAPSED':
          return ignored(state, event);
      }
      break;
    }

    case 'STOPPING':
      switch (event.type) {
        case 'DEVICE_SEEN':
        case 'START_ACCEPTED':
        case 'STREAM_STARTING':
        case 'STREAM_ACTIVE':
        case 'PLAYLIST_PUBLISHED':
        case 'FRAME_PUBLISHED':
        case 'KEEPALIVE':
        case 'STOP_REQUESTED':
          // Late or repeated: STOP_STREAM is already on its way.
          return unchanged(state);
        case 'START_REFUSED':
        case 'RELAY_REFUSED':
        case 'STREAM_STOPPED':
        case 'STOP_GRACE_ELAPSED':
        // The device says it runs no stream for this session: nothing is left to wait for.
        case 'STOP_IGNORED':
        case 'PUBLISHER_LOST':
          return moved(state, 'STOPPED', release);
        case 'STREAM_FAILED':
          // The user asked to stop; the failure is kept for the record but the outcome is the stop they asked for.
          return moved(state, 'STOPPED', errorOf(event), release);
        case 'KEEPALIVE_TIMEOUT':
        case 'START_TIMED_OUT':
          return ignored(state, event);
      }
      break;

    case 'STOPPED':
    case 'FAILED':
    case 'EXPIRED':
      switch (event.type) {
        case 'DEVICE_SEEN':
        case 'KEEPALIVE':
        case 'STOP_REQUESTED':
        // The device's answer to a STOP_STREAM sent as the session ended (expired, failed): nothing more to do.
        case 'STOP_IGNORED':
          // Stop is idempotent and a keep-alive on a finished session just reads its final state.
          return unchanged(state);
        default:
          return ignored(state, event);
      }
  }
  return ignored(state, event);
}
