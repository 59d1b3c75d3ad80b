/**
 * The server's media links are signed and short-lived (`/media/{expires}.{signature}/{kind}/{id}/{file}`); a page left
 * open re-reads them before they expire, or its posters, heatmaps and players stop working.
 */

/** When a signed media link stops working, in Unix ms; undefined for any other URL. */
export function linkExpiresAt(url: string | null | undefined): number | undefined {
  const match = url ? /\/media\/(\d+)\.[\w-]+\//.exec(url) : null;
  return match ? Number(match[1]) * 1000 : undefined;
}

/** The shortest wait before re-reading: links are not re-read more often than this. */
const MIN_REFRESH_MS = 5_000;

/**
 * How long to wait before re-reading links: until a minute (or a fifth of what is left, when less) before the first
 * of them expires. Undefined when none is a signed link.
 */
export function refreshBeforeExpiry(urls: readonly (string | null | undefined)[], now = Date.now()): number | undefined {
  const expiries = urls.map(linkExpiresAt).filter((t): t is number => t !== undefined);
  if (expiries.length === 0) return undefined;
  const left = Math.min(...expiries) - now;
  return Math.max(MIN_REFRESH_MS, left - Math.min(60_000, left / 5));
}

/** The folder a link grants (everything up to its file name), which its relative segment links resolve under. */
export function linkFolder(url: string): string {
  return url.slice(0, url.lastIndexOf('/') + 1);
}

/**
 * Where a player's request should go once its stream's link was renewed: a request for an older link of the stream
 * (`known`) goes to the newest, and one under an older link's folder (a segment) to the same file under the newest's.
 * Undefined when it goes where it was going.
 */
export function underNewestLink(url: string, newest: string, known: Iterable<string>): string | undefined {
  if (url === newest) return undefined;
  const newestFolder = linkFolder(newest);
  for (const link of known) {
    if (link === newest) continue;
    if (url === link) return newest;
    const folder = linkFolder(link);
    if (folder !== newestFolder && url.startsWith(folder)) return newestFolder + url.slice(folder.length);
  }
  return undefined;
}
