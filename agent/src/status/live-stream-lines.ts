/**
 * `status`'s line for the live stream the agent publishes while it counts, from the status file's `liveStream`;
 * nothing when there is none. A stream showed nowhere on the device, only in the cloud. Pure.
 */
export function liveStreamLines(stream: unknown): string[] {
  if (!stream || typeof stream !== 'object' || !('sessionId' in stream)) return [];
  const s = stream as Partial<Record<'sessionId' | 'relayProtocol' | 'state' | 'framesSent' | 'framesDropped' | 'uploadsFailed' | 'startedAt', unknown>>;
  const since = typeof s.startedAt === 'number' ? ` since ${new Date(s.startedAt).toISOString()}` : '';
  const refused = Number(s.uploadsFailed ?? 0) > 0 ? `, ${String(s.uploadsFailed)} uploads refused` : '';
  return [`live view:     ${String(s.state)} (session ${String(s.sessionId)}, ${String(s.relayProtocol)})${since}: ${String(s.framesSent)} frames sent, ${String(s.framesDropped)} dropped${refused}`];
}
