/**
 * A per-run cgroup v1 `memory` group: the memory bound for the run as a
 * whole. RLIMIT_DATA bounds each process, so a run of N processes could
 * still take N times the limit; the group caps their sum (anonymous memory,
 * page cache and tmpfs files alike). When the sum passes the limit the
 * kernel reclaims, then kills a process of the group (OOM) — never a
 * process outside it. As root only, like the pids group.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type CgroupV1, cgroupV1Supported, createCgroupV1 } from './cgroup-v1.js';

/** Mount point of the v1 memory hierarchy. */
export const MEMORY_HIERARCHY = '/sys/fs/cgroup/memory';

/** A live per-run memory group; the same shape as a pids group, so the same kill and removal apply. */
export type MemoryCgroup = CgroupV1;

/** Whether this process can create memory groups (root and a writable v1 memory hierarchy). */
export const memoryCgroupSupported = (): boolean => cgroupV1Supported(MEMORY_HIERARCHY);

/**
 * Creates a group capped at `limitBytes` (memory, and memory+swap when the
 * kernel accounts swap, so the run cannot swap its way past the cap), or
 * null when unsupported or refused.
 */
export function createMemoryCgroup(limitBytes: number): MemoryCgroup | null {
  return createCgroupV1(
    MEMORY_HIERARCHY,
    [
      ['memory.limit_in_bytes', String(limitBytes)],
      ['memory.memsw.limit_in_bytes', String(limitBytes), true],
    ],
    existsSync,
  );
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
