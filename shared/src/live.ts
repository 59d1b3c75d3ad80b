import { Type, type Static } from 'typebox';
import { Identifier } from './common.ts';

/**
 * The live gateway's wire contract with the entrance observer device (status, poll, command-ack, event) and the
 * command payloads it receives. Field names follow the existing device so it works unchanged; the spec leaves the
 * types inside `cameraStatus`, `publisherState` and the diagnostics payload open, so those accept any JSON value
 * the device sends (a short string such as "ok", or an object).
 */

/** Lifecycle of a live session. REQUESTED…ACTIVE hold the box's one open slot; STOPPING winds down; the last three are final. */
export const LIVE_SESSION_STATUSES = ['REQUESTED', 'DEVICE_OFFLINE', 'STARTING', 'ACTIVE', 'STOPPING', 'STOPPED', 'FAILED', 'EXPIRED'] as const;
export type LiveSessionStatus = (typeof LIVE_SESSION_STATUSES)[number];

export const LIVE_COMMAND_TYPES = ['START_STREAM', 'STOP_STREAM'] as const;
export type LiveCommandType = (typeof LIVE_COMMAND_TYPES)[number];

export const LIVE_DEVICE_EVENT_TYPES = ['DEVICE_ONLINE', 'STREAM_STARTING', 'STREAM_ACTIVE', 'STREAM_FAILED', 'STREAM_STOPPED'] as const;
export type LiveDeviceEventType = (typeof LIVE_DEVICE_EVENT_TYPES)[number];

/**
 * Media relays a session can use, in order of preference: `hls` (ffmpeg's HLS muxer PUTting segments and playlists
 * to the gateway, played with hls.js) and `http-jpeg-push` (the existing entrance observer POSTing single JPEG
 * frames a few times a second, watched as an MJPEG stream).
 */
export const LIVE_RELAY_PROTOCOLS = ['hls', 'http-jpeg-push'] as const;
export type LiveRelayProtocol = (typeof LIVE_RELAY_PROTOCOLS)[number];

export function isLiveRelayProtocol(value: unknown): value is LiveRelayProtocol {
  return typeof value === 'string' && (LIVE_RELAY_PROTOCOLS as readonly string[]).includes(value);
}

/** What a device reports (STREAM_FAILED `payload.errorCode`) when it cannot publish with the relay it was given. */
export const UNSUPPORTED_RELAY_ERROR_CODE = 'UNSUPPORTED_RELAY_PROTOCOL';

export const LIVE_POLL_MAX_WAIT_SECONDS = 25;
export const LIVE_POLL_MAX_LIMIT = 50;
export const LIVE_POLL_DEFAULT_LIMIT = 10;

const ShortText = (maxLength: number) => Type.String({ maxLength });
const NullableText = (maxLength: number) => Type.Union([ShortText(maxLength), Type.Null()]);
/** A JSON object of any properties (diagnostics, event and ack payloads), stored as sent. */
const OpenObject = (description?: string) => Type.Unsafe<Record<string, unknown>>(Type.Object({}, description ? { description } : {}));
/** A device state the spec leaves open: "ok", "streaming", or an object of details. */
const OpenState = Type.Union([Type.String({ maxLength: 200 }), OpenObject(), Type.Null()]);

const deviceStatusFields = {
  boxId: Identifier,
  deviceId: Type.Optional(NullableText(200)),
  appVersion: Type.Optional(NullableText(100)),
  cameraStatus: Type.Optional(OpenState),
  publisherState: Type.Optional(OpenState),
  lastErrorCode: Type.Optional(NullableText(100)),
  lastErrorMessage: Type.Optional(NullableText(2000)),
  status: Type.Optional(Type.Union([OpenObject('Diagnostics, stored as sent.'), Type.Null()])),
};

export const LiveDeviceStatusBody = Type.Object(deviceStatusFields, { title: 'LiveDeviceStatusBody', additionalProperties: false });
export type LiveDeviceStatusBody = Static<typeof LiveDeviceStatusBody>;

export const LiveDeviceStatusResponse = Type.Object(
  {
    message: Type.String(),
    serverTime: Type.String({ format: 'date-time' }),
    pendingCommands: Type.Integer({ minimum: 0, description: 'Commands waiting for this box: poll to fetch them.' }),
  },
  { title: 'LiveDeviceStatusResponse' },
);

