import { LIVE_RELAY_PROTOCOLS } from '@hivegate/shared';
import { chooseProfile, type QualityProfile } from '../live/quality.ts';

/**
 * What to do with the live gateway's commands, and what to answer. Pure: the device loop carries out the decisions.
 *
 * The gateway redelivers a command until it is acknowledged, so an acknowledgement lost on the way back brings the
 * same command (same id) again: it must be answered the same way and must not start a second publisher. The book
 * remembers the answer per command id (the most recent few hundred; older ids are long acknowledged).
 */
/** What the agent can publish: the gateway's relays plus the JPEG push some existing viewers read. */
export const RELAY_PROTOCOLS = ['hls', 'http-jpeg-push'] as const;
export type RelayProtocol = (typeof RELAY_PROTOCOLS)[number];
// Fails to compile when the shared contract gains a relay the agent cannot publish.
const _everyGatewayRelay: readonly RelayProtocol[] = LIVE_RELAY_PROTOCOLS;

/** A command as the gateway sends it (`POST /api/entrance-live/device/poll` → `commands[]`). */
export interface IncomingCommand {
  id: string | number;
  sessionId?: string | number | null;
  commandType: string;
  payload?: unknown;
  createdAt?: string;
  deliveredAt?: string | null;
}

export interface StartStream {
  sessionId: string;
  relayProtocol: RelayProtocol;
  /** Where files go (`<publisherUrl>/<name>`): the payload's URL without a trailing playlist name. */
  publisherUrl: string;
  /** The HLS playlist's name: `index.m3u8` unless the payload's URL names another. */
  playlistName: string;
  publishToken: string;
  qualityProfile: QualityProfile;
  /** Set when the requested profile was unknown and `medium` is used instead. */
  profileNote?: string;
  recordingMode: string;
  clipHandoffEnabled: boolean;
  playbackUrl?: string;
}

export type AckStatus = 'accepted' | 'ignored';

export interface Ack {
  commandId: string;
  status: AckStatus;
  payload: Record<string, unknown>;
}

/** The stream the device runs now, if any. */
export interface CurrentStream {
  sessionId: string;
  relayProtocol: RelayProtocol;
}

export type Decision =
  /** The same command came again: send the same acknowledgement, do nothing else. */
  | { action: 'repeat'; ack: Ack }
  | { action: 'start'; ack: Ack; start: StartStream; /** The session whose stream this one replaces. */ replaces?: string }
  | { action: 'stop'; ack: Ack; sessionId: string }
  /** Acknowledge only (ignored, or a start for the session already streaming). */
  | { action: 'none'; ack: Ack };

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Reads a START_STREAM; errors name the field (`payload.publisherUrl must be an http(s) URL`). */
export function parseStartStream(command: IncomingCommand): ParseResult<StartStream> {
  const sessionId = idText(command.sessionId) ?? (isRecord(command.payload) ? idText(command.payload.sessionId) : undefined);
  if (!sessionId) return { ok: false, error: 'sessionId is required' };
  if (!isRecord(command.payload)) return { ok: false, error: 'payload must be an object' };
  const p = command.payload;
  const relayProtocol = p.relayProtocol ?? 'hls';
  if (typeof relayProtocol !== 'string' || !(RELAY_PROTOCOLS as readonly string[]).includes(relayProtocol)) {
    return { ok: false, error: `payload.relayProtocol must be one of ${RELAY_PROTOCOLS.map((r) => `"${r}"`).join(', ')}, got ${JSON.stringify(relayProtocol)}` };
  }
  if (typeof p.publisherUrl !== 'string' || !isHttpUrl(p.publisherUrl)) return { ok: false, error: 'payload.publisherUrl must be an http(s) URL' };
  if (typeof p.publishToken !== 'string' || p.publishToken === '') return { ok: false, error: 'payload.publishToken must be a non-empty string' };
  if (/[\r\n]/.test(p.publishToken)) return { ok: false, error: 'payload.publishToken must not contain line breaks' };
  if (p.playbackUrl !== undefined && p.playbackUrl !== null && typeof p.playbackUrl !== 'string') return { ok: false, error: 'payload.playbackUrl must be a string' };
  if (p.recordingMode !== undefined && p.recordingMode !== null && typeof p.recordingMode !== 'string') return { ok: false, error: 'payload.recordingMode must be a string' };
  if (p.clipHandoffEnabled !== undefined && p.clipHandoffEnabled !== null && typeof p.clipHandoffEnabled !== 'boolean') return { ok: false, error: 'payload.clipHandoffEnabled must be a boolean' };
  const profile = chooseProfile(p.qualityProfile);
  const target = publishTarget(p.publisherUrl);
  return {
    ok: true,
    value: {
      sessionId,
      relayProtocol: relayProtocol as RelayProtocol,
      publisherUrl: target.base,
      playlistName: target.playlistName,
      publishToken: p.publishToken,
      qualityProfile: profile.profile,
      ...(profile.note ? { profileNote: profile.note } : {}),
      recordingMode: typeof p.recordingMode === 'string' ? p.recordingMode : 'none',
      clipHandoffEnabled: p.clipHandoffEnabled === true,
      ...(typeof p.playbackUrl === 'string' ? { playbackUrl: p.playbackUrl } : {}),
    },
  };
}

