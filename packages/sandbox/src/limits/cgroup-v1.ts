/**
 * What every per-run cgroup v1 group shares, whatever its controller: the
 * "can we" probe (root and a writable hierarchy), the sweep of groups left by
 * runs whose owner died, and creation under `<hierarchy>/crustcore/` with a
 * name that starts with the owner's pid (so the sweep can tell whose it is).
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';

const STALE_SWEEP_LIMIT = 64;

/** A live per-run group. */
export interface CgroupV1 {
  readonly path: string;
  /** Lists the group's processes (writing a pid here moves that process in). */
  readonly procsFile: string;
  /**
   * Writing `0` here moves the writing thread in. A single-threaded process
   * joins this way without the global lock a `cgroup.procs` write takes (its
   * percpu rwsem waits for an RCU grace period: 8–30 ms per join measured
   * here, ~1 ms this way); its children are born in the group all the same.
   */
  readonly tasksFile: string;
}

const parentOf = (hierarchy: string): string => `${hierarchy}/crustcore`;

/** Whether this process can create groups in `hierarchy` (root and a writable v1 hierarchy). */
export function cgroupV1Supported(hierarchy: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    accessSync(`${hierarchy}/cgroup.procs`, constants.W_OK);
    mkdirSync(parentOf(hierarchy), { recursive: true });
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
function sweepStaleGroups(hierarchy: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parentOf(hierarchy));
  } catch {
    return;
  }
  for (const name of entries.slice(0, STALE_SWEEP_LIMIT)) {
    const owner = Number(name.split('-')[0]);
    if (!Number.isSafeInteger(owner) || owner === process.pid || processAlive(owner)) continue;
    try {
      rmdirSync(`${parentOf(hierarchy)}/${name}`);
    } catch {
      // Still has members or already gone; a later sweep retries.
    }
  }
}

/**
 * Creates a group in `hierarchy` and writes `settings` (control file name →
 * value, in order), or null when unsupported or any write is refused.
 * `optional` settings are written only when the kernel offers that file.
 */
export function createCgroupV1(
  hierarchy: string,
  settings: readonly (readonly [file: string, value: string, optional?: boolean])[],
  probe: (path: string) => boolean,
): CgroupV1 | null {
  if (!cgroupV1Supported(hierarchy)) return null;
  sweepStaleGroups(hierarchy);
  const path = `${parentOf(hierarchy)}/${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    mkdirSync(path);
    for (const [file, value, optional] of settings) {
      if (optional === true && !probe(`${path}/${file}`)) continue;
      writeFileSync(`${path}/${file}`, value);
    }
    return { path, procsFile: `${path}/cgroup.procs`, tasksFile: `${path}/tasks` };
  } catch {
    try {
      rmdirSync(path);
    } catch {
      // Never created.
    }
    return null;
  }
}
