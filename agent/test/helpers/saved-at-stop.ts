/**
 * The counts a live agent kept for its next start when it stopped, as its stop line says them
 * ("… open intervals saved for the next start to complete (in 2, out 1)"); zeros when it kept none.
 */
export function countsSavedAtStop(log: string | readonly string[]): { beesIn: number; beesOut: number; saved: boolean } {
  const text = typeof log === 'string' ? log : log.join('\n');
  const match = /open intervals? saved for the next start to complete \(in (\d+), out (\d+)\)/.exec(text);
  return { beesIn: Number(match?.[1] ?? 0), beesOut: Number(match?.[2] ?? 0), saved: match !== null };
}
