import { LIVE_RELAY_PROTOCOLS, type LiveRelayProtocol } from '@hivegate/shared';

/**
 * Which relay a session uses when the browser did not ask for one. Pure.
 *
 * 1. A device may list the relays it can publish with in its status diagnostics: `status.relayProtocols` or
 *    `status.supportedRelays` (an array of names, or one comma-separated string).
 * 2. Relays the device refused before (STREAM_FAILED with errorCode UNSUPPORTED_RELAY_PROTOCOL) are left out
 *    until it reports another appVersion.
 * 3. Of what remains, the deployment's preferred relay (LIVE_DEFAULT_RELAY_PROTOCOL, `hls` unless set) comes first,
 *    then the others in LIVE_RELAY_PROTOCOLS order.
 *
 * The existing entrance observer declares nothing and reports a git hash or "dev" as appVersion, so nothing about
 * it can be keyed on up front; it refuses HLS with UNSUPPORTED_RELAY_PROTOCOL, the gateway records that and offers
 * `http-jpeg-push` in the same session, and every later session of that device starts with JPEG push directly.
 */

export interface DeviceRelayFacts {
  /** The `status` object of the device's latest status, stored as sent. */
  diagnostics: unknown;
  refusedRelays: readonly string[];
}

const DECLARATION_KEYS = ['relayProtocols', 'supportedRelays'] as const;

/** The known relays a device declares, in its order; undefined when it declares none (the usual case). */
export function declaredRelays(diagnostics: unknown): LiveRelayProtocol[] | undefined {
  if (typeof diagnostics !== 'object' || diagnostics === null || Array.isArray(diagnostics)) return undefined;
  const record = diagnostics as Record<string, unknown>;
  for (const key of DECLARATION_KEYS) {
    const value = record[key];
    const names = typeof value === 'string' ? value.split(/[\s,]+/) : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
    if (!names) continue;
    const known = names.map((n) => n.trim().toLowerCase()).filter((n): n is LiveRelayProtocol => (LIVE_RELAY_PROTOCOLS as readonly string[]).includes(n));
    return [...new Set(known)];
  }
  return undefined;
}

/** The relays this device can be offered, best first; empty when it refused or cannot do any of them. */
export function rankRelays(device: DeviceRelayFacts | undefined, preferred: LiveRelayProtocol): LiveRelayProtocol[] {
  const order = [preferred, ...LIVE_RELAY_PROTOCOLS.filter((p) => p !== preferred)];
  const declared = device ? declaredRelays(device.diagnostics) : undefined;
  const refused = new Set(device?.refusedRelays ?? []);
  return order.filter((p) => (declared ? declared.includes(p) : true) && !refused.has(p));
}

/** The relay to offer: the best ranked one, or the preferred one when nothing is left (the device will say so). */
export function chooseRelay(device: DeviceRelayFacts | undefined, preferred: LiveRelayProtocol): LiveRelayProtocol {
  return rankRelays(device, preferred)[0] ?? preferred;
}
