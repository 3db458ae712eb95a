/**
 * One sandboxed run with its environment: prepare it for the tree in the
 * worktree, copy the project's extra files in, and re-mint the caller's
 * capability with the read-only binds added (same profile, backend and
 * limits — binds that cannot be written widen nothing).
 */
import { err, ok, type Result } from '@crustcore/kernel';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import { type EnvironmentError, type PreparedEnvironment, prepareEnvironment } from './environment.js';
import { copyExtraFiles } from './extra-files.js';
import type { ProgressSink } from './progress.js';
import { directoryTree } from './tree-reader.js';

/** What the caller knows of the user's setup; the same for every run of a task. */
export interface EnvironmentContext {
  readonly userRoot: string;
  readonly env: NodeJS.ProcessEnv;
  /** The user's npm registry, or how to ask for it (once, and only when a setup runs). */
  readonly registryUrl: string | (() => Promise<string>);
  readonly setupArgv?: readonly string[] | null;
  readonly allowInstallScripts?: boolean;
  readonly npmCacheDir?: string;
  readonly progress?: ProgressSink;
}

export interface RunEnvironment {
  readonly cap: SandboxExecCap;
  readonly prepared: PreparedEnvironment;
  /** PATH for the run inside this worktree. */
  readonly path: string;
}

export async function environmentForWorktree(
  cap: SandboxExecCap,
  context: EnvironmentContext,
  worktreePath: string,
  home: string,
  signal?: AbortSignal,
): Promise<Result<EnvironmentError, RunEnvironment>> {
  const prepared = await prepareEnvironment({
    userRoot: context.userRoot,
    tree: directoryTree(worktreePath),
    home,
    env: context.env,
    registryUrl: context.registryUrl,
    ...(context.setupArgv === undefined ? {} : { setupArgv: context.setupArgv }),
    ...(context.allowInstallScripts === undefined ? {} : { allowInstallScripts: context.allowInstallScripts }),
    ...(context.npmCacheDir === undefined ? {} : { npmCacheDir: context.npmCacheDir }),
    ...(context.progress === undefined ? {} : { progress: context.progress }),
    ...(signal === undefined ? {} : { signal }),
  });
  if (prepared._tag === 'Left') return prepared;
  copyExtraFiles(context.userRoot, worktreePath, prepared.right.files);
  const minted = mintSandboxExecCap(cap.profileName, {
    backend: cap.backend,
    limits: cap.limits,
    ...(cap.extraBinds.length === 0 ? {} : { extraBinds: cap.extraBinds.map((bind) => ({ ...bind })) }),
    environment: prepared.right.binds,
  });
  if (minted._tag === 'Left') {
    return err({ _tag: 'EnvironmentError', message: `environment binds refused: ${minted.left.message}`, output: '' });
  }
  return ok({ cap: minted.right, prepared: prepared.right, path: prepared.right.pathFor(worktreePath) });
}
