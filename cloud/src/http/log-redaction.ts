/**
 * What a request log line says of its request. A signed media link (`/media/{expires}.{signature}/…`) is a credential
 * until it expires: logged as it came, anyone who reads the logs could fetch the clip, so its grant is left out.
 * Wherever it appears: matched only at the start of the path, `//media/…`, `/./media/…` or a percent-encoded grant
 * (all of which reach the media route or a 404) were logged in clear.
 */
export function redactUrl(url: string): string {
  let afterMedia = false;
  return url
    .split(SEPARATOR)
    .map((piece, index) => {
      // split() with a capturing group puts the separators at the odd indices.
      if (index % 2 === 1 || piece === '') return piece;
      const decoded = decodeFully(piece);
      const redact = afterMedia || GRANT_SHAPE.test(decoded);
      afterMedia = decoded === 'media';
      return redact ? '(grant)' : piece;
    })
    .join('');
}

/** A grant: expiry seconds, a dot, the signature (24 base64url characters). Shorter ones are no credential. */
const GRANT_SHAPE = /\d{1,12}\.[\w-]{20,}/;
const SEPARATOR = /([/?#&=;]+)/;

/** Percent-decoded as far as it goes (a few rounds: a double-encoded grant is one still), or as it is when malformed. */
function decodeFully(piece: string): string {
  let text = piece;
  for (let round = 0; round < 3 && text.includes('%'); round++) {
    try {
      text = decodeURIComponent(text);
    } catch {
      break;
    }
  }
  return text;
}

/** fastify's request serializer, with the URL redacted. */
export function requestForLog(request: { method: string; url: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
  return { method: request.method, url: redactUrl(request.url), hostname: request.hostname, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}
