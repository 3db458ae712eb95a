/**
 * How many tasks (threads included) a user runs right now. RLIMIT_NPROC is
 * checked against this system-wide count, so a run's process budget has to
 * sit on top of it — otherwise a user whose Node already has a dozen threads
 * could not start a sandbox with a small limit at all.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Upper bound on /proc entries read, so the count itself is bounded. */
const MAX_PROC_ENTRIES = 65_536;

export function countUserTasks(uid: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  let tasks = 0;
  for (const entry of entries.slice(0, MAX_PROC_ENTRIES)) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(`/proc/${entry}/status`, 'utf8');
    } catch {
      continue; // exited while counting
    }
    const realUid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (realUid === undefined || Number(realUid) !== uid) continue;
    tasks += Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? '1');
  }
  return tasks;
}
