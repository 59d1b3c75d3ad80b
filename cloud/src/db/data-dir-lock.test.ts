import { describe, expect, it } from 'vitest';
import { creationFailure } from './data-dir-lock.ts';

describe('creationFailure', () => {
  // A DATA_DIR on a read-only file system was reported as "could not be created (ENOENT …)": the wrong cause.
  it('says the folder above is not writable when mkdir reports ENOENT for a read-only file system', () => {
    const readOnly = () => ({ dir: '/mnt/ro', code: 'EROFS' });
    expect(creationFailure('/mnt/ro/hivegate', 'ENOENT', '/mnt/ro/hivegate', readOnly)).toBe('it could not be created: /mnt/ro is not writable (EROFS)');
  });

  it('keeps the code and path of other failures', () => {
    const writable = () => undefined;
    expect(creationFailure('/srv/file/data', 'ENOTDIR', '/srv/file/data', writable)).toBe('it could not be created (ENOTDIR at /srv/file/data)');
    expect(creationFailure('/srv/gone/data', 'ENOENT', undefined, writable)).toBe('it could not be created (ENOENT at /srv/gone/data)');
  });
});
