/**
 * `runSandboxed(cap, spec)`: run one argv under the capability's profile.
 * Checks the spec, builds the environment from scratch, wraps the command
 * in limits (prlimit, and a pids cgroup as root) and the backend
 * (bubblewrap, or the weaker process jail when the capability says so), and
 * hands it to the one process runner. Refusals are values, never throws.
 */
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { bubblewrapArgv } from './backend/bubblewrap-argv.js';
import { SandboxExecCap } from './capability/sandbox-exec-cap.js';
import { type DroppedEnvVar, sanitizeEnvironment } from './env/sanitize-env.js';
import { createMemoryCgroup, type MemoryCgroup, memoryCgroupOomKills } from './limits/memory-cgroup.js';
import {
  cgroupForkRefusals,
  createPidsCgroup,
  destroyPidsCgroup,
  type PidsCgroup,
  signalCgroup,
} from './limits/pids-cgroup.js';
import { prlimitArgv } from './limits/prlimit-argv.js';
import { countUserTasks } from './limits/user-tasks.js';
import type { EnvironmentBinds } from './mount/environment-bind.js';
import { SANDBOX_HOME } from './mount/extra-bind.js';
import { defaultSandboxPath, findHostTool, systemVisibleRoots } from './mount/host-layout.js';
import { isInside, isNormalizedAbsolute, overlaps } from './mount/path-shape.js';
import { shellUse } from './policy/shell-detection.js';
import type { ResourceLimits, SandboxBackendKind, SandboxProfileName } from './profile/sandbox-profile.js';
import { type ProcessResult, type RunObserver, runProcess, signalProcessGroup } from './runner/process-runner.js';
import { seccompProgram } from './seccomp/seccomp-filter.js';

/** One sandboxed run. Optional bounds default to the profile's. */
export interface SandboxRunSpec {
  /** Program and arguments; a shell only when the profile allows it. */
  readonly argv: readonly [string, ...string[]];
  /** The task worktree; bound read-write at the same path (read-only with `worktreeAccess`). */
  readonly worktreeRoot: string;
  /**
   * `read-only`: the run may read the worktree but not change it — a program whose code must be
   * what the user has, never what a task wrote (bubblewrap only; the process jail cannot hold it).
   */
  readonly worktreeAccess?: 'read-write' | 'read-only';
  /** Absolute working directory inside `worktreeRoot`. */
  readonly cwd: string;
  /** Extra variables; sanitized (see `sanitizeEnvironment`). The host env is never used. */
  readonly env?: Readonly<Record<string, string>>;
  readonly stdin?: string | Uint8Array;
  /** At most the profile's `maxTimeoutMs`; defaults to its `defaultTimeoutMs`. */
  readonly timeoutMs?: number;
  /** At most the profile's `maxOutputBytes` (the default). */
  readonly maxOutputBytes?: number;
  readonly signal?: AbortSignal;
  /** Live events of the run (started, output totals), e.g. for progress shown to a waiting client. */
  readonly observer?: RunObserver;
}

/** The spec's optional fields the process runner takes as they are (absent stays absent). */
const optionalRunFields = (spec: SandboxRunSpec) => ({
  ...(spec.stdin === undefined ? {} : { stdin: spec.stdin }),
  ...(spec.signal === undefined ? {} : { signal: spec.signal }),
  ...(spec.observer === undefined ? {} : { observer: spec.observer }),
});

/** How strongly the run was isolated. `process-jail` is weaker: it sees the host filesystem and network. */
export type SandboxIsolation = 'namespaces' | 'process-jail';

/** How the process count limit was enforced. `unenforced` only happens as root without a pids cgroup. */
export type ProcessLimitEnforcement = 'pids-cgroup' | 'rlimit-nproc' | 'unenforced';

