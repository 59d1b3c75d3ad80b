import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WEB_DIST } from './build.ts';
import { acceptsHtml, hasDotSegment, isReservedPath, looksLikeFile, webSecurityHeaders } from './security-headers.ts';

export interface WebAppOptions {
  /** The built app (default: cloud/web/dist). */
  distDir?: string;
  /** The configured public URL, when media URLs are made absolute with it (the policy must allow its origin). */
  publicUrl?: string;
}

const NOT_BUILT = 'The HiveGate web app has not been built yet. Run `pnpm build:web` (or start with `pnpm start`, which builds it first).\n';

function decodePath(url: string): string | undefined {
  try {
    return decodeURIComponent(url.split('?')[0]!);
  } catch {
    return undefined;
  }
}

/**
 * Serves the built single-page app at `/`: files of the build as they are (hashed assets cached for a year), and the
 * app's index.html for what a browser sends when it opens or reloads a page of the app (deep links): a GET or HEAD
 * that accepts text/html, outside the server's own paths (/graphql, /api, /iot, /entrance, /media, /health,
 * /metrics, /openapi.json), with no dot segment. Anything else gets the API's JSON 404, so that a health check or
 * script pointed at a wrong path (/healthz, /api/typo, /.env) sees a 404 rather than a 200 page.
 */
export async function webAppRoutes(app: FastifyInstance, options: WebAppOptions) {
  const distDir = options.distDir ?? WEB_DIST;
  const indexFile = path.join(distDir, 'index.html');
  const headers = webSecurityHeaders({ publicUrl: options.publicUrl });
  if (!existsSync(indexFile)) app.log.warn(NOT_BUILT.trim());

  await app.register(fastifyStatic, {
    root: distDir,
    serve: false,
    preCompressed: true,
    // The build stamp and any other dotfile stay private.
    dotfiles: 'ignore',
    index: false,
    cacheControl: false,
    suppressWarning: true,
  });

  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const pathname = decodePath(request.url);
    if (pathname === undefined || isReservedPath(pathname) || hasDotSegment(pathname)) return reply.callNotFound();
    const file = looksLikeFile(pathname);
    if (!file) {
      // One URL answers a browser with the app and anything else with a 404: a cache must not hand one to the other.
      reply.header('vary', 'Accept');
      if (!acceptsHtml(request.headers.accept)) return reply.callNotFound();
    }
    if (!existsSync(indexFile)) return reply.code(503).header('retry-after', '30').type('text/plain; charset=utf-8').send(NOT_BUILT);
    reply.headers(headers);
    if (file) {
      reply.header('cache-control', pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      return reply.sendFile(pathname.slice(1));
    }
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html');
  });
}
