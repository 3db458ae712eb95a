/**
 * The bubblewrap command line for one run. Order matters: bwrap applies
 * mounts in argument order, so tmpfs mounts come before anything bound below
 * them, and `--remount-ro /` comes last so only the explicit writable mounts
 * (worktree, /tmp, HOME, read-write extra binds) accept writes.
 */

import type { EnvironmentBinds } from '../mount/environment-bind.js';
import { type ExtraBind, SANDBOX_HOME } from '../mount/extra-bind.js';
import { ETC_ENTRIES, NETWORK_ETC_ENTRIES, systemMounts } from '../mount/host-layout.js';

/** Everything bwrap needs to know for one run. */
export interface BubblewrapPlan {
  readonly bwrapPath: string;
  /** Real path; bound at the same path inside, read-write unless `worktreeAccess` says otherwise. */
  readonly worktreeRoot: string;
  readonly worktreeAccess?: 'read-write' | 'read-only';
  /** Real path inside the worktree. */
  readonly cwd: string;
  readonly network: 'none' | 'host';
  readonly extraBinds: readonly ExtraBind[];
  /** Read-only dependency binds (relative to the worktree) and toolchain directories. */
  readonly environmentBinds?: EnvironmentBinds;
  /** argv of the sandboxed program. */
  readonly command: readonly string[];
  /**
   * Descriptor carrying the seccomp program (see seccomp/seccomp-filter.ts);
   * bwrap reads it to EOF, closes it, and installs the filter right before
   * it executes the command. Absent: no filter (tests' controls only).
   */
  readonly seccompFd?: number;
}

/** Full argv: `[bwrap, …options, '--', …command]`. */
export function bubblewrapArgv(plan: BubblewrapPlan): string[] {
  const args: string[] = [
    plan.bwrapPath,
    // New user, pid, ipc, uts, cgroup and network namespaces.
    '--unshare-all',
    ...(plan.network === 'host' ? ['--share-net'] : []),
    // The sandbox dies when its supervisor (this run) dies.
    '--die-with-parent',
    // A new session: no controlling terminal, so TIOCSTI cannot push keystrokes to ours.
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    'crustcore-sandbox',
    ...(plan.seccompFd === undefined ? [] : ['--seccomp', String(plan.seccompFd)]),
  ];
  for (const mount of systemMounts()) {
    if (mount.kind === 'symlink') args.push('--symlink', mount.target, mount.path);
    else args.push('--ro-bind', mount.path, mount.path);
  }
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', entry, entry);
  if (plan.network === 'host') for (const entry of NETWORK_ETC_ENTRIES) args.push('--ro-bind-try', entry, entry);
  args.push('--dev', '/dev', '--proc', '/proc');
  // tmpfs first: a bind below /tmp placed before it would be hidden.
  args.push('--tmpfs', '/tmp');
  if (!plan.extraBinds.some((bind) => bind.target === SANDBOX_HOME)) args.push('--tmpfs', SANDBOX_HOME);
  args.push(plan.worktreeAccess === 'read-only' ? '--ro-bind' : '--bind', plan.worktreeRoot, plan.worktreeRoot);
  // Parents before children, so a bind into a bound directory is not hidden.
  const binds = [...plan.extraBinds].sort((a, b) => a.target.length - b.target.length);
  for (const bind of binds) args.push(bind.mode === 'read-write' ? '--bind' : '--ro-bind', bind.source, bind.target);
  args.push(...environmentArgs(plan));
  args.push('--remount-ro', '/', '--chdir', plan.cwd, '--', ...plan.command);
  return args;
}

/** Dependencies over the worktree (parents first) and toolchains at their own paths, all read-only. */
function environmentArgs(plan: BubblewrapPlan): string[] {
  const environment = plan.environmentBinds;
  if (environment === undefined) return [];
  const args: string[] = [];
  for (const tool of environment.tools) args.push('--ro-bind', tool, tool);
  const inWorktree = [...environment.worktree].sort((a, b) => a.path.length - b.path.length);
  for (const bind of inWorktree) args.push('--ro-bind', bind.source, `${plan.worktreeRoot}/${bind.path}`);
  return args;
}
