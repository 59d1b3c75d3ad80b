import { describe, expect, it } from 'vitest';
import { unsharedStorageProblem } from './instances.ts';

describe('unsharedStorageProblem', () => {
  const fs = { kind: 'fs' as const, dir: '/var/lib/hivegate/blobs' };

  // Two instances each on its own DATA_DIR/blobs served each other's heatmap and video links as 404s.
  it('refuses fs storage beside another instance, naming STORAGE, S3_*, DATA_DIR and STORAGE_SHARED', () => {
    expect(unsharedStorageProblem(fs, 1)).toBe(
      'cannot start: STORAGE is fs and another instance runs on this database: media this one writes under DATA_DIR (/var/lib/hivegate/blobs) would be missing on the others; set STORAGE=s3 and the S3_* settings on every instance, or mount one blob folder as DATA_DIR/blobs on all of them and set STORAGE_SHARED=true',
    );
    expect(unsharedStorageProblem(fs, 2)).toMatch(/^cannot start: STORAGE is fs and 2 other instances run on this database: /);
  });

  it('lets fs storage start alone, or shared by the operator\'s word, and S3 always', () => {
    expect(unsharedStorageProblem(fs, 0)).toBeUndefined();
    expect(unsharedStorageProblem({ ...fs, shared: true }, 3)).toBeUndefined();
    expect(unsharedStorageProblem({ kind: 's3', bucket: 'b', region: 'r', accessKeyId: 'a', secretAccessKey: 's' }, 3)).toBeUndefined();
  });
});
