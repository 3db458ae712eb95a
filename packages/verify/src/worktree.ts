/**
 * One throwaway git worktree per task (and per verify run), in
 * `$CRUSTCORE_HOME/worktrees/<repo-id>/<name>`, never inside the user's
 * repository. Creating one never touches the user's working tree or index.
 * Each has an owner file beside it (outside the worktree, where a worker
 * cannot reach it) naming the owning process; `gcWorktrees` removes those
 * whose owner is gone. See docs/worktrees.md.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkRevision } from '@crustcore/confine';
import { err, ok, type Result } from '@crustcore/kernel';
import { discoverRepository, type GitFailure, type GitLocation, gitText, isObjectId, runGitAt } from './git.js';
import { crustcoreHome, worktreesDir } from './home.js';
import { unlinkIfPresent, writeNewFileSynced } from './journal/durable.js';
import { currentOwner, isOwnerAlive, type ProcessOwner } from './owner.js';
import { acquirePoolSlot, releasePoolSlot } from './worktree-pool.js';
import { forgetRegistrations, gitFileSpellings, pathSpellings } from './worktree-registration.js';

/** A user repository, located once. */
export interface Repository {
  /** Top of the user's working tree. */
  readonly root: string;
  /** The main repository's git directory (shared by all worktrees). */
  readonly commonDir: string;
  /**
   * The git directory of the worktree the repository was opened from: `commonDir` for the main
   * worktree, `<commonDir>/worktrees/<name>` for a linked one. HEAD is per worktree, so a task
   * started in a linked worktree is based on that worktree's HEAD, not the main one's.
   */
  readonly gitDir: string;
  /** First 16 hex chars of sha256(real path of commonDir): names the repository under $CRUSTCORE_HOME. */
  readonly repoId: string;
}

export type WorktreePurpose = 'task' | 'verify' | 'baseline';

/** A worktree owned by this process. */
export interface TaskWorktree {
  readonly taskId: string;
  readonly purpose: WorktreePurpose;
  readonly repo: Repository;
  /** Absolute path of the checkout. */
  readonly path: string;
  /** Its private git directory (`<commonDir>/worktrees/<name>`), recorded at creation. */
  readonly gitDir: string;
  /** Full commit id the worktree was created at. */
  readonly baseCommit: string;
  readonly ownerFile: string;
  /** True for a warm-pool slot: removing it releases the slot, the checkout stays (see worktree-pool.ts). */
  readonly pooled?: boolean;
  /** Where git writes this worktree's new objects (the task's store); the user's objects are read as alternates. */
  readonly objectStore?: string;
}

export interface WorktreeError {
  readonly _tag: 'WorktreeError';
  readonly reason: 'not-a-repository' | 'bad-task-id' | 'bad-ref' | 'exists' | 'git-failed' | 'io';
  readonly message: string;
  readonly git: GitFailure | null;
}

export interface CreateWorktreeOptions {
  readonly repo: Repository;
  readonly taskId: string;
  /** Commit-ish to check out; default HEAD. */
  readonly ref?: string;
  readonly purpose?: WorktreePurpose;
  /** Default `crustcoreHome()`. */
  readonly home?: string;
  readonly nowMs?: number;
  /**
   * Take the worktree from the warm pool (reset to the base) instead of a fresh checkout: a task
   * worktree from the workers' slots, a verify/baseline one from the verify slots.
   */
  readonly pool?: boolean;
}

const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;
const OWNER_SUFFIX = '.owner.json';

const fail = (reason: WorktreeError['reason'], message: string, git: GitFailure | null = null): WorktreeError => ({
  _tag: 'WorktreeError',
  reason,
  message,
  git,
});

/** Git location of the main repository (no work tree: these commands only touch .git). */
export const repositoryLocation = (repo: Repository): GitLocation => ({
  gitDir: repo.commonDir,
  workTree: null,
  cwd: repo.root,
});

/** Git location of the worktree the user opened (its own HEAD); still no work tree. */
const openedWorktreeLocation = (repo: Repository): GitLocation => ({
  gitDir: repo.gitDir,
  workTree: null,
  cwd: repo.root,
});

/** Git location of a worktree, pinned to the git directory recorded at creation. */
export const worktreeLocation = (worktree: TaskWorktree): GitLocation => ({
  gitDir: worktree.gitDir,
  workTree: worktree.path,
  cwd: worktree.path,
  ...(worktree.objectStore === undefined
    ? {}
    : { objects: { write: worktree.objectStore, read: [join(worktree.repo.commonDir, 'objects')] } }),
});

/** `$CRUSTCORE_HOME/objects/<repo-id>/<task-id>`: every object a task's worktrees write. */
export const objectStoreDir = (home: string, repo: Repository, taskId: string): string =>
  join(home, 'objects', repo.repoId, taskId);

