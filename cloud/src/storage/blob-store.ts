import type { Readable } from 'node:stream';

/** Inclusive byte range, like an HTTP `Range: bytes=start-end` header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface BlobPutOptions {
  /** Defaults to the type implied by the key's extension, else application/octet-stream. */
  contentType?: string;
}

export interface BlobGetResult {
  /** Consume or destroy it: on the filesystem store it holds an open file. */
  body: Readable;
  /** Size of the whole object, also for ranged reads (what HTTP puts after the '/' in Content-Range). */
  size: number;
  contentType?: string;
  /** The bytes actually returned, end clamped to the object's last byte; only set for ranged reads. */
  range?: ByteRange;
}

export interface BlobHeadResult {
  size: number;
  contentType?: string;
  modifiedAt: Date;
}

export interface BlobListEntry {
  key: string;
  size: number;
  /** When the object was last written. */
  modifiedAt: Date;
}

/**
 * Object storage for videos, HLS output, heatmap PNGs and live segments.
 * Keys are '/'-separated relative paths (see assertValidKey). Lists are sorted by key.
 */
export interface BlobStore {
  put(key: string, body: Readable | Buffer, opts?: BlobPutOptions): Promise<{ size: number }>;
  /** null when the key is missing; throws RangeNotSatisfiableError when range.start is past the last byte. */
  get(key: string, range?: { start: number; end?: number }): Promise<BlobGetResult | null>;
  head(key: string): Promise<BlobHeadResult | null>;
  /** Idempotent: deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every key starting with prefix (a plain string prefix, like S3); returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Every key starting with prefix ('' lists everything), in key order. */
  list(prefix: string): AsyncIterable<BlobListEntry>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class InvalidBlobKeyError extends Error {
  override readonly name = 'InvalidBlobKeyError';
  constructor(
    readonly field: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`${field} ${JSON.stringify(value)} is invalid: ${reason}`);
  }
}

export class RangeNotSatisfiableError extends Error {
  override readonly name = 'RangeNotSatisfiableError';
  constructor(
    readonly key: string,
    /** Size of the whole object, for a `Content-Range: bytes * /size` answer. */
    readonly size: number,
    readonly requestedStart: number,
  ) {
    super(`range.start ${requestedStart} is not satisfiable for "${key}" of ${size} bytes`);
  }
}

/** The store cannot hold this key next to an existing one (filesystem: a key that is also a folder). */
export class BlobKeyConflictError extends Error {
  override readonly name = 'BlobKeyConflictError';
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`key "${key}" conflicts with existing objects: ${reason}`);
  }
}

// S3 allows 1024 bytes per key; 200 bytes per segment leaves room for the filesystem store's
// sidecar names inside the usual 255-byte file name limit.
const MAX_KEY_BYTES = 1024;
const MAX_SEGMENT_BYTES = 200;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** Whether `key` is one a store can hold (assertValidKey's rules), for input that is not ours to trust. */
export function isValidKey(key: unknown): key is string {
  try {
    assertValidKey(key);
    return true;
  } catch (err) {
    if (err instanceof InvalidBlobKeyError) return false;
    throw err;
  }
}

/**
 * Keys are relative '/'-separated paths. Both stores apply the same rules so a key that works on one
 * works on the other: no leading '/', no empty segments, no backslashes or control characters (NUL
 * included), and no segment starting with '.' (covers '.' and '..'; the filesystem store keeps its
 * temporary and metadata files under such names).
 */
export function assertValidKey(key: unknown, field = 'key'): asserts key is string {
  if (typeof key !== 'string') throw new InvalidBlobKeyError(field, key, 'must be a string');
  if (key.length === 0) throw new InvalidBlobKeyError(field, key, 'must not be empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new InvalidBlobKeyError(field, key, `must be at most ${MAX_KEY_BYTES} bytes`);
  }
  if (key.includes('\\')) throw new InvalidBlobKeyError(field, key, 'backslashes are not allowed');
  if (CONTROL_CHARS.test(key)) {
    throw new InvalidBlobKeyError(field, key, 'control characters (including NUL) are not allowed');
  }
  if (key.startsWith('/')) throw new InvalidBlobKeyError(field, key, 'must be relative (no leading "/")');
  for (const segment of key.split('/')) {
    if (segment.length === 0) throw new InvalidBlobKeyError(field, key, 'empty path segments are not allowed');
    if (segment === '..' || segment === '.') {
      throw new InvalidBlobKeyError(field, key, `"${segment}" segments are not allowed`);
    }
    if (segment.startsWith('.')) {
      throw new InvalidBlobKeyError(field, key, 'segments starting with "." are reserved');
    }
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) {
      throw new InvalidBlobKeyError(field, key, `each segment must be at most ${MAX_SEGMENT_BYTES} bytes`);
    }
  }
}

/**
 * A prefix is '' or a key, optionally followed by '/'. A prefix such as 'videos/1' also matches
 * 'videos/10/x', as on S3.
 */
export function assertValidPrefix(prefix: unknown, field = 'prefix'): asserts prefix is string {
  if (typeof prefix !== 'string') throw new InvalidBlobKeyError(field, prefix, 'must be a string');
  if (prefix === '') return;
  assertValidKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix, field);
}

/** Checks the caller's range shape; the object's size decides satisfiability later (resolveRange). */
export function assertValidRange(range: unknown): asserts range is { start: number; end?: number } {
  if (typeof range !== 'object' || range === null) {
    throw new TypeError('range must be an object { start, end? }');
  }
  const { start, end } = range as { start?: unknown; end?: unknown };
  if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
    throw new RangeError(`range.start must be a non-negative integer, got ${String(start)}`);
  }
  if (end !== undefined && (typeof end !== 'number' || !Number.isSafeInteger(end) || end < start)) {
    throw new RangeError(`range.end must be an integer >= range.start (${start}), got ${String(end)}`);
  }
}

/** Clamps the end to the last byte, as HTTP does; a start past the last byte cannot be served. */
export function resolveRange(key: string, range: { start: number; end?: number }, size: number): ByteRange {
  if (range.start >= size) throw new RangeNotSatisfiableError(key, size, range.start);
  return { start: range.start, end: Math.min(range.end ?? size - 1, size - 1) };
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  m3u8: 'application/vnd.apple.mpegurl',
  ts: 'video/mp2t',
  m4s: 'video/iso.segment',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  h264: 'video/h264',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
  txt: 'text/plain; charset=utf-8',
};

export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export function contentTypeForKey(key: string): string {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return DEFAULT_CONTENT_TYPE;
  return TYPES_BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? DEFAULT_CONTENT_TYPE;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(?:\\s*;.*)?$`);

/** The caller's type if valid, else the one implied by the key. Ends up in HTTP headers, so it is checked. */
export function resolveContentType(key: string, contentType: string | undefined): string {
  if (contentType === undefined) return contentTypeForKey(key);
  if (
    typeof contentType !== 'string' ||
    contentType.length > 255 ||
    CONTROL_CHARS.test(contentType) ||
    !MEDIA_TYPE.test(contentType)
  ) {
    throw new TypeError(`opts.contentType ${JSON.stringify(contentType)} is not a valid media type like "video/mp4"`);
  }
  return contentType;
}

export function assertBody(body: unknown): asserts body is Readable | Buffer {
  if (Buffer.isBuffer(body)) return;
  if (typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function') return;
  throw new TypeError('body must be a Buffer or a Readable stream');
}
