import type { BlobStoreConfig } from './index.ts';

/** fs storage beside another instance on the same database, without STORAGE_SHARED=true. */
export class UnsharedFileStorageError extends Error {}

/**
 * Why this instance must not start with its blob storage beside `otherInstances` running ones, or undefined when it
 * may. Media goes to the blob folder of whichever instance ran the job, so with each instance on its own DATA_DIR,
 * heatmap images and videos were served by one and 404 on the other.
 */
export function unsharedStorageProblem(storage: BlobStoreConfig, otherInstances: number): string | undefined {
  if (storage.kind !== 'fs' || storage.shared || otherInstances === 0) return undefined;
  return (
    `cannot start: STORAGE is fs and ${otherInstances === 1 ? 'another instance runs' : `${otherInstances} other instances run`} on this database: ` +
    `media this one writes under DATA_DIR (${storage.dir}) would be missing on the others; ` +
    'set STORAGE=s3 and the S3_* settings on every instance, or mount one blob folder as DATA_DIR/blobs on all of them and set STORAGE_SHARED=true'
  );
}