function ensureObjectStore(home: string, repo: Repository, taskId: string): string {
  const store = objectStoreDir(home, repo, taskId);
  mkdirSync(join(store, 'info'), { recursive: true, mode: 0o700 });
  mkdirSync(join(store, 'pack'), { recursive: true, mode: 0o700 });
  return store;
}

/** The user's repository, reading a task's stored objects too (the verified tree lives there until applied). */
export function repositoryWithTaskObjects(repo: Repository, home: string, taskId: string): GitLocation {
  const store = objectStoreDir(home, repo, taskId);
  return existsSync(store)
    ? { ...repositoryLocation(repo), objects: { write: null, read: [store] } }
    : repositoryLocation(repo);
}

/** Deletes a task's object store (after its patch was integrated or rejected). */
export function removeObjectStore(home: string, repo: Repository, taskId: string): void {
  if (!TASK_ID.test(taskId)) return;
  rmSync(objectStoreDir(home, repo, taskId), { recursive: true, force: true, maxRetries: 3 });
}

export async function openRepository(dir: string): Promise<Result<WorktreeError, Repository>> {
  const found = await discoverRepository(dir);
  if (found._tag === 'Left') return err(fail('not-a-repository', found.left.message, found.left));
  let commonDir: string;
  let gitDir: string;
  try {
    commonDir = realpathSync(found.right.commonDir);
    gitDir = realpathSync(found.right.gitDir);
  } catch (error) {
    return err(fail('io', `cannot resolve ${found.right.gitDir}: ${(error as Error).message}`));
  }
  const repoId = createHash('sha256').update(commonDir).digest('hex').slice(0, 16);
  return ok({ root: found.right.root, commonDir, gitDir, repoId });
}

/**
 * Full commit ids git confirmed in a repository: an object id names its content, so a commit that
 * existed still does (the worker's, the baseline's and the verify slot's worktrees of one task are
 * all made at the base the task resolved). Never a ref (HEAD moves); a bounded set.
 */
const confirmedCommits = new Set<string>();
const CONFIRMED_LIMIT = 256;
/** Resolutions running now: two that start together (the worker's slot and its environment) ask git once. */
const resolving = new Map<string, Promise<Result<WorktreeError, string>>>();

/** Resolves a commit-ish to a full commit id in `repo`. */
export function resolveCommit(repo: Repository, ref: string): Promise<Result<WorktreeError, string>> {
  // Keyed by the opened worktree's git dir: two worktrees of one repository have different HEADs.
  const key = `${repo.gitDir}\u0000${ref}`;
  if (confirmedCommits.has(key)) return Promise.resolve(ok(ref));
  const running = resolving.get(key);
  if (running !== undefined) return running;
  const asked = askCommit(repo, ref).then((resolved) => {
    // What git resolved is a full commit id it confirmed, whatever was asked (HEAD, a branch).
    if (resolved._tag === 'Right') {
      if (confirmedCommits.size >= CONFIRMED_LIMIT) confirmedCommits.clear();
      confirmedCommits.add(`${repo.gitDir}\u0000${resolved.right}`);
    }
    return resolved;
  });
  resolving.set(key, asked);
  void asked.finally(() => resolving.delete(key)).catch(() => undefined);
  return asked;
}

