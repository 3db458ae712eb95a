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

/**
 * The tree of `commit` in `repo`, read without a checkout. Detection probes
 * many manifest names that most projects lack, so each directory is listed
 * once (one `ls-tree`) and only files the listing holds are read, each once:
 * a commit never changes, so neither can go stale.
 */
export function commitTree(repo: Repository, commit: string): TreeReader {
  const location = repositoryLocation(repo);
  const listings = new Map<string, Promise<readonly string[]>>();
  const listDirectory = (relativePath: string): Promise<readonly string[]> => {
    let listing = listings.get(relativePath);
    if (listing === undefined) {
      const spec = relativePath === '' ? commit : `${commit}:${relativePath}`;
      listing = gitText(location, ['ls-tree', '--name-only', '-z', spec]).then((listed) =>
        listed._tag === 'Left' ? [] : listed.right.split('\u0000').filter((name) => name !== ''),
      );
      listings.set(relativePath, listing);
    }
    return listing;
  };
  // Several detectors read the same manifest (package.json above all): one `cat-file` each.
  const texts = new Map<string, Promise<string | null>>();
  const readOnce = async (relativePath: string): Promise<string | null> => {
    const slash = relativePath.lastIndexOf('/');
    const names = await listDirectory(slash === -1 ? '' : relativePath.slice(0, slash));
    if (!names.includes(relativePath.slice(slash + 1))) return null;
    const shown = await gitRawText(location, ['cat-file', 'blob', `${commit}:${relativePath}`], {
      maxOutputBytes: MAX_MANIFEST_BYTES,
    });
    return shown._tag === 'Right' ? shown.right : null;
  };
  return {
    readText: (relativePath) => {
      let text = texts.get(relativePath);
      if (text === undefined) {
        text = readOnce(relativePath);
        texts.set(relativePath, text);
      }
      return text;
    },
    listDirectory,
  };
}
