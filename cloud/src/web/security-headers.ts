/**
 * Headers for the web app's documents and assets. The policy allows scripts and styles from this origin only
 * (the build has no inline script), `blob:` for the media source and worker hls.js creates, and this origin (plus
 * the public URL's, when media URLs are made absolute with another one) for GraphQL, subscriptions and media.
 */
export function contentSecurityPolicy(options: { publicUrl?: string } = {}): string {
  const extra = options.publicUrl ? ` ${new URL(options.publicUrl).origin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self'${extra} blob:`,
    `media-src 'self'${extra} blob:`,
    "worker-src 'self' blob:",
    `connect-src 'self'${extra}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function webSecurityHeaders(options: { publicUrl?: string } = {}): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(options),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  };
}

/** Top-level paths the server keeps for itself: never answered with the app's index.html. */
export const RESERVED_TOP_SEGMENTS = new Set(['graphql', 'api', 'iot', 'entrance', 'media', 'health', 'metrics', 'openapi.json']);

export function isReservedPath(pathname: string): boolean {
  const first = pathname.split('/')[1] ?? '';
  return RESERVED_TOP_SEGMENTS.has(first.toLowerCase());
}

const FILE_EXTENSIONS = /\.(js|mjs|css|map|ico|png|jpe?g|gif|svg|webp|avif|txt|json|xml|webmanifest|woff2?)$/i;

/**
 * Paths of files (assets, favicon, robots.txt) rather than app routes: they get a 404 when missing instead of the
 * app. Only known file types count, because a hive id may well contain a dot (`/hives/apiary.3`).
 */
export function looksLikeFile(pathname: string): boolean {
  return pathname.startsWith('/assets/') || FILE_EXTENSIONS.test(pathname);
}

/** A dotfile or dot folder anywhere in the path (`/.env`, `/.git/config`, `/../x`): never the app, never served. */
export function hasDotSegment(pathname: string): boolean {
  return pathname.split('/').some((segment) => segment.startsWith('.'));
}

/**
 * Whether the client asked for an HTML document by name, as a browser navigating to a page does (`text/html,…`).
 * Load balancers, curl and scripts accept any type or send no Accept header at all: for a path the server does not
 * have they get the API's 404, not a page that says 200.
 */
export function acceptsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    return type === 'text/html' && !params.some((param) => /^q=0(\.0*)?$/.test(param));
  });
}
