/**
 * Who owns a lock or a worktree: a pid plus that process's start time, so a
 * recycled pid is not mistaken for the original owner. Start time comes from
 * /proc (Linux); elsewhere it is null and only the pid is compared.
 */
import { readFileSync } from 'node:fs';

export interface ProcessOwner {
  readonly pid: number;
  /** Clock ticks since boot when the process started (/proc/<pid>/stat field 22), or null. */
  readonly startTime: string | null;
}

function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; fields after the last ')' are fixed.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

const startTimeOf = (pid: number): string | null => statFields(pid)?.[19] ?? null;

export function currentOwner(): ProcessOwner {
  return { pid: process.pid, startTime: startTimeOf(process.pid) };
}

/** True while the recorded process still runs (same pid and, where known, same start time). */
export function isOwnerAlive(owner: ProcessOwner): boolean {
  if (!Number.isInteger(owner.pid) || owner.pid <= 0) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const fields = statFields(owner.pid);
  if (fields === null) return owner.startTime === null;
  // A zombie has exited; only its exit status is left for the parent to collect.
  if (fields[0] === 'Z' || fields[0] === 'X') return false;
  return owner.startTime === null || fields[19] === owner.startTime;
}
