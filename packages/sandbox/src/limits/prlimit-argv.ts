/**
 * Resource limits as a `prlimit` prefix. Limits set on the wrapper are
 * inherited by bubblewrap and everything it starts.
 */
import type { ResourceLimits } from '../profile/sandbox-profile.js';

/** Seconds between the soft CPU limit (SIGXCPU) and the hard one (SIGKILL). */
const CPU_HARD_MARGIN_SECONDS = 5;

/**
 * argv prefix `[prlimit, --data=…, …, '--']`. `--nproc=processRlimit` is added
 * only when it is not null: RLIMIT_NPROC is ignored for uid 0 (a pids cgroup
 * does that job as root) and counts every task of the user system-wide.
 */
export function prlimitArgv(prlimitPath: string, limits: ResourceLimits, processRlimit: number | null): string[] {
  const args = [
    prlimitPath,
    // RLIMIT_DATA, not RLIMIT_AS: see ResourceLimits.memoryBytes.
    `--data=${limits.memoryBytes}`,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + CPU_HARD_MARGIN_SECONDS}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    // No core dumps: a crashing test must not write its memory (and any secret in it) to disk.
    '--core=0',
  ];
  if (processRlimit !== null) args.push(`--nproc=${processRlimit}`);
  args.push('--');
  return args;
}
