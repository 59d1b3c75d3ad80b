import type { FastifyInstance } from 'fastify';
import { pipeline } from 'node:stream';
import { createGunzip, createInflate, type Gunzip, type Inflate } from 'node:zlib';
import { HttpError } from './errors.ts';

const DECODERS: Record<string, () => Gunzip | Inflate> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate };

/**
 * Request bodies sent with `Content-Encoding: gzip` or `deflate` are decoded before they are parsed (a device on a
 * metered link may compress its batches); any other encoding is refused with 415. The body limit applies to the
 * decoded bytes, so a small bomb cannot unpack past it. The server used to ignore the header and answer "body is not
 * valid JSON" to a compressed body, and accept a body whose encoding it could not read.
 */
export function decodeRequestBodies(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const header = request.headers['content-encoding'];
    const encoding = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return payload;
    const decoder = DECODERS[encoding];
    if (!decoder) throw new HttpError(415, `content encoding ${encoding} is not supported; send gzip, deflate or none`);
    const decoded = decoder() as Gunzip & { receivedEncodedLength: number };
    // Fastify checks Content-Length, and the limit, against the bytes that came over the wire.
    decoded.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => {
      decoded.receivedEncodedLength += chunk.length;
    });
    decoded.on('error', (err: Error & { statusCode?: number }) => {
      err.statusCode = 400;
      err.message = `body is not valid ${encoding} data (${err.message})`;
    });
    // A body cut off mid-way ends the decoder too (its error reaches fastify through the decoder).
    pipeline(payload, decoded, () => undefined);
    return decoded;
  });
}
