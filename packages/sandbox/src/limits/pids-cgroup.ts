/**
 * A per-run cgroup v1 `pids` group. As root, RLIMIT_NPROC does nothing, so a
 * fork bomb is held by `pids.max` instead; and because every descendant stays
 * in the group (setsid does not leave a cgroup), the group is also how the
 * whole tree is found and killed. The group is removed after the run.
 */
import { readFileSync, rmdirSync } from 'node:fs';
import { type CgroupV1, cgroupV1Supported, createCgroupV1 } from './cgroup-v1.js';

/** Mount point of the v1 pids hierarchy. */
export const PIDS_HIERARCHY = '/sys/fs/cgroup/pids';
const CLEANUP_ATTEMPTS = 100;
const CLEANUP_PAUSE_MS = 10;

/** A live per-run group. */
export type PidsCgroup = CgroupV1;

/** Whether this process can create pids groups (root and a writable v1 pids hierarchy). */
export const pidsCgroupSupported = (): boolean => cgroupV1Supported(PIDS_HIERARCHY);

/** Creates a group with `pids.max = maxProcesses`, or null when unsupported or refused. */
export function createPidsCgroup(maxProcesses: number): PidsCgroup | null {
  return createCgroupV1(PIDS_HIERARCHY, [['pids.max', String(maxProcesses)]], () => true);
}

/** Pids currently in the group. */
export function cgroupMembers(group: PidsCgroup): number[] {
  try {
    return readFileSync(group.procsFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map(Number)
      .filter((pid) => Number.isSafeInteger(pid) && pid > 0);
  } catch {
    return [];
  }
}

/** Sends `signal` to every member; returns how many were signalled. */
export function signalCgroup(group: PidsCgroup, signal: NodeJS.Signals): number {
  let count = 0;
  for (const pid of cgroupMembers(group)) {
    try {
      process.kill(pid, signal);
      count += 1;
    } catch {
      // Exited between the read and the kill.
    }
  }
  return count;
}

/** `pids.events` max counter: how many forks the limit refused. */
export function cgroupForkRefusals(group: PidsCgroup): number {
  try {
    const match = /max\s+(\d+)/.exec(readFileSync(`${group.path}/pids.events`, 'utf8'));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/**
 * Kills whatever is left and removes the group. Members can fork while being
 * killed, so it loops (bounded); pids.max keeps the loop finite. Returns
 * whether the group is gone.
 */
export async function destroyPidsCgroup(group: PidsCgroup): Promise<boolean> {
  for (let attempt = 0; attempt < CLEANUP_ATTEMPTS; attempt++) {
    signalCgroup(group, 'SIGKILL');
    try {
      rmdirSync(group.path);
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return true;
    }
    await new Promise((resume) => setTimeout(resume, CLEANUP_PAUSE_MS));
  }
  return false;
}
