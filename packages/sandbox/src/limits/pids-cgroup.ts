/**
 * A per-run cgroup v1 `pids` group. As root, RLIMIT_NPROC does nothing, so a
 * fork bomb is held by `pids.max` instead; and because every descendant stays
 * in the group (setsid does not leave a cgroup), the group is also how the
 * whole tree is found and killed. The group is removed after the run.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';

/** Mount point of the v1 pids hierarchy. */
export const PIDS_HIERARCHY = '/sys/fs/cgroup/pids';
const PARENT = `${PIDS_HIERARCHY}/crustcore`;
const CLEANUP_ATTEMPTS = 100;
const CLEANUP_PAUSE_MS = 10;
const STALE_SWEEP_LIMIT = 64;

/** A live per-run group. */
export interface PidsCgroup {
  readonly path: string;
  /** Writing a pid here moves that process into the group. */
  readonly procsFile: string;
}

const isRoot = (): boolean => process.getuid?.() === 0;

/** Whether this process can create pids groups (root and a writable v1 pids hierarchy). */
export function pidsCgroupSupported(): boolean {
  if (!isRoot()) return false;
  try {
    accessSync(`${PIDS_HIERARCHY}/cgroup.procs`, constants.W_OK);
    mkdirSync(PARENT, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** Removes empty groups left by runs whose owner process died (bounded). */
function sweepStaleGroups(): void {
  let entries: string[];
  try {
    entries = readdirSync(PARENT);
  } catch {
    return;
  }
  for (const name of entries.slice(0, STALE_SWEEP_LIMIT)) {
    const owner = Number(name.split('-')[0]);
    if (!Number.isSafeInteger(owner) || owner === process.pid || processAlive(owner)) continue;
    try {
      rmdirSync(`${PARENT}/${name}`);
    } catch {
      // Still has members or already gone; a later sweep retries.
    }
  }
}

/** Creates a group with `pids.max = maxProcesses`, or null when unsupported or refused. */
export function createPidsCgroup(maxProcesses: number): PidsCgroup | null {
  if (!pidsCgroupSupported()) return null;
  sweepStaleGroups();
  const path = `${PARENT}/${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    mkdirSync(path);
    writeFileSync(`${path}/pids.max`, String(maxProcesses));
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
