/**
 * Environment binds: the project's installed dependencies and the user's
 * toolchain, made visible READ-ONLY to a run. Two kinds:
 *  - worktree binds put a directory (a `node_modules`, a `.venv`) at a path
 *    RELATIVE to whichever worktree the run uses, so one capability serves
 *    the task worktree and every verify worktree;
 *  - tool binds put a host directory (a pyenv version, nvm's node) at its
 *    own path, so interpreters resolve exactly as on the host.
 * Unlike extra binds they are never writable, so the verify profile may
 * carry them: nothing a run does can change what the next run sees.
 */
import { realpathSync, statSync } from 'node:fs';
import { normalize } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { sourceProblem, targetProblem } from './extra-bind.js';
import { isNormalizedAbsolute } from './path-shape.js';

/** A requested environment: both lists are read-only by construction. */
export interface EnvironmentBindsRequest {
  /** `path` is relative to the worktree root (`node_modules`, `packages/a/node_modules`, `.venv`). */
  readonly worktree?: readonly { readonly source: string; readonly path: string }[];
  /** Host directories bound at their own (real) path. */
  readonly tools?: readonly string[];
}

/** Checked environment binds; sources are real paths. */
export interface EnvironmentBinds {
  readonly worktree: readonly { readonly source: string; readonly path: string }[];
  readonly tools: readonly string[];
}

/** At most this many of each kind (a monorepo has one node_modules per workspace). */
export const MAX_ENVIRONMENT_BINDS = 256;

export const NO_ENVIRONMENT_BINDS: EnvironmentBinds = Object.freeze({ worktree: [], tools: [] });

function relativeProblem(path: string): string | null {
  if (typeof path !== 'string' || path === '' || path.startsWith('/') || path.includes('\u0000'))
    return 'path must be a non-empty relative path';
  if (normalize(path) !== path || path.split('/').some((part) => part === '..' || part === '.'))
    return 'path must be normalized, without . or ..';
  // The worktree's git metadata is CrustCore's evidence, never a dependency.
  if (path === '.git' || path.startsWith('.git/')) return 'path cannot be inside .git';
  return null;
}

function realDirectory(source: string): string | null {
  try {
    const real = realpathSync(source);
    return statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/** Checks an environment request: real directories, no credentials, no system targets. */
export function checkEnvironmentBinds(request: EnvironmentBindsRequest): Result<string, EnvironmentBinds> {
  const worktree = request.worktree ?? [];
  const tools = request.tools ?? [];
  if (worktree.length > MAX_ENVIRONMENT_BINDS || tools.length > MAX_ENVIRONMENT_BINDS)
    return err(`at most ${MAX_ENVIRONMENT_BINDS} environment binds of each kind`);
  const checkedWorktree: { source: string; path: string }[] = [];
  for (const bind of worktree) {
    const badPath = relativeProblem(bind.path);
    if (badPath !== null) return err(`environment bind ${bind.path}: ${badPath}`);
    if (!isNormalizedAbsolute(bind.source)) return err(`environment bind ${bind.path}: source must be absolute`);
    const source = realDirectory(bind.source);
    if (source === null) return err(`environment bind ${bind.path}: ${bind.source} is not a directory`);
    const bad = sourceProblem(source);
    if (bad !== null) return err(`environment bind ${bind.path}: source ${source}: ${bad}`);
    if (checkedWorktree.some((other) => other.path === bind.path))
      return err(`environment bind ${bind.path} is listed twice`);
    checkedWorktree.push({ source, path: bind.path });
  }
  const checkedTools: string[] = [];
  for (const tool of tools) {
    if (!isNormalizedAbsolute(tool)) return err(`tool directory ${tool} must be a normalized absolute path`);
    const source = realDirectory(tool);
    if (source === null) return err(`tool directory ${tool} is not a directory`);
    const bad = sourceProblem(source) ?? targetProblem(source);
    if (bad !== null) return err(`tool directory ${source}: ${bad}`);
    if (!checkedTools.includes(source)) checkedTools.push(source);
  }
  return ok(Object.freeze({ worktree: Object.freeze(checkedWorktree), tools: Object.freeze(checkedTools) }));
}
