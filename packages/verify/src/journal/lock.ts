/**
 * One writer per journal directory: apply and recovery take an O_EXCL lock
 * file holding the owner's pid and start time. A lock whose owner died (a
 * crash is exactly when recovery runs) is taken over.
 */
import { linkSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentOwner, isOwnerAlive, type ProcessOwner } from '../owner.js';
import { unlinkIfPresent, writeNewFileSynced } from './durable.js';
import { LOCK_FILE } from './record.js';

export interface JournalLock {
  readonly release: () => void;
}

function readOwner(path: string): ProcessOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { pid?: unknown; startTime?: unknown };
    if (typeof parsed.pid !== 'number') return null;
    return { pid: parsed.pid, startTime: typeof parsed.startTime === 'string' ? parsed.startTime : null };
  } catch {
    return null;
  }
}

/** Takes the lock or returns the live owner holding it. Never waits. */
export function tryLockJournalRoot(journalRoot: string): JournalLock | ProcessOwner {
  const path = join(journalRoot, LOCK_FILE);
  const me = currentOwner();
  const bytes = new TextEncoder().encode(JSON.stringify(me));
  // Two rounds: the second follows the removal of a dead owner's lock.
  for (let round = 0; round < 2; round += 1) {
    // Written in full under a private name, then hard-linked into place: the lock
    // appears atomically with its content, so an empty lock always means a dead owner.
    const temp = `${path}.${me.pid}.tmp`;
    unlinkIfPresent(temp);
    writeNewFileSynced(temp, bytes, 0o600);
    let linked = false;
    try {
      linkSync(temp, path);
      linked = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkIfPresent(temp);
    }
    if (linked) {
      return {
        release: () => {
          const holder = readOwner(path);
          if (holder !== null && holder.pid === me.pid) unlinkIfPresent(path);
        },
      };
    }
    const holder = readOwner(path);
    // An unreadable lock was not written by this code; treat it as abandoned.
    if (holder !== null && holder.pid !== me.pid && isOwnerAlive(holder)) return holder;
    if (holder !== null && holder.pid === me.pid) return holder;
    unlinkIfPresent(path);
  }
  const holder = readOwner(path);
  return holder ?? { pid: -1, startTime: null };
}

export const isLock = (value: JournalLock | ProcessOwner): value is JournalLock => 'release' in value;
