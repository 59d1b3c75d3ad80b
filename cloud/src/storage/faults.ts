/**
 * Error codes of a file system that cannot take what the service writes: read-only, not permitted, full, failing.
 * ENOENT is among them because Node's recursive mkdir reports a read-only file system as ENOENT.
 */
const STORAGE_FAULT_CODES = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOENT']);

/** What clients are told when storage fails: the server's paths and error codes are none of their business. */
export const STORAGE_UNAVAILABLE = 'storage is unavailable';

/** A Node system error (it names a system call, and usually a server path), as opposed to an error of ours. */
export function isSystemError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === 'string' && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

/** The system calls by which the service writes and reads its files. */
const FILE_SYSTEM_CALLS = new Set(['open', 'mkdir', 'mkdtemp', 'rename', 'unlink', 'rmdir', 'rm', 'stat', 'lstat', 'opendir', 'scandir', 'copyfile', 'write', 'read', 'utime', 'chmod', 'link', 'symlink']);

/** Making a folder of ours where something else is in the way. */
const IN_THE_WAY_CODES = new Set(['EEXIST', 'ENOTDIR']);

/** A file system fault of this server (DATA_DIR read-only, full, not permitted): not the client's, nor a bug. */
export function isStorageFault(err: unknown): boolean {
  if (!isSystemError(err)) return false;
  // ENOENT of anything but the file system (spawn: a missing ffmpeg) is no storage fault.
  if (err.code === 'ENOENT' && !FILE_SYSTEM_CALLS.has(err.syscall!)) return false;
  return STORAGE_FAULT_CODES.has(err.code!) || (IN_THE_WAY_CODES.has(err.code!) && (err.syscall === 'mkdir' || err.syscall === 'mkdtemp'));
}
