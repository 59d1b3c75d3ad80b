import { describe, expect, it } from 'vitest';
import { isStorageFault, isSystemError } from './faults.ts';

const systemError = (code: string, syscall: string) => Object.assign(new Error(`${code}: ${syscall} '/srv/hivegate/.data/tmp'`), { code, syscall, path: '/srv/hivegate/.data/tmp' });

describe('isStorageFault', () => {
  // A read-only DATA_DIR reached clients as "ENOENT: no such file or directory, mkdir '/…/tmp'", logged at info only.
  it('takes a read-only, full or forbidden file system for a storage fault, and nothing of ours', () => {
    for (const code of ['EROFS', 'EACCES', 'ENOSPC', 'ENOENT']) expect(isStorageFault(systemError(code, 'mkdir')), code).toBe(true);
    expect(isStorageFault(systemError('EEXIST', 'mkdir'))).toBe(true); // a file where a folder of ours should be
    expect(isStorageFault(systemError('EEXIST', 'open'))).toBe(false);
    expect(isStorageFault(systemError('ECONNRESET', 'read'))).toBe(false);
    expect(isStorageFault(Object.assign(new Error('no such video'), { code: 'NOT_FOUND' }))).toBe(false);
    expect(isSystemError(systemError('ECONNRESET', 'read'))).toBe(true);
    expect(isSystemError(new Error('plain'))).toBe(false);
  });

  // Every ENOENT was "storage is unavailable", a missing ffmpeg (spawn ffmpeg ENOENT) too.
  it('takes ENOENT for a storage fault only from the file system', () => {
    expect(isStorageFault(systemError('ENOENT', 'spawn ffmpeg'))).toBe(false);
    expect(isStorageFault(systemError('ENOENT', 'open'))).toBe(true);
  });
});
