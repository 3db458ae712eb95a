/**
 * The ignored files a project's tests need (`.env.test`, generated code),
 * named in `.crustcore/environment.json`, copied from the user's checkout
 * into a worktree. A path the tree under test already has is left alone:
 * the patch's content wins, and a copy never overwrites tracked files.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface ExtraFilesReport {
  readonly copied: readonly string[];
  readonly missing: readonly string[];
  readonly skipped: readonly string[];
}

export function copyExtraFiles(userRoot: string, worktreeRoot: string, files: readonly string[]): ExtraFilesReport {
  const copied: string[] = [];
  const missing: string[] = [];
  const skipped: string[] = [];
  for (const file of files) {
    const source = join(userRoot, file);
    const target = join(worktreeRoot, file);
    if (!existsSync(source)) {
      missing.push(file);
      continue;
    }
    if (existsSync(target)) {
      skipped.push(file);
      continue;
    }
    mkdirSync(dirname(target), { recursive: true });
    // Symlinks are copied as links, never followed out of the checkout.
    cpSync(source, target, { recursive: true, dereference: false, verbatimSymlinks: true });
    copied.push(file);
  }
  return { copied, missing, skipped };
}

/** Content hash of the named files as they are in the checkout (part of the environment's identity). */
export function extraFilesHash(userRoot: string, files: readonly string[]): string {
  const hash = createHash('sha256');
  const visit = (relative: string, depth: number): void => {
    const path = join(userRoot, relative);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      hash.update(`missing:${relative}\n`);
      return;
    }
    if (stat.isDirectory() && depth < 16) {
      for (const name of readdirSync(path).sort()) visit(`${relative}/${name}`, depth + 1);
    } else if (stat.isFile()) {
      hash.update(`file:${relative}:${stat.size}\n`).update(readFileSync(path));
    } else {
      hash.update(`other:${relative}\n`);
    }
  };
  for (const file of [...files].sort()) visit(file, 0);
  return hash.digest('hex');
}