/**
 * How memory was bounded. `rlimit-data`: each process (RLIMIT_DATA), so the
 * run as a whole at most `processes × memoryBytes`. `memory-cgroup`: that,
 * and the whole run at `memoryBytes` (root with a v1 memory controller).
 */
export type MemoryLimitEnforcement = 'memory-cgroup' | 'rlimit-data';

/** A finished sandboxed run: the process result plus how it was confined. */
export interface SandboxedResult extends ProcessResult {
  readonly profile: SandboxProfileName;
  readonly backend: SandboxBackendKind;
  readonly isolation: SandboxIsolation;
  /** `seccomp`: bubblewrap installed the syscall filter. The process jail has none. */
  readonly syscallFilter: 'seccomp' | 'none';
  readonly processLimit: ProcessLimitEnforcement;
  readonly memoryLimit: MemoryLimitEnforcement;
  /** Processes the kernel killed because the run's memory group was full (0 without a group). */
  readonly oomKills: number;
  readonly limits: ResourceLimits;
  /** Requested variables that were left out (names and reasons only). */
  readonly envDropped: readonly DroppedEnvVar[];
  /** Forks the pids cgroup refused (0 without a cgroup). */
  readonly forkRefusals: number;
}

/** Why a run was refused before anything started. */
export interface SandboxRefusal {
  readonly _tag: 'SandboxRefusal';
  readonly reason:
    | 'InvalidCapability'
    | 'InvalidSpec'
    | 'BadWorktree'
    | 'CwdOutsideWorktree'
    | 'ShellNotAllowed'
    | 'ExtraBindConflict'
    | 'BackendUnavailable'
    | 'ProcessLimitUnavailable';
  readonly message: string;
  /** What to do about it, when there is something to do. */
  readonly fix: string | null;
}

/** Directories a worktree may not be, contain, or sit inside. */
const SYSTEM_DIRECTORIES = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/boot',
];
/**
 * Joins each cgroup named before `--` (their `tasks` files: the shell is one
 * thread, and writing `0` there moves it without the global lock, see
 * CgroupV1.tasksFile), then becomes the limited command: a fixed script,
 * never built from input.
 */
const JOIN_CGROUPS_SCRIPT = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"';
const JAIL_PREFIX = 'crustcore-jail-';

function refuse(reason: SandboxRefusal['reason'], message: string, fix: string | null = null) {
  return err<SandboxRefusal>({ _tag: 'SandboxRefusal', reason, message, fix });
}

