/**
 * Where CrustCore keeps its state (documented in docs/state-layout.md):
 *   $CRUSTCORE_HOME (default ~/.crustcore)
 *     receipt.key                      per-installation MAC key (0600)
 *     vault                            encrypted secrets
 *     projects/<repo-id>/events.log    hash-chained event log
 *     projects/<repo-id>/events.head   last (seq, hash), outside the log
 *     projects/<repo-id>/artifacts/    content-addressed artifacts
 *     projects/<repo-id>/journal/      apply journals and preimages
 *     worktrees/<repo-id>/<task>/      disposable task worktrees
 * <repo-id> is the repository directory's name plus 12 hex of the SHA-256 of
 * its real path, so two checkouts never share state.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

export function crustcoreHome(env: NodeJS.ProcessEnv): string {
  const configured = env.CRUSTCORE_HOME;
  return configured !== undefined && configured !== '' ? configured : join(homedir(), '.crustcore');
}

export function repoId(realRepoPath: string): string {
  const name =
    basename(realRepoPath)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 40) || 'repo';
  return `${name}-${createHash('sha256').update(realRepoPath).digest('hex').slice(0, 12)}`;
}

export interface ProjectPaths {
  readonly home: string;
  readonly project: string;
  readonly logPath: string;
  readonly artifacts: string;
  readonly journal: string;
  readonly worktrees: string;
}

export function projectPaths(home: string, realRepoPath: string): ProjectPaths {
  const id = repoId(realRepoPath);
  const project = join(home, 'projects', id);
  return {
    home,
    project,
    logPath: join(project, 'events.log'),
    artifacts: join(project, 'artifacts'),
    journal: join(project, 'journal'),
    worktrees: join(home, 'worktrees', id),
  };
}
