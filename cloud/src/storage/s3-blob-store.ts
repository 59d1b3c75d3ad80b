import {
  CreateBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import {
  assertBody,
  assertValidKey,
  assertValidPrefix,
  assertValidRange,
  RangeNotSatisfiableError,
  resolveContentType,
} from './blob-store.ts';
import type { BlobGetResult, BlobHeadResult, BlobListEntry, BlobPutOptions, BlobStore } from './blob-store.ts';

export interface S3BlobStoreConfig {
  /** e.g. http://127.0.0.1:9000 for MinIO; omit for AWS. */
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Path-style URLs (bucket in the path), needed by most self-hosted S3 servers. */
  forcePathStyle?: boolean;
  /** Prepended to every key, e.g. "hivegate/" to share a bucket. */
  prefix?: string;
  /** Create the bucket in start() when it does not exist; otherwise start() fails on a missing bucket. */
  createBucket?: boolean;
  /** Multipart part size for streamed puts; S3's minimum (5 MiB) by default. */
  partSizeBytes?: number;
  /** How long a connection may take to open; 10 s by default. */
  connectTimeoutMs?: number;
  /** How long a request's connection may go without a byte either way; 60 s by default. */
  idleTimeoutMs?: number;
}

/** No answer at all from the S3 server at start (refused, unresolvable, timed out), as opposed to an S3 error. */
export class BlobStoreUnreachableError extends Error {}

const MIN_PART_SIZE = 5 * 1024 * 1024;
// The SDK waits forever by default: a server that takes the connection and never answers held start() (and every
// request after it) for good.
const CONNECT_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 60_000;
// Upload buffers up to queueSize × partSize per put: 20 MiB at the defaults.
const UPLOAD_QUEUE_SIZE = 4;
const DELETE_BATCH = 1000;

export class S3BlobStore implements BlobStore {
  readonly #config: S3BlobStoreConfig;
  readonly #keyPrefix: string;
  readonly #partSize: number;
  #client: S3Client | null = null;

  constructor(config: S3BlobStoreConfig) {
    for (const field of ['region', 'bucket', 'accessKeyId', 'secretAccessKey'] as const) {
      if (typeof config[field] !== 'string' || config[field].length === 0) {
        throw new TypeError(`S3 config ${field} must be a non-empty string`);
      }
    }
    if (config.endpoint !== undefined && !URL.canParse(config.endpoint)) {
      throw new TypeError(`S3 config endpoint ${JSON.stringify(config.endpoint)} is not a URL`);
    }
    const prefix = config.prefix ?? '';
    if (prefix !== '') assertValidPrefix(prefix, 'S3 config prefix');
    const partSize = config.partSizeBytes ?? MIN_PART_SIZE;
    if (!Number.isSafeInteger(partSize) || partSize < MIN_PART_SIZE) {
      throw new RangeError(`S3 config partSizeBytes must be an integer >= ${MIN_PART_SIZE}`);
    }
    for (const field of ['connectTimeoutMs', 'idleTimeoutMs'] as const) {
      const value = config[field];
      if (value !== undefined && (!Number.isSafeInteger(value) || value <= 0)) throw new RangeError(`S3 config ${field} must be a positive integer`);
    }
    this.#config = config;
    this.#keyPrefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.#partSize = partSize;
  }

  async start(): Promise<void> {
    const { endpoint, region, accessKeyId, secretAccessKey, forcePathStyle, bucket } = this.#config;
    const client = new S3Client({
      ...(endpoint !== undefined ? { endpoint } : {}),
      region,
      forcePathStyle: forcePathStyle ?? false,
      credentials: { accessKeyId, secretAccessKey },
      requestHandler: { connectionTimeout: this.#config.connectTimeoutMs ?? CONNECT_TIMEOUT_MS, socketTimeout: this.#config.idleTimeoutMs ?? IDLE_TIMEOUT_MS },
      // Checksums only where the API demands them: the default (aws-chunked uploads with trailing
      // checksums) is not understood by many S3-compatible servers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    try {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (error) {
      // No HTTP answer and a system error code (ECONNREFUSED, ENOTFOUND, ETIMEDOUT…): a bare "connect ECONNREFUSED"
      // stack named neither the store nor where it was looked for.
      const code = (error as { code?: unknown } | null)?.code;
      const where = `the S3 endpoint ${endpoint ?? `of AWS region ${region}`}`;
      if (httpStatus(error) === undefined && typeof code === 'string') {
        client.destroy();
        throw new BlobStoreUnreachableError(`${where} cannot be reached (${code})`, { cause: error });
      }
      if (httpStatus(error) === undefined && errorName(error) === 'TimeoutError') {
        client.destroy();
        throw new BlobStoreUnreachableError(`${where} took the connection and did not answer`, { cause: error });
      }
      if (httpStatus(error) !== 404) {
        client.destroy();
        throw error;
      }
      if (!this.#config.createBucket) {
        client.destroy();
        throw new Error(`S3 bucket "${bucket}" does not exist (set createBucket to create it on start)`);
      }
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (createError) {
        // Another instance may have created it in between. Servers name that differently (AWS and MinIO
        // BucketAlreadyOwnedByYou, others BucketAlreadyExists, which on AWS means someone else's bucket), so
        // what counts is whether the bucket is now there for us.
        if (errorName(createError) !== 'BucketAlreadyOwnedByYou' && !(await bucketReachable(client, bucket))) {
          client.destroy();
          throw createError;
        }
      }
    }
    this.#client = client;
  }

  async stop(): Promise<void> {
    this.#client?.destroy();
    this.#client = null;
  }

  async put(key: string, body: Readable | Buffer, opts?: BlobPutOptions): Promise<{ size: number }> {
    const client = this.#requireClient();
    assertValidKey(key);
    assertBody(body);
    const contentType = resolveContentType(key, opts?.contentType);
    let size = 0;
    let payload: Readable | Buffer;
    if (Buffer.isBuffer(body)) {
      size = body.length;
      payload = body;
    } else {
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          done(null, chunk);
        },
      });
      // A failing source destroys the counter with its error, which fails the upload.
      payload = pipeline(body, counter, () => {});
    }
    // Upload sends one PutObject when the body fits in a part, a multipart upload otherwise.
    const upload = new Upload({
      client,
      params: { Bucket: this.#config.bucket, Key: this.#keyPrefix + key, Body: payload, ContentType: contentType },
      partSize: this.#partSize,
      queueSize: UPLOAD_QUEUE_SIZE,
      leavePartsOnError: false,
    });
    await upload.done();
    return { size };
  }

  async get(key: string, range?: { start: number; end?: number }): Promise<BlobGetResult | null> {
    const client = this.#requireClient();
    assertValidKey(key);
    if (range !== undefined) assertValidRange(range);
    let response;
    try {
      response = await client.send(
        new GetObjectCommand({
          Bucket: this.#config.bucket,
          Key: this.#keyPrefix + key,
          ...(range !== undefined ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}),
        }),
      );
    } catch (error) {
      if (isNotFound(error)) return null;
      if (range !== undefined && (httpStatus(error) === 416 || errorName(error) === 'InvalidRange')) {
        const head = await this.head(key);
        if (head === null) return null;
        throw new RangeNotSatisfiableError(key, head.size, range.start);
      }
      throw error;
    }
    const body = response.Body;
    if (!(body instanceof Readable)) throw new Error(`S3 returned no readable body for "${key}"`);
    const contentType = response.ContentType;
    if (range === undefined) {
      return { body, size: response.ContentLength ?? 0, contentType };
    }
    const served = parseContentRange(response.ContentRange);
    if (served === null) {
      body.destroy();
      throw new Error(`S3 ignored the Range header for "${key}" (no Content-Range in the answer)`);
    }
    // Some servers answer a range on an empty object with 206 instead of 416.
    if (served.size === 0 || range.start >= served.size) {
      body.destroy();
      throw new RangeNotSatisfiableError(key, served.size, range.start);
    }
    return { body, size: served.size, contentType, range: { start: served.start, end: served.end } };
  }

  async head(key: string): Promise<BlobHeadResult | null> {
    const client = this.#requireClient();
    assertValidKey(key);
    try {
      const response = await client.send(
        new HeadObjectCommand({ Bucket: this.#config.bucket, Key: this.#keyPrefix + key }),
      );
      return {
        size: response.ContentLength ?? 0,
        contentType: response.ContentType,
        modifiedAt: response.LastModified ?? new Date(0),
      };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const client = this.#requireClient();
    assertValidKey(key);
    // S3 answers 204 for missing keys too, so this is idempotent as it stands.
    await client.send(new DeleteObjectCommand({ Bucket: this.#config.bucket, Key: this.#keyPrefix + key }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    const client = this.#requireClient();
    assertValidPrefix(prefix);
    if (prefix === '') throw new RangeError('prefix must not be empty (refusing to delete the whole store)');
    let count = 0;
    let batch: string[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const response = await client.send(
        new DeleteObjectsCommand({
          Bucket: this.#config.bucket,
          Delete: { Objects: batch.map((key) => ({ Key: this.#keyPrefix + key })), Quiet: true },
        }),
      );
      const failures = response.Errors ?? [];
      if (failures.length > 0) {
        const first = failures[0];
        throw new Error(
          `S3 could not delete ${failures.length} of ${batch.length} objects under "${prefix}"` +
            ` (first: ${first?.Key ?? '?'}: ${first?.Code ?? ''} ${first?.Message ?? ''})`,
        );
      }
      count += batch.length;
      batch = [];
    };
    for await (const { key } of this.list(prefix)) {
      batch.push(key);
      if (batch.length >= DELETE_BATCH) await flush();
    }
    await flush();
    return count;
  }

  async *list(prefix: string): AsyncIterable<BlobListEntry> {
    const client = this.#requireClient();
    assertValidPrefix(prefix);
    let continuationToken: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({
          Bucket: this.#config.bucket,
          Prefix: this.#keyPrefix + prefix,
          ...(continuationToken !== undefined ? { ContinuationToken: continuationToken } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key.slice(this.#keyPrefix.length), size: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date(0) };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken !== undefined);
  }

  #requireClient(): S3Client {
    if (this.#client === null) throw new Error('S3BlobStore is not started: call start() first');
    return this.#client;
  }
}

function parseContentRange(header: string | undefined): { start: number; end: number; size: number } | null {
  const match = header === undefined ? null : /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim());
  if (match === null) return null;
  return { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
}

function httpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = (error as { $metadata?: { httpStatusCode?: number } }).$metadata;
  return metadata?.httpStatusCode;
}

async function bucketReachable(client: S3Client, bucket: string): Promise<boolean> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
    return true;
  } catch {
    return false;
  }
}

function errorName(error: unknown): string | undefined {
  return error instanceof Error ? error.name : undefined;
}

/** A missing object; a missing bucket is a configuration fault and stays an error. */
function isNotFound(error: unknown): boolean {
  const name = errorName(error);
  if (name === 'NoSuchBucket') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(error) === 404;
}
