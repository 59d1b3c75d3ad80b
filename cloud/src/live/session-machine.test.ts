import { describe, expect, it } from 'vitest';
import { LIVE_SESSION_STATUSES, type LiveSessionStatus } from '@hivegate/shared';
import { initialTransition, isEnded, isOpen, SESSION_EVENT_TYPES, transition, type SessionEvent, type SessionEventType, type Transition } from './session-machine.ts';

/**
 * Every cell of the table, written out by hand. A cell is `'-> STATE effects…'` (moved), `'= effects…'`
 * (unchanged) or `'ignored'`. Effect short names: start = QUEUE_START_STREAM, stop:<reason> = QUEUE_STOP_STREAM,
 * cancel = CANCEL_START_STREAM, error = SET_ERROR, extend = EXTEND_KEEPALIVE, release = RELEASE_MEDIA,
 * publish = PUBLISH_CHANGE.
 */
type Row = Record<SessionEventType, string>;

const ended: Row = {
  DEVICE_SEEN: '=',
  START_ACCEPTED: 'ignored',
  START_REFUSED: 'ignored',
  STREAM_STARTING: 'ignored',
  STREAM_ACTIVE: 'ignored',
  PLAYLIST_PUBLISHED: 'ignored',
  FRAME_PUBLISHED: 'ignored',
  RELAY_REFUSED: 'ignored',
  STREAM_FAILED: 'ignored',
  STREAM_STOPPED: 'ignored',
  PUBLISHER_LOST: 'ignored',
  START_TIMED_OUT: 'ignored',
  STOP_IGNORED: '=',
  KEEPALIVE: '=',
  STOP_REQUESTED: '=',
  KEEPALIVE_TIMEOUT: 'ignored',
  STOP_GRACE_ELAPSED: 'ignored',
};

const TABLE: Record<LiveSessionStatus, Row> = {
  DEVICE_OFFLINE: {
    DEVICE_SEEN: '-> REQUESTED start publish',
    START_ACCEPTED: 'ignored',
    START_REFUSED: 'ignored',
    STREAM_STARTING: 'ignored',
    STREAM_ACTIVE: 'ignored',
    PLAYLIST_PUBLISHED: 'ignored',
    FRAME_PUBLISHED: 'ignored',
    RELAY_REFUSED: 'ignored',
    STREAM_FAILED: 'ignored',
    STREAM_STOPPED: 'ignored',
    PUBLISHER_LOST: 'ignored',
    START_TIMED_OUT: 'ignored',
    STOP_IGNORED: 'ignored',
    KEEPALIVE: '= extend',
    STOP_REQUESTED: '-> STOPPED release publish',
    KEEPALIVE_TIMEOUT: '-> EXPIRED release publish',
    STOP_GRACE_ELAPSED: 'ignored',
  },
  // START_STREAM not yet delivered (see the separate table below for the delivered case).
  REQUESTED: {
    DEVICE_SEEN: '=',
    START_ACCEPTED: '-> STARTING publish',
    START_REFUSED: '-> FAILED error cancel release publish',
    STREAM_STARTING: '-> STARTING publish',
    STREAM_ACTIVE: '-> ACTIVE publish',
    PLAYLIST_PUBLISHED: '-> ACTIVE publish',
    FRAME_PUBLISHED: '-> ACTIVE publish',
    RELAY_REFUSED: '= cancel start publish',
    STREAM_FAILED: '-> FAILED error cancel release publish',
    STREAM_STOPPED: '-> STOPPED error cancel release publish',
    PUBLISHER_LOST: 'ignored',
    START_TIMED_OUT: 'ignored',
    STOP_IGNORED: 'ignored',
    KEEPALIVE: '= extend',
    STOP_REQUESTED: '-> STOPPED cancel release publish',
    KEEPALIVE_TIMEOUT: '-> EXPIRED cancel release publish',
    STOP_GRACE_ELAPSED: 'ignored',
  },
  STARTING: {
    DEVICE_SEEN: '=',
    START_ACCEPTED: '=',
    START_REFUSED: '-> FAILED error cancel release publish',
    STREAM_STARTING: '=',
    STREAM_ACTIVE: '-> ACTIVE publish',
    PLAYLIST_PUBLISHED: '-> ACTIVE publish',
    FRAME_PUBLISHED: '-> ACTIVE publish',
    RELAY_REFUSED: '-> REQUESTED cancel start publish',
    STREAM_FAILED: '-> FAILED error cancel release publish',
    STREAM_STOPPED: '-> STOPPED error cancel release publish',
    PUBLISHER_LOST: '-> FAILED error cancel stop:failed release publish',
    START_TIMED_OUT: '-> FAILED error cancel stop:failed release publish',
    STOP_IGNORED: 'ignored',
    KEEPALIVE: '= extend',
    STOP_REQUESTED: '-> STOPPING cancel stop:stopped publish',
    KEEPALIVE_TIMEOUT: '-> EXPIRED cancel stop:expired release publish',
    STOP_GRACE_ELAPSED: 'ignored',
  },
  ACTIVE: {
    DEVICE_SEEN: '=',
    START_ACCEPTED: '=',
    START_REFUSED: 'ignored',
    STREAM_STARTING: '=',
    STREAM_ACTIVE: '=',
    PLAYLIST_PUBLISHED: '=',
    FRAME_PUBLISHED: '=',
    RELAY_REFUSED: 'ignored',
    STREAM_FAILED: '-> FAILED error cancel release publish',
    STREAM_STOPPED: '-> STOPPED error cancel release publish',
    PUBLISHER_LOST: '-> FAILED error cancel stop:failed release publish',
    START_TIMED_OUT: 'ignored',
    STOP_IGNORED: 'ignored',
    KEEPALIVE: '= extend',
    STOP_REQUESTED: '-> STOPPING cancel stop:stopped publish',
    KEEPALIVE_TIMEOUT: '-> EXPIRED cancel stop:expired release publish',
    STOP_GRACE_ELAPSED: 'ignored',
  },
  STOPPING: {
    DEVICE_SEEN: '=',
    START_ACCEPTED: '=',
    START_REFUSED: '-> STOPPED release publish',
    STREAM_STARTING: '=',
    STREAM_ACTIVE: '=',
    PLAYLIST_PUBLISHED: '=',
    FRAME_PUBLISHED: '=',
    RELAY_REFUSED: '-> STOPPED release publish',
    STREAM_FAILED: '-> STOPPED error release publish',
    STREAM_STOPPED: '-> STOPPED release publish',
    PUBLISHER_LOST: '-> STOPPED release publish',
    START_TIMED_OUT: 'ignored',
    STOP_IGNORED: '-> STOPPED release publish',
    KEEPALIVE: '=',
    STOP_REQUESTED: '=',
    KEEPALIVE_TIMEOUT: 'ignored',
    STOP_GRACE_ELAPSED: '-> STOPPED release publish',
  },
  STOPPED: ended,
  FAILED: ended,
  EXPIRED: ended,
};

