/**
 * Which sandbox backend works on this machine, and if not, why and how to
 * fix it. Bubblewrap is tried for real: `/bin/true` runs under the exact
 * mount and namespace options a `verify` run would use.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapArgv } from '../backend/bubblewrap-argv.js';
import { pidsCgroupSupported } from '../limits/pids-cgroup.js';
import { findHostTool } from '../mount/host-layout.js';
import type { SandboxBackendKind } from '../profile/sandbox-profile.js';
import type { ProcessLimitEnforcement, SandboxIsolation } from '../run-sandboxed.js';
import { runProcess } from '../runner/process-runner.js';
import { seccompProgram } from '../seccomp/seccomp-filter.js';

/** A known reason a backend does not work. */
export type SandboxProblem =
  | 'BwrapMissing'
  | 'PrlimitMissing'
  | 'UserNamespacesDisabled'
  | 'AppArmorRestrictsUserNamespaces'
  | 'MaxUserNamespacesZero'
  | 'BwrapFailed';

/** One backend's state. */
export interface BackendStatus {
  readonly backend: SandboxBackendKind;
  readonly works: boolean;
  readonly isolation: SandboxIsolation;
  /** One line: what was tried and what happened. */
  readonly detail: string;
  readonly problem: SandboxProblem | null;
  /** A command or step that fixes `problem`. */
  readonly fix: string | null;
}

/** What `crustcore doctor` reports about sandboxing. */
export interface SandboxProbe {
  readonly bubblewrap: BackendStatus & { readonly path: string | null; readonly version: string | null };
  readonly processJail: BackendStatus;
  /** The backend runs get by default, or null when none works. The jail is never recommended. */
  readonly recommended: SandboxBackendKind | null;
  readonly processLimit: ProcessLimitEnforcement;
  readonly processLimitDetail: string;
}

/** Kernel switches that decide whether unprivileged user namespaces work (null: not present). */
export interface UserNamespaceSwitches {
  readonly unprivilegedUsernsClone: string | null;
  readonly apparmorRestrictUnprivilegedUserns: string | null;
  readonly maxUserNamespaces: string | null;
}

const PROBE_TIMEOUT_MS = 10_000;
const PROBE_ENV = { PATH: '/usr/bin:/bin' };

