/**
 * Small durable-write helpers: the ledger's rule is "fsync the file, and the
 * directory when a name in it changes", because a rename or a create is only
 * durable once its directory is.
 */
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';
import { type FileHandle, open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export function syncDirectory(path: string): void {
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `bytes` to `path` atomically: temp file, fsync, rename, fsync the
 * directory. `directory` is an open handle on the parent directory when the
 * caller keeps one (the log writer does, to save an open per head update).
 */
export async function writeFileAtomic(path: string, bytes: Uint8Array | string, directory?: FileHandle): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
  if (directory !== undefined) {
    await directory.sync();
    return;
  }
  const opened = await open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await opened.sync();
  } finally {
    await opened.close();
  }
}