/** REQUESTED once the device has received START_STREAM: ending it must also tell the device to stop. */
const REQUESTED_AFTER_DELIVERY: Row = {
  ...TABLE.REQUESTED,
  STOP_REQUESTED: '-> STOPPING cancel stop:stopped publish',
  KEEPALIVE_TIMEOUT: '-> EXPIRED cancel stop:expired release publish',
};

function eventOf(type: SessionEventType): SessionEvent {
  if (type === 'STREAM_FAILED' || type === 'START_REFUSED') return { type, errorCode: 'CAMERA_BUSY', errorMessage: 'camera in use' };
  if (type === 'PUBLISHER_LOST' || type === 'START_TIMED_OUT') return { type, errorCode: 'PUBLISHER_LOST', errorMessage: 'nothing published for 30 s' };
  if (type === 'STREAM_STOPPED') return { type, reason: 'agent shutting down' };
  return { type } as SessionEvent;
}

function describeTransition(t: Transition): string {
  if (t.verdict === 'ignored') return 'ignored';
  const effects = t.effects.map((e) => {
    switch (e.type) {
      case 'QUEUE_START_STREAM':
        return 'start';
      case 'QUEUE_STOP_STREAM':
        return `stop:${e.reason}`;
      case 'CANCEL_START_STREAM':
        return 'cancel';
      case 'SET_ERROR':
        return 'error';
      case 'EXTEND_KEEPALIVE':
        return 'extend';
      case 'RELEASE_MEDIA':
        return 'release';
      case 'PUBLISH_CHANGE':
        return 'publish';
    }
  });
  return [t.verdict === 'moved' ? `-> ${t.to}` : '=', ...effects].join(' ');
}

