/**
 * One writer per log. Two processes appending to one file would interleave
 * frames and fork the chain, so the writer holds `<log>.lock` (created with
 * O_EXCL, holding its pid). A lock left by a dead process (a crash) is taken
 * over; a live holder makes open fail with a typed error.
 */
import { closeSync, constants, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';

export interface LockError {
  readonly _tag: 'LedgerLocked';
  readonly path: string;
  readonly pid: number | undefined;
}

export interface FileLock {
  readonly path: string;
  readonly release: () => void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export function acquireLock(path: string): Result<LockError, FileLock> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      let released = false;
      return ok({
        path,
        release: () => {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            // Already gone: nothing to release.
          }
        },
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = readPid(path);
      if (pid !== undefined && (pid === process.pid || isAlive(pid))) return err({ _tag: 'LedgerLocked', path, pid });
      // A crashed writer's lock (or a half-written one): take it over once.
      try {
        unlinkSync(path);
      } catch {
        // Raced with another opener; the retry decides.
      }
    }
  }
  return err({ _tag: 'LedgerLocked', path, pid: readPid(path) });
}
