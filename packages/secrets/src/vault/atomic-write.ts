/**
 * Replace a file so that a crash at any instant leaves either the old or the
 * new content: write a temporary file beside it, fsync it, rename it over the
 * target, fsync the directory (so the rename itself is durable). Temporary
 * files left by a writer that was killed are removed on the next write.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

const tempPrefix = (path: string): string => `.${basename(path)}.`;

export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
};

/** Removes temporaries of `path` whose writer process is gone. */
async function removeStaleTemporaries(path: string): Promise<void> {
  const directory = dirname(path);
  const prefix = tempPrefix(path);
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number.parseInt(name.slice(prefix.length).split('.')[0] ?? '', 10);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !alive(pid)) {
      await unlink(join(directory, name)).catch(() => undefined);
    }
  }
}

/** Atomically replaces `path` with `data` (mode `mode` for a new file). Throws on I/O failure. */
export async function writeFileAtomic(path: string, data: Uint8Array, mode = 0o600): Promise<void> {
  const directory = dirname(path);
  await removeStaleTemporaries(path);
  const temp = join(directory, `${tempPrefix(path)}${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(directory);
}