describe('live session transition table', () => {
  it('covers every state and every event', () => {
    expect(Object.keys(TABLE).sort()).toEqual([...LIVE_SESSION_STATUSES].sort());
    for (const row of Object.values(TABLE)) expect(Object.keys(row).sort()).toEqual([...SESSION_EVENT_TYPES].sort());
  });

  for (const state of LIVE_SESSION_STATUSES) {
    describe(state, () => {
      it.each(SESSION_EVENT_TYPES.map((e) => [e, TABLE[state][e]] as const))('%s → %s', (event, expected) => {
        const result = transition(state, eventOf(event), { startDelivered: false });
        expect(describeTransition(result)).toBe(expected);
        if (result.verdict === 'ignored') expect(result.reason).toBe(`${event} is not expected in ${state}`);
      });
    });
  }

  describe('REQUESTED after START_STREAM was delivered', () => {
    it.each(SESSION_EVENT_TYPES.map((e) => [e, REQUESTED_AFTER_DELIVERY[e]] as const))('%s → %s', (event, expected) => {
      expect(describeTransition(transition('REQUESTED', eventOf(event), { startDelivered: true }))).toBe(expected);
    });
  });

  it('does not depend on delivery outside REQUESTED', () => {
    for (const state of LIVE_SESSION_STATUSES.filter((s) => s !== 'REQUESTED')) {
      for (const event of SESSION_EVENT_TYPES) {
        expect(transition(state, eventOf(event), { startDelivered: true })).toEqual(transition(state, eventOf(event), { startDelivered: false }));
      }
    }
  });

  it('carries the device error into SET_ERROR', () => {
    const result = transition('ACTIVE', { type: 'STREAM_FAILED', errorCode: 'ENCODER_CRASH', errorMessage: 'x264 died' }, { startDelivered: true });
    expect(result).toMatchObject({ verdict: 'moved', to: 'FAILED' });
    expect(result.verdict === 'moved' && result.effects).toContainEqual({ type: 'SET_ERROR', code: 'ENCODER_CRASH', message: 'x264 died' });
  });

  // A crashed or restarted agent left its session ACTIVE for good: the gateway now fails it and tells the device.
  it('fails a STARTING or ACTIVE session whose publisher is lost, with the error, and asks the device to stop', () => {
    for (const state of ['STARTING', 'ACTIVE'] as const) {
      const result = transition(state, { type: 'PUBLISHER_LOST', errorCode: 'PUBLISHER_LOST', errorMessage: 'the device runs no stream' }, { startDelivered: true });
      expect(result).toMatchObject({ verdict: 'moved', to: 'FAILED' });
      expect(result.verdict === 'moved' && result.effects).toContainEqual({ type: 'SET_ERROR', code: 'PUBLISHER_LOST', message: 'the device runs no stream' });
    }
  });

  // A stop the device began (agent restarting) read the same as the viewer's Stop: it now carries the device's reason.
  it('records why the device stopped a stream nobody asked to stop, and not when the viewer asked', () => {
    const unasked = transition('ACTIVE', { type: 'STREAM_STOPPED', reason: 'agent shutting down' }, { startDelivered: true });
    expect(unasked.verdict === 'moved' && unasked.effects).toContainEqual({ type: 'SET_ERROR', code: 'DEVICE_STOPPED', message: 'the camera stopped streaming (agent shutting down)' });
    const silent = transition('ACTIVE', { type: 'STREAM_STOPPED', reason: null }, { startDelivered: true });
    expect(silent.verdict === 'moved' && silent.effects).toContainEqual({ type: 'SET_ERROR', code: 'DEVICE_STOPPED', message: 'the camera stopped streaming' });
    const asked = transition('STOPPING', { type: 'STREAM_STOPPED', reason: 'STOP_STREAM' }, { startDelivered: true });
    expect(asked.verdict === 'moved' && asked.effects.some((e) => e.type === 'SET_ERROR')).toBe(false);
  });

  it('never moves a session to STARTING or ACTIVE on a mere sighting of the device (spec §3 rule 1)', () => {
    for (const state of LIVE_SESSION_STATUSES) {
      const result = transition(state, { type: 'DEVICE_SEEN' }, { startDelivered: true });
      if (result.verdict === 'moved') expect(['STARTING', 'ACTIVE']).not.toContain(result.to);
    }
  });

  it('starts REQUESTED with START_STREAM queued when the device is online, else DEVICE_OFFLINE', () => {
    expect(initialTransition(true)).toEqual({ state: 'REQUESTED', effects: [{ type: 'QUEUE_START_STREAM' }, { type: 'EXTEND_KEEPALIVE' }, { type: 'PUBLISH_CHANGE' }] });
    expect(initialTransition(false)).toEqual({ state: 'DEVICE_OFFLINE', effects: [{ type: 'EXTEND_KEEPALIVE' }, { type: 'PUBLISH_CHANGE' }] });
  });

  it('classifies open and ended states', () => {
    expect(LIVE_SESSION_STATUSES.filter(isOpen)).toEqual(['REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE']);
    expect(LIVE_SESSION_STATUSES.filter(isEnded)).toEqual(['STOPPED', 'FAILED', 'EXPIRED']);
  });
});