function realDirectory(path: string): string | null {
  try {
    const real = realpathSync(path);
    return statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

function worktreeProblem(worktree: string): string | null {
  if (worktree === '/') return 'the worktree cannot be /';
  for (const directory of SYSTEM_DIRECTORIES) {
    if (overlaps(worktree, directory)) return `the worktree overlaps the system directory ${directory}`;
  }
  if (overlaps(worktree, SANDBOX_HOME)) return `the worktree overlaps the sandbox HOME ${SANDBOX_HOME}`;
  for (const home of ['/root', process.env.HOME ?? '/root']) {
    if (isNormalizedAbsolute(home) && isInside(home, worktree)) return `the worktree contains the host home ${home}`;
  }
  if (worktree === '/home' || worktree === '/tmp') return `the worktree cannot be ${worktree} itself`;
  return null;
}

/** Marks a run whose program never started inside the backend as a start error (bwrap/prlimit exec failures). */
function detectInnerStartFailure(result: ProcessResult, backend: SandboxBackendKind): ProcessResult {
  if (result.startError !== null || result.stdout.totalBytes > 0 || result.stderr.truncated) return result;
  const text = result.stderr.text;
  const notFound =
    backend === 'bubblewrap'
      ? result.exitCode === 1 && /^bwrap: execvp [^\n]*: No such file or directory\n?$/.test(text)
      : result.exitCode === 127 && /^prlimit: failed to execute [^\n]*: No such file or directory\n?$/.test(text);
  if (notFound) {
    return {
      ...result,
      startError: { _tag: 'ProcessStartError', reason: 'NotFound', code: 'ENOENT', message: text.trim() },
    };
  }
  // bwrap's own setup failures (namespaces, mounts) are one `bwrap: …` line and exit 1.
  const setupFailed = backend === 'bubblewrap' && result.exitCode === 1 && /^bwrap: [^\n]*\n?$/.test(text);
  if (setupFailed || (result.exitCode === 125 && /\/crustcore\/[^\n]*\/tasks/.test(text))) {
    return {
      ...result,
      startError: { _tag: 'ProcessStartError', reason: 'SpawnFailed', code: null, message: text.trim() },
    };
  }
  return result;
}

/** A spec that passed every check, with real paths and resolved bounds. */
interface CheckedRun {
  readonly worktree: string;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
}

/** Checks bounds, shell use, worktree, cwd and bind overlap; real paths come back. */
function checkRun(cap: SandboxExecCap, spec: SandboxRunSpec): Result<SandboxRefusal, CheckedRun> {
  const profile = cap.profile;
  if (!Array.isArray(spec.argv) || spec.argv.length === 0 || spec.argv.some((arg) => typeof arg !== 'string')) {
    return refuse('InvalidSpec', 'argv must be a non-empty array of strings');
  }
  const timeoutMs = spec.timeoutMs ?? profile.defaultTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > profile.maxTimeoutMs) {
    return refuse('InvalidSpec', `timeoutMs must be in (0, ${profile.maxTimeoutMs}] for profile ${profile.name}`);
  }
  const maxOutputBytes = spec.maxOutputBytes ?? profile.maxOutputBytes;
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < 0 || maxOutputBytes > profile.maxOutputBytes) {
    return refuse(
      'InvalidSpec',
      `maxOutputBytes must be in [0, ${profile.maxOutputBytes}] for profile ${profile.name}`,
    );
  }
  const shell = shellUse(spec.argv);
  if (shell !== null && !profile.allowShell) {
    return refuse(
      'ShellNotAllowed',
      `profile ${profile.name} allows no shell: ${shell}`,
      'use a profile that allows a shell, or pass the program argv directly',
    );
  }
  if (!isNormalizedAbsolute(spec.worktreeRoot)) {
    return refuse('BadWorktree', 'worktreeRoot must be a normalized absolute path');
  }
  const worktree = realDirectory(spec.worktreeRoot);
  if (worktree === null) return refuse('BadWorktree', `worktreeRoot is not a directory: ${spec.worktreeRoot}`);
  const worktreeIssue = worktreeProblem(worktree);
  if (worktreeIssue !== null) return refuse('BadWorktree', worktreeIssue);
  if (spec.worktreeAccess === 'read-only' && cap.backend !== 'bubblewrap')
    return refuse('BackendUnavailable', `a read-only worktree needs bubblewrap; ${cap.backend} cannot hold it`);
  if (!isNormalizedAbsolute(spec.cwd)) return refuse('CwdOutsideWorktree', 'cwd must be a normalized absolute path');
  const cwd = realDirectory(spec.cwd);
  if (cwd === null || !isInside(cwd, worktree)) {
    return refuse('CwdOutsideWorktree', `cwd ${spec.cwd} is not a directory inside the worktree ${worktree}`);
  }
  for (const bind of cap.extraBinds) {
    if (overlaps(bind.target, worktree) || overlaps(bind.source, worktree)) {
      return refuse('ExtraBindConflict', `extra bind ${bind.target} overlaps the worktree`);
    }
  }
  const environmentIssue = environmentBindProblem(cap.environment, worktree);
  if (environmentIssue !== null) return refuse('ExtraBindConflict', environmentIssue);
  return ok({ worktree, cwd, timeoutMs, maxOutputBytes });
}

/**
 * A dependency bind's mount point must not be (or sit under) a symlink in
 * the worktree: a patch could otherwise aim the bind at another path of the
 * sandbox's view.
 */
