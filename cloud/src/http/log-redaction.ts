/**
 * What a request log line says of its request. A signed media link (`/media/{expires}.{signature}/…`) is a credential
 * until it expires: logged as it came, anyone who reads the logs could fetch the clip, so its grant is left out.
 */
export function redactUrl(url: string): string {
  return url.replace(/^\/media\/[^/?#]+/, '/media/(grant)');
}

/** fastify's request serializer, with the URL redacted. */
export function requestForLog(request: { method: string; url: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
  return { method: request.method, url: redactUrl(request.url), hostname: request.hostname, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}