async function askCommit(repo: Repository, ref: string): Promise<Result<WorktreeError, string>> {
  const bad = checkRevision(ref);
  if (bad !== null) return err(fail('bad-ref', `${ref}: ${bad.message}`));
  // Through the opened worktree's own git dir: HEAD (and HEAD~1, @{-1}…) is that worktree's.
  const resolved = await gitText(openedWorktreeLocation(repo), [
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${ref}^{commit}`,
  ]);
  if (resolved._tag === 'Left' || !isObjectId(resolved.right)) return err(fail('bad-ref', `${ref} is not a commit`));
  return ok(resolved.right);
}

interface OwnerRecord extends ProcessOwner {
  readonly taskId: string;
  readonly purpose: WorktreePurpose;
  readonly path: string;
  readonly commonDir: string;
  readonly createdAtMs: number;
}

function readOwnerRecord(path: string): OwnerRecord | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<OwnerRecord>;
    if (typeof parsed.pid !== 'number' || typeof parsed.path !== 'string' || typeof parsed.commonDir !== 'string')
      return null;
    return {
      pid: parsed.pid,
      startTime: typeof parsed.startTime === 'string' ? parsed.startTime : null,
      taskId: String(parsed.taskId ?? ''),
      purpose: parsed.purpose === 'verify' || parsed.purpose === 'baseline' ? parsed.purpose : 'task',
      path: parsed.path,
      commonDir: parsed.commonDir,
      createdAtMs: Number(parsed.createdAtMs ?? 0),
    };
  } catch {
    return null;
  }
}

/**
 * Creates a detached worktree for `taskId` at `ref`. The owner file is
 * written first, so any worktree directory without one is a leftover.
 */
export async function createTaskWorktree(options: CreateWorktreeOptions): Promise<Result<WorktreeError, TaskWorktree>> {
  const { repo, taskId } = options;
  if (!TASK_ID.test(taskId)) return err(fail('bad-task-id', 'task id must be 1-64 of [A-Za-z0-9_-]'));
  const purpose = options.purpose ?? 'task';
  const commit = await resolveCommit(repo, options.ref ?? 'HEAD');
  if (commit._tag === 'Left') return commit;
  if (options.pool === true) {
    const pooled = await pooledWorktree(repo, taskId, purpose, commit.right, options.home ?? crustcoreHome());
    if (pooled !== null) return ok(pooled);
    // Every slot busy (or the pool failed): fall back to a fresh checkout.
  }
  const parent = join(worktreesDir(options.home ?? crustcoreHome()), repo.repoId);
  const name = purpose === 'task' ? taskId : `${taskId}.${purpose}-${randomBytes(4).toString('hex')}`;
  const path = join(parent, name);
  const ownerFile = `${path}${OWNER_SUFFIX}`;
  try {
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    const owner: OwnerRecord = {
      ...currentOwner(),
      taskId,
      purpose,
      path,
      commonDir: repo.commonDir,
      createdAtMs: options.nowMs ?? Date.now(),
    };
    writeNewFileSynced(ownerFile, new TextEncoder().encode(JSON.stringify(owner)), 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return err(fail(code === 'EEXIST' ? 'exists' : 'io', `cannot claim ${path}: ${(error as Error).message}`));
  }
  const added = await runGitAt(repositoryLocation(repo), [
    'worktree',
    'add',
    '--detach',
    '--quiet',
    '--',
    path,
    commit.right,
  ]);
  if (added._tag === 'Left') {
    unlinkIfPresent(ownerFile);
    rmSync(path, { recursive: true, force: true });
    return err(fail('git-failed', added.left.message, added.left));
  }
  // Read the private git dir now, before any worker can rewrite the `.git` file.
  const pointer = /^gitdir: (.+)$/m.exec(readFileSync(join(path, '.git'), 'utf8'));
  const gitDir = pointer?.[1]?.trim() ?? '';
  if (!gitDir.startsWith(`${repo.commonDir}/worktrees/`)) {
    return err(fail('git-failed', `unexpected worktree git dir "${gitDir}"`));
  }
  const objectStore = ensureObjectStore(options.home ?? crustcoreHome(), repo, taskId);
  return ok({ taskId, purpose, repo, path, gitDir, baseCommit: commit.right, ownerFile, objectStore });
}

async function pooledWorktree(
  repo: Repository,
  taskId: string,
  purpose: WorktreePurpose,
  commit: string,
  home: string,
): Promise<TaskWorktree | null> {
  const slot = await acquirePoolSlot({
    home,
    repoId: repo.repoId,
    commit,
    kind: purpose === 'task' ? 'work' : 'verify',
    create: async (path) => {
      const added = await runGitAt(repositoryLocation(repo), [
        'worktree',
        'add',
        '--detach',
        '--quiet',
        '--',
        path,
        commit,
      ]);
      if (added._tag === 'Left') return added.left;
      const gitDir = /^gitdir: (.+)$/m.exec(readFileSync(join(path, '.git'), 'utf8'))?.[1]?.trim() ?? '';
      if (!gitDir.startsWith(`${repo.commonDir}/worktrees/`)) {
        return { _tag: 'GitFailure', command: 'worktree', exitCode: null, stderr: '', message: 'unexpected git dir' };
      }
      return { gitDir };
    },
    remove: async (path) => {
      await removeWorktreeAt(repo.commonDir, path, `${path}.none`);
    },
  });
  if (slot === null) return null;
  const objectStore = ensureObjectStore(home, repo, taskId);
  return {
    objectStore,
    taskId,
    purpose,
    repo,
    path: slot.path,
    gitDir: slot.gitDir,
    baseCommit: commit,
    ownerFile: slot.claimFile,
    pooled: true,
  };
}

/** Removes a worktree and its registration (a pooled one is released instead). Safe to call twice. */
export async function removeTaskWorktree(worktree: TaskWorktree): Promise<Result<WorktreeError, null>> {
  if (worktree.pooled === true) {
    releasePoolSlot(worktree.ownerFile);
    return ok(null);
  }
  return removeWorktreeAt(worktree.repo.commonDir, worktree.path, worktree.ownerFile);
}

async function removeWorktreeAt(
  commonDir: string,
  path: string,
  ownerFile: string,
): Promise<Result<WorktreeError, null>> {
  const location: GitLocation = { gitDir: commonDir, workTree: null, cwd: commonDir };
  let repositoryGone = false;
  try {
    statSync(commonDir);
  } catch {
    repositoryGone = true;
  }
  const ours = new Set(gitFileSpellings(path));
  if (!repositoryGone) await runGitAt(location, ['worktree', 'remove', '--force', '--force', '--', path]);
  // Whatever git left (or could not remove) goes too; then the registration that names this path
  // (never `git worktree prune`, which also drops the user's own missing worktrees: worktree-registration.ts).
  rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  if (!repositoryGone) {
    try {
      forgetRegistrations(commonDir, (file) => ours.has(file));
    } catch (error) {
      return err(fail('io', `cannot forget the worktree registration of ${path}: ${(error as Error).message}`));
    }
  }
  unlinkIfPresent(ownerFile);
  return ok(null);
}

/** Creates a worktree, runs `body`, and removes the worktree whatever happens. */
export async function withTaskWorktree<T>(
  options: CreateWorktreeOptions,
  body: (worktree: TaskWorktree) => Promise<T>,
): Promise<Result<WorktreeError, T>> {
  const created = await createTaskWorktree(options);
  if (created._tag === 'Left') return created;
  try {
    return ok(await body(created.right));
  } finally {
    await removeTaskWorktree(created.right);
  }
}

export interface GcReport {
  readonly removed: readonly { readonly path: string; readonly taskId: string; readonly reason: string }[];
  readonly kept: readonly { readonly path: string; readonly taskId: string; readonly pid: number }[];
  /** Repositories whose stale CrustCore worktree registrations were forgotten (never the user's own). */
  readonly pruned: readonly string[];
  readonly errors: readonly string[];
}

/**
 * Removes worktrees whose owning process is gone (crash, kill) and any
 * directory without an owner file, then forgets, in each repository seen,
 * the registrations of CrustCore worktrees that are gone (never `git worktree
 * prune`: worktree-registration.ts). Worktrees of live processes are kept.
 */
export async function gcWorktrees(options: { readonly home?: string } = {}): Promise<GcReport> {
  const root = worktreesDir(options.home ?? crustcoreHome());
  const removed: { path: string; taskId: string; reason: string }[] = [];
  const kept: { path: string; taskId: string; pid: number }[] = [];
  const errors: string[] = [];
  const repositories = new Set<string>();
  let repoIds: string[];
  try {
    repoIds = readdirSync(root);
  } catch {
    return { removed, kept, pruned: [], errors };
  }
  for (const repoId of repoIds) {
    const parent = join(root, repoId);
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    const owned = new Set<string>();
    for (const name of names.filter((n) => n.endsWith(OWNER_SUFFIX))) {
      const ownerFile = join(parent, name);
      const path = ownerFile.slice(0, -OWNER_SUFFIX.length);
      owned.add(path);
      const owner = readOwnerRecord(ownerFile);
      if (owner !== null && isOwnerAlive(owner)) {
        kept.push({ path, taskId: owner.taskId, pid: owner.pid });
        continue;
      }
      const commonDir = owner?.commonDir ?? '';
      if (commonDir !== '') repositories.add(commonDir);
      const result = await removeWorktreeAt(commonDir === '' ? '/nonexistent' : commonDir, path, ownerFile);
      if (result._tag === 'Left') errors.push(`${path}: ${result.left.message}`);
      removed.push({
        path,
        taskId: owner?.taskId ?? '',
        reason: owner === null ? 'unreadable owner file' : `owner pid ${owner.pid} is gone`,
      });
    }
    for (const name of names.filter((n) => !n.endsWith(OWNER_SUFFIX))) {
      const path = join(parent, name);
      if (owned.has(path)) continue;
      rmSync(path, { recursive: true, force: true, maxRetries: 3 });
      removed.push({ path, taskId: '', reason: 'no owner file' });
    }
  }
  // Registrations left by worktrees of ours that are gone; the user's own are never touched.
  const home = options.home ?? crustcoreHome();
  const ourRoots = [root, join(home, 'pool')].flatMap((dir) => pathSpellings(dir));
  const ours = (file: string): boolean => ourRoots.some((dir) => file.startsWith(`${dir}/`)) && !existsSync(file);
  for (const commonDir of repositories) {
    try {
      forgetRegistrations(commonDir, ours);
    } catch (error) {
      errors.push(`${commonDir}: ${(error as Error).message}`);
    }
  }
  return { removed, kept, pruned: [...repositories], errors };
}