function environmentBindProblem(environment: EnvironmentBinds, worktree: string): string | null {
  for (const bind of environment.worktree) {
    let prefix = worktree;
    for (const part of bind.path.split('/')) {
      prefix = `${prefix}/${part}`;
      try {
        if (lstatSync(prefix).isSymbolicLink()) return `environment bind ${bind.path}: ${prefix} is a symlink`;
      } catch {
        break; // Missing: bubblewrap creates the mount point as a plain directory.
      }
    }
  }
  return null;
}

/**
 * Runs `spec.argv` confined by `cap`. Resolves with `Left(SandboxRefusal)`
 * when the run is refused before starting, else `Right(SandboxedResult)` —
 * including runs that failed, timed out, were cancelled or never started
 * inside the backend (`startError`). Never rejects.
 */
export async function runSandboxed(
  cap: SandboxExecCap,
  spec: SandboxRunSpec,
): Promise<Result<SandboxRefusal, SandboxedResult>> {
  if (!SandboxExecCap.isCap(cap)) {
    return refuse('InvalidCapability', 'not a SandboxExecCap minted by @crustcore/sandbox');
  }
  const checked = checkRun(cap, spec);
  if (checked._tag === 'Left') return checked;
  const { worktree, cwd, timeoutMs, maxOutputBytes } = checked.right;
  const profile = cap.profile;

  const prlimit = findHostTool('prlimit');
  if (prlimit === null) {
    return refuse('BackendUnavailable', 'prlimit is not installed', 'apt-get install -y util-linux');
  }
  const bwrap = cap.backend === 'bubblewrap' ? findHostTool('bwrap') : null;
  if (cap.backend === 'bubblewrap' && bwrap === null) {
    return refuse('BackendUnavailable', 'bubblewrap (bwrap) is not installed', 'apt-get install -y bubblewrap');
  }
  const shPath = findHostTool('sh');

  const isRoot = process.getuid?.() === 0;
  let cgroup: PidsCgroup | null = null;
  let processLimit: ProcessLimitEnforcement = 'rlimit-nproc';
  if (isRoot) {
    cgroup = shPath === null ? null : createPidsCgroup(cap.limits.processes);
    processLimit = cgroup === null ? 'unenforced' : 'pids-cgroup';
    if (cgroup === null && profile.name === 'hostile') {
      return refuse(
        'ProcessLimitUnavailable',
        'as root the process limit needs a cgroup v1 pids controller, which is not writable here',
        'run CrustCore as an unprivileged user, or mount the cgroup v1 pids controller at /sys/fs/cgroup/pids',
      );
    }
  }

  const memoryCgroup: MemoryCgroup | null =
    isRoot && shPath !== null ? createMemoryCgroup(cap.limits.memoryBytes) : null;

  let jailDirectory: string | null = null;
  let home = SANDBOX_HOME;
  let scratch = '/tmp';
  if (cap.backend === 'process-jail') {
    // The jail has no mount namespace: its HOME and TMPDIR are fresh host directories, removed afterwards.
    jailDirectory = mkdtempSync(join(tmpdir(), JAIL_PREFIX));
    home = join(jailDirectory, 'home');
    scratch = join(jailDirectory, 'tmp');
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(scratch, { mode: 0o700 });
  }

  const visibleRoots = systemVisibleRoots();
  const hostPathOf = (sandboxPath: string): string | null => {
    if (cap.backend === 'process-jail') return sandboxPath;
    for (const bind of cap.environment.worktree) {
      const target = `${worktree}/${bind.path}`;
      if (isInside(sandboxPath, target)) return bind.source + sandboxPath.slice(target.length);
    }
    if (visibleRoots.some((root) => isInside(sandboxPath, root)) || isInside(sandboxPath, worktree)) return sandboxPath;
    for (const bind of cap.extraBinds) {
      if (isInside(sandboxPath, bind.target)) return bind.source + sandboxPath.slice(bind.target.length);
    }
    if (cap.environment.tools.some((tool) => isInside(sandboxPath, tool))) return sandboxPath;
    return null;
  };
  const sanitized = sanitizeEnvironment(spec.env ?? {}, {
    policy: profile.envPolicy,
    baseEnv: profile.baseEnv,
    home,
    tmpdir: scratch,
    defaultPath: defaultSandboxPath(),
    worktreeRoot: worktree,
    allowWorktreeInPathLists: profile.allowWorktreeInPathLists,
    hostPathOf,
    scratchRoots: [home, scratch],
    // Read-only dependency binds (`.venv/bin`, `node_modules/.bin`) may be searched: no run can write them.
    trustedWorktreePaths: cap.environment.worktree.map((bind) => `${worktree}/${bind.path}`),
  });

  const confined =
    bwrap === null
      ? [...spec.argv]
      : bubblewrapArgv({
          bwrapPath: bwrap,
          worktreeRoot: worktree,
          worktreeAccess: spec.worktreeAccess ?? 'read-write',
          cwd,
          network: profile.network,
          extraBinds: cap.extraBinds,
          environmentBinds: cap.environment,
          command: spec.argv,
          // The runner hands the program to the child on descriptor 3, its only descriptor above 2.
          seccompFd: 3,
        });
  // RLIMIT_NPROC counts every task of the user, so the budget is added on top of what the user already runs.
  const processRlimit = isRoot ? null : cap.limits.processes + countUserTasks(process.getuid?.() ?? -1);
  const limited = [...prlimitArgv(prlimit, cap.limits, processRlimit), ...confined];
  const groups = [cgroup, memoryCgroup].filter((group) => group !== null);
  const argv: [string, ...string[]] =
    groups.length > 0 && shPath !== null
      ? [
          shPath,
          '-c',
          JOIN_CGROUPS_SCRIPT,
          'crustcore-join',
          ...groups.map((group) => group.tasksFile),
          '--',
          ...limited,
        ]
      : (limited as [string, ...string[]]);
  let forkRefusals = 0;
  let oomKills = 0;
  const result = await runProcess(
    {
      argv,
      cwd,
      env: sanitized.env,
      timeoutMs,
      maxOutputBytes,
      ...optionalRunFields(spec),
    },
    {
      ...(bwrap === null ? {} : { descriptor3Input: seccompProgram() }),
      killTree: (pid, signal) => {
        signalProcessGroup(pid, signal);
        // setsid'd descendants left the group but never leave the cgroup.
        if (cgroup !== null) signalCgroup(cgroup, signal);
      },
      afterExit: async () => {
        if (cgroup !== null) forkRefusals = cgroupForkRefusals(cgroup);
        if (memoryCgroup !== null) oomKills = memoryCgroupOomKills(memoryCgroup);
        for (const group of groups) await destroyPidsCgroup(group);
        if (jailDirectory !== null) rmSync(jailDirectory, { recursive: true, force: true, maxRetries: 3 });
      },
    },
  );
  if (result.startError !== null) {
    // Nothing ran, so afterExit never did: clean up here.
    for (const group of groups) await destroyPidsCgroup(group);
    if (jailDirectory !== null) rmSync(jailDirectory, { recursive: true, force: true, maxRetries: 3 });
  }
  return ok({
    ...detectInnerStartFailure(result, cap.backend),
    profile: profile.name,
    backend: cap.backend,
    isolation: cap.backend === 'bubblewrap' ? 'namespaces' : 'process-jail',
    syscallFilter: bwrap === null ? 'none' : 'seccomp',
    processLimit,
    memoryLimit: memoryCgroup === null ? 'rlimit-data' : 'memory-cgroup',
    oomKills,
    limits: cap.limits,
    envDropped: sanitized.dropped,
    forkRefusals,
  });
}
