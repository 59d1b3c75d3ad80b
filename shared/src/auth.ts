/**
 * Token scopes. A token grants the union of its scopes; `*` grants all of them.
 * - ingest:  telemetry and trajectory submission (devices, scales)
 * - device:  the entrance observer's live endpoints, media publishing and trajectory submission
 * - read:    GraphQL queries and playback of the owner's data
 * - control: GraphQL mutations (start/stop live, upload video)
 */
export const SCOPES = ['ingest', 'device', 'read', 'control'] as const;
export type Scope = (typeof SCOPES)[number];
export const ALL_SCOPES = '*';

export function grants(tokenScopes: readonly string[], needed: Scope): boolean {
  return tokenScopes.includes(ALL_SCOPES) || tokenScopes.includes(needed);
}

/**
 * Account rules, one copy for the server that enforces them and the web app that checks a form before sending it (so
 * that a bad login is named as the login's fault, not answered as a message of no field).
 */
export const LOGIN_PATTERN = /^[\w.@+-]{3,100}$/;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;
