import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

/** A file of a GraphQL multipart request, as the `Upload` scalar resolves it. */
export interface FileUpload {
  filename: string;
  mimetype: string;
  encoding: string;
  createReadStream(): Readable;
}

export class UploadTooLargeError extends Error {
  override readonly name = 'UploadTooLargeError';
  constructor(
    readonly field: string,
    readonly maxBytes: number,
  ) {
    super(`${field} is larger than the ${formatBytes(maxBytes)} limit (VIDEO_MAX_BYTES)`);
  }
}

/** The upload failed for a reason the client caused or can see (cut connection, missing file part). */
export class UploadFailedError extends Error {
  override readonly name = 'UploadFailedError';
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/**
 * Streams one uploaded file to `file` on disk, never holding it in memory, and returns its size. Past `maxBytes`
 * it stops writing, reads the rest away (the multipart parser only moves on to the next part once this one is
 * consumed) and fails with UploadTooLargeError; the partial file is removed on any failure.
 */
export async function receiveToFile(upload: Promise<FileUpload> | FileUpload, file: string, field: string, maxBytes: number): Promise<{ size: number; filename: string; mimetype: string; sha256: string }> {
  let details: FileUpload;
  try {
    details = await upload;
  } catch (err) {
    throw new UploadFailedError(`${field}: ${(err as Error).message}`);
  }
  let stream: Readable;
  try {
    stream = details.createReadStream();
  } catch (err) {
    throw asUploadError(field, err, maxBytes);
  }
  const out = createWriteStream(file, { flags: 'wx' });
  // A write error (disk full) is kept and thrown from the loop, never left as an unhandled 'error' event.
  let writeError: Error | undefined;
  out.on('error', (err) => (writeError ??= err));
  let size = 0;
  let tooLarge = false;
  const hash = createHash('sha256');
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (writeError) throw writeError;
      size += chunk.length;
      if (size > maxBytes) tooLarge = true;
      if (tooLarge) continue;
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    // The parser cuts a file at its limit and ends the stream quietly, marking it truncated.
    if ((stream as Readable & { truncated?: boolean }).truncated) tooLarge = true;
    if (tooLarge) throw new UploadTooLargeError(field, maxBytes);
    await finished(out.end());
    if (writeError) throw writeError;
    return { size, filename: details.filename, mimetype: details.mimetype, sha256: hash.digest('hex') };
  } catch (err) {
    stream.resume();
    out.destroy();
    await rm(file, { force: true });
    throw asUploadError(field, err, maxBytes);
  }
}

function asUploadError(field: string, err: unknown, maxBytes: number): Error {
  if (err instanceof UploadTooLargeError || err instanceof UploadFailedError) return err;
  const status = (err as { status?: number }).status;
  if (status === 413) return new UploadTooLargeError(field, maxBytes);
  if (status !== undefined && status >= 400 && status < 500) return new UploadFailedError(`${field}: ${(err as Error).message}`);
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * Reads away the files of a multipart request that no resolver consumed (a refused token, an invalid query):
 * the request only ends, and the response only goes out, once every part has been read.
 */
export function drainUploads(value: unknown, isUpload: (v: unknown) => v is { promise: Promise<FileUpload> }, depth = 0): void {
  if (depth > 8 || value === null || typeof value !== 'object') return;
  if (isUpload(value)) {
    value.promise.then(
      (file) => {
        try {
          const stream = file.createReadStream();
          stream.on('error', () => undefined);
          stream.resume();
        } catch {
          // Already handed to a resolver, or failed: nothing left to read here.
        }
      },
      () => undefined,
    );
    return;
  }
  for (const child of Object.values(value)) drainUploads(child, isUpload, depth + 1);
}
