import type { BlobStore } from './blob-store.ts';
import { FileBlobStore } from './file-blob-store.ts';
import { S3BlobStore } from './s3-blob-store.ts';
import type { S3BlobStoreConfig } from './s3-blob-store.ts';

export * from './blob-store.ts';
export { FileBlobStore } from './file-blob-store.ts';
export { BlobStoreUnreachableError, S3BlobStore } from './s3-blob-store.ts';
export type { S3BlobStoreConfig } from './s3-blob-store.ts';

/**
 * `shared`: the operator says every instance on the database reads and writes the same folder (a network file
 * system); without it, fs storage refuses to start beside another instance (see storage/instances.ts).
 */
export type BlobStoreConfig = { kind: 'fs'; dir: string; shared?: boolean } | ({ kind: 's3' } & S3BlobStoreConfig);

/** Builds the configured store; call start() on it before use. */
export function createBlobStore(config: BlobStoreConfig): BlobStore {
  switch (config.kind) {
    case 'fs':
      return new FileBlobStore(config.dir);
    case 's3': {
      const { kind: _kind, ...s3 } = config;
      return new S3BlobStore(s3);
    }
    default: {
      const kind: unknown = (config as { kind?: unknown }).kind;
      throw new TypeError(`blob store kind must be "fs" or "s3", got ${JSON.stringify(kind)}`);
    }
  }
}