function readSwitch(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Reads the user-namespace switches of this kernel. */
export function readUserNamespaceSwitches(): UserNamespaceSwitches {
  return {
    unprivilegedUsernsClone: readSwitch('/proc/sys/kernel/unprivileged_userns_clone'),
    apparmorRestrictUnprivilegedUserns: readSwitch('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'),
    maxUserNamespaces: readSwitch('/proc/sys/user/max_user_namespaces'),
  };
}

/** Explains a failed bubblewrap start from its stderr and the kernel switches. Pure. */
export function diagnoseBubblewrapFailure(
  stderr: string,
  switches: UserNamespaceSwitches,
): { readonly problem: SandboxProblem; readonly fix: string } {
  if (switches.maxUserNamespaces === '0') {
    return { problem: 'MaxUserNamespacesZero', fix: 'sysctl -w user.max_user_namespaces=15000' };
  }
  if (switches.unprivilegedUsernsClone === '0') {
    return { problem: 'UserNamespacesDisabled', fix: 'sysctl -w kernel.unprivileged_userns_clone=1' };
  }
  if (switches.apparmorRestrictUnprivilegedUserns === '1') {
    return {
      problem: 'AppArmorRestrictsUserNamespaces',
      fix: 'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or install an AppArmor profile that allows bwrap userns)',
    };
  }
  const firstLine = stderr.split('\n')[0]?.trim() ?? '';
  return {
    problem: 'BwrapFailed',
    fix: `bubblewrap could not start a sandbox (${firstLine || 'no message'}); inside a container, allow user namespaces (docker: --security-opt seccomp=unconfined, or run with --privileged)`,
  };
}

async function probeBubblewrap(): Promise<SandboxProbe['bubblewrap']> {
  const base = { backend: 'bubblewrap' as const, isolation: 'namespaces' as const };
  const path = findHostTool('bwrap');
  if (path === null) {
    return {
      ...base,
      works: false,
      path: null,
      version: null,
      detail: 'bwrap is not installed',
      problem: 'BwrapMissing',
      fix: 'apt-get install -y bubblewrap',
    };
  }
  const versionRun = await runProcess({
    argv: [path, '--version'],
    cwd: '/',
    env: PROBE_ENV,
    timeoutMs: PROBE_TIMEOUT_MS,
    maxOutputBytes: 4096,
  });
  const version = versionRun.exitCode === 0 ? versionRun.stdout.text.trim() : null;
  const worktree = mkdtempSync(join(tmpdir(), 'crustcore-probe-'));
  try {
    const argv = bubblewrapArgv({
      bwrapPath: path,
      worktreeRoot: worktree,
      cwd: worktree,
      network: 'none',
      extraBinds: [],
      command: ['/bin/true'],
      seccompFd: 3,
    });
    // With the seccomp filter, as a real run: a kernel that refuses it fails here, not in the first task.
    const run = await runProcess(
      {
        argv: argv as [string, ...string[]],
        cwd: worktree,
        env: PROBE_ENV,
        timeoutMs: PROBE_TIMEOUT_MS,
        maxOutputBytes: 16_384,
      },
      { descriptor3Input: seccompProgram() },
    );
    if (run.exitCode === 0) {
      return {
        ...base,
        works: true,
        path,
        version,
        detail: `/bin/true ran under bwrap in ${Math.round(run.durationMs)} ms`,
        problem: null,
        fix: null,
      };
    }
    const diagnosis = diagnoseBubblewrapFailure(run.stderr.text, readUserNamespaceSwitches());
    const why =
      run.startError?.message ?? (run.stderr.text.trim().split('\n')[0] || `exit ${run.exitCode ?? run.signal}`);
    return { ...base, works: false, path, version, detail: `bwrap /bin/true failed: ${why}`, ...diagnosis };
  } finally {
    rmSync(worktree, { recursive: true, force: true });
  }
}

async function probeProcessJail(prlimitPath: string | null): Promise<BackendStatus> {
  const base = { backend: 'process-jail' as const, isolation: 'process-jail' as const };
  if (prlimitPath === null) {
    return {
      ...base,
      works: false,
      detail: 'prlimit is not installed',
      problem: 'PrlimitMissing',
      fix: 'apt-get install -y util-linux',
    };
  }
  const run = await runProcess({
    argv: [prlimitPath, '--nofile=64', '--', '/bin/true'],
    cwd: '/',
    env: PROBE_ENV,
    timeoutMs: PROBE_TIMEOUT_MS,
    maxOutputBytes: 4096,
  });
  return run.exitCode === 0
    ? {
        ...base,
        works: true,
        detail: 'weaker: sees the host filesystem and network; only when chosen explicitly',
        problem: null,
        fix: null,
      }
    : {
        ...base,
        works: false,
        detail: `prlimit /bin/true failed: ${run.stderr.text.trim()}`,
        problem: 'PrlimitMissing',
        fix: 'apt-get install -y util-linux',
      };
}

/** Tries each backend for real and reports which works, why not, and the fix. Never rejects. */
export async function probeSandbox(): Promise<SandboxProbe> {
  const prlimitPath = findHostTool('prlimit');
  const [bubblewrap, processJail] = await Promise.all([probeBubblewrap(), probeProcessJail(prlimitPath)]);
  const isRoot = process.getuid?.() === 0;
  const cgroup = isRoot && pidsCgroupSupported();
  const processLimit: ProcessLimitEnforcement = !isRoot ? 'rlimit-nproc' : cgroup ? 'pids-cgroup' : 'unenforced';
  const processLimitDetail =
    processLimit === 'pids-cgroup'
      ? 'root: a per-run cgroup v1 pids group caps processes and kills the whole tree'
      : processLimit === 'rlimit-nproc'
        ? 'RLIMIT_NPROC (counts all processes of this user, system-wide)'
        : 'root without a writable cgroup v1 pids controller: fork bombs are not capped (hostile runs are refused); run as an unprivileged user';
  const recommended = bubblewrap.works && prlimitPath !== null ? 'bubblewrap' : null;
  return { bubblewrap, processJail, recommended, processLimit, processLimitDetail };
}
