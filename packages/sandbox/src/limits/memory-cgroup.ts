/**
 * A per-run cgroup v1 `memory` group: the memory bound for the run as a
 * whole. RLIMIT_DATA bounds each process, so a run of N processes could
 * still take N times the limit; the group caps their sum (anonymous memory,
 * page cache and tmpfs files alike). When the sum passes the limit the
 * kernel reclaims, then kills a process of the group (OOM) — never a
 * process outside it. As root only, like the pids group.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import type { PidsCgroup } from './pids-cgroup.js';

/** Mount point of the v1 memory hierarchy. */
export const MEMORY_HIERARCHY = '/sys/fs/cgroup/memory';
const PARENT = `${MEMORY_HIERARCHY}/crustcore`;
const STALE_SWEEP_LIMIT = 64;

/** A live per-run memory group; the same shape as a pids group, so the same kill and removal apply. */
export type MemoryCgroup = PidsCgroup;

/** Whether this process can create memory groups (root and a writable v1 memory hierarchy). */
export function memoryCgroupSupported(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    accessSync(`${MEMORY_HIERARCHY}/cgroup.procs`, constants.W_OK);
    mkdirSync(PARENT, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

function ownerAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** Removes empty groups left by runs whose owner died (bounded). */
function sweepStaleGroups(): void {
  let entries: string[];
  try {
    entries = readdirSync(PARENT);
  } catch {
    return;
  }
  for (const name of entries.slice(0, STALE_SWEEP_LIMIT)) {
    const owner = Number(name.split('-')[0]);
    if (!Number.isSafeInteger(owner) || owner === process.pid || ownerAlive(owner)) continue;
    try {
      rmdirSync(`${PARENT}/${name}`);
    } catch {
      // Still has members or already gone.
    }
  }
}

/**
 * Creates a group capped at `limitBytes` (memory, and memory+swap when the
 * kernel accounts swap, so the run cannot swap its way past the cap), or
 * null when unsupported or refused.
 */
export function createMemoryCgroup(limitBytes: number): MemoryCgroup | null {
  if (!memoryCgroupSupported()) return null;
  sweepStaleGroups();
  const path = `${PARENT}/${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    mkdirSync(path);
    writeFileSync(`${path}/memory.limit_in_bytes`, String(limitBytes));
    if (existsSync(`${path}/memory.memsw.limit_in_bytes`)) {
      writeFileSync(`${path}/memory.memsw.limit_in_bytes`, String(limitBytes));
    }
    return { path, procsFile: `${path}/cgroup.procs` };
  } catch {
    try {
      rmdirSync(path);
    } catch {
      // Never created.
    }
    return null;
  }
}

/** How many processes the kernel's OOM killer killed in the group (`oom_kill` of memory.oom_control). */
export function memoryCgroupOomKills(group: MemoryCgroup): number {
  try {
    const match = /^oom_kill\s+(\d+)$/m.exec(readFileSync(`${group.path}/memory.oom_control`, 'utf8'));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/** The group's peak usage in bytes (memory.max_usage_in_bytes), or null when unreadable. */
export function memoryCgroupPeakBytes(group: MemoryCgroup): number | null {
  try {
    return Number(readFileSync(`${group.path}/memory.max_usage_in_bytes`, 'utf8').trim());
  } catch {
    return null;
  }
}