export const LiveDevicePollBody = Type.Object(
  {
    ...deviceStatusFields,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIVE_POLL_MAX_LIMIT, default: LIVE_POLL_DEFAULT_LIMIT })),
    waitSeconds: Type.Optional(
      Type.Number({ minimum: 0, maximum: LIVE_POLL_MAX_WAIT_SECONDS, description: 'Hold the request up to this long until a command is pending (long-poll).' }),
    ),
  },
  { title: 'LiveDevicePollBody', additionalProperties: false },
);
export type LiveDevicePollBody = Static<typeof LiveDevicePollBody>;

export const LiveCommand = Type.Object(
  {
    id: Type.String(),
    sessionId: Type.String(),
    commandType: Type.Enum(LIVE_COMMAND_TYPES),
    payload: Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true })),
    createdAt: Type.String({ format: 'date-time' }),
    deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'LiveCommand' },
);
export type LiveCommand = Static<typeof LiveCommand>;

export const LiveDevicePollResponse = Type.Object({ commands: Type.Array(LiveCommand) }, { title: 'LiveDevicePollResponse' });
export type LiveDevicePollResponse = Static<typeof LiveDevicePollResponse>;

export const LiveCommandAckBody = Type.Object(
  {
    boxId: Identifier,
    commandId: Identifier,
    status: Type.String({ minLength: 1, maxLength: 40, description: 'For START_STREAM, "accepted" (any case) starts the session; any other status ("ignored", "failed", but also "ok" or "success") refuses it and the session ends FAILED. Recorded for every command.' }),
    payload: Type.Optional(Type.Union([OpenObject('For START_STREAM: sessionId, relayProtocol when accepted, reason when ignored.'), Type.Null()])),
  },
  { title: 'LiveCommandAckBody', additionalProperties: false },
);
export type LiveCommandAckBody = Static<typeof LiveCommandAckBody>;

export const LiveCommandAckResponse = Type.Object(
  {
    message: Type.String(),
    commandId: Type.String(),
    alreadyAcknowledged: Type.Boolean(),
    sessionStatus: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'LiveCommandAckResponse' },
);

export const LiveDeviceEventBody = Type.Object(
  {
    boxId: Identifier,
    sessionId: Type.Optional(Type.Union([Identifier, Type.Null()])),
    eventType: Type.Enum(LIVE_DEVICE_EVENT_TYPES),
    payload: Type.Optional(Type.Union([OpenObject('STREAM_FAILED: errorCode, errorMessage; DEVICE_ONLINE: status fields.'), Type.Null()])),
  },
  { title: 'LiveDeviceEventBody', additionalProperties: false },
);
export type LiveDeviceEventBody = Static<typeof LiveDeviceEventBody>;

export const LiveDeviceEventResponse = Type.Object(
  {
    message: Type.String(),
    sessionId: Type.Union([Type.String(), Type.Null()]),
    sessionStatus: Type.Union([Type.String(), Type.Null()]),
    applied: Type.Boolean({ description: 'false when the event did not change the session (stale, duplicate or not allowed in its state).' }),
  },
  { title: 'LiveDeviceEventResponse' },
);

/** What START_STREAM carries to the device. `publisherUrl` is the gateway's own endpoint, never a device address. */
export interface LiveStartStreamPayload {
  sessionId: string;
  relayProtocol: LiveRelayProtocol;
  publisherUrl: string;
  publishToken: string;
  playbackUrl: string;
  qualityProfile: string;
  recordingMode: string;
  clipHandoffEnabled: boolean;
}

export interface LiveStopStreamPayload {
  sessionId: string;
  /** stopped: the viewer asked; expired: nobody kept it alive; failed: the gateway gave up on it (publisher lost, start timed out). */
  reason: 'stopped' | 'expired' | 'failed';
}

/** The answer to one JPEG frame POSTed by an `http-jpeg-push` publisher. */
export const LiveFrameAccepted = Type.Object(
  {
    ok: Type.Literal(true),
    sessionId: Type.String(),
    frameSequence: Type.Integer({ minimum: 1, description: 'Position of this frame in the session, from 1.' }),
    frameTimestamp: Type.String({ format: 'date-time', description: 'When the gateway received the frame.' }),
    bytes: Type.Integer({ minimum: 1 }),
  },
  { title: 'LiveFrameAccepted' },
);
export type LiveFrameAccepted = Static<typeof LiveFrameAccepted>;