export class CommandBook {
  private readonly answered = new Map<string, Ack>();

  constructor(private readonly capacity = 500) {}

  get size(): number {
    return this.answered.size;
  }

  /** Decides and remembers the answer, so a redelivery gets the same one. */
  decide(command: IncomingCommand, current: CurrentStream | undefined): Decision {
    const commandId = idText(command.id);
    if (!commandId) {
      // Without an id it cannot be acknowledged either; the gateway always sends one.
      return { action: 'none', ack: { commandId: '', status: 'ignored', payload: { reason: 'command has no id' } } };
    }
    const known = this.answered.get(commandId);
    if (known) return { action: 'repeat', ack: known };
    const decision = this.fresh(commandId, command, current);
    this.remember(decision.ack);
    return decision;
  }

  private fresh(commandId: string, command: IncomingCommand, current: CurrentStream | undefined): Decision {
    const sessionId = idText(command.sessionId) ?? (isRecord(command.payload) ? idText(command.payload.sessionId) : undefined) ?? null;
    const ignored = (reason: string): Decision => ({ action: 'none', ack: { commandId, status: 'ignored', payload: { sessionId, reason } } });
    switch (command.commandType) {
      case 'START_STREAM': {
        const parsed = parseStartStream(command);
        if (!parsed.ok) return ignored(`invalid START_STREAM: ${parsed.error}`);
        const start = parsed.value;
        const accepted: Ack = {
          commandId,
          status: 'accepted',
          payload: { sessionId: start.sessionId, relayProtocol: start.relayProtocol, qualityProfile: start.qualityProfile, ...(start.profileNote ? { note: start.profileNote } : {}) },
        };
        if (current?.sessionId === start.sessionId) {
          // A second START for the stream already running (a new command id for the same session): keep it.
          return { action: 'none', ack: { ...accepted, payload: { ...accepted.payload, relayProtocol: current.relayProtocol, note: 'already streaming this session' } } };
        }
        return { action: 'start', ack: accepted, start, ...(current ? { replaces: current.sessionId } : {}) };
      }
      case 'STOP_STREAM': {
        if (!sessionId) return ignored('STOP_STREAM has no sessionId');
        if (current?.sessionId !== sessionId) return ignored(current ? `not streaming session ${sessionId} (streaming ${current.sessionId})` : `not streaming session ${sessionId}`);
        return { action: 'stop', ack: { commandId, status: 'accepted', payload: { sessionId, relayProtocol: current.relayProtocol } }, sessionId };
      }
      default:
        return ignored(`unknown commandType ${JSON.stringify(command.commandType)}`);
    }
  }

  private remember(ack: Ack): void {
    this.answered.set(ack.commandId, ack);
    while (this.answered.size > this.capacity) {
      const oldest = this.answered.keys().next().value as string;
      this.answered.delete(oldest);
    }
  }
}

/**
 * Gateways hand out either the publishing folder (`…/publish/{session}`, files go below it) or the playlist itself
 * (`…/publish/{session}/index.m3u8`, segments go next to it). Both are accepted.
 */
export function publishTarget(url: string): { base: string; playlistName: string } {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (/^[A-Za-z0-9][A-Za-z0-9_-]*\.m3u8$/.test(last)) {
    parsed.pathname = path.slice(0, path.lastIndexOf('/'));
    return { base: parsed.toString().replace(/\/+$/, ''), playlistName: last };
  }
  parsed.pathname = path;
  return { base: parsed.toString().replace(/\/+$/, ''), playlistName: 'index.m3u8' };
}

function idText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
