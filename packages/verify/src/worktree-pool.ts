/**
 * A warm pool of verify/baseline worktrees, `$CRUSTCORE_HOME/pool/<repo-id>/slot-N`.
 * A full checkout of a 20k-file tree costs seconds; resetting a slot that
 * is already at (or near) the base costs a stat pass. A slot is claimed by
 * an owner file created exclusively (a dead owner's claim is taken over),
 * cleaned with `git clean -ffdx` and reset with `git reset --hard` to exactly the base,
 * checked clean with `git status --ignored`, and released by removing the
 * claim. The clean comes before the reset, so nothing the last run left
 * untracked (a `.gitattributes`) can steer what the reset writes. Anything
 * unexpected — the reset fails, the status is not empty,
 * the `.git` pointer moved — and the slot is thrown away and checked out
 * fresh, so a reused slot is never less clean than a new worktree.
 * A run may leave state git does not track (modes, hard links): every slot
 * is also normalized after its reset (checkout-normalize.ts), since a
 * verify run executes the patch's own test code as much as a worker runs
 * its own. Worker (task) worktrees still have slots of their own (`work-N`),
 * never handed to a verify run.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeCheckout } from './checkout-normalize.js';
import { type GitFailure, gitRawText, runGitAt } from './git.js';
import { unlinkIfPresent, writeNewFileSynced } from './journal/durable.js';
import { currentOwner, isOwnerAlive, type ProcessOwner } from './owner.js';

export const POOL_SLOTS = 4;
/** Verify and baseline runs share `slot-N`; workers get `work-N`, never handed to a verify run. */
export type PoolKind = 'verify' | 'work';
const SLOT_PREFIX: Readonly<Record<PoolKind, string>> = { verify: 'slot', work: 'work' };
export const poolDir = (home: string, repoId: string): string => join(home, 'pool', repoId);

export interface PoolSlot {
  readonly path: string;
  readonly gitDir: string;
  readonly claimFile: string;
}

interface SlotRecord {
  readonly gitDir: string;
}

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Claims the first free slot (taking over a dead owner's claim); null when all are busy. */
function claimSlot(parent: string, prefix: string): { index: number; claimFile: string } | null {
  mkdirSync(parent, { recursive: true, mode: 0o700 });
  const owner = new TextEncoder().encode(JSON.stringify(currentOwner()));
  for (let index = 0; index < POOL_SLOTS; index += 1) {
    const claimFile = join(parent, `${prefix}-${index}.claim.json`);
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        writeNewFileSynced(claimFile, owner, 0o600);
        return { index, claimFile };
      } catch {
        const holder = readJson<ProcessOwner>(claimFile);
        if (holder !== null && typeof holder.pid === 'number' && isOwnerAlive(holder)) break;
        unlinkIfPresent(claimFile);
      }
    }
  }
  return null;
}

/**
 * A repository's own config may tell git to look at less than a reset needs to see, and the
 * last run in a slot chose what to leave behind: with `core.checkStat=minimal` and
 * `core.trustctime=false` a file rewritten to the same size with its mtime put back looks
 * unchanged to status and reset alike; with `core.ignoreCase=true` an untracked `A.JS` beside a
 * tracked `a.js` is neither cleaned nor listed; `core.fileMode=false` keeps a `chmod +x`;
 * `core.untrackedCache` lets directory stat data decide what is scanned. Pool calls override them.
 */
const EXACT_VIEW_ARGS: readonly string[] = [
  '-c',
  'core.checkStat=default',
  '-c',
  'core.trustctime=true',
  '-c',
  'core.ignoreCase=false',
  '-c',
  'core.fileMode=true',
  '-c',
  'core.untrackedCache=false',
];

async function resetSlot(path: string, gitDir: string, commit: string): Promise<boolean> {
  const pointer = /^gitdir: (.+)$/m.exec(safeRead(join(path, '.git')))?.[1]?.trim();
  if (pointer !== gitDir) return false;
  const location = { gitDir, workTree: path, cwd: path };
  // Clean first: a checkout reads a `.gitattributes` from the working tree where the index has none,
  // so an untracked one the last run planted (`eol=crlf`, `working-tree-encoding`) would decide the
  // bytes the reset writes. With nothing untracked left, only the base's own attributes apply.
  const clean = await runGitAt(location, [...EXACT_VIEW_ARGS, 'clean', '-ffdxq']);
  if (clean._tag === 'Left') return false;
  const reset = await runGitAt(location, [...EXACT_VIEW_ARGS, 'reset', '--hard', '--quiet', commit]);
  if (reset._tag === 'Left') return false;
  // Side by side: the status reads what git tracks, the normalization fixes only what git does not
  // (modes beside the owner's x bit, inode identity), so the status's answer is the same before and
  // after it. A normalization with work to do can show this status its temporary copy: the slot is
  // then refused and checked out fresh — never taken unclean.
  const [status, normalized] = await Promise.all([
    gitRawText(location, [...EXACT_VIEW_ARGS, 'status', '--porcelain', '--ignored', '-z', '--untracked-files=all']),
    normalizeCheckout(path),
  ]);
  return status._tag === 'Right' && status.right === '' && normalized;
}

const safeRead = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/**
 * A clean slot at `commit`. `create` checks a slot out fresh at a path (the
 * caller's `git worktree add`); `remove` forgets one.
 */
export async function acquirePoolSlot(options: {
  readonly home: string;
  readonly repoId: string;
  readonly commit: string;
  readonly kind: PoolKind;
  readonly create: (path: string) => Promise<{ gitDir: string } | GitFailure>;
  readonly remove: (path: string) => Promise<void>;
}): Promise<PoolSlot | null> {
  const parent = poolDir(options.home, options.repoId);
  const prefix = SLOT_PREFIX[options.kind];
  const claimed = claimSlot(parent, prefix);
  if (claimed === null) return null;
  const path = join(parent, `${prefix}-${claimed.index}`);
  const recordFile = `${path}.slot.json`;
  const record = readJson<SlotRecord>(recordFile);
  if (record !== null && (await resetSlot(path, record.gitDir, options.commit))) {
    return { path, gitDir: record.gitDir, claimFile: claimed.claimFile };
  }
  try {
    await options.remove(path);
    rmSync(path, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    // A run left something we may not remove (a directory made unreadable): give the slot back and
    // let the caller check out a fresh worktree elsewhere.
    unlinkIfPresent(claimed.claimFile);
    return null;
  }
  unlinkIfPresent(recordFile);
  const created = await options.create(path);
  if ('_tag' in created) {
    unlinkIfPresent(claimed.claimFile);
    return null;
  }
  writeFileSync(recordFile, JSON.stringify({ gitDir: created.gitDir }), { mode: 0o600 });
  return { path, gitDir: created.gitDir, claimFile: claimed.claimFile };
}

/** Gives the slot back (its checkout stays for the next run). */
export function releasePoolSlot(claimFile: string): void {
  unlinkIfPresent(claimFile);
}
