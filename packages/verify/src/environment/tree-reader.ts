/**
 * Reads project files (manifests, lockfiles) from one tree: a directory on
 * disk (a worktree, the user's checkout) or a commit of the repository
 * (`git show`). Detection and hashing work the same on either, so the
 * worker's environment (the base commit) and a patched verify worktree are
 * judged by one code path.
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitRawText, gitText } from '../git.js';
import { type Repository, repositoryLocation } from '../worktree.js';

export interface TreeReader {
  /** Bytes of a regular file at a relative path, or null when absent (symlinks count as absent). */
  readText(relativePath: string): Promise<string | null>;
  /** Names of the entries of a relative directory ('' for the root), or [] when absent. */
  listDirectory(relativePath: string): Promise<readonly string[]>;
}

/** Files larger than this are not manifests; they are treated as absent. */
const MAX_MANIFEST_BYTES = 64 * 1024 * 1024;

export function directoryTree(root: string): TreeReader {
  return {
    readText: async (relativePath) => {
      const path = join(root, relativePath);
      try {
        const stat = lstatSync(path);
        if (!stat.isFile() || stat.size > MAX_MANIFEST_BYTES) return null;
        return readFileSync(path, 'utf8');
      } catch {
        return null;
      }
    },
    listDirectory: async (relativePath) => {
      try {
        return readdirSync(join(root, relativePath));
      } catch {
        return [];
      }
    },
  };
}

/** The tree of `commit` in `repo`, read without a checkout. */
export function commitTree(repo: Repository, commit: string): TreeReader {
  const location = repositoryLocation(repo);
  return {
    readText: async (relativePath) => {
      const shown = await gitRawText(location, ['cat-file', 'blob', `${commit}:${relativePath}`], {
        maxOutputBytes: MAX_MANIFEST_BYTES,
      });
      return shown._tag === 'Right' ? shown.right : null;
    },
    listDirectory: async (relativePath) => {
      const spec = relativePath === '' ? commit : `${commit}:${relativePath}`;
      const listed = await gitText(location, ['ls-tree', '--name-only', '-z', spec]);
      if (listed._tag === 'Left') return [];
      return listed.right.split('\u0000').filter((name) => name !== '');
    },
  };
}
