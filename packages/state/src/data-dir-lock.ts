/**
 * Guards a PGlite data directory against a second opener. PGlite has no lock
 * of its own, and two processes opening one directory corrupt it.
 *
 * The lock is a file created with O_CREAT|O_EXCL holding the owner's pid,
 * host, process start time and a random nonce. A second opener fails fast with
 * `DataDirLocked`. A lock left by a dead process (pid gone, or reused by a
 * process with another start time) is taken over, but only under a second
 * O_EXCL "takeover" file, so two processes cannot both remove a stale lock and
 * then delete each other's fresh one.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import type { DataDirLocked } from './errors.js';

export const LOCK_FILE_NAME = 'crustcore-state.lock';
/** A takeover file older than this was left by a crash in the middle of a takeover. */
const TAKEOVER_STALE_MS = 30_000;
const MAX_LOCK_BYTES = 4096;

const LockContent = t.type({
  pid: t.number,
  host: t.string,
  startTime: t.union([t.string, t.null]),
  nonce: t.string,
});
type LockContent = t.TypeOf<typeof LockContent>;

/** Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. Null off Linux. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses; count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(content: LockContent): boolean {
  try {
    process.kill(content.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (content.startTime === null) return true;
  const current = processStartTime(content.pid);
  return current === null || current === content.startTime;
}

function readLock(path: string): LockContent | null {
  try {
    const text = readFileSync(path, 'utf8').slice(0, MAX_LOCK_BYTES);
    const decoded = LockContent.decode(JSON.parse(text));
    return decoded._tag === 'Right' ? decoded.right : null;
  } catch {
    return null;
  }
}

/** Creates `path` exclusively with `text`; false when it already exists. */
function createExclusive(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Proof that this process holds a data directory. Release it exactly once. */
export class DataDirLock {
  readonly #path: string;
  readonly #nonce: string;
  #released = false;

  private constructor(path: string, nonce: string) {
    this.#path = path;
    this.#nonce = nonce;
  }

  get path(): string {
    return this.#path;
  }

  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (readLock(this.#path)?.nonce === this.#nonce) unlinkSync(this.#path);
  }

  static acquire(dataDir: string): Result<DataDirLocked, DataDirLock> {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, LOCK_FILE_NAME);
    const mine: LockContent = {
      pid: process.pid,
      host: hostname(),
      startTime: processStartTime(process.pid),
      nonce: randomBytes(16).toString('hex'),
    };
    const text = JSON.stringify(mine);
    if (createExclusive(path, text)) return ok(new DataDirLock(path, mine.nonce));

    const holder = readLock(path);
    const locked = (reason: string): Result<DataDirLocked, DataDirLock> =>
      err({
        _tag: 'DataDirLocked',
        dataDir,
        holderPid: holder?.pid ?? -1,
        holderHost: holder?.host ?? '',
        reason,
      });
    // An unreadable lock may be one being written right now: never steal it.
    if (holder === null) return locked('lock file exists and is unreadable');
    if (holder.host !== mine.host) return locked('held by a process on another host');
    if (isAlive(holder)) return locked(holder.pid === process.pid ? 'held by this process' : 'held by a live process');

    const takeover = `${path}.takeover`;
    if (!createExclusive(takeover, text)) {
      try {
        if (Date.now() - statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) unlinkSync(takeover);
      } catch {
        // Removed by its owner meanwhile.
      }
      return locked('another process is taking over a stale lock');
    }
    try {
      // Re-read under the takeover file: only the exact stale lock we judged is removed.
      if (readLock(path)?.nonce !== holder.nonce) return locked('lock changed during takeover');
      unlinkSync(path);
      if (!createExclusive(path, text)) return locked('lock re-created during takeover');
      return ok(new DataDirLock(path, mine.nonce));
    } finally {
      unlinkSync(takeover);
    }
  }
}
